// DUT model "switch": a two-port Ethernet learning bridge (IEEE 802.1D / 802.1Q transparent
// bridging), store and forward, as RFC 2544 benchmarks switches.
//
// The harness places one model per direction (port 0 -> port 1 and port 1 -> port 0); the two
// SwitchModel instances of one switch share a SwitchFabric: its MAC address table and its
// counters. A SwitchModel's `port` is its ingress port (= the harness direction); its egress
// port is the other one.
//
//  * Receive: as the router (dut_router.h): a frame is received completely (until tx_en
//    falls; preamble and SFD stripped, the bytes after the SFD kept); its arrival cycle A is
//    the first cycle in which tx_en is seen low after it. Frames with tx_er, without an SFD,
//    longer than `max_frame` bytes or shorter than 64 bytes (a runt) are discarded as errored.
//  * FCS: the last 4 bytes must be the Ethernet CRC-32 of the others (least significant byte
//    first); a frame with a bad FCS is discarded (counted in fcs_errors and in errored).
//  * Learning (at A, before the forwarding decision, unless `learning` is 0): the source
//    address (bytes 6..11) of every good frame, unless it is a group address (I/G bit set),
//    is learned against the ingress port with the time A: a known address is refreshed (and
//    moves to this port if it was known on the other one, counted in `moved`); a new address
//    is added if the table holds fewer than `table` live entries, else it is not learned
//    (counted in `table_full`). An entry ages out exactly `aging` after the last frame that
//    refreshed it: it is live at cycle t iff t < last + aging/8 (aging 0: never ages out).
//  * Forwarding (at A): destination address (bytes 0..5) a group address (broadcast,
//    multicast) -> flooded; a live entry on the other port -> forwarded; a live entry on the
//    ingress port -> filtered (discarded: the station is on the segment it came from);
//    unknown -> flooded. With two ports flooding sends the frame to the other port, so
//    forwarded and flooded frames take the same path; they are only counted apart.
//  * Store and forward: a forwarded or flooded frame is ready for the egress port at
//    R = A + latency/8. It then joins the egress queue if fewer than `queue` frames are
//    waiting there (ready, not yet started on the line; a frame starting in cycle R does not
//    count), else it is dropped (tail drop, counted in queue_drops and dropped).
//  * Egress: frames leave in order at line rate with a fresh preamble/SFD, at the first cycle
//    >= their start time at which the line is free; at least 12 idle cycles separate output
//    frames. Without `rate` (wire speed, the default) a frame's start time is R, so an idle
//    switch puts the first preamble byte out exactly latency after A: first byte in to first
//    byte out = (8 + frame length) x 8 ns + latency.
//  * `rate` (frames/s, 0 = wire speed): forwarding-rate limit, kept exactly in units of
//    1/rate cycles as the router's server: the frame entering the queue gets the slot
//    S = max(R, S_prev + 1/rate) and may not start before cycle ceil(S); the long-run rate of
//    a backlogged switch is exactly `rate`; a backlog fills the egress queue, whose overflow
//    is dropped.
// DutCounters: dropped = filtered + queue_drops, errored = malformed + fcs_errors, so
// frames_in = frames_out + dropped + errored + frames still inside. A reset (dut_reset.h)
// rebuilds both models, which empties the table; the fabric's counters survive it.
#pragma once
#include <cstdint>
#include <deque>
#include <memory>
#include <unordered_map>
#include <vector>

#include "dut_model.h"

namespace ws {

// Ethernet FCS: CRC-32 (IEEE 802.3, reflected, init and final XOR 0xFFFFFFFF).
uint32_t ethernet_crc32(const uint8_t* p, size_t n);

// True if the last 4 bytes of `f` are the FCS of the bytes before them.
bool ethernet_fcs_ok(const std::vector<uint8_t>& f);

// A frame stored inside a model: the bytes after the SFD and one time (model-defined).
struct StoredFrame {
    std::vector<uint8_t> bytes;
    uint64_t t = 0;
};

// A free list of frame buffers, so a model allocates nothing per frame in the steady state.
class FramePool {
public:
    FramePool() = default;
    ~FramePool();
    FramePool(const FramePool&) = delete;
    FramePool& operator=(const FramePool&) = delete;

    StoredFrame* alloc();
    void free(StoredFrame* f) { pool_.push_back(f); }

private:
    std::vector<StoredFrame*> pool_;
};

// GMII receive of a store-and-forward model, the router's rules (dut_router.h): step() returns
// a frame (owned by the caller, t = its arrival cycle) in the first cycle tx_en is low after it;
// frames with tx_er, without an SFD or longer than max_frame are counted as errored and freed.
class GmiiReceiver {
public:
    GmiiReceiver(FramePool& pool, uint64_t max_frame) : pool_(pool), max_frame_(max_frame) {}
    ~GmiiReceiver();
    GmiiReceiver(const GmiiReceiver&) = delete;
    GmiiReceiver& operator=(const GmiiReceiver&) = delete;

    StoredFrame* step(GmiiSym in, uint64_t now, DutCounters& c);

private:
    enum class State : uint8_t { kIdle, kPreamble, kData, kDiscard };
    FramePool& pool_;
    uint64_t max_frame_;
    State state_ = State::kIdle;
    StoredFrame* rx_ = nullptr;
};

// GMII transmit at line rate: a fresh preamble/SFD then the stored bytes; at least kMinGap
// idle cycles after each frame. Counts frames_out and frees each frame once sent.
class GmiiTransmitter {
public:
    explicit GmiiTransmitter(FramePool& pool) : pool_(pool) {}
    ~GmiiTransmitter();
    GmiiTransmitter(const GmiiTransmitter&) = delete;
    GmiiTransmitter& operator=(const GmiiTransmitter&) = delete;

    // May a new frame start in cycle `now`?
    bool free_at(uint64_t now) const { return !tx_ && now >= out_free_; }
    bool busy() const { return tx_ != nullptr; }
    void start(StoredFrame* f) { tx_ = f, pos_ = 0; }
    GmiiSym step(uint64_t now, DutCounters& c);

private:
    FramePool& pool_;
    StoredFrame* tx_ = nullptr;
    size_t pos_ = 0;          // position in preamble + frame
    uint64_t out_free_ = 0;   // earliest cycle the next frame may start
};

// Counters of one ingress port of a switch (cumulative over resets).
struct SwitchPortCounters {
    uint64_t forwarded = 0;    // destination known on the other port
    uint64_t flooded = 0;      // destination unknown, broadcast or multicast
    uint64_t filtered = 0;     // destination known on the ingress port: discarded
    uint64_t fcs_errors = 0;   // discarded for a bad FCS
    uint64_t queue_drops = 0;  // forwarded or flooded, then dropped by the full egress queue
};

// One switch: the MAC address table its ports share, and its counters.
class SwitchFabric {
public:
    static constexpr unsigned kPorts = 2;

    SwitchFabric(uint64_t table, uint64_t aging_ns, bool learning);

    // The harness builds a DUT's direction 0 then its direction 1 (make_dut in main.cpp): a
    // switch of direction 0 opens a new fabric; one of direction 1 joins the fabric opened
    // last if that is still alive, has the same table parameters and no port 1 yet, else it
    // opens its own (a switch seen from one port only).
    static std::shared_ptr<SwitchFabric> attach(unsigned port, uint64_t table, uint64_t aging_ns,
                                                bool learning);
    // The fabric opened last (reports and tests), or null.
    static std::shared_ptr<SwitchFabric> last();

    // Learn `mac` (48 bits) on `port` at cycle `now` (no-op with learning off or a group address).
    void learn(uint64_t mac, unsigned port, uint64_t now);
    // Port `mac` is known on at cycle `now`, or -1.
    int lookup(uint64_t mac, uint64_t now) const;
    // Live entries at cycle `now`.
    uint64_t entries(uint64_t now) const;
    // Forget every address (the device rebooted).
    void clear();

    uint64_t table() const { return table_; }
    uint64_t aging_ns() const { return aging_ns_; }
    bool learning() const { return learning_; }

    SwitchPortCounters port[kPorts];
    uint64_t learned = 0;     // addresses added to the table
    uint64_t moved = 0;       // live addresses seen on the other port than their entry's
    uint64_t table_full = 0;  // new source addresses not learned: table full

private:
    struct Entry {
        unsigned port;
        uint64_t last;  // cycle of the last frame that refreshed it
    };
    bool live(const Entry& e, uint64_t now) const {
        return !aging_cycles_ || now < e.last + aging_cycles_;
    }
    void purge(uint64_t now);

    uint64_t table_, aging_ns_, aging_cycles_;
    bool learning_;
    bool attached_[kPorts] = {false, false};
    std::unordered_map<uint64_t, Entry> map_;  // may hold expired entries until purged
    uint64_t next_expiry_ = UINT64_MAX;        // no entry expires before this cycle
};

class SwitchModel final : public DutModel {
public:
    SwitchModel(std::shared_ptr<SwitchFabric> fabric, unsigned port, uint64_t latency_ns,
                uint64_t queue, uint64_t rate_fps, uint64_t max_frame);
    ~SwitchModel() override;
    SwitchModel(const SwitchModel&) = delete;
    SwitchModel& operator=(const SwitchModel&) = delete;

    GmiiSym step(GmiiSym in) override;
    std::string describe() const override;

    // Frames currently inside the model (in the latency pipeline, queued, being transmitted).
    size_t frames_inside() const { return pipeline_.size() + egress_.size() + (tx_.busy() ? 1 : 0); }
    const SwitchFabric& fabric() const { return *fabric_; }

private:
    using Time = unsigned __int128;  // rate slots in units of 1/rate cycles

    static constexpr uint64_t kMinFrame = 64;  // shorter frames are runts
    void accept(StoredFrame* f);
    void try_start();

    std::shared_ptr<SwitchFabric> fabric_;
    unsigned port_;
    uint64_t latency_ns_, queue_, rate_fps_, max_frame_;
    uint64_t latency_cycles_;

    uint64_t now_ = 0;
    Time slot_ = 0;  // the next frame's rate slot is not before this (units of 1/rate cycles)

    FramePool pool_;
    GmiiReceiver rx_;
    std::deque<StoredFrame*> pipeline_;  // decided, t = ready cycle R
    std::deque<StoredFrame*> egress_;    // queued, t = earliest start cycle
    GmiiTransmitter tx_;
};

}  // namespace ws
