#include "dut_params.h"

namespace ws {

DutParams::DutParams(std::string model, std::vector<std::pair<std::string, std::string>> kv)
    : model_(std::move(model)), kv_(std::move(kv)) {}

uint64_t DutParams::get_uint(const std::string& key, uint64_t def, uint64_t min, uint64_t max,
                             uint64_t multiple_of) {
    allowed_.push_back(key);
    const std::string* text = nullptr;
    for (const auto& [k, v] : kv_) {
        if (k == key) text = &v;
    }
    if (!text) return def;
    auto fail = [&]() {
        std::string what = "dut " + model_ + ": " + key + " must be an integer " +
                           std::to_string(min) + ".." + std::to_string(max);
        if (multiple_of > 1) what += " and a multiple of " + std::to_string(multiple_of);
        throw std::invalid_argument(what + ", got '" + *text + "'");
    };
    if (text->empty() || text->size() > 19) fail();
    uint64_t value = 0;
    for (char c : *text) {
        if (c < '0' || c > '9') fail();
        value = value * 10 + uint64_t(c - '0');
    }
    if (value < min || value > max || value % multiple_of != 0) fail();
    return value;
}

void DutParams::finish() const {
    for (size_t i = 0; i < kv_.size(); i++) {
        const std::string& key = kv_[i].first;
        bool known = false;
        for (const auto& a : allowed_) known = known || a == key;
        if (!known) {
            std::string list;
            for (const auto& a : allowed_) list += (list.empty() ? "" : ", ") + a;
            if (list.empty()) list = "(none)";
            throw std::invalid_argument("dut " + model_ + ": unknown parameter '" + key +
                                        "', allowed: " + list);
        }
        for (size_t j = 0; j < i; j++) {
            if (kv_[j].first == key)
                throw std::invalid_argument("dut " + model_ + ": parameter '" + key +
                                            "' given twice");
        }
    }
}

std::pair<std::string, std::string> split_param(const std::string& text) {
    auto eq = text.find('=');
    if (eq == std::string::npos || eq == 0)
        throw std::invalid_argument("dut parameter must be key=value, got '" + text + "'");
    return {text.substr(0, eq), text.substr(eq + 1)};
}

}  // namespace ws
