// What the two simulation mains (main.cpp, uart/uart_sim_main.cpp) share: the command line
// (options, one-line usage errors with exit code 2), the process set-up (die with the parent,
// stop on SIGTERM/SIGINT, ignore SIGPIPE), the run's stop conditions and the
// "WIRESPEED-SIM EXIT" line, which sim/launcher.py parses. The DUT options are in
// sim_cli_dut.h, so that a main without DUT models (tests/sim/uart_bridge_main.cpp) links
// without them.
#pragma once
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace ws::cli {

// Reads a decimal integer lo..hi (a '-' only when lo < 0, no other sign, no spaces). Throws
// std::invalid_argument "OPTION must be an integer LO..HI, got 'TEXT'".
long long parse_int(const std::string& opt, const std::string& text, long long lo, long long hi);

// An argument loop over options that each take one value, plus --help/-h. Each main adds
// its own options; the order of adding is the order of the "allowed:" list.
class Parser {
public:
    using Take = std::function<void(const std::string& value)>;

    // `program` prefixes every error line ("wirespeed-sim: error: ...").
    explicit Parser(std::string program) : program_(std::move(program)) {}

    void option(std::string name, Take take);
    // An option whose value is an integer lo..hi (parse_int).
    void integer(const std::string& name, long long lo, long long hi, std::function<void(long long)> take);
    // Printed on stdout by --help, in the order added, before exit code 0.
    void help(std::function<void()> print);

    // A value that fails to parse (a Take throwing std::exception), an option without its
    // value or an unknown argument is a usage error.
    void parse(int argc, char** argv) const;

    // "PROGRAM: error: MSG" on stderr, then exit code 2.
    [[noreturn]] void usage_error(const std::string& msg) const;
    // "PROGRAM: error: MSG" on stderr; the caller exits with its own code.
    void error(const std::string& msg) const;

private:
    std::string program_;
    std::vector<std::pair<std::string, Take>> options_;
    std::vector<std::function<void()>> help_;
};

// Ties the process to its parent (the Python launcher), which may be killed without a chance
// to stop the simulation: the parent's death sends SIGTERM. SIGTERM and SIGINT stop the run
// (Run::stop, signalled), SIGPIPE is ignored (a send to a closed socket fails instead).
// False if the parent is already gone, in which case the main returns 0 at once.
bool start_process();

// True once SIGTERM or SIGINT has come.
bool signalled();

// The run's clock and why it stopped.
class Run {
public:
    explicit Run(uint64_t max_cycles);

    // True once the run is to stop: a signal, `cycles` reached --max-cycles, or $finish.
    bool stop(uint64_t cycles, bool finished);

    // "WIRESPEED-SIM EXIT reason=... cycles=... wall_s=... cycles_per_s=..." on stderr, the
    // last statistics line. A SIGTERM after the parent died is reason=parent-died.
    void print_exit(uint64_t cycles) const;

private:
    uint64_t max_cycles_;
    std::chrono::steady_clock::time_point start_;
    double wall_s_ = 0;
    const char* reason_ = "signal";
};

}  // namespace ws::cli
