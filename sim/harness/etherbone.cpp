#include "etherbone.h"

namespace ws {

namespace {

constexpr uint8_t kMagic0 = 0x4e, kMagic1 = 0x6f;
constexpr uint8_t kVersion = 1;
constexpr uint8_t kSizes = 0x44;  // 32-bit addresses, 32-bit ports
constexpr size_t kPacketHeader = 8;
constexpr size_t kRecordHeader = 4;
constexpr uint8_t kFlagPf = 0x01, kFlagPr = 0x02;
constexpr uint8_t kRecordWff = 0x40;  // write FIFO: all writes to base_write_addr

uint32_t be32(const uint8_t* p) {
    return uint32_t(p[0]) << 24 | uint32_t(p[1]) << 16 | uint32_t(p[2]) << 8 | uint32_t(p[3]);
}

void put_be32(std::vector<uint8_t>& out, uint32_t v) {
    out.push_back(uint8_t(v >> 24));
    out.push_back(uint8_t(v >> 16));
    out.push_back(uint8_t(v >> 8));
    out.push_back(uint8_t(v));
}

// Size of the record at p (with n bytes left), or 0 if it does not fit.
size_t record_size(const uint8_t* p, size_t n) {
    if (n < kRecordHeader) return 0;
    size_t wcount = p[2], rcount = p[3];
    size_t size = kRecordHeader + (wcount ? 4 + 4 * wcount : 0) + (rcount ? 4 + 4 * rcount : 0);
    return size <= n ? size : 0;
}

}  // namespace

EbResult etherbone_handle(const uint8_t* pkt, size_t len, CsrBus& bus, uint32_t csr_words,
                          std::vector<uint8_t>& reply, EtherboneStats& stats) {
    reply.clear();
    if (len < kPacketHeader || pkt[0] != kMagic0 || pkt[1] != kMagic1 ||
        (pkt[2] >> 4) != kVersion) {
        stats.malformed++;
        return EbResult::kMalformed;
    }
    if (pkt[2] & kFlagPf) {
        // Probe: echo the whole datagram as a probe reply.
        reply.assign(pkt, pkt + len);
        reply[2] = uint8_t((reply[2] & ~(kFlagPf | kFlagPr)) | kFlagPr);
        stats.packets++;
        stats.probes++;
        return EbResult::kReply;
    }
    if (pkt[3] != kSizes) {
        stats.malformed++;
        return EbResult::kMalformed;
    }
    // Validate the whole packet before touching the bus.
    bool any_reads = false;
    for (size_t off = kPacketHeader; off < len;) {
        size_t size = record_size(pkt + off, len - off);
        if (size == 0) {
            stats.malformed++;
            return EbResult::kMalformed;
        }
        any_reads = any_reads || pkt[off + 3] != 0;
        off += size;
    }

    if (any_reads) {
        const uint8_t header[kPacketHeader] = {kMagic0, kMagic1, kVersion << 4, kSizes, 0, 0, 0, 0};
        reply.assign(header, header + kPacketHeader);
    }
    const uint64_t window = uint64_t(csr_words) * 4;
    for (size_t off = kPacketHeader; off < len;) {
        const uint8_t* rec = pkt + off;
        size_t size = record_size(rec, len - off);
        const uint8_t flags = rec[0], byte_enable = rec[1], wcount = rec[2], rcount = rec[3];
        const uint8_t* p = rec + kRecordHeader;
        if (wcount) {
            uint32_t addr = be32(p);
            p += 4;
            for (unsigned i = 0; i < wcount; i++, p += 4) {
                stats.writes++;
                if (addr < window)
                    bus.write(addr >> 2, be32(p));
                else if (!bus.ext_write(addr, be32(p)))
                    stats.out_of_range++;
                if (!(flags & kRecordWff)) addr += 4;
            }
        }
        if (rcount) {
            uint32_t ret_addr = be32(p);
            p += 4;
            reply.push_back(0);  // flags
            reply.push_back(byte_enable);
            reply.push_back(rcount);  // wcount of the reply
            reply.push_back(0);       // rcount of the reply
            put_be32(reply, ret_addr);
            for (unsigned i = 0; i < rcount; i++, p += 4) {
                uint32_t addr = be32(p);
                uint32_t value = 0;
                stats.reads++;
                if (addr < window)
                    value = bus.read(addr >> 2);
                else if (!bus.ext_read(addr, value))
                    stats.out_of_range++;
                put_be32(reply, value);
            }
        }
        off += size;
    }
    stats.packets++;
    return any_reads ? EbResult::kReply : EbResult::kNoReply;
}

}  // namespace ws
