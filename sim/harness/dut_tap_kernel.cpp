#include "dut_tap_kernel.h"

#include <fcntl.h>
#include <linux/if.h>
#include <linux/if_tun.h>
#include <sched.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace ws {

namespace {

[[noreturn]] void fail(const std::string& what) {
    throw std::invalid_argument("dut tap: " + what + ": " + std::strerror(errno));
}

// Writes `text` to a /proc file; false if it cannot.
bool put(const char* path, const std::string& text) {
    int fd = ::open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0) return false;
    bool ok = ::write(fd, text.data(), text.size()) == ssize_t(text.size());
    ::close(fd);
    return ok;
}

}  // namespace

TapKernel::TapKernel() {
    const pid_t parent = getppid();
    const uid_t uid = geteuid();
    const gid_t gid = getegid();
    if (unshare(CLONE_NEWNET) == 0) {
        how_ = "netns";
    } else if (errno != EPERM) {
        fail("cannot create a network namespace");
    } else {
        if (unshare(CLONE_NEWUSER | CLONE_NEWNET) != 0)
            fail("cannot create a network namespace (needs root or unprivileged user namespaces)");
        if (!put("/proc/self/setgroups", "deny") ||
            !put("/proc/self/uid_map", "0 " + std::to_string(uid) + " 1") ||
            !put("/proc/self/gid_map", "0 " + std::to_string(gid) + " 1"))
            fail("cannot map the user into its user namespace");
        how_ = "userns+netns";
    }
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != parent) raise(SIGTERM);  // the parent died before the signal was set again

    // missing without IPv6 in the kernel, which is no reason to refuse
    put("/proc/sys/net/ipv6/conf/default/disable_ipv6", "1");
    put("/proc/sys/net/ipv6/conf/default/accept_dad", "0");

    for (unsigned port = 0; port < kPorts; port++) {
        fd_[port] = ::open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC);
        if (fd_[port] < 0) fail("/dev/net/tun");
        ifreq ifr{};
        ifr.ifr_flags = IFF_TAP | IFF_NO_PI;
        std::strncpy(ifr.ifr_name, name(port), IFNAMSIZ - 1);
        if (ioctl(fd_[port], TUNSETIFF, &ifr) != 0) fail(std::string("cannot create TAP ") + name(port));
    }
}

TapKernel::~TapKernel() {
    for (int fd : fd_)
        if (fd >= 0) ::close(fd);
}

bool TapKernel::write(unsigned port, const uint8_t* p, size_t n) {
    return ::write(fd_[port], p, n) == ssize_t(n);
}

size_t TapKernel::read(unsigned port, uint8_t* buf) {
    ssize_t n = ::read(fd_[port], buf, kMaxRead);
    return n > 0 ? size_t(n) : 0;
}

}  // namespace ws
