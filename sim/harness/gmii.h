// GMII symbols and timing constants shared by the harness and the DUT models.
#pragma once
#include <cstdint>

namespace ws {

// One byte time on one GMII direction (one 125 MHz clock cycle).
// On a transmit interface `en` is tx_en and `er` is tx_er; on a receive interface
// `en` is rx_dv and `er` is rx_er.
struct GmiiSym {
    uint8_t en;
    uint8_t er;
    uint8_t d;
};

constexpr GmiiSym kIdle{0, 0, 0};

constexpr uint8_t kPreambleByte = 0x55;
constexpr uint8_t kSfdByte = 0xD5;
constexpr int kPreambleLen = 8;   // 7 x 0x55 + SFD, as carried on GMII
constexpr int kMinGap = 12;       // minimum idle cycles between frames (inter-frame gap)
// The gateware's clock (wirespeed.gateware.config.CLK_HZ): sim/build.py passes it.
#ifndef WS_CLK_HZ
#error "WS_CLK_HZ is not defined: build with the defines of sim/build.py gateware_defines()"
#endif
constexpr uint64_t kClockHz = WS_CLK_HZ;
static_assert(1000000000ULL % kClockHz == 0, "a clock cycle must be a whole number of ns");
constexpr uint64_t kNsPerCycle = 1000000000ULL / kClockHz;

}  // namespace ws
