#include "sim_cli_dut.h"

#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <exception>

#include "dut_factory.h"
#include "dut_params.h"
#include "dut_tap_kernel.h"

namespace ws::cli {

void add_dut_options(Parser& parser, DutOptions& o) {
    parser.option("--dut", [&o](const std::string& v) { o.dut = v; });
    parser.option("--dut-param", [&o](const std::string& v) { o.params.push_back(split_param(v)); });
    parser.option("--tap-netns", [&o](const std::string& v) { o.tap_netns = v; });
    parser.option("--tap-if0", [&o](const std::string& v) { o.tap_if[0] = v; });
    parser.option("--tap-if1", [&o](const std::string& v) { o.tap_if[1] = v; });
    parser.integer("--max-cycles", 0, INT64_MAX, [&o](long long v) { o.max_cycles = uint64_t(v); });
    parser.help([] {
        std::printf("DUT parameters (times in ns, probabilities in parts per 10^9):\n");
        for (const auto& e : dut_param::kTable) {
            std::printf("  %-8s %-18s %" PRIu64 "..%" PRIu64, e.model, e.spec->key, e.spec->min,
                        e.spec->max);
            if (e.spec->multiple_of > 1) std::printf(", multiple of %" PRIu64, e.spec->multiple_of);
            std::printf(", default %" PRIu64 "\n", e.spec->def);
        }
    });
}

std::pair<std::unique_ptr<DutModel>, std::unique_ptr<DutModel>> make_duts(const Parser& parser,
                                                                        const DutOptions& o) {
    try {
        TapKernel::set_target(o.tap_netns, o.tap_if[0], o.tap_if[1]);
        return {make_dut(o.dut, o.params, 0), make_dut(o.dut, o.params, 1)};
    } catch (const std::exception& e) {
        parser.usage_error(e.what());
    }
}

void print_dut_counters(const char* which, const DutModel& m) {
    const DutCounters& c = m.counters();
    std::fprintf(stderr,
                 "WIRESPEED-SIM DUT %s %s frames_in=%" PRIu64 " frames_out=%" PRIu64
                 " dropped=%" PRIu64 " errored=%" PRIu64 " lost=%" PRIu64 " duplicated=%" PRIu64
                 " reordered=%" PRIu64 " corrupted=%" PRIu64 " blackout=%" PRIu64
                 " corrupt_dups=%" PRIu64 " reorder_hidden=%" PRIu64 "\n",
                 which, m.describe().c_str(), c.frames_in, c.frames_out, c.dropped, c.errored,
                 c.lost, c.duplicated, c.reordered, c.corrupted, c.blackout, c.corrupt_dups,
                 c.reorder_hidden);
}

}  // namespace ws::cli
