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

void ResetStage::add(const DutCounters& c) {
    past_.frames_in += c.frames_in;
    past_.frames_out += c.frames_out;
    past_.dropped += c.dropped;
    past_.errored += c.errored;
    past_.lost += c.lost;
    past_.duplicated += c.duplicated;
    past_.reordered += c.reordered;
    past_.corrupted += c.corrupted;
    past_.blackout += c.blackout;
    past_.collapses += c.collapses;
    if (c.recovered_at) past_.recovered_at = c.recovered_at;
}

const DutCounters& ResetStage::counters() const {
    const DutCounters& c = inner_ ? inner_->counters() : DutCounters{};
    merged_ = past_;
    merged_.frames_in += c.frames_in;
    merged_.frames_out += c.frames_out;
    merged_.dropped += c.dropped;
    merged_.errored += c.errored;
    merged_.lost += c.lost;
    merged_.duplicated += c.duplicated;
    merged_.reordered += c.reordered;
    merged_.corrupted += c.corrupted;
    merged_.blackout += c.blackout;
    merged_.collapses += c.collapses;
    if (c.recovered_at) merged_.recovered_at = c.recovered_at;
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
