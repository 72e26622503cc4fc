#include "uart_link.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <stdexcept>

namespace ws {

namespace {

constexpr uint8_t kEnd = 0xC0;

uint32_t parse_ppm(const std::string& key, const std::string& v) {
    if (v.empty() || v.size() > 7 || v.find_first_not_of("0123456789") != std::string::npos ||
        std::stoul(v) > 1000000)
        throw std::invalid_argument("fault rate " + key + " must be 0..1000000 ppm, got '" + v + "'");
    return uint32_t(std::stoul(v));
}

}  // namespace

FaultRates parse_fault_rates(const std::string& text) {
    FaultRates r;
    size_t pos = 0;
    while (pos < text.size()) {
        size_t comma = text.find(',', pos);
        std::string item = text.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
        pos = comma == std::string::npos ? text.size() : comma + 1;
        size_t eq = item.find('=');
        if (eq == std::string::npos)
            throw std::invalid_argument("fault rates are KEY=PPM,..., got '" + item + "'");
        std::string key = item.substr(0, eq), value = item.substr(eq + 1);
        uint32_t ppm = parse_ppm(key, value);
        if (key == "drop") r.drop_ppm = ppm;
        else if (key == "dup") r.dup_ppm = ppm;
        else if (key == "late") r.late_ppm = ppm;
        else if (key == "corrupt") r.corrupt_ppm = ppm;
        else throw std::invalid_argument("unknown fault '" + key + "' (drop, dup, late, corrupt)");
    }
    if (uint64_t(r.drop_ppm) + r.dup_ppm + r.late_ppm + r.corrupt_ppm > 1000000)
        throw std::invalid_argument("fault rates add up to more than 1000000 ppm");
    return r;
}

FrameFaults::FrameFaults(FaultRates rates, uint64_t seed, double late_s)
    : rates_(rates), rng_(seed), late_s_(late_s) {}

void FrameFaults::push(uint8_t byte, double now) {
    stats_.bytes++;
    if (byte == kEnd) {
        if (!body_.empty()) frame_done(now);
        return;
    }
    body_.push_back(byte);
}

void FrameFaults::frame_done(double now) {
    std::vector<uint8_t> frame;
    frame.reserve(body_.size() + 2);
    frame.push_back(kEnd);
    frame.insert(frame.end(), body_.begin(), body_.end());
    frame.push_back(kEnd);
    body_.clear();
    stats_.frames++;
    const uint64_t r = rng_.below(1000000);
    uint64_t edge = rates_.drop_ppm;
    if (r < edge) {
        stats_.dropped++;
        return;
    }
    if (r < (edge += rates_.dup_ppm)) {
        stats_.duplicated++;
        due_.emplace(now, frame);
        due_.emplace(now, std::move(frame));
        return;
    }
    if (r < (edge += rates_.late_ppm)) {
        stats_.late++;
        due_.emplace(now + late_s_, std::move(frame));
        return;
    }
    if (r < (edge += rates_.corrupt_ppm)) {
        stats_.corrupted++;
        size_t at = 1 + size_t(rng_.below(frame.size() - 2));
        frame[at] ^= uint8_t(1u << rng_.below(8));
        due_.emplace(now, std::move(frame));
        return;
    }
    stats_.passed++;
    due_.emplace(now, std::move(frame));
}

void FrameFaults::pop_due(double now, std::deque<uint8_t>& out) {
    while (!due_.empty() && due_.begin()->first <= now) {
        const auto& f = due_.begin()->second;
        out.insert(out.end(), f.begin(), f.end());
        due_.erase(due_.begin());
    }
}

double FrameFaults::next_due(double now) const {
    return due_.empty() ? 1e9 : due_.begin()->first - now;
}

UartLink::UartLink(const UartLinkConfig& cfg)
    : cfg_(cfg),
      bit_(double(cfg.divisor) * (1.0 + cfg.skew_ppm / 1e6)),
      to_design_(cfg.to_design, prng_seed(cfg.seed, PrngPurpose::kImpair, 0), cfg.late_s),
      to_host_(cfg.to_host, prng_seed(cfg.seed, PrngPurpose::kImpair, 1), cfg.late_s) {
    if (cfg.divisor < 4) throw std::invalid_argument("divisor must be >= 4");
    listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (listen_fd_ < 0) throw std::runtime_error(std::string("socket: ") + std::strerror(errno));
    int one = 1;
    ::setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(cfg.tcp_port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
        ::listen(listen_fd_, 4) != 0 ||
        ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
        std::string err = std::strerror(errno);
        ::close(listen_fd_);
        throw std::runtime_error("cannot listen on TCP 127.0.0.1:" + std::to_string(cfg.tcp_port) +
                                 ": " + err);
    }
    port_ = ntohs(addr.sin_port);
}

UartLink::~UartLink() {
    if (client_fd_ >= 0) ::close(client_fd_);
    if (listen_fd_ >= 0) ::close(listen_fd_);
}

double UartLink::now() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

uint8_t UartLink::tick(uint8_t design_tx) {
    const double c = double(cycle_);
    // towards the design: start bit, 8 data bits LSB first, stop bit, back to back
    if (tx_bit_ < 0) {
        if (!line_out_.empty()) {
            tx_shift_ = uint16_t(line_out_.front()) << 1 | 0x200;  // start 0, data, stop 1
            line_out_.pop_front();
            tx_bit_ = 0;
            tx_next_ = c + bit_;
            tx_level_ = 0;
        }
    } else if (c + 0.5 >= tx_next_) {
        if (++tx_bit_ == 10) {
            tx_bit_ = -1;
            tx_level_ = 1;
            if (!line_out_.empty()) {  // next byte right away
                tx_shift_ = uint16_t(line_out_.front()) << 1 | 0x200;
                line_out_.pop_front();
                tx_bit_ = 0;
                tx_level_ = 0;
            }
        } else {
            tx_level_ = uint8_t((tx_shift_ >> tx_bit_) & 1);
        }
        tx_next_ += bit_;
    }
    // from the design: find the start edge, sample in the middle of every bit
    if (rx_bit_ < 0) {
        if (rx_prev_ && !design_tx) {
            rx_bit_ = 0;
            rx_next_ = c + bit_ / 2;
        }
    } else if (c + 0.5 >= rx_next_) {
        if (rx_bit_ == 0) {
            if (design_tx) rx_bit_ = -1;  // glitch
        } else if (rx_bit_ <= 8) {
            rx_shift_ = uint8_t(rx_shift_ >> 1 | (design_tx ? 0x80 : 0));
        } else {
            if (design_tx) {
                for_host_.push_back(rx_shift_);
                stats_.bytes_out++;
            } else {
                stats_.line_errors++;
            }
            rx_bit_ = -1;
        }
        if (rx_bit_ >= 0) {
            rx_bit_++;
            rx_next_ += bit_;
        }
    }
    rx_prev_ = design_tx;
    cycle_++;
    return tx_level_;
}

void UartLink::poll() {
    const double t = now();
    // a new client replaces the old one
    int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd >= 0) {
        if (client_fd_ >= 0) ::close(client_fd_);
        client_fd_ = fd;
        int one = 1;
        ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        pending_send_.clear();
        stats_.connections++;
    }
    if (client_fd_ >= 0) {
        uint8_t buf[4096];
        for (;;) {
            ssize_t n = ::recv(client_fd_, buf, sizeof buf, MSG_DONTWAIT);
            if (n > 0) {
                stats_.bytes_in += uint64_t(n);
                for (ssize_t i = 0; i < n; i++) to_design_.push(buf[i], t);
                continue;
            }
            if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
                ::close(client_fd_);  // client gone: what it would have received is lost
                client_fd_ = -1;
                pending_send_.clear();
            }
            break;
        }
    }
    to_design_.pop_due(t, line_out_);
    for (uint8_t b : for_host_) to_host_.push(b, t);
    for_host_.clear();
    std::deque<uint8_t> out;
    to_host_.pop_due(t, out);
    if (client_fd_ < 0) return;
    pending_send_.insert(pending_send_.end(), out.begin(), out.end());
    while (!pending_send_.empty()) {
        ssize_t n = ::send(client_fd_, pending_send_.data(), pending_send_.size(),
                           MSG_DONTWAIT | MSG_NOSIGNAL);
        if (n > 0) {
            pending_send_.erase(pending_send_.begin(), pending_send_.begin() + n);
            continue;
        }
        if (n < 0 && errno == EINTR) continue;
        break;  // EAGAIN: later; other errors show up as a closed client on recv
    }
}

bool UartLink::quiet() const {
    return tx_bit_ < 0 && line_out_.empty() && rx_bit_ < 0 && for_host_.empty() &&
           pending_send_.empty();
}

void UartLink::wait(double max_s) {
    const double t = now();
    double s = std::min(max_s, std::min(to_design_.next_due(t), to_host_.next_due(t)));
    if (s <= 0) return;
    pollfd fds[2] = {{listen_fd_, POLLIN, 0}, {client_fd_, POLLIN, 0}};
    ::poll(fds, client_fd_ >= 0 ? 2 : 1, int(s * 1000) + 1);
}

namespace {

void print_faults(const char* prefix, const char* dir, const FaultStats& s) {
    std::fprintf(stderr,
                 "%s FAULTS %s frames=%" PRIu64 " passed=%" PRIu64 " dropped=%" PRIu64
                 " duplicated=%" PRIu64 " late=%" PRIu64 " corrupted=%" PRIu64 " bytes=%" PRIu64 "\n",
                 prefix, dir, s.frames, s.passed, s.dropped, s.duplicated, s.late, s.corrupted, s.bytes);
}

}  // namespace

void print_link_stats(const char* prefix, const UartLink& link) {
    print_faults(prefix, "to_design", link.to_design_stats());
    print_faults(prefix, "to_host", link.to_host_stats());
    const UartLinkStats& s = link.stats();
    std::fprintf(stderr,
                 "%s LINK connections=%" PRIu64 " bytes_in=%" PRIu64 " bytes_out=%" PRIu64
                 " line_errors=%" PRIu64 "\n",
                 prefix, s.connections, s.bytes_in, s.bytes_out, s.line_errors);
}

}  // namespace ws
