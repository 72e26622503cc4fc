#include "dut_factory.h"

#include <stdexcept>

#include "dut_impair.h"
#include "dut_loopback.h"
#include "dut_params.h"
#include "dut_reset.h"
#include "dut_router.h"
#include "dut_switch.h"
#include "dut_tap.h"

namespace ws {

const char* known_dut_models() { return "loopback, router, switch, tap"; }

std::unique_ptr<DutModel> make_dut(const std::string& model,
                                   const std::vector<std::pair<std::string, std::string>>& kv,
                                   unsigned direction) {
    DutParams p(model, kv);
    std::unique_ptr<DutModel> dut;
    ImpairParams imp;
    namespace P = dut_param;
    auto impairments = [&]() {
        imp.loss_ppb = p.get(P::kAnyLossPpb);
        imp.dup_ppb = p.get(P::kAnyDupPpb);
        imp.reorder_ppb = p.get(P::kAnyReorderPpb);
        imp.corrupt_ppb = p.get(P::kAnyCorruptPpb);
        imp.blackout_start_ns = p.get(P::kAnyBlackoutStartNs);
        imp.blackout_len_ns = p.get(P::kAnyBlackoutLenNs);
        imp.seed = p.get(P::kAnySeed);
    };
    ResetStage::Factory base;
    if (model == "loopback") {
        uint64_t delay_ns = p.get(P::kLoopbackDelayNs);
        impairments();
        base = [=]() -> std::unique_ptr<DutModel> { return std::make_unique<LoopbackModel>(delay_ns); };
    } else if (model == "router") {
        uint64_t rate = p.get(P::kRouterRate);
        uint64_t queue = p.get(P::kRouterQueue);
        uint64_t latency_ns = p.get(P::kRouterLatencyNs);
        uint64_t max_frame = p.get(P::kRouterMaxFrame);
        uint64_t jitter_ns = p.get(P::kRouterJitterNs);
        // the collapsed service rate is below the normal one
        const P::Spec& c = P::kRouterCollapse;
        uint64_t collapse = p.get_uint(c.key, c.def, c.min, rate < c.max ? rate : c.max, c.multiple_of);
        uint64_t recover_ns = p.get(P::kRouterRecoverNs);
        impairments();
        uint64_t seed = imp.seed;
        base = [=]() -> std::unique_ptr<DutModel> {
            return std::make_unique<RouterModel>(rate, queue, latency_ns, max_frame, jitter_ns, seed,
                                                 direction, collapse, recover_ns);
        };
    } else if (model == "switch") {
        uint64_t latency_ns = p.get(P::kSwitchLatencyNs);
        uint64_t queue = p.get(P::kSwitchQueue);
        uint64_t table = p.get(P::kSwitchTable);
        uint64_t aging_ns = p.get(P::kSwitchAgingNs);
        uint64_t learning = p.get(P::kSwitchLearning);
        uint64_t rate = p.get(P::kSwitchRate);  // 0: wire speed
        uint64_t max_frame = p.get(P::kSwitchMaxFrame);
        impairments();
        // both directions share one fabric (MAC table); a reset rebuilds the models, which
        // empties the table
        auto fabric = SwitchFabric::attach(direction, table, aging_ns, learning != 0);
        base = [=]() -> std::unique_ptr<DutModel> {
            return std::make_unique<SwitchModel>(fabric, direction, latency_ns, queue, rate, max_frame);
        };
    } else if (model == "tap") {
        uint64_t latency_ns = p.get(P::kTapLatencyNs);
        uint64_t poll_ns = p.get(P::kTapPollNs);
        uint64_t queue = p.get(P::kTapQueue);
        uint64_t max_frame = p.get(P::kTapMaxFrame);
        impairments();
        p.get(P::kAnyRebootNs);
        p.finish();  // a bad parameter is refused before a namespace is made
        // both directions share one kernel; a reset rebuilds the models, not the kernel
        auto fabric = TapFabric::attach(direction, latency_ns, poll_ns, queue);
        base = [=]() -> std::unique_ptr<DutModel> {
            return std::make_unique<TapModel>(fabric, direction, max_frame);
        };
    } else {
        throw std::invalid_argument("dut '" + model + "': unknown model, known models: " +
                                    known_dut_models());
    }
    uint64_t reboot_ns = p.get(P::kAnyRebootNs);
    p.finish();
    // a reset replaces the model inside; the impairments outside it go on undisturbed
    dut = reboot_ns ? std::make_unique<ResetStage>(base, reboot_ns) : base();
    if (imp.any()) dut = std::make_unique<ImpairStage>(std::move(dut), imp, direction);
    return dut;
}

}  // namespace ws
