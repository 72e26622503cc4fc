// The clock loop: one Verilated wirespeed_sim_top, two DUT models wired port to port
// (dut_window.h), the CSR bus driven one access per clock cycle, and the DUT control window
// (dut_window.h) beyond the CSR space.
#pragma once
#include <cstdint>
#include <memory>

#include "Vwirespeed_sim_top.h"
#include "dut_model.h"
#include "dut_window.h"
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
          b_(std::move(b)),
          window_(*a_, *b_, cycles_) {
        top_->clk = 0;
        top_->rst = 0;
        top_->csr_addr = 0;
        top_->csr_r_stb = 0;
        top_->csr_w_stb = 0;
        top_->csr_w_data = 0;
        idle_rx(*top_);
        top_->eval();
    }

    ~SimHarness() override { top_->final(); }

    // One clock cycle.
    inline void tick() {
        Vwirespeed_sim_top& t = *top_;
        step_duts(t, *a_, *b_, wire_, cycles_);
        t.clk = 1;
        t.eval();
        t.clk = 0;
        t.eval();
        cycles_++;
    }

    // rst reaches an RTL device under test beside the tester (sim/dut_rtl.py); the tester's
    // netlist has no reset and runs from its initial state (sim/netlist.py)
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

    bool ext_write(uint32_t byte_addr, uint32_t /*data*/) override { return window_.write(byte_addr); }
    bool ext_read(uint32_t byte_addr, uint32_t& value) override { return window_.read(byte_addr, value); }

    // Record the four wires from now on (none: nullptr); the caller keeps `wire` alive.
    void record(PcapWire* wire) { wire_ = wire; }

    uint64_t cycles() const { return cycles_; }
    bool finished() const { return ctx_->gotFinish(); }
    const DutModel& model_a() const { return *a_; }
    const DutModel& model_b() const { return *b_; }

private:
    std::unique_ptr<VerilatedContext> ctx_;
    std::unique_ptr<Vwirespeed_sim_top> top_;
    std::unique_ptr<DutModel> a_, b_;
    uint64_t cycles_ = 0;
    DutWindow window_;
    PcapWire* wire_ = nullptr;
};

}  // namespace ws
