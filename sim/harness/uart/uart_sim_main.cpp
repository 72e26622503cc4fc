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
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "Vwirespeed_uart_sim_top.h"
#include "dut_factory.h"
#include "dut_model.h"
#include "dut_params.h"
#include "dut_window.h"
#include "etherbone.h"
#include "uart_link.h"
#include "udp_server.h"
#include "verilated.h"

namespace {

volatile std::sig_atomic_t g_signal = 0;

void on_signal(int signo) { g_signal = signo; }

constexpr unsigned kResetCycles = 16;
constexpr unsigned kPollCycles = 256;      // UART socket and control port, every 256 cycles

struct Options {
    ws::UartLinkConfig link;
    uint16_t control_port = 0;
    std::string dut = "loopback";
    std::vector<std::pair<std::string, std::string>> dut_params;
    uint64_t max_cycles = 0;
};

[[noreturn]] void usage_error(const std::string& msg) {
    std::fprintf(stderr, "wirespeed-sim-uart: error: %s\n", msg.c_str());
    std::exit(2);
}

long long parse_int(const std::string& opt, const std::string& text, long long lo, long long hi) {
    char* end = nullptr;
    errno = 0;
    long long v = std::strtoll(text.c_str(), &end, 10);
    if (text.empty() || *end != '\0' || errno || v < lo || v > hi)
        usage_error(opt + " must be an integer " + std::to_string(lo) + ".." + std::to_string(hi) +
                    ", got '" + text + "'");
    return v;
}

Options parse_args(int argc, char** argv) {
    Options o;
    o.link.divisor = 8;
    o.link.late_s = 0.3;
    for (int i = 1; i < argc; i++) {
        std::string arg = argv[i];
        auto value = [&]() -> std::string {
            if (i + 1 >= argc) usage_error(arg + " needs a value");
            return argv[++i];
        };
        try {
            if (arg == "--tcp-port") {
                o.link.tcp_port = uint16_t(parse_int(arg, value(), 0, 65535));
            } else if (arg == "--control-udp-port") {
                o.control_port = uint16_t(parse_int(arg, value(), 0, 65535));
            } else if (arg == "--divisor") {
                o.link.divisor = uint32_t(parse_int(arg, value(), 4, 1 << 20));
            } else if (arg == "--dut") {
                o.dut = value();
            } else if (arg == "--dut-param") {
                o.dut_params.push_back(ws::split_param(value()));
            } else if (arg == "--max-cycles") {
                o.max_cycles = uint64_t(parse_int(arg, value(), 0, INT64_MAX / 2));
            } else if (arg == "--seed") {
                o.link.seed = uint64_t(parse_int(arg, value(), 0, 4294967295LL));
            } else if (arg == "--late-ms") {
                o.link.late_s = double(parse_int(arg, value(), 0, 600000)) / 1000.0;
            } else if (arg == "--skew-ppm") {
                o.link.skew_ppm = int32_t(parse_int(arg, value(), -50000, 50000));
            } else if (arg == "--to-design") {
                o.link.to_design = ws::parse_fault_rates(value());
            } else if (arg == "--to-host") {
                o.link.to_host = ws::parse_fault_rates(value());
            } else if (arg == "--help" || arg == "-h") {
                std::printf(
                    "usage: wirespeed-sim-uart [--tcp-port N] [--control-udp-port N] [--divisor N] "
                    "[--dut loopback|router|...] [--dut-param KEY=VALUE]... [--max-cycles N]\n"
                    "                          [--seed N] [--late-ms N] [--skew-ppm N] "
                    "[--to-design drop=PPM,dup=PPM,late=PPM,corrupt=PPM] [--to-host ...]\n"
                    "  the DUT options are those of wirespeed-sim (main.cpp); the UART options "
                    "those of uart_link.h\n");
                std::exit(0);
            } else {
                usage_error("unknown argument '" + arg +
                            "', allowed: --tcp-port, --control-udp-port, --divisor, --dut, "
                            "--dut-param, --max-cycles, --seed, --late-ms, --skew-ppm, "
                            "--to-design, --to-host, --help");
            }
        } catch (const std::invalid_argument& e) {
            usage_error(e.what());
        }
    }
    return o;
}

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
        ws::idle_rx(*top_);
        top_->eval();
    }

    ~UartSimHarness() override { top_->final(); }

    inline void tick() {
        Vwirespeed_uart_sim_top& t = *top_;
        ws::step_duts(t, *a_, *b_);
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

void print_counters(const char* which, const ws::DutModel& m) {
    const ws::DutCounters& c = m.counters();
    std::fprintf(stderr,
                 "WIRESPEED-SIM DUT %s %s frames_in=%" PRIu64 " frames_out=%" PRIu64
                 " dropped=%" PRIu64 " errored=%" PRIu64 " lost=%" PRIu64 " duplicated=%" PRIu64
                 " reordered=%" PRIu64 " corrupted=%" PRIu64 " blackout=%" PRIu64
                 " corrupt_dups=%" PRIu64 " reorder_hidden=%" PRIu64 "\n",
                 which, m.describe().c_str(), c.frames_in, c.frames_out, c.dropped, c.errored,
                 c.lost, c.duplicated, c.reordered, c.corrupted, c.blackout, c.corrupt_dups,
                 c.reorder_hidden);
}

void print_faults(const char* dir, const ws::FaultStats& s) {
    std::fprintf(stderr,
                 "WIRESPEED-SIM FAULTS %s frames=%" PRIu64 " passed=%" PRIu64 " dropped=%" PRIu64
                 " duplicated=%" PRIu64 " late=%" PRIu64 " corrupted=%" PRIu64 " bytes=%" PRIu64 "\n",
                 dir, s.frames, s.passed, s.dropped, s.duplicated, s.late, s.corrupted, s.bytes);
}

}  // namespace

int main(int argc, char** argv) {
    Options opt = parse_args(argc, argv);

    // Die with the parent (the Python launcher), even if it is killed.
    pid_t parent = getppid();
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != parent) return 0;

    struct sigaction sa {};
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, nullptr);
    sigaction(SIGINT, &sa, nullptr);
    signal(SIGPIPE, SIG_IGN);

    std::unique_ptr<ws::DutModel> a, b;
    try {
        a = ws::make_dut(opt.dut, opt.dut_params, 0);
        b = ws::make_dut(opt.dut, opt.dut_params, 1);
    } catch (const std::exception& e) {
        usage_error(e.what());
    }

    std::unique_ptr<ws::UartLink> link;
    std::unique_ptr<ws::UdpServer> control;
    try {
        link = std::make_unique<ws::UartLink>(opt.link);
        control = std::make_unique<ws::UdpServer>(opt.control_port);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "wirespeed-sim-uart: error: %s\n", e.what());
        return 1;
    }

    UartSimHarness sim(std::move(a), std::move(b), *link);
    sim.reset(kResetCycles);

    std::printf("WIRESPEED-SIM READY uart=%u control_udp=%u\n", unsigned(link->port()),
                unsigned(control->port()));
    std::fflush(stdout);

    const auto t0 = std::chrono::steady_clock::now();
    ws::EtherboneStats eb;
    std::vector<uint8_t> rx, reply;
    sockaddr_in from{};
    const char* reason = "signal";
    for (;;) {
        for (unsigned i = 0; i < kPollCycles; i++) sim.tick();
        link->poll();
        // One control datagram per poll: the next one (sent on this one's reply) then sees
        // the window after at least kPollCycles more cycles, e.g. a reset already taken.
        if (control->receive(rx, from)) {
            if (ws::etherbone_handle(rx.data(), rx.size(), sim, 0, reply, eb) == ws::EbResult::kReply)
                control->send(reply, from);
        }
        if (g_signal) break;
        if (opt.max_cycles && sim.cycles() >= opt.max_cycles) {
            reason = "max-cycles";
            break;
        }
        if (sim.finished()) {
            reason = "finish";
            break;
        }
    }
    const double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const uint64_t cycles = sim.cycles();
    if (g_signal == SIGTERM && getppid() != parent) reason = "parent-died";

    print_counters("a", sim.model_a());
    print_counters("b", sim.model_b());
    print_faults("to_design", link->to_design_stats());
    print_faults("to_host", link->to_host_stats());
    const ws::UartLinkStats& ls = link->stats();
    std::fprintf(stderr,
                 "WIRESPEED-SIM LINK connections=%" PRIu64 " bytes_in=%" PRIu64 " bytes_out=%" PRIu64
                 " line_errors=%" PRIu64 "\n",
                 ls.connections, ls.bytes_in, ls.bytes_out, ls.line_errors);
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
    std::fprintf(stderr,
                 "WIRESPEED-SIM EXIT reason=%s cycles=%" PRIu64 " wall_s=%.3f cycles_per_s=%.0f\n",
                 reason, cycles, wall, wall > 0 ? double(cycles) / wall : 0.0);
    std::fflush(stderr);
    return 0;
}
