// Non-blocking UDP socket on 127.0.0.1 for the Etherbone server.
#pragma once
#include <netinet/in.h>

#include <array>
#include <cstdint>
#include <vector>

namespace ws {

class UdpServer {
public:
    // Binds 127.0.0.1:port (0 = ephemeral). Throws std::runtime_error on failure.
    explicit UdpServer(uint16_t port);
    ~UdpServer();
    UdpServer(const UdpServer&) = delete;
    UdpServer& operator=(const UdpServer&) = delete;

    uint16_t port() const { return port_; }

    // Takes one pending datagram into `buf` (resized to its length); false if none is waiting.
    bool receive(std::vector<uint8_t>& buf, sockaddr_in& from);

    // Best effort (UDP): errors are counted, not raised.
    void send(const std::vector<uint8_t>& data, const sockaddr_in& to);

    uint64_t send_errors() const { return send_errors_; }

private:
    int fd_ = -1;
    uint16_t port_ = 0;
    // a datagram lands here first: the socket is checked every few cycles, mostly empty,
    // and `buf` is only resized for one that came
    std::array<uint8_t, 65536> scratch_{};
    uint64_t send_errors_ = 0;
};

}  // namespace ws
