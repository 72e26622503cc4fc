// DUT model "tap": the Linux kernel as the device under test, through the two TAP devices of
// a namespace of the simulation's own (dut_tap_kernel.h). The kernel decides (forwarding,
// rewrites, ARP/ND, bridge learning, filtering, ICMP); the model decides when (its latency
// and the line): the kernel takes no simulated time.
//
// The harness places one model per direction; the two TapModel instances share one TapFabric
// (as the switch's share their MAC table). Direction d takes what tester port d transmits and
// puts out, to tester port 1-d, what the kernel sent out of TAP 1-d.
//
//  * Receive: as the switch (dut_switch.h): a frame is received completely; at its arrival
//    cycle A a frame shorter than 64 bytes or with a bad FCS is discarded (errored), as a NIC
//    would; a good one is written, without its FCS, to TAP d in cycle A. A write the kernel
//    refuses counts in write_errors and dropped.
//  * The kernel forwards inside write(): right after each write both TAPs are drained, and
//    every `poll` of simulated time too (frames the kernel sends on its own timers: ARP
//    probes, a queued frame released by a neighbour answer arrives with that answer's write).
//    A frame read in cycle R is ready for its tester port at R + latency/8.
//  * Egress: a ready frame shorter than 60 bytes is padded with zeros to 60, a fresh FCS is
//    appended, and it joins that port's output queue if fewer than `queue` frames wait there
//    (else it is dropped: queue_drops, dropped of the direction that puts it out). Frames
//    leave in order at line rate, at least 12 idle cycles apart.
// DutCounters of direction d: frames_in, errored (malformed, short, bad FCS, as received from
// port d); frames_out and dropped (queue drops, write errors) on its output side.
#pragma once
#include <cstdint>
#include <deque>
#include <memory>
#include <vector>

#include "dut_model.h"
#include "dut_switch.h"
#include "dut_tap_kernel.h"

namespace ws {

// Counters of one TAP (cumulative).
struct TapPortCounters {
    uint64_t written = 0;       // frames handed to the kernel on this TAP
    uint64_t write_errors = 0;  // frames the kernel refused
    uint64_t read = 0;          // frames the kernel sent out of this TAP
    uint64_t queue_drops = 0;   // of those, dropped by the full output queue
};

class TapFabric {
public:
    static constexpr unsigned kPorts = TapKernel::kPorts;

    TapFabric(uint64_t latency_ns, uint64_t poll_ns, uint64_t queue);
    ~TapFabric();
    TapFabric(const TapFabric&) = delete;
    TapFabric& operator=(const TapFabric&) = delete;

    // The harness builds direction 0 then direction 1: direction 0 opens a new fabric (a new
    // namespace); direction 1 joins the one opened last if it has no direction 1 yet.
    static std::shared_ptr<TapFabric> attach(unsigned direction, uint64_t latency_ns, uint64_t poll_ns,
                                             uint64_t queue);

    // A good frame from tester port `port` (bytes with FCS) at cycle `now`.
    void ingress(unsigned port, const std::vector<uint8_t>& frame, uint64_t now);
    // Drains the TAPs if `poll` has passed since the last drain.
    void poll(uint64_t now);
    // The next frame for tester port `port` if it may start at `now` (ownership passes to the
    // caller, who frees it into pool()).
    StoredFrame* ready(unsigned port, uint64_t now);

    FramePool& pool() { return pool_; }
    const TapKernel& kernel() const { return kernel_; }
    uint64_t latency_ns() const { return latency_ns_; }
    uint64_t poll_ns() const { return poll_ns_; }
    uint64_t queue() const { return queue_; }

    TapPortCounters port[kPorts];

private:
    void drain(uint64_t now);

    FramePool pool_;  // first: the frames below go back to it
    TapKernel kernel_;
    uint64_t latency_ns_, poll_ns_, queue_, latency_cycles_, poll_cycles_;
    uint64_t next_poll_ = 0;
    bool attached_[kPorts] = {false, false};
    std::deque<StoredFrame*> out_[kPorts];  // per tester port, t = ready cycle
    std::vector<uint8_t> buf_;
};

class TapModel final : public DutModel {
public:
    TapModel(std::shared_ptr<TapFabric> fabric, unsigned direction, uint64_t max_frame);
    TapModel(const TapModel&) = delete;
    TapModel& operator=(const TapModel&) = delete;

    GmiiSym step(GmiiSym in) override;
    std::string describe() const override;

private:
    static constexpr uint64_t kMinFrame = 64;  // shorter frames are runts

    std::shared_ptr<TapFabric> fabric_;  // first: the receiver and transmitter use its pool
    unsigned dir_;
    uint64_t max_frame_;
    uint64_t now_ = 0;
    GmiiReceiver rx_;
    GmiiTransmitter tx_;
};

}  // namespace ws
