// The clock loop: one Verilated wirespeed_sim_top, two DUT models wired port to port, and
// the CSR bus driven one access per clock cycle.
//
//   p0 GMII TX -> model A -> p1 GMII RX
//   p1 GMII TX -> model B -> p0 GMII RX
//
// DUT control window (simulation only; Etherbone byte addresses from kDutBase, 32-bit words,
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
#include <memory>

#include "Vwirespeed_sim_top.h"
#include "dut_model.h"
#include "etherbone.h"
#include "verilated.h"

namespace ws {

class SimHarness final : public CsrBus {
public:
    static constexpr uint32_t kCsrWords = 65536;  // csr_addr is 16 bits (256 KiB)
    static constexpr uint32_t kDutBase = 0x00100000;
    static constexpr uint32_t kDutBytes = 0x140;

    SimHarness(std::unique_ptr<DutModel> a, std::unique_ptr<DutModel> b)
        : ctx_(std::make_unique<VerilatedContext>()),
          top_(std::make_unique<Vwirespeed_sim_top>(ctx_.get(), "top")),
          a_(std::move(a)),
          b_(std::move(b)) {
        top_->clk = 0;
        top_->rst = 0;
        top_->csr_addr = 0;
        top_->csr_r_stb = 0;
        top_->csr_w_stb = 0;
        top_->csr_w_data = 0;
        top_->p0_gmii_rx_dv = 0;
        top_->p0_gmii_rx_er = 0;
        top_->p0_gmii_rxd = 0;
        top_->p1_gmii_rx_dv = 0;
        top_->p1_gmii_rx_er = 0;
        top_->p1_gmii_rxd = 0;
        top_->eval();
    }

    ~SimHarness() override { top_->final(); }

    // One clock cycle. The models see the TX outputs registered at the previous edge and
    // produce the RX inputs sampled at this edge.
    inline void tick() {
        Vwirespeed_sim_top& t = *top_;
        GmiiSym ra = a_->step(GmiiSym{t.p0_gmii_tx_en, t.p0_gmii_tx_er, t.p0_gmii_txd});
        GmiiSym rb = b_->step(GmiiSym{t.p1_gmii_tx_en, t.p1_gmii_tx_er, t.p1_gmii_txd});
        t.p1_gmii_rx_dv = ra.en;
        t.p1_gmii_rx_er = ra.er;
        t.p1_gmii_rxd = ra.d;
        t.p0_gmii_rx_dv = rb.en;
        t.p0_gmii_rx_er = rb.er;
        t.p0_gmii_rxd = rb.d;
        t.clk = 1;
        t.eval();
        t.clk = 0;
        t.eval();
        cycles_++;
    }

    void reset(unsigned cycles) {
        top_->rst = 1;
        for (unsigned i = 0; i < cycles; i++) tick();
        top_->rst = 0;
    }

    uint32_t read(uint32_t word_addr) override {
        top_->csr_addr = word_addr & (kCsrWords - 1);
        top_->csr_r_stb = 1;
        tick();
        top_->csr_r_stb = 0;
        // r_data is valid after the READ_LATENCY th edge that follows the strobe's (the
        // pipelined bus of wirespeed.gateware.registers; sim/build.py passes the constant)
        for (unsigned i = 0; i < WS_CSR_READ_LATENCY; i++) tick();
        return top_->csr_r_data;
    }

    void write(uint32_t word_addr, uint32_t data) override {
        top_->csr_addr = word_addr & (kCsrWords - 1);
        top_->csr_w_data = data;
        top_->csr_w_stb = 1;
        tick();
        top_->csr_w_stb = 0;
        // the next strobe comes WRITE_TO_READ cycles after this one: a read then sees what
        // the write did (a SNAPSHOT's registers included)
        for (unsigned i = 1; i < WS_CSR_WRITE_TO_READ; i++) tick();
    }

    bool ext_write(uint32_t byte_addr, uint32_t /*data*/) override {
        if (byte_addr != kDutBase) return false;
        bool a = a_->trigger_reset();
        bool b = b_->trigger_reset();
        reset_taken_ = a && b;
        return true;
    }

    bool ext_read(uint32_t byte_addr, uint32_t& value) override {
        if (byte_addr < kDutBase || byte_addr >= kDutBase + kDutBytes || byte_addr % 4) return false;
        const uint32_t off = byte_addr - kDutBase;
        uint64_t v = 0;
        if (off < 0x08) {
            v = off == 0 ? reset_taken_ : 0;
        } else if (off < 0x40) {
            v = off < 0x10 ? cycles_ : 0;
        } else if (off < 0xC0) {
            const DutCounters& c = ((off - 0x40) / 0x40 ? b_ : a_)->counters();
            const uint64_t fields[8] = {c.frames_in, c.frames_out, c.dropped, c.errored,
                                        c.resets,    c.reset_lost, c.reset_at, c.up_at};
            v = fields[((off - 0x40) % 0x40) / 8];
        } else {
            const DutCounters& c = ((off - 0xC0) / 0x40 ? b_ : a_)->counters();
            const uint64_t fields[8] = {c.lost,     c.duplicated, c.reordered,    c.corrupted,
                                        c.blackout, c.collapses,  c.corrupt_dups, c.reorder_hidden};
            v = fields[((off - 0xC0) % 0x40) / 8];
        }
        value = uint32_t(off % 8 ? v >> 32 : v);
        return true;
    }

    uint64_t cycles() const { return cycles_; }
    bool finished() const { return ctx_->gotFinish(); }
    const DutModel& model_a() const { return *a_; }
    const DutModel& model_b() const { return *b_; }

private:
    std::unique_ptr<VerilatedContext> ctx_;
    std::unique_ptr<Vwirespeed_sim_top> top_;
    std::unique_ptr<DutModel> a_, b_;
    uint64_t cycles_ = 0;
    bool reset_taken_ = false;
};

}  // namespace ws
