// DUT model "router": a store-and-forward device with a frame-rate limit.
//
//  * A frame is received completely (until tx_en falls; preamble and SFD are stripped, the
//    bytes after the SFD including the FCS are kept unchanged). Its arrival time is the
//    first cycle in which tx_en is seen low after it. Frames with tx_er, without an SFD, or
//    longer than `max_frame` bytes are discarded and counted as errored.
//  * On arrival the frame joins the input queue if fewer than `queue` frames are waiting
//    there (the frame in service does not count), otherwise it is dropped.
//  * One server takes waiting frames in order. Each service lasts exactly 1/`rate` s; the
//    server's time is kept exactly in units of 1/rate cycles, so fractional service times
//    (312.5 cycles at 400000 frames/s) accumulate without error and the long-run service
//    rate of a backlogged server is exactly `rate`. Service starts at
//    max(arrival, end of the previous service).
//  * After service a frame waits the fixed processing latency, then is transmitted on the
//    output at line rate with a fresh preamble/SFD, at the first cycle >= (end of service
//    rounded up to a whole cycle) + latency at which the output is free; at least 12 idle
//    cycles separate output frames. The output queue is unbounded.
//  * `jitter` (multiple of 8 ns, default 0) adds to each frame's latency a whole number of
//    cycles drawn uniformly from [0, jitter/8] (SplitMix64 `below(jitter/8 + 1)`, one draw per
//    frame in service order, stream seeded from `seed`, see dut_prng.h). Frames still leave
//    in order: a frame leaves at max(its own release cycle, end of the previous frame + 12).
//  * Overload collapse (`collapse` > 0, for RFC 2544 26.5 system recovery; off by default): a
//    frame whose arrival cycle is less than 1/`rate` s after the previous frame's is a fast
//    arrival; the router is overloaded until `recover` after the last fast arrival. A frame
//    dropped because the queue is full while the router is overloaded makes it collapse (as a
//    router in receive livelock does): while collapsed, each service lasts 1/`collapse` s
//    instead of 1/`rate` s. It recovers (service back to 1/`rate` s, from the next service on)
//    at the first cycle >= (arrival cycle of the last fast arrival) + `recover`; drops after
//    that (a queue still full) do not collapse it again. With offered load above `rate`
//    then below it, frames are lost until about `recover` after the load fell whenever
//    `collapse` is below the lower load (the queue stays full); the counters record the
//    collapses and the cycle of the last recovery.
// For an idle router the first output preamble byte therefore appears
// ceil(1/rate s) + latency after the arrival cycle.
#pragma once
#include <cstdint>
#include <deque>
#include <vector>

#include "dut_model.h"
#include "dut_prng.h"

namespace ws {

class RouterModel final : public DutModel {
public:
    RouterModel(uint64_t rate_fps, uint64_t queue, uint64_t latency_ns, uint64_t max_frame,
                uint64_t jitter_ns = 0, uint64_t seed = 1, unsigned direction = 0,
                uint64_t collapse_fps = 0, uint64_t recover_ns = 0);
    ~RouterModel() override;
    RouterModel(const RouterModel&) = delete;
    RouterModel& operator=(const RouterModel&) = delete;

    GmiiSym step(GmiiSym in) override;
    std::string describe() const override;

    // Frames currently inside the model (waiting, in service/latency, being transmitted).
    size_t frames_inside() const { return waiting_.size() + served_.size() + (tx_ ? 1 : 0); }
    bool collapsed() const { return collapsed_; }

private:
    using Time = unsigned __int128;  // server time in units of 1/rate cycles

    struct Frame {
        std::vector<uint8_t> bytes;
        uint64_t t = 0;  // arrival cycle while waiting; release cycle once served
    };
    enum class RxState : uint8_t { kIdle, kPreamble, kData, kDiscard };

    Frame* alloc_frame();
    void free_frame(Frame* f);
    void serve();

    // parameters
    uint64_t rate_fps_, queue_, latency_ns_, max_frame_;
    uint64_t latency_cycles_;
    uint64_t jitter_ns_, seed_;
    uint64_t jitter_span_;  // jitter/8 + 1 values, or 0 without jitter
    SplitMix64 rng_;
    uint64_t collapse_fps_, recover_ns_, recover_cycles_;
    Time units_per_cycle_;  // = rate * (collapse or 1)
    Time service_units_;    // = clock Hz * (collapse or 1): one service = clock/rate cycles
    Time collapsed_units_;  // = clock Hz * rate: one service = clock/collapse cycles

    uint64_t now_ = 0;  // current cycle
    Time now_units_ = 0;

    // receive
    RxState rx_state_ = RxState::kIdle;
    Frame* rx_ = nullptr;

    // overload collapse
    bool collapsed_ = false;
    bool have_arrival_ = false;
    bool have_fast_ = false;
    uint64_t last_arrival_ = 0;    // arrival cycle of the previous frame
    uint64_t last_fast_ = 0;       // arrival cycle of the last fast arrival

    // service
    Time free_at_ = 0;             // server becomes free at this time
    std::deque<Frame*> waiting_;   // received, not yet in service
    std::deque<Frame*> served_;    // served, waiting for release or for the output line

    // transmit
    Frame* tx_ = nullptr;
    size_t tx_pos_ = 0;        // position in preamble + frame
    uint64_t out_free_ = 0;    // earliest cycle the next output frame may start

    std::vector<Frame*> pool_;
};

}  // namespace ws
