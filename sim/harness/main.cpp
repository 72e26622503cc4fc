// wirespeed-sim: the Verilated wirespeed_sim_top running free, wired to two DUT models, with
// its CSR bus served over Etherbone/UDP on 127.0.0.1.
//
// Usage: wirespeed-sim [--udp-port N] [--dut NAME] [--dut-param KEY=VALUE]... [--max-cycles N]
//
// Prints "WIRESPEED-SIM READY udp=<port>" on stdout once reset is done and the socket is
// bound. Stops on SIGTERM/SIGINT, when the parent process dies, after --max-cycles, or on
// $finish; then prints statistics lines starting with "WIRESPEED-SIM" on stderr.
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <chrono>
#include <cinttypes>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>
#include <utility>
#include <vector>

#include "dut_factory.h"
#include "dut_params.h"
#include "etherbone.h"
#include "sim_harness.h"
#include "udp_server.h"

namespace {

volatile std::sig_atomic_t g_signal = 0;

void on_signal(int signo) { g_signal = signo; }

constexpr unsigned kResetCycles = 16;
constexpr unsigned kPollCycles = 1024;

struct Options {
    uint16_t udp_port = 0;
    std::string dut = "loopback";
    std::vector<std::pair<std::string, std::string>> dut_params;
    uint64_t max_cycles = 0;
};

[[noreturn]] void usage_error(const std::string& msg) {
    std::fprintf(stderr, "wirespeed-sim: error: %s\n", msg.c_str());
    std::exit(2);
}

uint64_t parse_u64(const std::string& opt, const std::string& text, uint64_t max) {
    if (text.empty() || text.size() > 19 ||
        text.find_first_not_of("0123456789") != std::string::npos)
        usage_error(opt + " must be an integer 0.." + std::to_string(max) + ", got '" + text + "'");
    uint64_t v = std::strtoull(text.c_str(), nullptr, 10);
    if (v > max)
        usage_error(opt + " must be an integer 0.." + std::to_string(max) + ", got '" + text + "'");
    return v;
}

Options parse_args(int argc, char** argv) {
    Options o;
    for (int i = 1; i < argc; i++) {
        std::string arg = argv[i];
        auto value = [&]() -> std::string {
            if (i + 1 >= argc) usage_error(arg + " needs a value");
            return argv[++i];
        };
        if (arg == "--udp-port") {
            o.udp_port = uint16_t(parse_u64(arg, value(), 65535));
        } else if (arg == "--dut") {
            o.dut = value();
        } else if (arg == "--dut-param") {
            try {
                o.dut_params.push_back(ws::split_param(value()));
            } catch (const std::exception& e) {
                usage_error(e.what());
            }
        } else if (arg == "--max-cycles") {
            o.max_cycles = parse_u64(arg, value(), UINT64_MAX / 2);
        } else if (arg == "--help" || arg == "-h") {
            std::printf(
                "usage: wirespeed-sim [--udp-port N] [--dut %s] "
                "[--dut-param KEY=VALUE]... [--max-cycles N]\n"
                "DUT parameters (times in ns, probabilities in parts per 10^9):\n",
                ws::known_dut_models());
            for (const auto& e : ws::dut_param::kTable) {
                std::printf("  %-8s %-18s %" PRIu64 "..%" PRIu64, e.model, e.spec->key, e.spec->min,
                            e.spec->max);
                if (e.spec->multiple_of > 1) std::printf(", multiple of %" PRIu64, e.spec->multiple_of);
                std::printf(", default %" PRIu64 "\n", e.spec->def);
            }
            std::exit(0);
        } else {
            usage_error("unknown argument '" + arg +
                        "', allowed: --udp-port, --dut, --dut-param, --max-cycles, --help");
        }
    }
    return o;
}

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

    std::unique_ptr<ws::UdpServer> udp;
    try {
        udp = std::make_unique<ws::UdpServer>(opt.udp_port);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "wirespeed-sim: error: %s\n", e.what());
        return 1;
    }

    ws::SimHarness sim(std::move(a), std::move(b));
    sim.reset(kResetCycles);

    std::printf("WIRESPEED-SIM READY udp=%u\n", unsigned(udp->port()));
    std::fflush(stdout);

    const auto t0 = std::chrono::steady_clock::now();
    ws::EtherboneStats eb;
    std::vector<uint8_t> rx, reply;
    sockaddr_in from{};
    const char* reason = "signal";
    for (;;) {
        for (unsigned i = 0; i < kPollCycles; i++) sim.tick();
        while (udp->receive(rx, from)) {
            if (ws::etherbone_handle(rx.data(), rx.size(), sim, ws::SimHarness::kCsrWords, reply,
                                     eb) == ws::EbResult::kReply)
                udp->send(reply, from);
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
    std::fprintf(stderr,
                 "WIRESPEED-SIM ETHERBONE packets=%" PRIu64 " probes=%" PRIu64
                 " malformed=%" PRIu64 " reads=%" PRIu64 " writes=%" PRIu64
                 " out_of_range=%" PRIu64 " send_errors=%" PRIu64 "\n",
                 eb.packets, eb.probes, eb.malformed, eb.reads, eb.writes, eb.out_of_range,
                 udp->send_errors());
    std::fprintf(stderr,
                 "WIRESPEED-SIM EXIT reason=%s cycles=%" PRIu64 " wall_s=%.3f cycles_per_s=%.0f\n",
                 reason, cycles, wall, wall > 0 ? double(cycles) / wall : 0.0);
    std::fflush(stderr);
    return 0;
}
