// Per-request random numbers. A counter-based generator: draw i of a request is a pure
// function of (key, i), so a seeded request's samples depend only on its seed and on how
// many tokens it has drawn, never on which other requests share its batch or its row.
#pragma once

#include <cstdint>
#include <optional>

namespace pagoda {

class Rng {
 public:
  // Seeded: the key is derived from the seed alone. Unseeded: from std::random_device.
  explicit Rng(std::optional<int64_t> seed = std::nullopt);
  static Rng from_state(uint64_t key, uint64_t counter) { return Rng(key, counter); }

  // SplitMix64's output function applied to key + counter * golden-gamma: SplitMix64 is
  // itself counter-based, and passes BigCrush for a single stream.
  [[nodiscard]] uint64_t next_u64();
  // Uniform in [0, 1) with 53 random bits.
  [[nodiscard]] double next_double() { return static_cast<double>(next_u64() >> 11) * 0x1.0p-53; }

  // Saved with a request so that a preempted, recomputed request continues its stream.
  [[nodiscard]] uint64_t key() const { return key_; }
  [[nodiscard]] uint64_t counter() const { return counter_; }

 private:
  Rng(uint64_t key, uint64_t counter) : key_(key), counter_(counter) {}
  uint64_t key_;
  uint64_t counter_ = 0;
};

}  // namespace pagoda
