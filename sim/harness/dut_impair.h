// Impairment stage: wraps any DUT model and impairs the frames on its output (the tester's
// GMII receive side). Created by the factory only when some impairment is configured, so an
// unimpaired model pays nothing.
//
// A frame is seen when the inner model starts putting it out (its first rx_dv cycle, counted
// in clock cycles since the model was created = the first cycle of the simulation). At that
// moment its fate is decided, in this order, with one seeded SplitMix64 stream (dut_prng.h):
//   1. blackout: start cycle in [blackout_start, blackout_start + blackout_len) -> dropped
//      (no random draw);
//   2. loss:     if loss > 0, one draw; fires -> dropped (no further draws);
//   3. corrupt:  if corrupt > 0, one draw; fires -> a second draw picks a byte offset
//      k = below(64) after the SFD; that byte is inverted (XOR 0xFF), so the FCS is bad and
//      preamble/SFD are intact (a runt shorter than k+1 bytes is left intact, not counted);
//   4. dup:      if dup > 0, one draw; fires -> the frame is sent twice, back to back;
//   5. reorder:  if reorder > 0, one draw; fires (and no frame is already held) -> the frame
//      is held back and sent right after the next frame that is not dropped (or after
//      kHoldMaxCycles if no such frame comes).
// Probability p fires when (draw >> 32) < floor(p_ppb * 2^32 / 10^9).
//
// Timing: a frame that is neither held nor duplicated goes out cut-through, symbol for symbol
// as the inner model produces it, if the output is idle, nothing is queued and 12 idle cycles
// have passed since the last frame the stage sent; otherwise it is stored, queued in order
// once completely received (from the first idle cycle after it), and sent at line rate with at least 12 idle cycles between frames (also between the
// two copies of a duplicate).
#pragma once
#include <cstdint>
#include <deque>
#include <memory>
#include <vector>

#include "dut_model.h"
#include "dut_prng.h"

namespace ws {

struct ImpairParams {
    uint64_t loss_ppb = 0, dup_ppb = 0, reorder_ppb = 0, corrupt_ppb = 0;
    uint64_t blackout_start_ns = 0, blackout_len_ns = 0;
    uint64_t seed = 1;

    bool any() const {
        return loss_ppb || dup_ppb || reorder_ppb || corrupt_ppb || blackout_len_ns;
    }
};

class ImpairStage final : public DutModel {
public:
    static constexpr uint64_t kHoldMaxCycles = kClockHz / 1000;  // 1 ms: release a held frame anyway
    static constexpr uint64_t kCorruptSpan = 64;        // corrupted byte offset is in [0, 64)

    ImpairStage(std::unique_ptr<DutModel> inner, const ImpairParams& p, unsigned direction);
    ~ImpairStage() override;
    ImpairStage(const ImpairStage&) = delete;
    ImpairStage& operator=(const ImpairStage&) = delete;

    GmiiSym step(GmiiSym in) override;
    std::string describe() const override;
    const DutCounters& counters() const override;
    bool trigger_reset() override { return inner_->trigger_reset(); }

private:
    struct Buf {
        std::vector<GmiiSym> syms;  // the whole frame as produced, preamble included
        uint8_t repeat = 1;         // 2 for a duplicated frame
        bool corrupted = false;     // a byte of it was flipped
    };
    enum class Mode : uint8_t { kDrop, kLive, kCapture };

    void start_frame();
    void end_frame();
    void release_held(bool hidden);
    Buf* alloc_buf();

    std::unique_ptr<DutModel> inner_;
    ImpairParams p_;
    uint64_t loss_th_, dup_th_, reorder_th_, corrupt_th_;
    uint64_t bo_start_, bo_end_;  // blackout window in cycles, [start, end)
    SplitMix64 rng_;

    uint64_t now_ = 0;

    // the inner model's current output frame
    bool in_frame_ = false;
    Mode mode_ = Mode::kDrop;
    bool corrupt_ = false, dup_ = false, hold_ = false, sfd_seen_ = false, flipped_ = false;
    uint64_t data_idx_ = 0, corrupt_at_ = 0;
    Buf* cap_ = nullptr;

    // output line
    bool live_ = false;           // the inner frame is being passed through
    Buf* tx_ = nullptr;           // stored frame being sent
    size_t tx_pos_ = 0;
    uint8_t tx_left_ = 0;         // copies of tx_ still to send after this one
    uint64_t line_free_ = 0;      // earliest cycle the next frame may start
    uint8_t last_out_en_ = 0;
    std::deque<Buf*> queue_;      // stored frames waiting for the line, in order
    Buf* held_ = nullptr;         // frame held back by reorder
    uint64_t held_deadline_ = 0;

    std::vector<Buf*> pool_;
    mutable DutCounters merged_;
};

}  // namespace ws
