#include "dut_router.h"

namespace ws {

RouterModel::RouterModel(uint64_t rate_fps, uint64_t queue, uint64_t latency_ns,
                         uint64_t max_frame, uint64_t jitter_ns, uint64_t seed,
                         unsigned direction, uint64_t collapse_fps, uint64_t recover_ns)
    : rate_fps_(rate_fps),
      queue_(queue),
      latency_ns_(latency_ns),
      max_frame_(max_frame),
      latency_cycles_(latency_ns / kNsPerCycle),
      jitter_ns_(jitter_ns),
      seed_(seed),
      jitter_span_(jitter_ns ? jitter_ns / kNsPerCycle + 1 : 0),
      rng_(prng_seed(seed, PrngPurpose::kJitter, direction)),
      collapse_fps_(collapse_fps),
      recover_ns_(recover_ns),
      recover_cycles_(recover_ns / kNsPerCycle),
      units_per_cycle_(Time(rate_fps) * (collapse_fps ? collapse_fps : 1)),
      service_units_(Time(kClockHz) * (collapse_fps ? collapse_fps : 1)),
      collapsed_units_(Time(kClockHz) * rate_fps) {}

RouterModel::~RouterModel() {
    for (Frame* f : waiting_) delete f;
    for (Frame* f : served_) delete f;
    for (Frame* f : pool_) delete f;
    delete rx_;
    delete tx_;
}

std::string RouterModel::describe() const {
    return "router rate=" + std::to_string(rate_fps_) + " queue=" + std::to_string(queue_) +
           " latency_ns=" + std::to_string(latency_ns_) +
           " max_frame=" + std::to_string(max_frame_) +
           (jitter_span_ ? " jitter_ns=" + std::to_string(jitter_ns_) + " seed=" + std::to_string(seed_)
                         : std::string()) +
           (collapse_fps_ ? " collapse=" + std::to_string(collapse_fps_) +
                                " recover_ns=" + std::to_string(recover_ns_)
                          : std::string());
}

RouterModel::Frame* RouterModel::alloc_frame() {
    if (pool_.empty()) {
        Frame* f = new Frame;
        f->bytes.reserve(2048);
        return f;
    }
    Frame* f = pool_.back();
    pool_.pop_back();
    f->bytes.clear();
    return f;
}

void RouterModel::free_frame(Frame* f) { pool_.push_back(f); }

// Start service of every waiting frame whose service can begin by now.
void RouterModel::serve() {
    while (!waiting_.empty() && free_at_ <= now_units_) {
        Frame* f = waiting_.front();
        waiting_.pop_front();
        Time arrival = Time(f->t) * units_per_cycle_;
        Time start = arrival > free_at_ ? arrival : free_at_;
        free_at_ = start + (collapsed_ ? collapsed_units_ : service_units_);
        Time done_cycle = (free_at_ + units_per_cycle_ - 1) / units_per_cycle_;  // round up
        f->t = uint64_t(done_cycle) + latency_cycles_;
        if (jitter_span_) f->t += rng_.below(jitter_span_);
        served_.push_back(f);
    }
}

GmiiSym RouterModel::step(GmiiSym in) {
    // ---- receive side -------------------------------------------------------------------
    Frame* arrived = nullptr;
    if (in.en) {
        switch (rx_state_) {
            case RxState::kIdle:
                counters_.frames_in++;
                rx_ = alloc_frame();
                rx_state_ = in.d == kSfdByte       ? RxState::kData
                            : in.d == kPreambleByte ? RxState::kPreamble
                                                    : RxState::kDiscard;
                break;
            case RxState::kPreamble:
                if (in.d == kSfdByte)
                    rx_state_ = RxState::kData;
                else if (in.d != kPreambleByte)
                    rx_state_ = RxState::kDiscard;
                break;
            case RxState::kData:
                if (rx_->bytes.size() >= max_frame_)
                    rx_state_ = RxState::kDiscard;
                else
                    rx_->bytes.push_back(in.d);
                break;
            case RxState::kDiscard:
                break;
        }
        if (in.er) rx_state_ = RxState::kDiscard;
    } else if (rx_state_ != RxState::kIdle) {
        if (rx_state_ == RxState::kData && !rx_->bytes.empty()) {
            rx_->t = now_;
            arrived = rx_;
        } else {
            counters_.errored++;
            free_frame(rx_);
        }
        rx_ = nullptr;
        rx_state_ = RxState::kIdle;
    }

    // ---- overload collapse ---------------------------------------------------------------
    if (collapse_fps_) {
        if (arrived) {
            // faster than the service rate: gap < 1/rate s, i.e. gap * rate < clock
            if (have_arrival_ && (now_ - last_arrival_) * rate_fps_ < kClockHz) {
                last_fast_ = now_;
                have_fast_ = true;
            }
            have_arrival_ = true;
            last_arrival_ = now_;
        }
        if (collapsed_ && now_ >= last_fast_ + recover_cycles_) {
            collapsed_ = false;
            counters_.recovered_at = now_;
        }
    }

    // ---- queue and server ---------------------------------------------------------------
    if (!waiting_.empty()) serve();
    if (arrived) {
        if (waiting_.size() < queue_) {
            waiting_.push_back(arrived);
            serve();
        } else {
            counters_.dropped++;
            free_frame(arrived);
            // a drop collapses the router while it is overloaded (not in the drops that empty
            // a full queue after the overload has ended)
            if (collapse_fps_ && !collapsed_ && have_fast_ && now_ < last_fast_ + recover_cycles_) {
                collapsed_ = true;
                counters_.collapses++;
            }
        }
    }

    // ---- transmit side ------------------------------------------------------------------
    if (!tx_ && !served_.empty() && served_.front()->t <= now_ && now_ >= out_free_) {
        tx_ = served_.front();
        served_.pop_front();
        tx_pos_ = 0;
    }
    GmiiSym out = kIdle;
    if (tx_) {
        out.en = 1;
        out.d = tx_pos_ < kPreambleLen - 1 ? kPreambleByte
                : tx_pos_ == kPreambleLen - 1 ? kSfdByte
                                              : tx_->bytes[tx_pos_ - kPreambleLen];
        if (++tx_pos_ == tx_->bytes.size() + kPreambleLen) {
            counters_.frames_out++;
            out_free_ = now_ + 1 + kMinGap;
            free_frame(tx_);
            tx_ = nullptr;
        }
    }

    now_++;
    now_units_ += units_per_cycle_;
    return out;
}

}  // namespace ws
