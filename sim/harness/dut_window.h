// What both simulation flavours share around their Verilated top: the wiring of the two DUT
// models between the tester's ports, and the DUT control window.
//
//   p0 GMII TX -> model A -> p1 GMII RX
//   p1 GMII TX -> model B -> p0 GMII RX
//
// DUT control window (simulation only; Etherbone byte addresses from kBase, 32-bit words,
// 64-bit values low word first; layout mirrored in sim/control.py):
//   +0x00  write: reset the DUT now (both directions, RFC 6201; needs the model's `reboot`
//          parameter); read: 1 if the last reset command was taken, 0 if refused
//   +0x08  harness cycle counter (64)
//   +0x40 + 0x40*d  direction d (0: model A, p0 -> p1; 1: model B) counters, 64 bits each:
//          +0x00 frames_in, +0x08 frames_out, +0x10 dropped, +0x18 errored, +0x20 resets,
//          +0x28 reset_lost, +0x30 reset_at (cycle), +0x38 up_at (cycle)
//   +0xC0 + 0x40*d  direction d impairment and collapse counters, 64 bits each:
//          +0x00 lost, +0x08 duplicated, +0x10 reordered, +0x18 corrupted, +0x20 blackout,
//          +0x28 collapses, +0x30 corrupt_dups, +0x38 reorder_hidden
#pragma once
#include <cstdint>

#include "dut_model.h"
#include "pcap_wire.h"

namespace ws {

// The models see the TX outputs registered at the previous edge and produce the RX inputs
// sampled at the next one. T0 is a Verilated top with the p0_ GMII ports, T1 one with the
// p1_ ports (the same top, or the two parts of a tester in two).
// `wire`, if given, records the four wires in cycle `cycle` (pcap_wire.h).
template <typename T0, typename T1>
inline void step_duts(T0& t0, T1& t1, DutModel& a, DutModel& b, PcapWire* wire = nullptr, uint64_t cycle = 0) {
    const GmiiSym ta{t0.p0_gmii_tx_en, t0.p0_gmii_tx_er, t0.p0_gmii_txd};
    const GmiiSym tb{t1.p1_gmii_tx_en, t1.p1_gmii_tx_er, t1.p1_gmii_txd};
    GmiiSym ra = a.step(ta);
    GmiiSym rb = b.step(tb);
    if (wire) {
        wire->observe(0, cycle, ta);
        wire->observe(1, cycle, ra);
        wire->observe(2, cycle, tb);
        wire->observe(3, cycle, rb);
    }
    t1.p1_gmii_rx_dv = ra.en;
    t1.p1_gmii_rx_er = ra.er;
    t1.p1_gmii_rxd = ra.d;
    t0.p0_gmii_rx_dv = rb.en;
    t0.p0_gmii_rx_er = rb.er;
    t0.p0_gmii_rxd = rb.d;
}

// Idle GMII receive inputs, before the first evaluation (T0, T1: as step_duts).
template <typename T0, typename T1>
inline void idle_rx(T0& t0, T1& t1) {
    t0.p0_gmii_rx_dv = 0;
    t0.p0_gmii_rx_er = 0;
    t0.p0_gmii_rxd = 0;
    t1.p1_gmii_rx_dv = 0;
    t1.p1_gmii_rx_er = 0;
    t1.p1_gmii_rxd = 0;
}

class DutWindow {
public:
    static constexpr uint32_t kBase = 0x00100000;  // beyond the 256 KiB CSR space
    static constexpr uint32_t kBytes = 0x140;

    DutWindow(DutModel& a, DutModel& b, const uint64_t& cycles) : a_(a), b_(b), cycles_(cycles) {}

    // Etherbone accesses beyond the CSR space (CsrBus::ext_write/ext_read): false for an
    // address outside the window.
    bool write(uint32_t byte_addr) {
        if (byte_addr != kBase) return false;
        bool a = a_.trigger_reset();
        bool b = b_.trigger_reset();
        reset_taken_ = a && b;
        return true;
    }

    bool read(uint32_t byte_addr, uint32_t& value) const {
        if (byte_addr < kBase || byte_addr >= kBase + kBytes || byte_addr % 4) return false;
        const uint32_t off = byte_addr - kBase;
        uint64_t v = 0;
        if (off < 0x08) {
            v = off == 0 ? reset_taken_ : 0;
        } else if (off < 0x40) {
            v = off < 0x10 ? cycles_ : 0;
        } else if (off < 0xC0) {
            const DutCounters& c = ((off - 0x40) / 0x40 ? b_ : a_).counters();
            const uint64_t fields[8] = {c.frames_in, c.frames_out, c.dropped, c.errored,
                                        c.resets,    c.reset_lost, c.reset_at, c.up_at};
            v = fields[((off - 0x40) % 0x40) / 8];
        } else {
            const DutCounters& c = ((off - 0xC0) / 0x40 ? b_ : a_).counters();
            const uint64_t fields[8] = {c.lost,     c.duplicated, c.reordered,    c.corrupted,
                                        c.blackout, c.collapses,  c.corrupt_dups, c.reorder_hidden};
            v = fields[((off - 0xC0) % 0x40) / 8];
        }
        value = uint32_t(off % 8 ? v >> 32 : v);
        return true;
    }

private:
    DutModel& a_;
    DutModel& b_;
    const uint64_t& cycles_;
    bool reset_taken_ = false;
};

}  // namespace ws
