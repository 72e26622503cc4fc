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
std::unique_ptr<DutModel> make_dut(const std::string& model,
                                   const std::vector<std::pair<std::string, std::string>>& params);

}  // namespace ws
