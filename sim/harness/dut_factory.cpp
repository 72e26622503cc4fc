#include "dut_factory.h"

#include <stdexcept>

#include "dut_loopback.h"
#include "dut_params.h"
#include "dut_router.h"

namespace ws {

const char* known_dut_models() { return "loopback, router"; }

std::unique_ptr<DutModel> make_dut(const std::string& model,
                                   const std::vector<std::pair<std::string, std::string>>& kv) {
    DutParams p(model, kv);
    std::unique_ptr<DutModel> dut;
    if (model == "loopback") {
        uint64_t delay_ns = p.get_uint("delay_ns", 40, 0, 1000000, kNsPerCycle);
        p.finish();
        dut = std::make_unique<LoopbackModel>(delay_ns);
    } else if (model == "router") {
        uint64_t rate = p.get_uint("rate", 1000000, 1, kClockHz);
        uint64_t queue = p.get_uint("queue", 256, 1, 65536);
        uint64_t latency_ns = p.get_uint("latency_ns", 10000, 0, 1000000000, kNsPerCycle);
        uint64_t max_frame = p.get_uint("max_frame", 16384, 64, 65536);
        p.finish();
        dut = std::make_unique<RouterModel>(rate, queue, latency_ns, max_frame);
    } else {
        throw std::invalid_argument("dut '" + model + "': unknown model, known models: " +
                                    known_dut_models());
    }
    return dut;
}

}  // namespace ws
