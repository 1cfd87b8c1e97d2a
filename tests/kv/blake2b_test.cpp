#include "kv/blake2b.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "kv/block_hash.h"

namespace pagoda {
namespace {

std::vector<uint8_t> unhex(const std::string& s) {
  std::vector<uint8_t> out;
  if (s == "-") return out;
  for (size_t i = 0; i + 1 < s.size(); i += 2) {
    out.push_back(static_cast<uint8_t>(std::stoi(s.substr(i, 2), nullptr, 16)));
  }
  return out;
}

std::string hex(std::span<const uint8_t> b) {
  static const char* d = "0123456789abcdef";
  std::string s;
  for (const uint8_t x : b) {
    s += d[x >> 4];
    s += d[x & 15];
  }
  return s;
}

std::string digest(size_t n, std::span<const uint8_t> key, std::span<const uint8_t> msg) {
  Blake2b h(n, key);
  h.update(msg);
  std::vector<uint8_t> out(n);
  h.finish(out);
  return hex(out);
}

TEST(Blake2b, Rfc7693AppendixA) {
  const uint8_t abc[] = {'a', 'b', 'c'};
  EXPECT_EQ(digest(64, {}, abc),
            "ba80a53f981c4d0d6a2797b69f12f6e94c212f14685ac4b74b12bb6fdbffa2d1"
            "7d87c5392aab792dc252d5de4533cc9518d38aa8dbf1925ab92386edd4009923");
}

TEST(Blake2b, MatchesPythonHashlib) {
  std::ifstream in(PAGODA_TEST_DATA "/kv/blake2b_vectors.txt");
  ASSERT_TRUE(in) << "missing tests/data/kv/blake2b_vectors.txt";
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream f(line);
    size_t len;
    std::string key, msg, want;
    f >> len >> key >> msg >> want;
    EXPECT_EQ(digest(len, unhex(key), unhex(msg)), want) << line.substr(0, 60);
    ++n;
  }
  EXPECT_EQ(n, 160);
}

TEST(Blake2b, IncrementalUpdatesEqualOneShot) {
  std::vector<uint8_t> msg(777);
  for (size_t i = 0; i < msg.size(); ++i) msg[i] = static_cast<uint8_t>(i * 31);
  const std::vector<uint8_t> key = {1, 2, 3};
  const std::string whole = digest(32, key, msg);
  for (size_t step : {1u, 7u, 127u, 128u, 129u}) {
    Blake2b h(32, key);
    for (size_t pos = 0; pos < msg.size(); pos += step) {
      h.update(std::span(msg).subspan(pos, std::min(step, msg.size() - pos)));
    }
    std::vector<uint8_t> out(32);
    h.finish(out);
    EXPECT_EQ(hex(out), whole) << step;
  }
}

TEST(BlockHash, CoversParentTokensAndExtraKeys) {
  const std::vector<uint8_t> key(32, 7);
  const std::vector<TokenId> tokens = {1, 2, 3, 4};
  const BlockHash base = hash_block(key, kNoParentHash, tokens, {});
  EXPECT_EQ(hash_block(key, kNoParentHash, tokens, {}), base);
  EXPECT_NE(hash_block(key, base, tokens, {}), base);
  EXPECT_NE(hash_block(key, kNoParentHash, std::vector<TokenId>{1, 2, 3, 5}, {}), base);
  EXPECT_NE(hash_block(key, kNoParentHash, tokens, {"salt", 0}), base);
  EXPECT_NE(hash_block(key, kNoParentHash, tokens, {"", 1}), base);
  EXPECT_NE(hash_block(std::vector<uint8_t>(32, 8), kNoParentHash, tokens, {}), base);
  // The per-process hasher is deterministic within the process.
  const BlockHasher h = keyed_block_hasher();
  EXPECT_EQ(h(kNoParentHash, tokens, {}), keyed_block_hasher()(kNoParentHash, tokens, {}));
}

}  // namespace
}  // namespace pagoda
