// DUT model "loopback": a cable. A byte-exact delay line of `delay_ns` (multiple of 8 ns):
// what the tester transmits at cycle t is received at cycle t + delay_ns / 8. No loss.
#pragma once
#include <cstdint>
#include <vector>

#include "dut_model.h"

namespace ws {

class LoopbackModel final : public DutModel {
public:
    explicit LoopbackModel(uint64_t delay_ns);

    GmiiSym step(GmiiSym in) override {
        GmiiSym out = in;
        if (!line_.empty()) {
            out = line_[pos_];
            line_[pos_] = in;
            if (++pos_ == line_.size()) pos_ = 0;
        }
        counters_.frames_in += uint64_t(in.en & !last_in_en_);
        counters_.frames_out += uint64_t(out.en & !last_out_en_);
        last_in_en_ = in.en;
        last_out_en_ = out.en;
        return out;
    }

    std::string describe() const override;

private:
    uint64_t delay_ns_;
    std::vector<GmiiSym> line_;  // one entry per cycle of delay
    size_t pos_ = 0;
    uint8_t last_in_en_ = 0;
    uint8_t last_out_en_ = 0;
};

}  // namespace ws
