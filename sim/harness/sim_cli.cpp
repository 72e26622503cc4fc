#include "sim_cli.h"

#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cerrno>
#include <cinttypes>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <stdexcept>

namespace ws::cli {

namespace {

volatile std::sig_atomic_t g_signal = 0;
pid_t g_parent = 0;

void on_signal(int signo) { g_signal = signo; }

}  // namespace

long long parse_int(const std::string& opt, const std::string& text, long long lo, long long hi) {
    const size_t sign = !text.empty() && text[0] == '-' && lo < 0 ? 1 : 0;
    bool ok = text.size() > sign && text.find_first_not_of("0123456789", sign) == std::string::npos;
    long long v = 0;
    if (ok) {
        errno = 0;
        v = std::strtoll(text.c_str(), nullptr, 10);
        ok = errno == 0 && v >= lo && v <= hi;
    }
    if (!ok)
        throw std::invalid_argument(opt + " must be an integer " + std::to_string(lo) + ".." +
                                    std::to_string(hi) + ", got '" + text + "'");
    return v;
}

void Parser::option(std::string name, Take take) { options_.emplace_back(std::move(name), std::move(take)); }

void Parser::integer(const std::string& name, long long lo, long long hi,
                     std::function<void(long long)> take) {
    option(name, [name, lo, hi, take = std::move(take)](const std::string& v) { take(parse_int(name, v, lo, hi)); });
}

void Parser::help(std::function<void()> print) { help_.push_back(std::move(print)); }

void Parser::usage_error(const std::string& msg) const {
    error(msg);
    std::exit(2);
}

void Parser::error(const std::string& msg) const {
    std::fprintf(stderr, "%s: error: %s\n", program_.c_str(), msg.c_str());
}

void Parser::parse(int argc, char** argv) const {
    for (int i = 1; i < argc; i++) {
        const std::string arg = argv[i];
        if (arg == "--help" || arg == "-h") {
            for (const auto& print : help_) print();
            std::exit(0);
        }
        const Take* take = nullptr;
        for (const auto& [name, t] : options_)
            if (name == arg) take = &t;
        if (!take) {
            std::string allowed;
            for (const auto& o : options_) allowed += o.first + ", ";
            usage_error("unknown argument '" + arg + "', allowed: " + allowed + "--help");
        }
        if (i + 1 >= argc) usage_error(arg + " needs a value");
        try {
            (*take)(argv[++i]);
        } catch (const std::exception& e) {
            usage_error(e.what());
        }
    }
}

bool start_process() {
    g_parent = getppid();
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != g_parent) return false;

    struct sigaction sa {};
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, nullptr);
    sigaction(SIGINT, &sa, nullptr);
    signal(SIGPIPE, SIG_IGN);
    return true;
}

bool signalled() { return g_signal != 0; }

Run::Run(uint64_t max_cycles) : max_cycles_(max_cycles), start_(std::chrono::steady_clock::now()) {}

bool Run::stop(uint64_t cycles, bool finished) {
    if (g_signal) {
        reason_ = g_signal == SIGTERM && getppid() != g_parent ? "parent-died" : "signal";
    } else if (max_cycles_ && cycles >= max_cycles_) {
        reason_ = "max-cycles";
    } else if (finished) {
        reason_ = "finish";
    } else {
        return false;
    }
    wall_s_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    return true;
}

void Run::print_exit(uint64_t cycles) const {
    std::fprintf(stderr,
                 "WIRESPEED-SIM EXIT reason=%s cycles=%" PRIu64 " wall_s=%.3f cycles_per_s=%.0f\n",
                 reason_, cycles, wall_s_, wall_s_ > 0 ? double(cycles) / wall_s_ : 0.0);
    std::fflush(stderr);
}

}  // namespace ws::cli
