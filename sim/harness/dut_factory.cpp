#include "dut_factory.h"

#include <stdexcept>

#include "dut_impair.h"
#include "dut_loopback.h"
#include "dut_params.h"
#include "dut_reset.h"
#include "dut_router.h"
#include "dut_switch.h"

namespace ws {

const char* known_dut_models() { return "loopback, router, switch"; }

std::unique_ptr<DutModel> make_dut(const std::string& model,
                                   const std::vector<std::pair<std::string, std::string>>& kv,
                                   unsigned direction) {
    DutParams p(model, kv);
    std::unique_ptr<DutModel> dut;
    ImpairParams imp;
    auto impairments = [&]() {
        constexpr uint64_t kPpb = 1000000000ULL;
        constexpr uint64_t kMaxTimeNs = 3600ULL * 1000000000ULL;  // one hour
        imp.loss_ppb = p.get_uint("loss_ppb", 0, 0, kPpb);
        imp.dup_ppb = p.get_uint("dup_ppb", 0, 0, kPpb);
        imp.reorder_ppb = p.get_uint("reorder_ppb", 0, 0, kPpb);
        imp.corrupt_ppb = p.get_uint("corrupt_ppb", 0, 0, kPpb);
        imp.blackout_start_ns = p.get_uint("blackout_start_ns", 0, 0, kMaxTimeNs, kNsPerCycle);
        imp.blackout_len_ns = p.get_uint("blackout_len_ns", 0, 0, kMaxTimeNs, kNsPerCycle);
        imp.seed = p.get_uint("seed", 1, 0, 0xFFFFFFFFULL);
    };
    ResetStage::Factory base;
    if (model == "loopback") {
        uint64_t delay_ns = p.get_uint("delay_ns", 40, 0, 1000000, kNsPerCycle);
        impairments();
        base = [=]() -> std::unique_ptr<DutModel> { return std::make_unique<LoopbackModel>(delay_ns); };
    } else if (model == "router") {
        uint64_t rate = p.get_uint("rate", 1000000, 1, kClockHz);
        uint64_t queue = p.get_uint("queue", 256, 1, 65536);
        uint64_t latency_ns = p.get_uint("latency_ns", 10000, 0, 1000000000, kNsPerCycle);
        uint64_t max_frame = p.get_uint("max_frame", 16384, 64, 65536);
        uint64_t jitter_ns = p.get_uint("jitter_ns", 0, 0, 1000000000, kNsPerCycle);
        uint64_t collapse = p.get_uint("collapse", 0, 0, rate);
        uint64_t recover_ns = p.get_uint("recover_ns", 0, 0, 3600ULL * 1000000000ULL, kNsPerCycle);
        impairments();
        uint64_t seed = imp.seed;
        base = [=]() -> std::unique_ptr<DutModel> {
            return std::make_unique<RouterModel>(rate, queue, latency_ns, max_frame, jitter_ns, seed,
                                                 direction, collapse, recover_ns);
        };
    } else if (model == "switch") {
        uint64_t latency_ns = p.get_uint("latency_ns", 2000, 0, 1000000000, kNsPerCycle);
        uint64_t queue = p.get_uint("queue", 256, 1, 65536);
        uint64_t table = p.get_uint("table", 8192, 1, 1048576);
        uint64_t aging_ns = p.get_uint("aging_ns", 300000000000ULL, 0, 1000000ULL * 1000000000ULL, kNsPerCycle);
        uint64_t learning = p.get_uint("learning", 1, 0, 1);
        uint64_t rate = p.get_uint("rate", 0, 0, kClockHz);  // 0: wire speed
        uint64_t max_frame = p.get_uint("max_frame", 16384, 64, 65536);
        impairments();
        // both directions share one fabric (MAC table); a reset rebuilds the models, which
        // empties the table
        auto fabric = SwitchFabric::attach(direction, table, aging_ns, learning != 0);
        base = [=]() -> std::unique_ptr<DutModel> {
            return std::make_unique<SwitchModel>(fabric, direction, latency_ns, queue, rate, max_frame);
        };
    } else {
        throw std::invalid_argument("dut '" + model + "': unknown model, known models: " +
                                    known_dut_models());
    }
    uint64_t reboot_ns = p.get_uint("reboot_ns", 0, 0, 3600ULL * 1000000000ULL, kNsPerCycle);
    p.finish();
    // a reset replaces the model inside; the impairments outside it go on undisturbed
    dut = reboot_ns ? std::make_unique<ResetStage>(base, reboot_ns) : base();
    if (imp.any()) dut = std::make_unique<ImpairStage>(std::move(dut), imp, direction);
    return dut;
}

}  // namespace ws
