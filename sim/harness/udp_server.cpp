#include "udp_server.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <stdexcept>
#include <string>

namespace ws {

UdpServer::UdpServer(uint16_t port) {
    fd_ = ::socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd_ < 0) throw std::runtime_error(std::string("socket: ") + std::strerror(errno));
    int rcvbuf = 1 << 20;
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
        std::string err = std::strerror(errno);
        ::close(fd_);
        throw std::runtime_error("cannot bind UDP 127.0.0.1:" + std::to_string(port) + ": " + err);
    }
    socklen_t len = sizeof addr;
    if (::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
        std::string err = std::strerror(errno);
        ::close(fd_);
        throw std::runtime_error("getsockname: " + err);
    }
    port_ = ntohs(addr.sin_port);
}

UdpServer::~UdpServer() {
    if (fd_ >= 0) ::close(fd_);
}

bool UdpServer::receive(std::vector<uint8_t>& buf, sockaddr_in& from) {
    socklen_t len = sizeof from;
    for (;;) {
        ssize_t n = ::recvfrom(fd_, scratch_.data(), scratch_.size(), MSG_DONTWAIT,
                               reinterpret_cast<sockaddr*>(&from), &len);
        if (n >= 0) {
            buf.assign(scratch_.begin(), scratch_.begin() + n);
            return true;
        }
        if (errno == EINTR) continue;
        buf.clear();
        return false;  // EAGAIN, or a transient error reported on the socket
    }
}

void UdpServer::send(const std::vector<uint8_t>& data, const sockaddr_in& to) {
    ssize_t n = ::sendto(fd_, data.data(), data.size(), 0,
                         reinterpret_cast<const sockaddr*>(&to), sizeof to);
    if (n != ssize_t(data.size())) send_errors_++;
}

}  // namespace ws
