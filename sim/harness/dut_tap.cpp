#include "dut_tap.h"

namespace ws {

namespace {
std::weak_ptr<TapFabric> g_last_fabric;
constexpr size_t kMinFrameNoFcs = 60;
}  // namespace

TapFabric::TapFabric(uint64_t latency_ns, uint64_t poll_ns, uint64_t queue)
    : latency_ns_(latency_ns),
      poll_ns_(poll_ns),
      queue_(queue),
      latency_cycles_(latency_ns / kNsPerCycle),
      poll_cycles_(poll_ns / kNsPerCycle),
      buf_(TapKernel::kMaxRead) {}

TapFabric::~TapFabric() {
    for (auto& q : out_)
        for (StoredFrame* f : q) delete f;
}

std::shared_ptr<TapFabric> TapFabric::attach(unsigned direction, uint64_t latency_ns, uint64_t poll_ns,
                                             uint64_t queue) {
    direction &= 1;
    std::shared_ptr<TapFabric> f = direction == 1 ? g_last_fabric.lock() : nullptr;
    if (!f || f->attached_[direction]) {
        f = std::make_shared<TapFabric>(latency_ns, poll_ns, queue);
        g_last_fabric = f;
    }
    f->attached_[direction] = true;
    return f;
}

void TapFabric::ingress(unsigned port, const std::vector<uint8_t>& frame, uint64_t now) {
    if (kernel_.write(port, frame.data(), frame.size() - 4))
        this->port[port].written++;
    else
        this->port[port].write_errors++;
    drain(now);
}

void TapFabric::poll(uint64_t now) {
    if (now >= next_poll_) drain(now);
}

void TapFabric::drain(uint64_t now) {
    next_poll_ = now + poll_cycles_;
    for (unsigned p = 0; p < kPorts; p++) {
        while (size_t n = kernel_.read(p, buf_.data())) {
            port[p].read++;
            if (out_[p].size() >= queue_) {
                port[p].queue_drops++;
                continue;
            }
            StoredFrame* f = pool_.alloc();
            f->bytes.assign(buf_.begin(), buf_.begin() + n);
            if (n < kMinFrameNoFcs) f->bytes.resize(kMinFrameNoFcs, 0);
            const uint32_t fcs = ethernet_crc32(f->bytes.data(), f->bytes.size());
            for (int k = 0; k < 4; k++) f->bytes.push_back(uint8_t(fcs >> (8 * k)));
            f->t = now + latency_cycles_;
            out_[p].push_back(f);
        }
    }
}

StoredFrame* TapFabric::ready(unsigned p, uint64_t now) {
    if (out_[p].empty() || out_[p].front()->t > now) return nullptr;
    StoredFrame* f = out_[p].front();
    out_[p].pop_front();
    return f;
}

TapModel::TapModel(std::shared_ptr<TapFabric> fabric, unsigned direction, uint64_t max_frame)
    : fabric_(std::move(fabric)),
      dir_(direction & 1),
      max_frame_(max_frame),
      rx_(fabric_->pool(), max_frame),
      tx_(fabric_->pool()) {}

std::string TapModel::describe() const {
    return "tap port=" + std::to_string(dir_) + " latency_ns=" + std::to_string(fabric_->latency_ns()) +
           " poll_ns=" + std::to_string(fabric_->poll_ns()) + " queue=" + std::to_string(fabric_->queue()) +
           " max_frame=" + std::to_string(max_frame_) + " ns=" + fabric_->kernel().how();
}

GmiiSym TapModel::step(GmiiSym in) {
    if (StoredFrame* f = rx_.step(in, now_, counters_)) {
        if (f->bytes.size() < kMinFrame || !ethernet_fcs_ok(f->bytes))
            counters_.errored++;
        else
            fabric_->ingress(dir_, f->bytes, now_);
        fabric_->pool().free(f);
    }
    fabric_->poll(now_);
    const unsigned out = 1 - dir_;
    if (tx_.free_at(now_)) {
        if (StoredFrame* f = fabric_->ready(out, now_)) tx_.start(f);
    }
    const TapPortCounters& pc = fabric_->port[out];
    counters_.dropped = pc.queue_drops + fabric_->port[dir_].write_errors;
    return tx_.step(now_++, counters_);
}

}  // namespace ws
