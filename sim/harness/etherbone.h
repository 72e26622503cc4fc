// Etherbone (as spoken by LiteX's host tools) decoding, execution on a CSR bus, and reply
// encoding. No I/O here: the UDP server hands in datagrams and sends back the reply.
//
// Packet: 8-byte header 0x4e 0x6f, (version 1 << 4 | nr << 2 | pr << 1 | pf),
// (addr_size << 4 | port_size) = 0x44, 4 bytes padding; then records. Record: flags,
// byte_enable, wcount, rcount; if wcount: base_write_addr + wcount data words; if rcount:
// base_ret_addr + rcount read addresses. All words big-endian, addresses are byte addresses.
// A probe (pf=1) is echoed with pf=0, pr=1. A record's writes are done before its reads;
// records in order. Each record with reads yields one reply record carrying the read values
// as writes to base_ret_addr (wcount = rcount of the request). Packets without reads and
// without probe get no reply. A malformed packet is dropped as a whole before any access.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

namespace ws {

class CsrBus {
public:
    virtual ~CsrBus() = default;
    virtual uint32_t read(uint32_t word_addr) = 0;
    virtual void write(uint32_t word_addr, uint32_t data) = 0;
    // Byte addresses beyond the CSR window (e.g. the simulation's DUT control window);
    // false: nothing there (counted out of range, reads return 0).
    virtual bool ext_read(uint32_t /*byte_addr*/, uint32_t& /*value*/) { return false; }
    virtual bool ext_write(uint32_t /*byte_addr*/, uint32_t /*data*/) { return false; }
};

struct EtherboneStats {
    uint64_t packets = 0;     // valid packets handled (including probes)
    uint64_t probes = 0;
    uint64_t malformed = 0;   // dropped
    uint64_t reads = 0;
    uint64_t writes = 0;
    uint64_t out_of_range = 0;  // accesses beyond the CSR window (reads return 0, writes ignored)
};

enum class EbResult { kMalformed, kNoReply, kReply };

// Handles one datagram. `csr_words` is the size of the CSR window in 32-bit words (byte
// addresses 0 .. 4*csr_words-1 map to word addresses addr >> 2). On kReply, `reply` holds the
// datagram to send back; otherwise it is left empty.
EbResult etherbone_handle(const uint8_t* pkt, size_t len, CsrBus& bus, uint32_t csr_words,
                          std::vector<uint8_t>& reply, EtherboneStats& stats);

}  // namespace ws
