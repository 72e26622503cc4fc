// The kernel side of the "tap" DUT model: a network namespace of this process's own and two
// TAP devices in it (ws0 faces tester port 0, ws1 faces tester port 1).
//
//  * The namespace is entered with unshare(CLONE_NEWNET), or unshare(CLONE_NEWUSER |
//    CLONE_NEWNET) with this user mapped to root when the first is not permitted. Sockets
//    opened before (the Etherbone server) stay in the namespace they were opened in; the
//    process must be single-threaded (a user namespace demands it).
//  * The TAPs are not persistent: they, and the namespace with them, vanish when the process
//    ends however it ends (kill -9 included), so nothing is left behind.
//  * Entering a user namespace changes the credentials, which clears the parent-death signal
//    (sim_cli.h start_process): it is set again here.
//  * New interfaces get no IPv6 and no DAD (net.ipv6.conf.default), so the TAPs say nothing
//    on their own (MLD, router solicitations) until a setup turns IPv6 on.
// Others configure the namespace by entering it (nsenter --target PID --net, plus --user
// --preserve-credentials when /proc/PID/ns/user differs from theirs): sim/netns.py.
//
// With a namespace of the user's (set_target: --tap-netns PATH, --tap-if0/--tap-if1 NAME) the
// process enters it (setns, root only) instead of making one, and changes nothing in it but
// its TAPs: a TAP device already there under the name is attached to (the user's persistent
// TAP, its configuration kept, left there at the end); a missing one is created, not
// persistent, and brought up, so it vanishes with the process. The namespace is the user's:
// it outlives the process.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

namespace ws {

class TapKernel {
public:
    static constexpr unsigned kPorts = 2;
    static constexpr size_t kMaxRead = 65536;  // above any TAP MTU (tun's maximum is 65521)

    // Throws std::invalid_argument (one line, "dut tap: ...") when the namespace or a TAP
    // cannot be had.
    TapKernel();
    ~TapKernel();
    TapKernel(const TapKernel&) = delete;
    TapKernel& operator=(const TapKernel&) = delete;

    // Hands one frame (no FCS) to the kernel as received on TAP `port`; false if it refused
    // it (the device is down, the frame is longer than its MTU allows).
    bool write(unsigned port, const uint8_t* p, size_t n);
    // One frame the kernel sent out of TAP `port` into `buf` (kMaxRead bytes): its length,
    // or 0 when there is none.
    size_t read(unsigned port, uint8_t* buf);

    // The user's namespace (a file such as /run/netns/NAME) and the TAPs' names; before any
    // TapKernel is made. An empty `netns`: a namespace of the process's own, TAPs ws0 and ws1.
    static void set_target(const std::string& netns, const std::string& if0, const std::string& if1);
    static const char* name(unsigned port) { return names_[port].c_str(); }
    // "netns" or "userns+netns": how the namespace was made; "netns=PATH": the user's.
    const std::string& how() const { return how_; }

private:
    void open_taps(bool own_namespace);

    static inline std::string netns_;
    static inline std::string names_[kPorts] = {"ws0", "ws1"};
    int fd_[kPorts] = {-1, -1};
    std::string how_;
};

}  // namespace ws
