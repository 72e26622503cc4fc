// The clock loop: one Verilated wirespeed_sim_top, two DUT models wired port to port, and
// the CSR bus driven one access per clock cycle.
//
//   p0 GMII TX -> model A -> p1 GMII RX
//   p1 GMII TX -> model B -> p0 GMII RX
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
        tick();  // r_data is valid after the edge that follows the strobe (memory windows)
        return top_->csr_r_data;
    }

    void write(uint32_t word_addr, uint32_t data) override {
        top_->csr_addr = word_addr & (kCsrWords - 1);
        top_->csr_w_data = data;
        top_->csr_w_stb = 1;
        tick();
        top_->csr_w_stb = 0;
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
};

}  // namespace ws
