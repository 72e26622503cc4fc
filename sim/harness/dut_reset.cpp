#include "dut_reset.h"

namespace ws {

ResetStage::ResetStage(Factory make, uint64_t reboot_ns)
    : make_(std::move(make)),
      inner_(make_()),
      reboot_ns_(reboot_ns),
      reboot_cycles_(reboot_ns / kNsPerCycle) {}

std::string ResetStage::describe() const {
    return inner_->describe() + " reboot_ns=" + std::to_string(reboot_ns_);
}

namespace {

// Adds the frame counters of `c` to `sum` (a later instance's recovery replaces the earlier).
void accumulate(DutCounters& sum, const DutCounters& c) {
    sum.frames_in += c.frames_in;
    sum.frames_out += c.frames_out;
    sum.dropped += c.dropped;
    sum.errored += c.errored;
    sum.lost += c.lost;
    sum.duplicated += c.duplicated;
    sum.reordered += c.reordered;
    sum.corrupted += c.corrupted;
    sum.blackout += c.blackout;
    sum.collapses += c.collapses;
    if (c.recovered_at) sum.recovered_at = c.recovered_at;
}

}  // namespace

void ResetStage::add(const DutCounters& c) { accumulate(past_, c); }

const DutCounters& ResetStage::counters() const {
    merged_ = past_;
    if (inner_) accumulate(merged_, inner_->counters());
    merged_.resets = counters_.resets;
    merged_.reset_lost = counters_.reset_lost;
    merged_.reset_at = counters_.reset_at;
    merged_.up_at = counters_.up_at;
    return merged_;
}

bool ResetStage::trigger_reset() {
    if (down_ || reset_pending_) return false;
    reset_pending_ = true;  // taken at the next step, so the reset cycle is a model cycle
    return true;
}

GmiiSym ResetStage::step(GmiiSym in) {
    const bool starts = in.en && !prev_in_en_;
    prev_in_en_ = in.en;
    if (reset_pending_) {
        reset_pending_ = false;
        add(inner_->counters());
        inner_.reset();
        down_ = true;
        up_at_ = now_ + reboot_cycles_;
        counters_.resets++;
        counters_.reset_at = now_;
    }
    GmiiSym out = kIdle;
    if (down_ && now_ >= up_at_) {
        inner_ = make_();  // the offset of its own clock does not matter: models count cycles
        down_ = false;     // from their first step
        counters_.up_at = now_;
    }
    if (down_) {
        if (starts) counters_.reset_lost++;
    } else {
        out = inner_->step(in);
    }
    now_++;
    return out;
}

}  // namespace ws
