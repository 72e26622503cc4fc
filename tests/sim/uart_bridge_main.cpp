// uart-bridge-sim: a Verilated wirespeed_mgmt_top (UartBridge + a register block, built by
// tests/sim/test_sim_uart_bridge.py) whose UART is served over TCP through the fault
// injector of sim/harness/uart_link.h.
//
// Usage: uart-bridge-sim --divisor N [--tcp-port N] [--seed N] [--late-ms N] [--skew-ppm N]
//                        [--to-design drop=PPM,dup=PPM,late=PPM,corrupt=PPM] [--to-host ...]
//
// Prints "WIRESPEED-UART READY tcp=<port>" on stdout when listening; stops on SIGTERM/SIGINT
// or when its parent dies, then prints "WIRESPEED-UART ..." statistics lines on stderr.
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <exception>
#include <memory>
#include <string>

#include "Vwirespeed_mgmt_top.h"
#include "sim_cli.h"
#include "uart_link.h"
#include "verilated.h"

int main(int argc, char** argv) {
    ws::UartLinkConfig cfg;
    bool have_divisor = false;
    ws::cli::Parser cli("uart-bridge-sim");
    cli.help([] {
        std::printf("usage: uart-bridge-sim --divisor N [--tcp-port N] [--seed N] [--late-ms N] "
                    "[--skew-ppm N] [--to-design drop=PPM,dup=PPM,late=PPM,corrupt=PPM] [--to-host ...]\n");
    });
    cli.integer("--divisor", 4, 1 << 20, [&](long long v) {
        cfg.divisor = uint32_t(v);
        have_divisor = true;
    });
    cli.integer("--tcp-port", 0, 65535, [&](long long v) { cfg.tcp_port = uint16_t(v); });
    cli.integer("--seed", 0, 4294967295LL, [&](long long v) { cfg.seed = uint64_t(v); });
    cli.integer("--late-ms", 0, 600000, [&](long long v) { cfg.late_s = double(v) / 1000.0; });
    cli.integer("--skew-ppm", -50000, 50000, [&](long long v) { cfg.skew_ppm = int32_t(v); });
    cli.option("--to-design", [&](const std::string& v) { cfg.to_design = ws::parse_fault_rates(v); });
    cli.option("--to-host", [&](const std::string& v) { cfg.to_host = ws::parse_fault_rates(v); });
    cli.parse(argc, argv);
    if (!have_divisor) cli.usage_error("--divisor is required (the gateware's clk_hz / baud)");

    if (!ws::cli::start_process()) return 0;

    std::unique_ptr<ws::UartLink> link;
    try {
        link = std::make_unique<ws::UartLink>(cfg);
    } catch (const std::exception& e) {
        cli.error(e.what());
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
    while (!ws::cli::signalled()) {
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
    ws::print_link_stats("WIRESPEED-UART", *link);
    std::fprintf(stderr, "WIRESPEED-UART EXIT cycles=%" PRIu64 " wall_s=%.3f cycles_per_s=%.0f waits=%" PRIu64 "\n",
                 cycles, wall, wall > 0 ? double(cycles) / wall : 0.0, waits);
    std::fflush(stderr);
    return 0;
}
