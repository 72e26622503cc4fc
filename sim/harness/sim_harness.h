// The clock loop: the Verilated wirespeed_sim_top, two DUT models wired port to port
// (dut_window.h), the CSR bus driven one access per clock cycle, and the DUT control window
// (dut_window.h) beyond the CSR space.
//
// Built with WS_PART_B, the tester is two models (sim/partition.py): wirespeed_sim_top
// holds port 0 and the bus's read path, wirespeed_sim_top_b port 1; each clock both are
// evaluated (on two threads, or one after the other), then the state each reads of the other
// is copied across (part_exchange.h). The CSR bus inputs go to both.
#pragma once
#include <cstdint>
#include <memory>

#include "Vwirespeed_sim_top.h"
#include "dut_model.h"
#include "dut_window.h"
#include "etherbone.h"
#include "verilated.h"
#ifdef WS_PART_B
#include "Vwirespeed_sim_top_b.h"
#include "part_exchange.h"
#include "part_worker.h"
#endif

namespace ws {

class SimHarness final : public CsrBus {
public:
    static constexpr uint32_t kCsrWords = 65536;  // csr_addr is 16 bits (256 KiB)

    // `threads`: 2 evaluates a two-part tester's parts on two threads (1: on this one).
    SimHarness(std::unique_ptr<DutModel> a, std::unique_ptr<DutModel> b, unsigned threads = 1)
        : ctx_(std::make_unique<VerilatedContext>()),
          top_(std::make_unique<Vwirespeed_sim_top>(ctx_.get(), "top")),
#ifdef WS_PART_B
          ctx_b_(std::make_unique<VerilatedContext>()),
          top_b_(std::make_unique<Vwirespeed_sim_top_b>(ctx_b_.get(), "top")),
#endif
          a_(std::move(a)),
          b_(std::move(b)),
          window_(*a_, *b_, cycles_) {
        each([](auto& t) {
            t.clk = 0;
            t.rst = 0;
            t.csr_addr = 0;
            t.csr_r_stb = 0;
            t.csr_w_stb = 0;
            t.csr_w_data = 0;
        });
#ifdef WS_PART_B
        idle_rx(*top_, *top_b_);
        // the first evaluation sets each part's initial state; then each reads the other's
        each([](auto& t) { t.eval(); });
        exchange_parts(*top_, *top_b_);
        if (threads > 1) worker_ = std::make_unique<PartWorker>([this] { clock(*top_b_); });
#else
        (void)threads;
        idle_rx(*top_, *top_);
        top_->eval();
#endif
    }

    ~SimHarness() override {
#ifdef WS_PART_B
        worker_.reset();
        top_b_->final();
#endif
        top_->final();
    }

    // how many parts the tester was built in (sim/partition.py)
    static constexpr unsigned parts() {
#ifdef WS_PART_B
        return 2;
#else
        return 1;
#endif
    }

    // One clock cycle.
    inline void tick() {
        Vwirespeed_sim_top& t = *top_;
#ifdef WS_PART_B
        Vwirespeed_sim_top_b& u = *top_b_;
        step_duts(t, u, *a_, *b_, wire_, cycles_);
        if (worker_) {
            worker_->start();
            clock(t);
            worker_->wait();
        } else {
            clock(t);
            clock(u);
        }
        exchange_parts(t, u);
#else
        step_duts(t, t, *a_, *b_, wire_, cycles_);
        clock(t);
#endif
        cycles_++;
    }

    // rst reaches an RTL device under test beside the tester (sim/dut_rtl.py); the tester's
    // netlist has no reset and runs from its initial state (sim/netlist.py)
    void reset(unsigned cycles) {
        each([](auto& t) { t.rst = 1; });
        for (unsigned i = 0; i < cycles; i++) tick();
        each([](auto& t) { t.rst = 0; });
    }

    uint32_t read(uint32_t word_addr) override {
        each([word_addr](auto& t) {
            t.csr_addr = word_addr & (kCsrWords - 1);
            t.csr_r_stb = 1;
        });
        tick();
        each([](auto& t) { t.csr_r_stb = 0; });
        // r_data is valid after the READ_LATENCY th edge that follows the strobe's (the
        // pipelined bus of wirespeed.gateware.registers; sim/build.py passes the constant)
        for (unsigned i = 0; i < WS_CSR_READ_LATENCY; i++) tick();
        return top_->csr_r_data;
    }

    void write(uint32_t word_addr, uint32_t data) override {
        each([word_addr, data](auto& t) {
            t.csr_addr = word_addr & (kCsrWords - 1);
            t.csr_w_data = data;
            t.csr_w_stb = 1;
        });
        tick();
        each([](auto& t) { t.csr_w_stb = 0; });
        // the next strobe comes WRITE_TO_READ cycles after this one: a read then sees what
        // the write did (a SNAPSHOT's registers included)
        for (unsigned i = 1; i < WS_CSR_WRITE_TO_READ; i++) tick();
    }

    bool ext_write(uint32_t byte_addr, uint32_t /*data*/) override { return window_.write(byte_addr); }
    bool ext_read(uint32_t byte_addr, uint32_t& value) override { return window_.read(byte_addr, value); }

    // Record the four wires from now on (none: nullptr); the caller keeps `wire` alive.
    void record(PcapWire* wire) { wire_ = wire; }

    uint64_t cycles() const { return cycles_; }
    bool finished() const {
#ifdef WS_PART_B
        if (ctx_b_->gotFinish()) return true;
#endif
        return ctx_->gotFinish();
    }
    const DutModel& model_a() const { return *a_; }
    const DutModel& model_b() const { return *b_; }

private:
    template <typename Top>
    static void clock(Top& t) {
        t.clk = 1;
        t.eval();
        t.clk = 0;
        t.eval();
    }

    // `f` on each part of the tester
    template <typename F>
    void each(F f) {
        f(*top_);
#ifdef WS_PART_B
        f(*top_b_);
#endif
    }

    std::unique_ptr<VerilatedContext> ctx_;
    std::unique_ptr<Vwirespeed_sim_top> top_;
#ifdef WS_PART_B
    std::unique_ptr<VerilatedContext> ctx_b_;
    std::unique_ptr<Vwirespeed_sim_top_b> top_b_;
    std::unique_ptr<PartWorker> worker_;  // part B's thread, if it has one
#endif
    std::unique_ptr<DutModel> a_, b_;
    uint64_t cycles_ = 0;
    DutWindow window_;
    PcapWire* wire_ = nullptr;
};

}  // namespace ws
