// uart-bridge-sim: a Verilated wirespeed_mgmt_top (UartBridge + a register block, built by
// tests/sim/test_sim_uart_bridge.py) whose UART is served over TCP through the fault
// injector of sim/harness/uart_link.h.
//
// Usage: uart-bridge-sim --divisor N [--tcp-port N] [--seed N] [--late-ms N] [--skew-ppm N]
//                        [--to-design drop=PPM,dup=PPM,late=PPM,corrupt=PPM] [--to-host ...]
//
// Prints "WIRESPEED-UART READY tcp=<port>" on stdout when listening; stops on SIGTERM/SIGINT
// or when its parent dies, then prints "WIRESPEED-UART ..." statistics lines on stderr.
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <chrono>
#include <cinttypes>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <memory>
#include <string>

#include "Vwirespeed_mgmt_top.h"
#include "uart_link.h"
#include "verilated.h"

namespace {

volatile std::sig_atomic_t g_signal = 0;
void on_signal(int signo) { g_signal = signo; }

[[noreturn]] void usage_error(const std::string& msg) {
    std::fprintf(stderr, "uart-bridge-sim: error: %s\n", msg.c_str());
    std::exit(2);
}

long long parse_int(const std::string& opt, const std::string& text, long long lo, long long hi) {
    char* end = nullptr;
    long long v = std::strtoll(text.c_str(), &end, 10);
    if (text.empty() || *end != '\0' || v < lo || v > hi)
        usage_error(opt + " must be an integer " + std::to_string(lo) + ".." + std::to_string(hi) +
                    ", got '" + text + "'");
    return v;
}

void print_faults(const char* dir, const ws::FaultStats& s) {
    std::fprintf(stderr,
                 "WIRESPEED-UART FAULTS %s frames=%" PRIu64 " passed=%" PRIu64 " dropped=%" PRIu64
                 " duplicated=%" PRIu64 " late=%" PRIu64 " corrupted=%" PRIu64 " bytes=%" PRIu64 "\n",
                 dir, s.frames, s.passed, s.dropped, s.duplicated, s.late, s.corrupted, s.bytes);
}

}  // namespace

int main(int argc, char** argv) {
    ws::UartLinkConfig cfg;
    bool have_divisor = false;
    for (int i = 1; i < argc; i++) {
        std::string arg = argv[i];
        auto value = [&]() -> std::string {
            if (i + 1 >= argc) usage_error(arg + " needs a value");
            return argv[++i];
        };
        try {
            if (arg == "--divisor") {
                cfg.divisor = uint32_t(parse_int(arg, value(), 4, 1 << 20));
                have_divisor = true;
            } else if (arg == "--tcp-port") {
                cfg.tcp_port = uint16_t(parse_int(arg, value(), 0, 65535));
            } else if (arg == "--seed") {
                cfg.seed = uint64_t(parse_int(arg, value(), 0, 4294967295LL));
            } else if (arg == "--late-ms") {
                cfg.late_s = double(parse_int(arg, value(), 0, 600000)) / 1000.0;
            } else if (arg == "--skew-ppm") {
                cfg.skew_ppm = int32_t(parse_int(arg, value(), -50000, 50000));
            } else if (arg == "--to-design") {
                cfg.to_design = ws::parse_fault_rates(value());
            } else if (arg == "--to-host") {
                cfg.to_host = ws::parse_fault_rates(value());
            } else {
                usage_error("unknown argument '" + arg + "'");
            }
        } catch (const std::invalid_argument& e) {
            usage_error(e.what());
        }
    }
    if (!have_divisor) usage_error("--divisor is required (the gateware's clk_hz / baud)");

    pid_t parent = getppid();
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != parent) return 0;
    struct sigaction sa {};
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, nullptr);
    sigaction(SIGINT, &sa, nullptr);
    signal(SIGPIPE, SIG_IGN);

    std::unique_ptr<ws::UartLink> link;
    try {
        link = std::make_unique<ws::UartLink>(cfg);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "uart-bridge-sim: error: %s\n", e.what());
        return 1;
    }

    auto ctx = std::make_unique<VerilatedContext>();
    auto top = std::make_unique<Vwirespeed_mgmt_top>(ctx.get());
    top->rx = 1;
    top->rst = 1;
    for (int i = 0; i < 16; i++) {
        top->clk = 0;
        top->eval();
        top->clk = 1;
        top->eval();
    }
    top->rst = 0;

    std::printf("WIRESPEED-UART READY tcp=%u\n", unsigned(link->port()));
    std::fflush(stdout);

    const auto t0 = std::chrono::steady_clock::now();
    uint64_t cycles = 0, quiet_cycles = 0, waits = 0;
    constexpr unsigned kPoll = 256;
    constexpr uint64_t kQuietBeforeWait = 200000;  // > any request's execution
    while (!g_signal) {
        for (unsigned i = 0; i < kPoll; i++) {
            top->clk = 0;
            top->eval();
            top->rx = link->tick(top->tx);
            top->clk = 1;
            top->eval();
        }
        cycles += kPoll;
        link->poll();
        quiet_cycles = link->quiet() ? quiet_cycles + kPoll : 0;
        if (quiet_cycles >= kQuietBeforeWait) {  // idle: sleep on the socket, not the CPU
            link->wait(0.002);
            waits++;
        }
    }
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    top->final();
    print_faults("to_design", link->to_design_stats());
    print_faults("to_host", link->to_host_stats());
    const ws::UartLinkStats& s = link->stats();
    std::fprintf(stderr,
                 "WIRESPEED-UART LINK connections=%" PRIu64 " bytes_in=%" PRIu64 " bytes_out=%" PRIu64
                 " line_errors=%" PRIu64 "\n",
                 s.connections, s.bytes_in, s.bytes_out, s.line_errors);
    std::fprintf(stderr, "WIRESPEED-UART EXIT cycles=%" PRIu64 " wall_s=%.3f cycles_per_s=%.0f waits=%" PRIu64 "\n",
                 cycles, wall, wall > 0 ? double(cycles) / wall : 0.0, waits);
    std::fflush(stderr);
    return 0;
}
