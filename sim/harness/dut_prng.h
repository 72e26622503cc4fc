// Seeded pseudo-random numbers for the DUT models: SplitMix64 (Steele, Lea, Flood 2014).
// Tiny, fast, and trivially replicated in Python by tests, so every random decision of a
// model is reproducible from its `seed` parameter.
#pragma once
#include <cstdint>

namespace ws {

// Independent streams per purpose and direction: state0 = seed + (purpose << 48) + (direction << 32).
enum class PrngPurpose : uint64_t { kJitter = 0, kImpair = 1 };

inline uint64_t prng_seed(uint64_t seed, PrngPurpose purpose, unsigned direction) {
    return seed + (uint64_t(purpose) << 48) + (uint64_t(direction) << 32);
}

class SplitMix64 {
public:
    explicit SplitMix64(uint64_t state) : s_(state) {}

    uint64_t next() {
        uint64_t z = (s_ += 0x9E3779B97F4A7C15ULL);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
        return z ^ (z >> 31);
    }

    // True with probability threshold / 2^32 (see ppb_threshold).
    bool chance(uint64_t threshold) { return (next() >> 32) < threshold; }

    // Uniform integer in [0, n) by multiply-high: (next() * n) >> 64.
    uint64_t below(uint64_t n) { return uint64_t((unsigned __int128)next() * n >> 64); }

private:
    uint64_t s_;
};

// Probability in parts per 10^9 -> threshold for chance(): floor(ppb * 2^32 / 10^9).
// 0 never fires, 10^9 (= 2^32) always fires.
inline uint64_t ppb_threshold(uint64_t ppb) { return (ppb << 32) / 1000000000ULL; }

}  // namespace ws
