// wirespeed-sim, UART management flavour: the Verilated wirespeed_uart_sim_top (the tester of
// wirespeed_sim_top whose CSR bus is mastered by the gateware UartBridge,
// gateware/uart_sim_top.py) running free, wired to two DUT models exactly as in main.cpp, its
// UART pins served over TCP by uart_link (with the per-frame fault injector). The host reaches
// the tester's registers only through the management protocol (docs/management.md), e.g.
// SerialTransport("socket://127.0.0.1:PORT").
//
// The DUT control window (DUT reset and the models' counters, sim/control.py) lies beyond
// the bridge's 256 KiB CSR space: it is served instead on its own Etherbone/UDP port, which
// answers only that window (every other address reads 0 and ignores writes).
//
// Usage: wirespeed-sim-uart [--tcp-port N] [--control-udp-port N] [--divisor N]
//                           [--dut NAME] [--dut-param KEY=VALUE]... [--max-cycles N]
//                           [--seed N] [--late-ms N] [--skew-ppm N]
//                           [--to-design drop=PPM,dup=PPM,late=PPM,corrupt=PPM] [--to-host ...]
//
// Prints "WIRESPEED-SIM READY uart=<tcp port> control_udp=<udp port>" on stdout once reset is
// done and both sockets listen. Stops like main.cpp, then prints the "WIRESPEED-SIM" statistics
// lines on stderr (DUT, FAULTS, LINK, MGMT, CONTROL, EXIT).
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "Vwirespeed_uart_sim_top.h"
#include "dut_model.h"
#include "dut_window.h"
#include "etherbone.h"
#include "sim_cli.h"
#include "sim_cli_dut.h"
#include "uart_link.h"
#include "udp_server.h"
#include "verilated.h"

namespace {

constexpr unsigned kResetCycles = 16;
constexpr unsigned kPollCycles = 256;      // UART socket and control port, every 256 cycles

struct Options {
    ws::UartLinkConfig link;
    uint16_t control_port = 0;
    ws::cli::DutOptions dut;
};

// The tester and the two DUT models, wired as in sim_harness.h (dut_window.h), with the UART
// pins on a uart_link. Also the DUT control window (dut_window.h), for the control port.
class UartSimHarness final : public ws::CsrBus {
public:
    UartSimHarness(std::unique_ptr<ws::DutModel> a, std::unique_ptr<ws::DutModel> b,
                   ws::UartLink& link)
        : ctx_(std::make_unique<VerilatedContext>()),
          top_(std::make_unique<Vwirespeed_uart_sim_top>(ctx_.get(), "top")),
          a_(std::move(a)),
          b_(std::move(b)),
          link_(link),
          window_(*a_, *b_, cycles_) {
        top_->clk = 0;
        top_->rst = 0;
        top_->uart_rx = 1;
        ws::idle_rx(*top_, *top_);
        top_->eval();
    }

    ~UartSimHarness() override { top_->final(); }

    inline void tick() {
        Vwirespeed_uart_sim_top& t = *top_;
        ws::step_duts(t, t, *a_, *b_);
        t.uart_rx = link_.tick(t.uart_tx);
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

    // The control port serves no CSR words (etherbone_handle with csr_words = 0).
    uint32_t read(uint32_t) override { return 0; }
    void write(uint32_t, uint32_t) override {}

    bool ext_write(uint32_t byte_addr, uint32_t /*data*/) override { return window_.write(byte_addr); }
    bool ext_read(uint32_t byte_addr, uint32_t& value) override { return window_.read(byte_addr, value); }

    uint64_t cycles() const { return cycles_; }
    bool finished() const { return ctx_->gotFinish(); }
    const ws::DutModel& model_a() const { return *a_; }
    const ws::DutModel& model_b() const { return *b_; }
    const Vwirespeed_uart_sim_top& top() const { return *top_; }

private:
    std::unique_ptr<VerilatedContext> ctx_;
    std::unique_ptr<Vwirespeed_uart_sim_top> top_;
    std::unique_ptr<ws::DutModel> a_, b_;
    ws::UartLink& link_;
    uint64_t cycles_ = 0;
    ws::DutWindow window_;
};

}  // namespace

int main(int argc, char** argv) {
    Options opt;
    opt.link.divisor = 8;
    opt.link.late_s = 0.3;
    ws::cli::Parser cli("wirespeed-sim-uart");
    cli.help([] {
        std::printf(
            "usage: wirespeed-sim-uart [--tcp-port N] [--control-udp-port N] [--divisor N] "
            "[--dut loopback|router|...] [--dut-param KEY=VALUE]... [--max-cycles N]\n"
            "                          [--seed N] [--late-ms N] [--skew-ppm N] "
            "[--to-design drop=PPM,dup=PPM,late=PPM,corrupt=PPM] [--to-host ...]\n"
            "  the UART options are those of uart_link.h\n");
    });
    cli.integer("--tcp-port", 0, 65535, [&](long long v) { opt.link.tcp_port = uint16_t(v); });
    cli.integer("--control-udp-port", 0, 65535, [&](long long v) { opt.control_port = uint16_t(v); });
    cli.integer("--divisor", 4, 1 << 20, [&](long long v) { opt.link.divisor = uint32_t(v); });
    // The DUT options here, so that the "allowed:" list follows the usage line.
    ws::cli::add_dut_options(cli, opt.dut);
    cli.integer("--seed", 0, 4294967295LL, [&](long long v) { opt.link.seed = uint64_t(v); });
    cli.integer("--late-ms", 0, 600000, [&](long long v) { opt.link.late_s = double(v) / 1000.0; });
    cli.integer("--skew-ppm", -50000, 50000, [&](long long v) { opt.link.skew_ppm = int32_t(v); });
    cli.option("--to-design", [&](const std::string& v) { opt.link.to_design = ws::parse_fault_rates(v); });
    cli.option("--to-host", [&](const std::string& v) { opt.link.to_host = ws::parse_fault_rates(v); });
    cli.parse(argc, argv);

    if (!ws::cli::start_process()) return 0;
    // the sockets first: a "tap" DUT moves the process into a network namespace of its own
    std::unique_ptr<ws::UartLink> link;
    std::unique_ptr<ws::UdpServer> control;
    try {
        link = std::make_unique<ws::UartLink>(opt.link);
        control = std::make_unique<ws::UdpServer>(opt.control_port);
    } catch (const std::exception& e) {
        cli.error(e.what());
        return 1;
    }
    auto [a, b] = ws::cli::make_duts(cli, opt.dut);

    UartSimHarness sim(std::move(a), std::move(b), *link);
    sim.reset(kResetCycles);

    std::printf("WIRESPEED-SIM READY uart=%u control_udp=%u\n", unsigned(link->port()),
                unsigned(control->port()));
    std::fflush(stdout);

    ws::cli::Run run(opt.dut.max_cycles);
    ws::EtherboneStats eb;
    std::vector<uint8_t> rx, reply;
    sockaddr_in from{};
    do {
        for (unsigned i = 0; i < kPollCycles; i++) sim.tick();
        link->poll();
        // One control datagram per poll: the next one (sent on this one's reply) then sees
        // the window after at least kPollCycles more cycles, e.g. a reset already taken.
        if (control->receive(rx, from)) {
            if (ws::etherbone_handle(rx.data(), rx.size(), sim, 0, reply, eb) == ws::EbResult::kReply)
                control->send(reply, from);
        }
    } while (!run.stop(sim.cycles(), sim.finished()));

    ws::cli::print_dut_counters("a", sim.model_a());
    ws::cli::print_dut_counters("b", sim.model_b());
    ws::print_link_stats("WIRESPEED-SIM", *link);
    const Vwirespeed_uart_sim_top& t = sim.top();
    std::fprintf(stderr,
                 "WIRESPEED-SIM MGMT requests=%u replays=%u stale=%u malformed=%u bad_frames=%u"
                 " rx_errors=%u\n",
                 unsigned(t.mgmt_requests), unsigned(t.mgmt_replays), unsigned(t.mgmt_stale),
                 unsigned(t.mgmt_malformed), unsigned(t.mgmt_bad_frames), unsigned(t.mgmt_rx_errors));
    std::fprintf(stderr,
                 "WIRESPEED-SIM CONTROL packets=%" PRIu64 " malformed=%" PRIu64 " reads=%" PRIu64
                 " writes=%" PRIu64 " out_of_range=%" PRIu64 " send_errors=%" PRIu64 "\n",
                 eb.packets, eb.malformed, eb.reads, eb.writes, eb.out_of_range,
                 control->send_errors());
    run.print_exit(sim.cycles());
    return 0;
}
