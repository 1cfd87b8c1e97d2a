#include "sample/rng.h"

#include <random>

namespace pagoda {
namespace {

constexpr uint64_t kGamma = 0x9e3779b97f4a7c15ull;

uint64_t mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

uint64_t random_key() {
  std::random_device device;
  return (static_cast<uint64_t>(device()) << 32) ^ device();
}

}  // namespace

// Seeds are mixed once so that nearby seeds (0, 1, 2 ...) start far-apart streams.
Rng::Rng(std::optional<int64_t> seed)
    : key_(seed ? mix64(static_cast<uint64_t>(*seed) ^ 0x5851f42d4c957f2dull) : random_key()) {}

uint64_t Rng::next_u64() { return mix64(key_ + (++counter_) * kGamma); }

}  // namespace pagoda
