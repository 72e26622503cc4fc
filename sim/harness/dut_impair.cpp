#include "dut_impair.h"

namespace ws {

ImpairStage::ImpairStage(std::unique_ptr<DutModel> inner, const ImpairParams& p,
                         unsigned direction)
    : inner_(std::move(inner)),
      p_(p),
      loss_th_(ppb_threshold(p.loss_ppb)),
      dup_th_(ppb_threshold(p.dup_ppb)),
      reorder_th_(ppb_threshold(p.reorder_ppb)),
      corrupt_th_(ppb_threshold(p.corrupt_ppb)),
      bo_start_(p.blackout_start_ns / kNsPerCycle),
      bo_end_((p.blackout_start_ns + p.blackout_len_ns) / kNsPerCycle),
      rng_(prng_seed(p.seed, PrngPurpose::kImpair, direction)) {}

ImpairStage::~ImpairStage() {
    for (Buf* b : queue_) delete b;
    for (Buf* b : pool_) delete b;
    delete cap_;
    delete tx_;
    delete held_;
}

std::string ImpairStage::describe() const {
    return inner_->describe() + " loss_ppb=" + std::to_string(p_.loss_ppb) +
           " dup_ppb=" + std::to_string(p_.dup_ppb) +
           " reorder_ppb=" + std::to_string(p_.reorder_ppb) +
           " corrupt_ppb=" + std::to_string(p_.corrupt_ppb) +
           " blackout_start_ns=" + std::to_string(p_.blackout_start_ns) +
           " blackout_len_ns=" + std::to_string(p_.blackout_len_ns) +
           " seed=" + std::to_string(p_.seed);
}

const DutCounters& ImpairStage::counters() const {
    merged_ = inner_->counters();
    merged_.frames_out = counters_.frames_out;
    merged_.lost = counters_.lost;
    merged_.duplicated = counters_.duplicated;
    merged_.reordered = counters_.reordered;
    merged_.corrupted = counters_.corrupted;
    merged_.blackout = counters_.blackout;
    merged_.corrupt_dups = counters_.corrupt_dups;
    merged_.reorder_hidden = counters_.reorder_hidden;
    return merged_;
}

ImpairStage::Buf* ImpairStage::alloc_buf() {
    if (pool_.empty()) {
        Buf* b = new Buf;
        b->syms.reserve(2048);
        return b;
    }
    Buf* b = pool_.back();
    pool_.pop_back();
    b->syms.clear();
    b->repeat = 1;
    b->corrupted = false;
    return b;
}

void ImpairStage::start_frame() {
    in_frame_ = true;
    corrupt_ = dup_ = hold_ = sfd_seen_ = flipped_ = false;
    data_idx_ = 0;
    if (now_ >= bo_start_ && now_ < bo_end_) {
        counters_.blackout++;
        mode_ = Mode::kDrop;
        return;
    }
    if (loss_th_ && rng_.chance(loss_th_)) {
        counters_.lost++;
        mode_ = Mode::kDrop;
        return;
    }
    if (corrupt_th_ && rng_.chance(corrupt_th_)) {
        corrupt_ = true;
        corrupt_at_ = rng_.below(kCorruptSpan);
    }
    if (dup_th_ && rng_.chance(dup_th_)) {
        dup_ = true;
        counters_.duplicated++;
    }
    if (reorder_th_ && rng_.chance(reorder_th_) && !held_) {
        hold_ = true;
        counters_.reordered++;
    }
    live_ = !hold_ && !tx_ && queue_.empty() && now_ >= line_free_;
    mode_ = live_ ? Mode::kLive : Mode::kCapture;
    if (!live_ || dup_) cap_ = alloc_buf();
}

void ImpairStage::end_frame() {
    in_frame_ = false;
    if (mode_ == Mode::kDrop) return;
    if (live_) {
        live_ = false;
        line_free_ = now_ + kMinGap;  // now_ is the first idle cycle after the frame
    }
    if (cap_) {
        Buf* b = cap_;
        cap_ = nullptr;
        if (mode_ == Mode::kLive) {
            queue_.push_back(b);  // the second copy of a live duplicate
        } else {
            b->repeat = dup_ ? 2 : 1;
            if (hold_) {
                b->corrupted = flipped_;
                held_ = b;
                held_deadline_ = now_ + kHoldMaxCycles;
                return;
            }
            queue_.push_back(b);
        }
    }
    // the held frame goes right behind this one: a receiver sees it out of order only if
    // both are intact
    if (held_) release_held(held_->corrupted || flipped_);
}

void ImpairStage::release_held(bool hidden) {
    counters_.reorder_hidden += hidden;
    queue_.push_back(held_);
    held_ = nullptr;
}

GmiiSym ImpairStage::step(GmiiSym in) {
    GmiiSym s = inner_->step(in);

    // ---- the inner model's output frame ----------------------------------------------------
    if (s.en) {
        if (!in_frame_) start_frame();
        if (mode_ != Mode::kDrop) {
            if (corrupt_) {
                if (sfd_seen_) {
                    if (data_idx_++ == corrupt_at_) {
                        s.d ^= 0xFF;
                        counters_.corrupted++;
                        counters_.corrupt_dups += dup_;
                        flipped_ = true;
                    }
                } else if (s.d == kSfdByte) {
                    sfd_seen_ = true;
                }
            }
            if (cap_) cap_->syms.push_back(s);
        }
    } else if (in_frame_) {
        end_frame();
    }
    if (held_ && now_ >= held_deadline_) release_held(true);  // nothing went before it

    // ---- output line -----------------------------------------------------------------------
    GmiiSym out = kIdle;
    if (live_) {
        out = s;
    } else {
        if (!tx_ && !queue_.empty() && now_ >= line_free_) {
            tx_ = queue_.front();
            queue_.pop_front();
            tx_pos_ = 0;
        }
        if (tx_) {
            out = tx_->syms[tx_pos_];
            if (++tx_pos_ == tx_->syms.size()) {
                line_free_ = now_ + 1 + kMinGap;
                if (--tx_->repeat)
                    queue_.push_front(tx_);  // second copy, after the gap
                else
                    pool_.push_back(tx_);
                tx_ = nullptr;
            }
        }
    }
    counters_.frames_out += uint64_t(out.en & !last_out_en_);
    last_out_en_ = out.en;
    now_++;
    return out;
}

}  // namespace ws
