// The host's end of a UART wired to a Verilated design, served over TCP, with a fault
// injector between the socket and the line (the management path, docs/management.md).
//
//   TCP client (pyserial socket://) <-> FrameFaults (to design) -> 8N1 bits -> design rx
//                                   <-  FrameFaults (to host)   <- 8N1 bits <- design tx
//
// The byte stream is cut into SLIP frames at END (0xC0) bytes; each frame, in each
// direction, is independently passed, dropped, duplicated, delivered late (held for
// `late_s` seconds of wall-clock time, so past the host's timeout, while later frames pass
// it) or corrupted (one bit of one byte between the ENDs flipped), with the given rates
// (parts per million) from a seeded SplitMix64. Wall-clock time, because the host's
// timeouts are. No Verilator types here: the caller ticks the design and passes the pins.
#pragma once
#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "dut_prng.h"

namespace ws {

struct FaultRates {  // parts per million of frames
    uint32_t drop_ppm = 0, dup_ppm = 0, late_ppm = 0, corrupt_ppm = 0;
};

// "drop=N,dup=N,late=N,corrupt=N" (ppm, any subset); throws std::invalid_argument.
FaultRates parse_fault_rates(const std::string& text);

struct FaultStats {
    uint64_t frames = 0, passed = 0, dropped = 0, duplicated = 0, late = 0, corrupted = 0;
    uint64_t bytes = 0;
};

class FrameFaults {
public:
    FrameFaults(FaultRates rates, uint64_t seed, double late_s);
    // A byte from the source at wall time `now` (seconds).
    void push(uint8_t byte, double now);
    // Appends to `out` the frames due at `now`, in order of due time.
    void pop_due(double now, std::deque<uint8_t>& out);
    // Seconds until the next held frame is due (or a large value).
    double next_due(double now) const;
    bool holding() const { return !due_.empty(); }
    const FaultStats& stats() const { return stats_; }

private:
    void frame_done(double now);
    FaultRates rates_;
    SplitMix64 rng_;
    double late_s_;
    std::vector<uint8_t> body_;
    std::multimap<double, std::vector<uint8_t>> due_;
    FaultStats stats_;
};

struct UartLinkConfig {
    uint16_t tcp_port = 0;       // 0: ephemeral
    uint32_t divisor = 16;       // design clock cycles per bit
    int32_t skew_ppm = 0;        // the link's bit time is divisor * (1 + skew_ppm / 1e6)
    FaultRates to_design, to_host;
    uint64_t seed = 1;
    double late_s = 0.5;
};

struct UartLinkStats {
    uint64_t connections = 0, bytes_in = 0, bytes_out = 0, line_errors = 0;
};

class UartLink {
public:
    explicit UartLink(const UartLinkConfig& cfg);  // listens on 127.0.0.1; throws on failure
    ~UartLink();
    UartLink(const UartLink&) = delete;
    UartLink& operator=(const UartLink&) = delete;

    uint16_t port() const { return port_; }
    // One design clock cycle: takes the design's tx pin, returns the level for its rx pin.
    uint8_t tick(uint8_t design_tx);
    // Socket I/O and fault timers; call every few hundred cycles.
    void poll();
    // True when nothing is on the line or queued towards the design.
    bool quiet() const;
    // Waits up to `max_s` for socket input or the next held frame (use when quiet()).
    void wait(double max_s);

    const FaultStats& to_design_stats() const { return to_design_.stats(); }
    const FaultStats& to_host_stats() const { return to_host_.stats(); }
    const UartLinkStats& stats() const { return stats_; }

private:
    double now() const;
    UartLinkConfig cfg_;
    double bit_;  // cycles per bit, with skew
    int listen_fd_ = -1, client_fd_ = -1;
    uint16_t port_ = 0;
    FrameFaults to_design_, to_host_;
    std::deque<uint8_t> line_out_;          // bytes waiting for the design's rx line
    std::vector<uint8_t> pending_send_;     // bytes for the client that did not fit yet
    std::deque<uint8_t> for_host_;
    // transmitter (towards the design)
    uint64_t cycle_ = 0;
    double tx_next_ = 0;   // cycle of the next bit edge
    int tx_bit_ = -1;      // -1 idle, 0 start, 1..8 data, 9 stop
    uint16_t tx_shift_ = 0;
    uint8_t tx_level_ = 1;
    // receiver (from the design)
    int rx_bit_ = -1;
    double rx_next_ = 0;   // cycle of the next sample
    uint8_t rx_shift_ = 0;
    uint8_t rx_prev_ = 1;
    UartLinkStats stats_;
};

// The link's statistics on stderr: "<prefix> FAULTS to_design ...", "<prefix> FAULTS
// to_host ..." and "<prefix> LINK ..." (sim/launcher.py and the tests parse them).
void print_link_stats(const char* prefix, const UartLink& link);

}  // namespace ws
