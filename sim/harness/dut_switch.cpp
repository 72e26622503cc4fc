#include "dut_switch.h"

#include <algorithm>

namespace ws {

// ---- helpers ------------------------------------------------------------------------------

uint32_t ethernet_crc32(const uint8_t* p, size_t n) {
    static const auto table = [] {
        struct T {
            uint32_t v[256];
        } t{};
        for (uint32_t i = 0; i < 256; i++) {
            uint32_t c = i;
            for (int b = 0; b < 8; b++) c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1u)));
            t.v[i] = c;
        }
        return t;
    }();
    uint32_t c = 0xFFFFFFFFu;
    for (size_t k = 0; k < n; k++) c = table.v[(c ^ p[k]) & 0xFF] ^ (c >> 8);
    return ~c;
}

bool ethernet_fcs_ok(const std::vector<uint8_t>& f) {
    if (f.size() < 4) return false;
    const uint32_t c = ethernet_crc32(f.data(), f.size() - 4);
    const uint8_t* fcs = f.data() + f.size() - 4;
    return fcs[0] == uint8_t(c) && fcs[1] == uint8_t(c >> 8) && fcs[2] == uint8_t(c >> 16) &&
           fcs[3] == uint8_t(c >> 24);
}

FramePool::~FramePool() {
    for (StoredFrame* f : pool_) delete f;
}

StoredFrame* FramePool::alloc() {
    if (pool_.empty()) {
        StoredFrame* f = new StoredFrame;
        f->bytes.reserve(2048);
        return f;
    }
    StoredFrame* f = pool_.back();
    pool_.pop_back();
    f->bytes.clear();
    return f;
}

GmiiReceiver::~GmiiReceiver() { delete rx_; }

StoredFrame* GmiiReceiver::step(GmiiSym in, uint64_t now, DutCounters& c) {
    if (in.en) {
        switch (state_) {
            case State::kIdle:
                c.frames_in++;
                rx_ = pool_.alloc();
                state_ = in.d == kSfdByte       ? State::kData
                         : in.d == kPreambleByte ? State::kPreamble
                                                 : State::kDiscard;
                break;
            case State::kPreamble:
                if (in.d == kSfdByte)
                    state_ = State::kData;
                else if (in.d != kPreambleByte)
                    state_ = State::kDiscard;
                break;
            case State::kData:
                if (rx_->bytes.size() >= max_frame_)
                    state_ = State::kDiscard;
                else
                    rx_->bytes.push_back(in.d);
                break;
            case State::kDiscard:
                break;
        }
        if (in.er) state_ = State::kDiscard;
        return nullptr;
    }
    if (state_ == State::kIdle) return nullptr;
    StoredFrame* arrived = nullptr;
    if (state_ == State::kData && !rx_->bytes.empty()) {
        rx_->t = now;
        arrived = rx_;
    } else {
        c.errored++;
        pool_.free(rx_);
    }
    rx_ = nullptr;
    state_ = State::kIdle;
    return arrived;
}

GmiiTransmitter::~GmiiTransmitter() { delete tx_; }

GmiiSym GmiiTransmitter::step(uint64_t now, DutCounters& c) {
    if (!tx_) return kIdle;
    GmiiSym out{1, 0, 0};
    out.d = pos_ < kPreambleLen - 1    ? kPreambleByte
            : pos_ == kPreambleLen - 1 ? kSfdByte
                                       : tx_->bytes[pos_ - kPreambleLen];
    if (++pos_ == tx_->bytes.size() + kPreambleLen) {
        c.frames_out++;
        out_free_ = now + 1 + kMinGap;
        pool_.free(tx_);
        tx_ = nullptr;
    }
    return out;
}

// ---- fabric -------------------------------------------------------------------------------

namespace {
std::weak_ptr<SwitchFabric> g_last_fabric;

uint64_t mac_at(const std::vector<uint8_t>& b, size_t off) {
    uint64_t m = 0;
    for (size_t k = 0; k < 6; k++) m = m << 8 | b[off + k];
    return m;
}

bool group_address(uint64_t mac) { return (mac >> 40) & 1; }  // I/G bit of the first byte
}  // namespace

SwitchFabric::SwitchFabric(uint64_t table, uint64_t aging_ns, bool learning)
    : table_(table), aging_ns_(aging_ns), aging_cycles_(aging_ns / kNsPerCycle), learning_(learning) {}

std::shared_ptr<SwitchFabric> SwitchFabric::attach(unsigned port, uint64_t table,
                                                   uint64_t aging_ns, bool learning) {
    port &= 1;
    std::shared_ptr<SwitchFabric> f = port == 1 ? g_last_fabric.lock() : nullptr;
    if (!f || f->attached_[port] || f->table_ != table || f->aging_ns_ != aging_ns ||
        f->learning_ != learning) {
        f = std::make_shared<SwitchFabric>(table, aging_ns, learning);
        g_last_fabric = f;
    }
    f->attached_[port] = true;
    return f;
}

std::shared_ptr<SwitchFabric> SwitchFabric::last() { return g_last_fabric.lock(); }

void SwitchFabric::purge(uint64_t now) {
    if (now < next_expiry_) return;
    next_expiry_ = UINT64_MAX;
    for (auto it = map_.begin(); it != map_.end();) {
        if (!live(it->second, now)) {
            it = map_.erase(it);
        } else {
            next_expiry_ = std::min(next_expiry_, it->second.last + aging_cycles_);
            ++it;
        }
    }
}

void SwitchFabric::learn(uint64_t mac, unsigned port, uint64_t now) {
    if (!learning_ || group_address(mac)) return;
    auto it = map_.find(mac);
    if (it != map_.end()) {
        if (!live(it->second, now))
            learned++;  // aged out, learned anew
        else if (it->second.port != port)
            moved++;
        it->second = Entry{port, now};
        return;
    }
    if (map_.size() >= table_) purge(now);
    if (map_.size() >= table_) {
        table_full++;
        return;
    }
    map_.emplace(mac, Entry{port, now});
    if (aging_cycles_) next_expiry_ = std::min(next_expiry_, now + aging_cycles_);
    learned++;
}

int SwitchFabric::lookup(uint64_t mac, uint64_t now) const {
    auto it = map_.find(mac);
    return it != map_.end() && live(it->second, now) ? int(it->second.port) : -1;
}

uint64_t SwitchFabric::entries(uint64_t now) const {
    uint64_t n = 0;
    for (const auto& kv : map_) n += live(kv.second, now);
    return n;
}

void SwitchFabric::clear() {
    map_.clear();
    next_expiry_ = UINT64_MAX;
}

// ---- model --------------------------------------------------------------------------------

SwitchModel::SwitchModel(std::shared_ptr<SwitchFabric> fabric, unsigned port,
                         uint64_t latency_ns, uint64_t queue, uint64_t rate_fps,
                         uint64_t max_frame)
    : fabric_(std::move(fabric)),
      port_(port),
      latency_ns_(latency_ns),
      queue_(queue),
      rate_fps_(rate_fps),
      max_frame_(max_frame),
      latency_cycles_(latency_ns / kNsPerCycle),
      rx_(pool_, max_frame),
      tx_(pool_) {
    fabric_->clear();  // a new model is a (re)booted switch: nothing learned yet
}

SwitchModel::~SwitchModel() {
    for (StoredFrame* f : pipeline_) delete f;
    for (StoredFrame* f : egress_) delete f;
}

std::string SwitchModel::describe() const {
    return "switch port=" + std::to_string(port_) + " latency_ns=" + std::to_string(latency_ns_) +
           " queue=" + std::to_string(queue_) + " table=" + std::to_string(fabric_->table()) +
           " aging_ns=" + std::to_string(fabric_->aging_ns()) +
           " learning=" + std::to_string(fabric_->learning() ? 1 : 0) +
           " rate=" + std::to_string(rate_fps_) + " max_frame=" + std::to_string(max_frame_);
}

// A received frame: check it, learn its source, decide where it goes.
void SwitchModel::accept(StoredFrame* f) {
    SwitchPortCounters& pc = fabric_->port[port_];
    if (f->bytes.size() < kMinFrame) {
        counters_.errored++;
        pool_.free(f);
        return;
    }
    if (!ethernet_fcs_ok(f->bytes)) {
        pc.fcs_errors++;
        counters_.errored++;
        pool_.free(f);
        return;
    }
    const uint64_t dst = mac_at(f->bytes, 0), src = mac_at(f->bytes, 6);
    fabric_->learn(src, port_, now_);
    const int out = group_address(dst) ? -1 : fabric_->lookup(dst, now_);
    if (out == int(port_)) {
        pc.filtered++;
        counters_.dropped++;
        pool_.free(f);
        return;
    }
    (out < 0 ? pc.flooded : pc.forwarded)++;
    f->t = now_ + latency_cycles_;
    pipeline_.push_back(f);
}

void SwitchModel::try_start() {
    if (!egress_.empty() && egress_.front()->t <= now_ && tx_.free_at(now_)) {
        tx_.start(egress_.front());
        egress_.pop_front();
    }
}

GmiiSym SwitchModel::step(GmiiSym in) {
    if (StoredFrame* f = rx_.step(in, now_, counters_)) accept(f);

    // ---- egress queue: a frame starting now leaves it before the ready frames join it ---------
    try_start();
    while (!pipeline_.empty() && pipeline_.front()->t <= now_) {
        StoredFrame* f = pipeline_.front();
        pipeline_.pop_front();
        if (egress_.size() >= queue_) {
            fabric_->port[port_].queue_drops++;
            counters_.dropped++;
            pool_.free(f);
            continue;
        }
        if (rate_fps_) {
            // rate slots in units of 1/rate cycles: one slot lasts clock/rate cycles
            const Time ready = Time(now_) * rate_fps_;
            const Time slot = ready > slot_ ? ready : slot_;
            slot_ = slot + kClockHz;
            f->t = uint64_t((slot + rate_fps_ - 1) / rate_fps_);  // round up to a cycle
        }
        egress_.push_back(f);
    }
    try_start();

    const GmiiSym out = tx_.step(now_, counters_);
    now_++;
    return out;
}

}  // namespace ws
