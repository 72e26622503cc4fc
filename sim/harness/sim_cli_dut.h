// The DUT options of both simulation mains (--dut, --dut-param, --max-cycles, and the DUT
// parameter table in --help), their two models and the "WIRESPEED-SIM DUT" line, which
// sim/launcher.py parses.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "dut_model.h"
#include "sim_cli.h"

namespace ws::cli {

// The DUT options: --dut NAME, --dut-param KEY=VALUE (repeated), --max-cycles N (0: none);
// for the "tap" model, --tap-netns PATH and --tap-if0/--tap-if1 NAME (dut_tap_kernel.h).
struct DutOptions {
    std::string dut = "loopback";
    std::vector<std::pair<std::string, std::string>> params;
    std::string tap_netns;
    std::string tap_if[2];
    uint64_t max_cycles = 0;
};

// Adds --dut, --dut-param and --max-cycles, and the DUT parameter table to the help.
void add_dut_options(Parser& parser, DutOptions& options);

// The two models (direction 0 and 1); an unknown model or bad parameter is a usage error.
std::pair<std::unique_ptr<DutModel>, std::unique_ptr<DutModel>> make_duts(const Parser& parser,
                                                                        const DutOptions& options);

// "WIRESPEED-SIM DUT <which> <description> frames_in=... " on stderr.
void print_dut_counters(const char* which, const DutModel& model);

}  // namespace ws::cli
