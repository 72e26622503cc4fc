// A second thread that evaluates one part of a two-part model (sim/partition.py) in lockstep
// with the thread that owns it: start() lets it run one clock, wait() returns when that clock
// is done. Both sides spin, as a clock takes about a microsecond, and yield to the scheduler
// after a while so that a machine with fewer free cores than threads still makes progress.
#pragma once
#include <atomic>
#include <cstdint>
#include <functional>
#include <thread>
#include <utility>

namespace ws {

class PartWorker {
public:
    explicit PartWorker(std::function<void()> clock) : clock_(std::move(clock)), thread_([this] { run(); }) {}

    PartWorker(const PartWorker&) = delete;
    PartWorker& operator=(const PartWorker&) = delete;

    ~PartWorker() {
        stop_.store(true, std::memory_order_release);
        thread_.join();
    }

    void start() { go_.store(++issued_, std::memory_order_release); }

    void wait() const {
        for (unsigned spins = 0; done_.load(std::memory_order_acquire) != issued_; spins++) relax(spins);
    }

private:
    static constexpr unsigned kSpinsBeforeYield = 1u << 14;

    static void relax(unsigned spins) {
        if (spins < kSpinsBeforeYield) {
#if defined(__x86_64__) || defined(__i386__)
            __builtin_ia32_pause();
#endif
        } else {
            std::this_thread::yield();
        }
    }

    void run() {
        uint64_t seen = 0;
        for (;;) {
            unsigned spins = 0;
            uint64_t next;
            while ((next = go_.load(std::memory_order_acquire)) == seen) {
                if (stop_.load(std::memory_order_acquire)) return;
                relax(spins++);
            }
            seen = next;
            clock_();
            done_.store(seen, std::memory_order_release);
        }
    }

    std::function<void()> clock_;
    uint64_t issued_ = 0;  // the owner's count of clocks started
    alignas(64) std::atomic<uint64_t> go_{0};
    alignas(64) std::atomic<uint64_t> done_{0};
    alignas(64) std::atomic<bool> stop_{false};
    std::thread thread_;  // last: it starts once the members above exist
};

}  // namespace ws
