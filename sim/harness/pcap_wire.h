// Every frame on the four simulated GMII wires, written to one pcapng file: interface 0 is
// tester port 0's transmit (into model A), 1 model A's output (port 1's receive), 2 port 1's
// transmit (into model B), 3 model B's output (port 0's receive).
//
//  * A frame is the symbols from tx_en/rx_dv rising to falling; what follows the first SFD
//    (0xD5) is recorded, FCS included (each interface says if_fcslen 4). A frame without an
//    SFD is not recorded.
//  * Its timestamp is the simulated time of its first symbol (preamble included): cycle x 8 ns,
//    from the first cycle of the simulation, in ns (if_tsresol 9).
//  * Blocks are written as frames end; the file is flushed at exit and complete at any block
//    boundary (pcapng needs no trailer).
#pragma once
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "gmii.h"

namespace ws {

class PcapWire {
public:
    static constexpr unsigned kWires = 4;

    // Creates (truncates) `path`; throws std::invalid_argument "--pcap-wire: PATH: reason".
    explicit PcapWire(const std::string& path);
    ~PcapWire();
    PcapWire(const PcapWire&) = delete;
    PcapWire& operator=(const PcapWire&) = delete;

    // The symbol on wire `wire` in cycle `cycle`.
    void observe(unsigned wire, uint64_t cycle, GmiiSym s);

    uint64_t frames() const { return frames_; }

private:
    struct Wire {
        bool in_frame = false;
        bool data = false;  // past the SFD
        uint64_t start = 0;
        std::vector<uint8_t> bytes;
    };
    void block(uint32_t type, const std::vector<uint8_t>& body);
    void packet(unsigned wire, const Wire& w);

    std::FILE* f_ = nullptr;
    Wire wires_[kWires];
    uint64_t frames_ = 0;
};

}  // namespace ws
