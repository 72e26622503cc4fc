// Test driver for the harness's Etherbone codec (compiled by tests/sim/test_etherbone.py).
//
// Reads one datagram per stdin line as hex (an empty line is an empty datagram), handles it
// against a 4096-word register file whose word i starts as (i * 2654435761) ^ 0x5A5A5A5A, and
// prints every bus access ("W <word addr> <data>", "R <word addr> <data>", hex) followed by
// "MALFORMED", "NOREPLY" or "REPLY <hex>". At the end: "STATS packets=.. probes=.. ...".
#include <cinttypes>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "etherbone.h"

namespace {

class LoggingRegs final : public ws::CsrBus {
public:
    LoggingRegs() : mem_(4096) {
        for (uint32_t i = 0; i < mem_.size(); i++) mem_[i] = (i * 2654435761u) ^ 0x5A5A5A5Au;
    }
    uint32_t read(uint32_t a) override {
        uint32_t v = mem_.at(a);
        std::printf("R %x %x\n", a, v);
        return v;
    }
    void write(uint32_t a, uint32_t d) override {
        mem_.at(a) = d;
        std::printf("W %x %x\n", a, d);
    }

private:
    std::vector<uint32_t> mem_;
};

int hexval(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

}  // namespace

int main() {
    LoggingRegs regs;
    ws::EtherboneStats stats;
    std::vector<uint8_t> pkt, reply;
    std::string line;
    while (std::getline(std::cin, line)) {
        pkt.clear();
        if (line.size() % 2) {
            std::fprintf(stderr, "eb_driver: odd hex length\n");
            return 2;
        }
        for (size_t i = 0; i < line.size(); i += 2) {
            int hi = hexval(line[i]), lo = hexval(line[i + 1]);
            if (hi < 0 || lo < 0) {
                std::fprintf(stderr, "eb_driver: bad hex\n");
                return 2;
            }
            pkt.push_back(uint8_t(hi << 4 | lo));
        }
        // Hand the codec an exactly sized heap buffer, so that ASan sees any overread.
        std::vector<uint8_t> exact(pkt.begin(), pkt.end());
        ws::EbResult r = ws::etherbone_handle(exact.empty() ? nullptr : exact.data(), exact.size(),
                                              regs, 4096, reply, stats);
        if (r == ws::EbResult::kMalformed) {
            std::printf("MALFORMED\n");
        } else if (r == ws::EbResult::kNoReply) {
            std::printf("NOREPLY\n");
        } else {
            std::printf("REPLY ");
            for (uint8_t b : reply) std::printf("%02x", b);
            std::printf("\n");
        }
    }
    std::printf("STATS packets=%" PRIu64 " probes=%" PRIu64 " malformed=%" PRIu64 " reads=%" PRIu64
                " writes=%" PRIu64 " out_of_range=%" PRIu64 "\n",
                stats.packets, stats.probes, stats.malformed, stats.reads, stats.writes,
                stats.out_of_range);
    return 0;
}
