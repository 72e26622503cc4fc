// ResetStage: a DUT that can be reset (RFC 2544 26.6 / RFC 6201), wrapped around any model.
//
// A reset (trigger_reset(), from the DUT control window the host writes, see sim_harness.h)
// takes the device down at once for `reboot` ns:
//  * the model inside is discarded with everything it holds (queued frames, frames in
//    flight, learned state): those frames are lost;
//  * a frame the device is putting out is cut where it is (the tester sees a truncated frame
//    with a bad FCS), and the output stays idle while the device is down;
//  * input is ignored while the device is down: every frame whose first byte comes then is
//    lost (counted in `reset_lost`);
//  * at the first cycle >= reset cycle + reboot/8 a fresh model, built with the same
//    parameters, takes over (a frame already on the input then is seen without its preamble
//    and discarded by the model as errored).
// A reset while the device is already down is ignored. Counters are the sum over every model
// instance since the start, plus `resets`, `reset_lost` and the cycles of the last reset and
// of the last return to service.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "dut_model.h"

namespace ws {

class ResetStage final : public DutModel {
public:
    using Factory = std::function<std::unique_ptr<DutModel>()>;

    ResetStage(Factory make, uint64_t reboot_ns);

    GmiiSym step(GmiiSym in) override;
    std::string describe() const override;
    const DutCounters& counters() const override;
    bool trigger_reset() override;

private:
    void add(const DutCounters& c);

    Factory make_;
    std::unique_ptr<DutModel> inner_;
    uint64_t reboot_ns_, reboot_cycles_;
    uint64_t now_ = 0;
    bool down_ = false;
    bool reset_pending_ = false;
    uint64_t up_at_ = 0;
    bool prev_in_en_ = false;
    DutCounters past_;              // counters of discarded model instances
    mutable DutCounters merged_;
};

}  // namespace ws
