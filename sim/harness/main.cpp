// wirespeed-sim: the Verilated wirespeed_sim_top running free, wired to two DUT models, with
// its CSR bus served over Etherbone/UDP on 127.0.0.1.
//
// Usage: wirespeed-sim [--udp-port N] [--dut NAME] [--dut-param KEY=VALUE]... [--max-cycles N]
//                      [--pcap-wire FILE.pcapng] [--threads 1|2]
//
// --threads 2 evaluates the two parts of a tester built in two (sim_harness.h) on two threads.
//
// Prints "WIRESPEED-SIM READY udp=<port>" on stdout once reset is done and the socket is
// bound. Stops on SIGTERM/SIGINT, when the parent process dies, after --max-cycles, or on
// $finish; then prints statistics lines starting with "WIRESPEED-SIM" on stderr.
#include <cinttypes>
#include <cstdio>
#include <exception>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "dut_factory.h"
#include "etherbone.h"
#include "pcap_wire.h"
#include "sim_cli.h"
#include "sim_cli_dut.h"
#include "sim_harness.h"
#include "udp_server.h"

namespace {

constexpr unsigned kResetCycles = 16;
// The socket is checked every kPollCycles while the host is quiet, and every kBusyPollCycles
// for kBusyCycles after a request: a host sends its requests one after the other, and each
// waited up to a whole quiet interval for the next check.
constexpr unsigned kPollCycles = 1024;
constexpr unsigned kBusyPollCycles = 32;
constexpr uint64_t kBusyCycles = 4096;

struct Options {
    uint16_t udp_port = 0;
    std::string pcap_wire;  // pcapng file of the four wires (pcap_wire.h), empty: none
    unsigned threads = 1;
    ws::cli::DutOptions dut;
};

}  // namespace

int main(int argc, char** argv) {
    Options opt;
    ws::cli::Parser cli("wirespeed-sim");
    cli.help([] {
        std::printf("usage: wirespeed-sim [--udp-port N] [--dut %s] "
                    "[--dut-param KEY=VALUE]... [--max-cycles N] [--pcap-wire FILE.pcapng] [--threads 1|%u]\n",
                    ws::known_dut_models(), ws::SimHarness::parts());
    });
    cli.integer("--udp-port", 0, 65535, [&opt](long long v) { opt.udp_port = uint16_t(v); });
    cli.option("--pcap-wire", [&opt](const std::string& v) { opt.pcap_wire = v; });
    // one thread per part of the tester at most
    cli.integer("--threads", 1, ws::SimHarness::parts(), [&opt](long long v) { opt.threads = unsigned(v); });
    ws::cli::add_dut_options(cli, opt.dut);
    cli.parse(argc, argv);

    if (!ws::cli::start_process()) return 0;
    // the socket first: a "tap" DUT moves the process into a network namespace of its own,
    // and the host must still reach the socket on 127.0.0.1 (dut_tap_kernel.h)
    std::unique_ptr<ws::UdpServer> udp;
    try {
        udp = std::make_unique<ws::UdpServer>(opt.udp_port);
    } catch (const std::exception& e) {
        cli.error(e.what());
        return 1;
    }
    auto [a, b] = ws::cli::make_duts(cli, opt.dut);
    std::unique_ptr<ws::PcapWire> wire;
    if (!opt.pcap_wire.empty()) {
        try {
            wire = std::make_unique<ws::PcapWire>(opt.pcap_wire);
        } catch (const std::exception& e) {
            cli.usage_error(e.what());
        }
    }

    ws::SimHarness sim(std::move(a), std::move(b), opt.threads);
    sim.record(wire.get());
    sim.reset(kResetCycles);

    std::printf("WIRESPEED-SIM READY udp=%u\n", unsigned(udp->port()));
    std::fflush(stdout);

    ws::cli::Run run(opt.dut.max_cycles);
    ws::EtherboneStats eb;
    std::vector<uint8_t> rx, reply;
    sockaddr_in from{};
    uint64_t busy_until = 0;
    do {
        unsigned interval = sim.cycles() < busy_until ? kBusyPollCycles : kPollCycles;
        for (unsigned i = 0; i < interval; i++) sim.tick();
        while (udp->receive(rx, from)) {
            busy_until = sim.cycles() + kBusyCycles;
            if (ws::etherbone_handle(rx.data(), rx.size(), sim, ws::SimHarness::kCsrWords, reply,
                                     eb) == ws::EbResult::kReply)
                udp->send(reply, from);
        }
    } while (!run.stop(sim.cycles(), sim.finished()));

    ws::cli::print_dut_counters("a", sim.model_a());
    ws::cli::print_dut_counters("b", sim.model_b());
    std::fprintf(stderr,
                 "WIRESPEED-SIM ETHERBONE packets=%" PRIu64 " probes=%" PRIu64
                 " malformed=%" PRIu64 " reads=%" PRIu64 " writes=%" PRIu64
                 " out_of_range=%" PRIu64 " send_errors=%" PRIu64 "\n",
                 eb.packets, eb.probes, eb.malformed, eb.reads, eb.writes, eb.out_of_range,
                 udp->send_errors());
    std::fprintf(stderr, "WIRESPEED-SIM MODEL parts=%u threads=%u\n", ws::SimHarness::parts(), opt.threads);
    run.print_exit(sim.cycles());
    return 0;
}
