#include "dut_loopback.h"

namespace ws {

LoopbackModel::LoopbackModel(uint64_t delay_ns)
    : delay_ns_(delay_ns), line_(delay_ns / kNsPerCycle, kIdle) {}

std::string LoopbackModel::describe() const {
    return "loopback delay_ns=" + std::to_string(delay_ns_);
}

}  // namespace ws
