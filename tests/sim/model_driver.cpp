// Test driver for the C++ DUT models (compiled by tests/sim/test_models.py with g++).
//
// Feeds one model (built by the harness's own factory from --dut/--dut-param) with synthetic
// GMII frames and reports, one line each, what went in and what came out:
//   IN  <index> <first tx_en cycle> <first cycle tx_en low after the frame>
//   OUT <n> <index> <first rx_dv cycle> <bytes after SFD> <ok> <idle cycles before it, -1 first>
//       <pre_ok> <fcs_ok> [<hex of the bytes after the SFD>, with --dump 1]
//   ER  <cycles with rx_er>
//   STATS frames_in=.. frames_out=.. dropped=.. errored=..
//   IMPAIR lost=.. duplicated=.. reordered=.. corrupted=.. blackout=.. corrupt_dups=..
//          reorder_hidden=..
//   COLLAPSE collapses=.. recovered_at=..
//   RESET taken=.. resets=.. reset_lost=.. reset_at=.. up_at=..
//   SWITCH port=P forwarded=.. flooded=.. filtered=.. fcs_errors=.. queue_drops=..  (switch
//   TABLE learned=.. moved=.. table_full=.. entries=..                          models only)
//   PEER frames_in=.. frames_out=.. dropped=.. errored=..   (with --peer-frame)
// Frame i (len bytes after the SFD) starts at cycle start + floor(i * num / den) (with --switch
// S --period2 NUM2/DEN2: frames i >= S start at start(S) + floor((i - S) * num2 / den2), where
// start(S) is where frame S would start at the first period): 7x0x55, 0xD5,
// then bytes b[0..3] = i (big-endian), b[j] = (i * 7 + j) & 0xFF. `ok` means: preamble and SFD
// exactly right, content equal to frame <index> byte for byte, rx_er never set. With --fcs 1
// the last 4 bytes are instead the Ethernet FCS (CRC-32, least significant byte first) of the
// others. `pre_ok`: 7x0x55 + 0xD5 exactly; `fcs_ok`: the last 4 bytes are the CRC-32 of the
// bytes before them. --mac I:DST:SRC (12 hex digits each) replaces bytes 0..11 of frame I (before
// the FCS is computed) and, with any --mac, every frame carries its index in bytes 12..15
// (big-endian, the OUT line's index is read there); --bad-fcs-frame I inverts the last byte of frame I (after it).
// --peer-frame CYCLE:DST:SRC (repeatable) builds the model's other direction too (make_dut
// direction 1, as the harness does) and sends it, from CYCLE, a 64-byte frame with these
// addresses, a zero payload and a good FCS; what that direction puts out is only counted.
//
// Options: --dut NAME --dut-param K=V ... --frames N --len L --period NUM/DEN
//          [--start C] [--tail C] [--er-frame I] [--no-sfd-frame I] [--bench CYCLES]
//          [--fcs 0|1] [--dump 0|1] [--switch S --period2 NUM2/DEN2] [--reset-at CYCLE]
//          [--mac I:DST:SRC] [--bad-fcs-frame I] [--peer-frame CYCLE:DST:SRC]
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "dut_factory.h"
#include "dut_params.h"
#include "dut_switch.h"

using namespace ws;

namespace {

[[noreturn]] void die(const std::string& msg) {
    std::fprintf(stderr, "model_driver: %s\n", msg.c_str());
    std::exit(2);
}

uint8_t frame_byte(uint64_t i, uint64_t j) {
    if (j < 4) return uint8_t(i >> (8 * (3 - j)));
    return uint8_t(i * 7 + j);
}

uint32_t crc32(const uint8_t* p, size_t n) {
    uint32_t c = 0xFFFFFFFFu;
    for (size_t k = 0; k < n; k++) {
        c ^= p[k];
        for (int b = 0; b < 8; b++) c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1u)));
    }
    return ~c;
}

bool fcs_ok(const std::vector<uint8_t>& f) {
    if (f.size() < 4) return false;
    uint32_t c = crc32(f.data(), f.size() - 4);
    for (size_t k = 0; k < 4; k++)
        if (f[f.size() - 4 + k] != uint8_t(c >> (8 * k))) return false;
    return true;
}

// "DST:SRC" (12 hex digits each) -> the 12 header bytes
std::vector<uint8_t> parse_macs(const std::string& text) {
    std::vector<uint8_t> b;
    std::string hex;
    for (char c : text)
        if (c != ':') hex += c;
    if (hex.size() != 24 || hex.find_first_not_of("0123456789abcdefABCDEF") != std::string::npos)
        die("addresses must be DST:SRC, 12 hex digits each, got '" + text + "'");
    for (size_t k = 0; k < 24; k += 2) b.push_back(uint8_t(std::stoul(hex.substr(k, 2), nullptr, 16)));
    return b;
}

std::map<uint64_t, std::vector<uint8_t>> g_macs;  // frame index -> header bytes 0..11
std::set<uint64_t> g_bad_fcs;

std::vector<uint8_t> make_frame(uint64_t i, uint64_t len, bool fcs) {
    std::vector<uint8_t> f(len);
    for (uint64_t j = 0; j < len; j++) f[j] = frame_byte(i, j);
    auto m = g_macs.find(i);
    if (m != g_macs.end())
        for (size_t j = 0; j < m->second.size() && j < len; j++) f[j] = m->second[j];
    if (!g_macs.empty())
        for (size_t j = 12; j < 16 && j < len; j++) f[j] = uint8_t(i >> (8 * (15 - j)));
    if (fcs && len >= 8) {
        uint32_t c = crc32(f.data(), len - 4);
        for (size_t k = 0; k < 4; k++) f[len - 4 + k] = uint8_t(c >> (8 * k));
    }
    if (g_bad_fcs.count(i)) f[len - 1] ^= 0xFF;
    return f;
}

std::vector<uint8_t> make_peer_frame(const std::vector<uint8_t>& macs) {
    std::vector<uint8_t> f(64, 0);
    for (size_t j = 0; j < macs.size(); j++) f[j] = macs[j];
    uint32_t c = crc32(f.data(), 60);
    for (size_t k = 0; k < 4; k++) f[60 + k] = uint8_t(c >> (8 * k));
    return f;
}

}  // namespace

int main(int argc, char** argv) {
    std::string model = "loopback";
    std::vector<std::pair<std::string, std::string>> params;
    uint64_t frames = 1, len = 64, num = 100, den = 1, start = 10, tail = 10000, bench = 0;
    uint64_t switch_at = UINT64_MAX, num2 = 0, den2 = 1, reset_at = UINT64_MAX;
    bool reset_taken = false;
    std::set<uint64_t> er_frames, no_sfd_frames;
    bool fcs = false, dump = false;
    std::vector<std::pair<uint64_t, std::vector<uint8_t>>> peer_frames;  // (cycle, header)
    for (int i = 1; i < argc; i++) {
        std::string a = argv[i];
        if (i + 1 >= argc) die("missing value for " + a);
        std::string v = argv[++i];
        if (a == "--dut") model = v;
        else if (a == "--dut-param") params.push_back(split_param(v));
        else if (a == "--frames") frames = std::stoull(v);
        else if (a == "--len") len = std::stoull(v);
        else if (a == "--period") {
            auto slash = v.find('/');
            num = std::stoull(v.substr(0, slash));
            den = slash == std::string::npos ? 1 : std::stoull(v.substr(slash + 1));
        } else if (a == "--period2") {
            auto slash = v.find('/');
            num2 = std::stoull(v.substr(0, slash));
            den2 = slash == std::string::npos ? 1 : std::stoull(v.substr(slash + 1));
        } else if (a == "--switch") switch_at = std::stoull(v);
        else if (a == "--reset-at") reset_at = std::stoull(v);
        else if (a == "--start") start = std::stoull(v);
        else if (a == "--tail") tail = std::stoull(v);
        else if (a == "--er-frame") er_frames.insert(std::stoull(v));
        else if (a == "--no-sfd-frame") no_sfd_frames.insert(std::stoull(v));
        else if (a == "--bench") bench = std::stoull(v);
        else if (a == "--fcs") fcs = v == "1";
        else if (a == "--dump") dump = v == "1";
        else if (a == "--mac") {
            auto colon = v.find(':');
            if (colon == std::string::npos) die("--mac must be I:DST:SRC, got '" + v + "'");
            g_macs[std::stoull(v.substr(0, colon))] = parse_macs(v.substr(colon + 1));
        } else if (a == "--bad-fcs-frame") g_bad_fcs.insert(std::stoull(v));
        else if (a == "--peer-frame") {
            auto colon = v.find(':');
            if (colon == std::string::npos) die("--peer-frame must be CYCLE:DST:SRC, got '" + v + "'");
            peer_frames.emplace_back(std::stoull(v.substr(0, colon)), parse_macs(v.substr(colon + 1)));
        }
        else die("unknown option " + a);
    }
    if (len < 4) die("--len must be >= 4");
    if (num < (len + 9) * den) die("--period leaves no idle cycle between frames");
    if (switch_at != UINT64_MAX && num2 < (len + 9) * den2) die("--period2 leaves no idle cycle between frames");
    for (size_t k = 1; k < peer_frames.size(); k++)
        if (peer_frames[k].first < peer_frames[k - 1].first + kPreambleLen + 64 + kMinGap)
            die("--peer-frame cycles must be in order, at least 84 apart");

    std::unique_ptr<DutModel> dut, peer;
    try {
        dut = make_dut(model, params);
        if (!peer_frames.empty()) peer = make_dut(model, params, 1);
    } catch (const std::exception& e) {
        std::printf("ERROR %s\n", e.what());
        return 3;
    }

    // ---- transmit schedule -----------------------------------------------------------------
    auto frame_start = [&](uint64_t i) {
        if (i < switch_at) return start + (i * num) / den;
        return start + (switch_at * num) / den + ((i - switch_at) * num2) / den2;
    };
    const uint64_t frame_cycles = kPreambleLen + len;
    const uint64_t total =
        bench ? bench : (frames ? frame_start(frames - 1) + frame_cycles : start) + tail;
    const uint64_t n_frames = bench ? UINT64_MAX : frames;  // --bench: frames never run out

    uint64_t next = 0;  // next frame to send
    uint64_t pos = 0;   // position within the frame being sent
    uint64_t tx_start = 0;
    bool sending = false;

    // ---- receive monitor -------------------------------------------------------------------
    bool rx_in = false;
    uint64_t rx_start = 0, rx_pos = 0, out_n = 0, er_cycles = 0;
    int64_t last_end = -1;  // first idle cycle after the previous output frame
    bool rx_ok = true, pre_ok = true;
    std::vector<uint8_t> cur_frame;
    std::vector<uint8_t> rx_bytes;

    auto finish_rx = [&](uint64_t now) {
        uint64_t n = rx_pos > kPreambleLen ? rx_pos - kPreambleLen : 0;
        bool ok = rx_ok && n == len;
        uint64_t index = 0;
        const size_t at = g_macs.empty() ? 0 : 12;  // where the index is
        for (size_t j = at; j < at + 4 && j < rx_bytes.size(); j++) index = index << 8 | rx_bytes[j];
        if (ok) ok = rx_bytes == make_frame(index, len, fcs);
        long long gap = last_end < 0 ? -1 : (long long)(rx_start - uint64_t(last_end));
        if (!bench) {
            std::printf("OUT %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %d %lld %d %d", out_n,
                        index, rx_start, n, ok ? 1 : 0, gap, pre_ok && rx_pos >= kPreambleLen ? 1 : 0,
                        fcs_ok(rx_bytes) ? 1 : 0);
            if (dump) {
                std::printf(" ");
                for (uint8_t b : rx_bytes) std::printf("%02x", b);
            }
            std::printf("\n");
        }
        out_n++;
        last_end = int64_t(now);
    };

    // ---- the other direction (--peer-frame) ------------------------------------------------
    size_t peer_next = 0, peer_pos = 0;
    std::vector<uint8_t> peer_frame;
    auto peer_step = [&](uint64_t t) {
        GmiiSym in = kIdle;
        if (peer_pos == 0 && peer_next < peer_frames.size() && t >= peer_frames[peer_next].first) {
            peer_frame = make_peer_frame(peer_frames[peer_next].second);
            peer_pos = 1;
        }
        if (peer_pos) {
            const size_t k = peer_pos - 1;
            in.en = 1;
            in.d = k < kPreambleLen - 1 ? kPreambleByte : k == kPreambleLen - 1 ? kSfdByte
                                                                               : peer_frame[k - kPreambleLen];
            if (++peer_pos == kPreambleLen + peer_frame.size() + 1) {
                peer_pos = 0;
                peer_next++;
            }
        }
        peer->step(in);
    };

    auto t0 = std::chrono::steady_clock::now();
    for (uint64_t t = 0; t < total; t++) {
        if (peer) peer_step(t);
        GmiiSym in = kIdle;
        if (!sending && next < n_frames && t >= frame_start(next)) {
            sending = true;
            pos = 0;
            tx_start = t;
            cur_frame = make_frame(next, len, fcs);
        }
        if (sending) {
            const uint64_t cur = next;
            in.en = 1;
            if (pos < kPreambleLen - 1)
                in.d = kPreambleByte;
            else if (pos == kPreambleLen - 1)
                in.d = no_sfd_frames.count(cur) ? kPreambleByte : kSfdByte;
            else
                in.d = cur_frame[pos - kPreambleLen];
            in.er = (er_frames.count(cur) && pos == kPreambleLen + len / 2) ? 1 : 0;
            if (++pos == frame_cycles) {
                sending = false;
                next++;
                if (!bench)
                    std::printf("IN %" PRIu64 " %" PRIu64 " %" PRIu64 "\n", cur, tx_start, t + 1);
            }
        }

        if (t == reset_at) reset_taken = dut->trigger_reset();
        GmiiSym out = dut->step(in);

        if (out.er) er_cycles++;
        if (out.en) {
            if (!rx_in) {
                rx_in = true;
                rx_start = t;
                rx_pos = 0;
                rx_ok = true;
                pre_ok = true;
                rx_bytes.clear();
            }
            if (out.er) rx_ok = false;
            if (rx_pos < kPreambleLen - 1) {
                pre_ok = pre_ok && out.d == kPreambleByte;
            } else if (rx_pos == kPreambleLen - 1) {
                pre_ok = pre_ok && out.d == kSfdByte;
                rx_ok = rx_ok && pre_ok;
            } else
                rx_bytes.push_back(out.d);
            rx_pos++;
        } else if (rx_in) {
            rx_in = false;
            finish_rx(t);
        }
    }
    if (rx_in) finish_rx(total);
    double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

    const DutCounters& c = dut->counters();
    std::printf("ER %" PRIu64 "\n", er_cycles);
    std::printf("STATS frames_in=%" PRIu64 " frames_out=%" PRIu64 " dropped=%" PRIu64
                " errored=%" PRIu64 "\n",
                c.frames_in, c.frames_out, c.dropped, c.errored);
    std::printf("IMPAIR lost=%" PRIu64 " duplicated=%" PRIu64 " reordered=%" PRIu64
                " corrupted=%" PRIu64 " blackout=%" PRIu64 " corrupt_dups=%" PRIu64
                " reorder_hidden=%" PRIu64 "\n",
                c.lost, c.duplicated, c.reordered, c.corrupted, c.blackout, c.corrupt_dups,
                c.reorder_hidden);
    std::printf("COLLAPSE collapses=%" PRIu64 " recovered_at=%" PRIu64 "\n", c.collapses, c.recovered_at);
    std::printf("RESET taken=%d resets=%" PRIu64 " reset_lost=%" PRIu64 " reset_at=%" PRIu64
                " up_at=%" PRIu64 "\n", reset_taken ? 1 : 0, c.resets, c.reset_lost, c.reset_at, c.up_at);
    if (auto fabric = SwitchFabric::last()) {
        for (unsigned p = 0; p < SwitchFabric::kPorts; p++) {
            const SwitchPortCounters& s = fabric->port[p];
            std::printf("SWITCH port=%u forwarded=%" PRIu64 " flooded=%" PRIu64 " filtered=%" PRIu64
                        " fcs_errors=%" PRIu64 " queue_drops=%" PRIu64 "\n", p, s.forwarded, s.flooded,
                        s.filtered, s.fcs_errors, s.queue_drops);
        }
        std::printf("TABLE learned=%" PRIu64 " moved=%" PRIu64 " table_full=%" PRIu64
                    " entries=%" PRIu64 "\n", fabric->learned, fabric->moved, fabric->table_full,
                    fabric->entries(total));
    }
    if (peer) {
        const DutCounters& pc = peer->counters();
        std::printf("PEER frames_in=%" PRIu64 " frames_out=%" PRIu64 " dropped=%" PRIu64
                    " errored=%" PRIu64 "\n", pc.frames_in, pc.frames_out, pc.dropped, pc.errored);
    }
    if (bench)
        std::printf("BENCH cycles=%" PRIu64 " wall_s=%.4f cycles_per_s=%.0f\n", total, wall,
                    double(total) / wall);
    return 0;
}
