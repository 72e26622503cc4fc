#include "pcap_wire.h"

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace ws {

namespace {

constexpr uint32_t kShb = 0x0A0D0D0A, kIdb = 1, kEpb = 6;
constexpr uint16_t kLinkEthernet = 1;
const char* const kNames[PcapWire::kWires] = {"p0-tx", "p1-rx", "p1-tx", "p0-rx"};

void put16(std::vector<uint8_t>& b, uint16_t v) { b.insert(b.end(), {uint8_t(v), uint8_t(v >> 8)}); }
void put32(std::vector<uint8_t>& b, uint32_t v) { put16(b, uint16_t(v)), put16(b, uint16_t(v >> 16)); }
void pad4(std::vector<uint8_t>& b) { b.resize((b.size() + 3) & ~size_t(3), 0); }

void option(std::vector<uint8_t>& b, uint16_t code, const void* p, size_t n) {
    put16(b, code);
    put16(b, uint16_t(n));
    const auto* c = static_cast<const uint8_t*>(p);
    b.insert(b.end(), c, c + n);
    pad4(b);
}

}  // namespace

PcapWire::PcapWire(const std::string& path) {
    f_ = std::fopen(path.c_str(), "wb");
    if (!f_) throw std::invalid_argument("--pcap-wire: " + path + ": " + std::strerror(errno));
    std::vector<uint8_t> shb;
    put32(shb, 0x1A2B3C4D);  // byte-order magic
    put16(shb, 1);
    put16(shb, 0);
    put32(shb, 0xFFFFFFFF);  // section length: not given
    put32(shb, 0xFFFFFFFF);
    block(kShb, shb);
    for (const char* name : kNames) {
        std::vector<uint8_t> idb;
        put16(idb, kLinkEthernet);
        put16(idb, 0);
        put32(idb, 0);  // no snap length limit
        option(idb, 2, name, std::strlen(name));      // if_name
        const uint8_t tsresol = 9, fcslen = 4;
        option(idb, 9, &tsresol, 1);                  // if_tsresol: ns
        option(idb, 13, &fcslen, 1);                  // if_fcslen
        put32(idb, 0);                                // opt_endofopt
        block(kIdb, idb);
    }
}

PcapWire::~PcapWire() {
    if (f_) std::fclose(f_);
}

void PcapWire::block(uint32_t type, const std::vector<uint8_t>& body) {
    std::vector<uint8_t> b;
    const uint32_t total = uint32_t(12 + body.size());
    put32(b, type);
    put32(b, total);
    b.insert(b.end(), body.begin(), body.end());
    put32(b, total);
    std::fwrite(b.data(), 1, b.size(), f_);
}

void PcapWire::packet(unsigned wire, const Wire& w) {
    std::vector<uint8_t> epb;
    const uint64_t ns = w.start * kNsPerCycle;
    put32(epb, wire);
    put32(epb, uint32_t(ns >> 32));
    put32(epb, uint32_t(ns));
    put32(epb, uint32_t(w.bytes.size()));
    put32(epb, uint32_t(w.bytes.size()));
    epb.insert(epb.end(), w.bytes.begin(), w.bytes.end());
    pad4(epb);
    block(kEpb, epb);
    frames_++;
}

void PcapWire::observe(unsigned wire, uint64_t cycle, GmiiSym s) {
    Wire& w = wires_[wire];
    if (s.en) {
        if (!w.in_frame) {
            w.in_frame = true;
            w.data = false;
            w.start = cycle;
            w.bytes.clear();
        }
        if (w.data)
            w.bytes.push_back(s.d);
        else if (s.d == kSfdByte)
            w.data = true;
    } else if (w.in_frame) {
        w.in_frame = false;
        if (w.data) packet(wire, w);
    }
}

}  // namespace ws
