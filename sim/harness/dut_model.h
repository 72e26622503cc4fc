// The interface every DUT model implements, and the counters every model keeps.
#pragma once
#include <cstdint>
#include <string>

#include "gmii.h"

namespace ws {

struct DutCounters {
    uint64_t frames_in = 0;    // frames seen on the model's input (tester TX)
    uint64_t frames_out = 0;   // frames put on the model's output (tester RX)
    uint64_t dropped = 0;      // frames discarded by the model's queue policy
    uint64_t errored = 0;      // input frames discarded as malformed (tx_er, no SFD, too long)
    // impairment stage (dut_impair.h); zero when the model has none
    uint64_t lost = 0;         // frames dropped by `loss`
    uint64_t duplicated = 0;   // frames sent twice by `dup`
    uint64_t reordered = 0;    // frames held back by `reorder`
    uint64_t corrupted = 0;    // frames with one byte flipped by `corrupt`
    uint64_t blackout = 0;     // frames dropped inside the `blackout` window
    // what a receiver cannot see of the above (it knows frames only by good FCS):
    uint64_t corrupt_dups = 0;    // corrupted frames also duplicated (two bad copies)
    uint64_t reorder_hidden = 0;  // reordered frames that arrive in sequence order all the
                                  // same: held frame or the one it went behind corrupted, or
                                  // released by the hold timeout (nothing went before it)
    // router overload collapse (dut_router.h)
    uint64_t collapses = 0;      // times the router collapsed
    uint64_t recovered_at = 0;   // cycle of the last recovery (0: never)
    // reset (dut_reset.h)
    uint64_t resets = 0;         // resets taken
    uint64_t reset_lost = 0;     // frames that started on the input while the device was down
    uint64_t reset_at = 0;       // cycle of the last reset
    uint64_t up_at = 0;          // cycle the device last came back (0: never reset)
};

// A device under test seen from one direction: it consumes the tester's GMII transmit
// stream and produces the tester's GMII receive stream, one symbol per clock cycle.
class DutModel {
public:
    virtual ~DutModel() = default;

    // Advance one clock cycle. `in` is what the tester drives on GMII TX in this cycle;
    // the result is what the tester samples on GMII RX at the same clock edge.
    virtual GmiiSym step(GmiiSym in) = 0;

    // Model name and its parameters in canonical units, e.g. "router rate=400000 ...".
    virtual std::string describe() const = 0;

    // Virtual so that a wrapping stage can report its inner model's counters merged with its
    // own; called only for reports, never per cycle.
    virtual const DutCounters& counters() const { return counters_; }

    // Reset the device now (RFC 6201); false if the model cannot be reset (no `reboot`
    // parameter) or is already down.
    virtual bool trigger_reset() { return false; }

protected:
    DutCounters counters_;
};

}  // namespace ws
