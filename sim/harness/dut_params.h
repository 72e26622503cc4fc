// Run-time parameters of a DUT model ("key=value" pairs from the command line), with
// validation that produces one-line error messages.
#pragma once
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "dut_param_table.h"

namespace ws {

class DutParams {
public:
    DutParams(std::string model, std::vector<std::pair<std::string, std::string>> kv);

    // Reads an unsigned integer parameter (decimal digits only). Records `key` as allowed.
    // Throws std::invalid_argument, e.g. "dut router: queue must be an integer 1..65536, got 'x'".
    uint64_t get_uint(const std::string& key, uint64_t def, uint64_t min, uint64_t max,
                      uint64_t multiple_of = 1);

    // The parameter of the table (sim/dut_params.py): its default, range and step.
    uint64_t get(const dut_param::Spec& s) { return get_uint(s.key, s.def, s.min, s.max, s.multiple_of); }

    // Throws std::invalid_argument if a parameter was given that no get_*() asked for, or a
    // parameter was given twice.
    void finish() const;

    const std::string& model() const { return model_; }

private:
    std::string model_;
    std::vector<std::pair<std::string, std::string>> kv_;
    std::vector<std::string> allowed_;
};

// Splits "key=value"; throws std::invalid_argument on a missing '=' or empty key.
std::pair<std::string, std::string> split_param(const std::string& text);

}  // namespace ws
