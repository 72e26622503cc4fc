#include "dut_tap_kernel.h"

#include <fcntl.h>
#include <linux/if_tun.h>
#include <sched.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <net/if.h>
#include <sys/prctl.h>
#include <sys/socket.h>
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

void TapKernel::set_target(const std::string& netns, const std::string& if0, const std::string& if1) {
    netns_ = netns;
    names_[0] = if0.empty() ? "ws0" : if0;
    names_[1] = if1.empty() ? "ws1" : if1;
}

TapKernel::TapKernel() {
    if (!netns_.empty()) {
        int ns = ::open(netns_.c_str(), O_RDONLY | O_CLOEXEC);
        if (ns < 0) fail("netns " + netns_);
        bool entered = setns(ns, CLONE_NEWNET) == 0;
        ::close(ns);
        if (!entered) fail("cannot enter netns " + netns_ + " (needs root; a network namespace file)");
        how_ = "netns=" + netns_;
        open_taps(false);
        return;
    }
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
    open_taps(true);
}

void TapKernel::open_taps(bool own_namespace) {
    for (unsigned port = 0; port < kPorts; port++) {
        const bool existed = !own_namespace && if_nametoindex(name(port)) != 0;
        fd_[port] = ::open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC);
        if (fd_[port] < 0) fail("/dev/net/tun");
        ifreq ifr{};
        ifr.ifr_flags = IFF_TAP | IFF_NO_PI;
        std::strncpy(ifr.ifr_name, name(port), IFNAMSIZ - 1);
        if (ioctl(fd_[port], TUNSETIFF, &ifr) != 0)
            fail(std::string(existed ? "cannot attach to TAP " : "cannot create TAP ") + name(port) +
                 (existed ? " (a persistent TAP device not in use?)" : ""));
        if (own_namespace || existed) continue;
        // created in the user's namespace: up, as its configuration cannot name it beforehand
        int sock = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        ifreq up{};
        std::strncpy(up.ifr_name, name(port), IFNAMSIZ - 1);
        bool ok = sock >= 0 && ioctl(sock, SIOCGIFFLAGS, &up) == 0;
        up.ifr_flags = short(up.ifr_flags | IFF_UP);
        ok = ok && ioctl(sock, SIOCSIFFLAGS, &up) == 0;
        if (sock >= 0) ::close(sock);
        if (!ok) fail(std::string("cannot bring TAP ") + name(port) + " up");
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
