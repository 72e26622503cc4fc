// Creates a DUT model by name from "key=value" parameters (canonical units: ns, frames/s).
#pragma once
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "dut_model.h"

namespace ws {

// Known model names, comma separated, for messages.
const char* known_dut_models();

// Throws std::invalid_argument with a one-line message on an unknown model or bad parameter.
// Every model also takes the impairment parameters of dut_impair.h (loss_ppb, dup_ppb,
// reorder_ppb, corrupt_ppb: 0..10^9 parts per billion; blackout_start_ns, blackout_len_ns;
// seed 0..2^32-1, default 1); if any impairment is set the model is wrapped in an
// ImpairStage. `direction` (0 or 1) selects an independent random stream per direction.
std::unique_ptr<DutModel> make_dut(const std::string& model,
                                   const std::vector<std::pair<std::string, std::string>>& params,
                                   unsigned direction = 0);

}  // namespace ws
