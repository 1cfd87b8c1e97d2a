// The incremental detokenizer over real vocabularies (the SmolLM2 and Gemma 3 GGUFs, the
// shared tokenizer.json files) and a GPT-2 byte vocabulary with llama.cpp's space clean-up:
// fed a few ids at a time over the multilingual corpus and over random ids (which split
// UTF-8 characters and byte-fallback sequences), the deltas add up to decode(all ids), each
// delta is already in decode() of the ids fed so far (nothing is guessed and later taken
// back), and the window decoded per step stays small.
#include "io/incremental_detokenizer.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "core/error.h"
#include "io/hf_tokenizer.h"
#include "io/utf8.h"
#include "io/vocab.h"
#include "loader/gguf.h"

namespace pagoda {
namespace {

namespace fs = std::filesystem;
using Ids = std::vector<int32_t>;

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";

fs::path cache_dir() {
  if (const char* dir = std::getenv("PAGODA_CACHE")) return dir;
  const char* home = std::getenv("HOME");
  return fs::path(home ? home : "/root") / ".cache" / "pagoda";
}

// $PAGODA_SHARED, or shared/ beside the checkout (worktrees sit one level deeper).
fs::path shared_tokenizers_dir() {
  if (const char* dir = std::getenv("PAGODA_SHARED")) return fs::path(dir) / "tokenizers";
  const fs::path shared = fs::path(PAGODA_SHARED_DIR).lexically_normal();
  if (fs::is_directory(shared / "tokenizers")) return shared / "tokenizers";
  return shared.parent_path().parent_path() / "shared" / "tokenizers";
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// The decompressed text of a .zst file through the zstd command; empty when that fails.
std::string zstd_decompress(const fs::path& path) {
  const std::string command = "zstd -dcq '" + path.string() + "' 2>/dev/null";
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return {};
  std::string out;
  char buffer[1 << 16];
  for (size_t n; (n = fread(buffer, 1, sizeof buffer, pipe)) > 0;) out.append(buffer, n);
  return pclose(pipe) == 0 ? out : std::string();
}

// Tokenizers by name, loaded once per test binary; null (with the reason) when absent.
const Tokenizer* tokenizer_named(const std::string& name, std::string* why) {
  static std::map<std::string, std::unique_ptr<Tokenizer>> cache;
  if (auto it = cache.find(name); it != cache.end()) return it->second.get();
  std::unique_ptr<Tokenizer> tok;
  if (name == "smollm2-gguf" || name == "gemma3-gguf") {
    const fs::path path = cache_dir() / (name == "smollm2-gguf" ? "SmolLM2-135M-Instruct.Q4_1.gguf"
                                                                : "gemma-3-270m-q4_k_m.gguf");
    if (!fs::exists(path)) {
      *why = path.string() + " is absent";
      return nullptr;
    }
    tok = load_gguf_tokenizer(*GgufFile::open(path.string()));
  } else {
    const fs::path dir = shared_tokenizers_dir() / name;
    if (!fs::exists(dir / "tokenizer.json.zst")) {
      *why = (dir / "tokenizer.json.zst").string() + " is absent";
      return nullptr;
    }
    const std::string json = zstd_decompress(dir / "tokenizer.json.zst");
    if (json.empty()) {
      *why = "cannot decompress " + (dir / "tokenizer.json.zst").string() + " (zstd missing?)";
      return nullptr;
    }
    const fs::path config = dir / "tokenizer_config.json";
    tok = parse_hf_tokenizer(json, fs::exists(config) ? read_file(config) : std::string());
  }
  return (cache[name] = std::move(tok)).get();
}

std::vector<std::string> corpus() {
  std::vector<std::string> texts;
  std::ifstream in(fs::path(PAGODA_TEST_DATA) / ".." / ".." / "tools" / "corpus" / "corpus.jsonl");
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty()) texts.push_back(nlohmann::json::parse(line).at("text"));
  }
  return texts;
}

std::string show(const Ids& ids) { return nlohmann::json(ids).dump(); }

// The longest run of ids that each decode to one byte or one U+FFFD: it bounds the runs of
// byte-fallback tokens, which decode as a whole (Hugging Face's ByteFallback: one more
// byte token can turn a valid run into U+FFFDs), so the detokenizer holds them until the
// run ends and its window spans them (and, as context, the run before, when one id is all
// that separates the two).
size_t longest_single_byte_run(const Tokenizer& tok, const Ids& ids) {
  size_t longest = 0, run = 0;
  for (const int32_t id : ids) {
    const Ids one = {id};
    const std::string s = tok.decode(one, false);
    run = s.size() == 1 || s == kReplacement ? run + 1 : 0;
    longest = std::max(longest, run);
  }
  return longest;
}

// Feeds `ids` in chunks of 1..max_chunk (random, from `rng`) and checks every property of
// the file comment; returns the largest window seen.
size_t check_stream(const Tokenizer& tok, const Ids& ids, bool skip_special, size_t max_chunk,
                    std::mt19937& rng) {
  const std::string full = tok.decode(ids, skip_special);
  IncrementalDetokenizer detok(tok, {skip_special, true});
  std::string joined;
  size_t max_window = 0;
  std::uniform_int_distribution<size_t> chunk(1, max_chunk);
  for (size_t fed = 0; fed < ids.size();) {
    const size_t n = std::min(chunk(rng), ids.size() - fed);
    const std::string delta = detok.add(std::span(ids).subspan(fed, n));
    fed += n;
    max_window = std::max(max_window, detok.window_size());
    // Certain text only: what has gone out is decode() of the ids so far, cut short.
    const std::string so_far = tok.decode(std::span(ids).first(fed), skip_special);
    EXPECT_EQ(so_far.compare(0, joined.size() + delta.size(), joined + delta), 0)
        << "ids " << show(ids) << " after " << fed << ": emitted '" << joined + delta
        << "' is not a prefix of '" << so_far << "'";
    // A U+FFFD goes out only where decode() of all the ids has one.
    for (size_t at = delta.find(kReplacement); at != std::string::npos;
         at = delta.find(kReplacement, at + 1)) {
      EXPECT_EQ(full.compare(joined.size() + at, kReplacement.size(), kReplacement), 0)
          << "ids " << show(ids) << ": delta '" << delta << "' has a U+FFFD decode() lacks";
    }
    joined += delta;
  }
  joined += detok.flush();
  EXPECT_EQ(joined, full) << "ids " << show(ids) << " skip_special " << skip_special;
  EXPECT_EQ(detok.num_ids(), static_cast<int64_t>(ids.size()));
  return max_window;
}

class RealTokenizer : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    std::string why;
    tok_ = tokenizer_named(GetParam(), &why);
    if (tok_ == nullptr) GTEST_SKIP() << why;
  }
  const Tokenizer* tok_ = nullptr;
};

TEST_P(RealTokenizer, CorpusDeltasAddUpToTheFullDecode) {
  const std::vector<std::string> texts = corpus();
  ASSERT_GT(texts.size(), 1000u);
  // Under PAGODA_SKIP_SLOW (the sanitizer pass) every 6th string: ~2,200, as many as the
  // corpus had before it grew to 13,000.
  const size_t stride = std::getenv("PAGODA_SKIP_SLOW") != nullptr ? 6 : 1;
  std::mt19937 rng(7);
  for (size_t i = 0; i < texts.size(); i += stride) {
    const std::string& text = texts[i];
    const Ids ids = tok_->encode(text, /*add_special=*/true);
    // O(window) per step when ids come one at a time (the engine's decode steps): the window
    // spans one step of context plus the ids of a character or byte run still being completed.
    const size_t bound = 24 + 2 * longest_single_byte_run(*tok_, ids);
    for (const bool skip : {true, false}) {
      EXPECT_LE(check_stream(*tok_, ids, skip, 1, rng), bound)
          << "text " << nlohmann::json(text).dump();
      (void)check_stream(*tok_, ids, skip, 4, rng);
    }
    if (::testing::Test::HasFailure()) break;  // one text's report is enough
  }
}

TEST_P(RealTokenizer, LongOutputKeepsTheWindowSmall) {
  std::string text;
  for (const std::string& t : corpus()) text += t + "\n";
  const Ids ids = tok_->encode(text, false);
  ASSERT_GT(ids.size(), 20000u);
  IncrementalDetokenizer detok(*tok_, {});
  std::string joined;
  size_t max_window = 0;
  for (size_t i = 0; i < ids.size(); ++i) {
    joined += detok.add(std::span(ids).subspan(i, 1));
    max_window = std::max(max_window, detok.window_size());
  }
  joined += detok.flush();
  EXPECT_EQ(joined, tok_->decode(ids));
  EXPECT_LE(max_window, 24 + 2 * longest_single_byte_run(*tok_, ids));
}

TEST_P(RealTokenizer, RandomIdsSplitCharactersAndMixInSpecials) {
  const int32_t vocab = tok_->vocab_size();
  // Ids that decode to one byte of a multi-byte character (byte-level: a lone byte; byte
  // fallback: <0xE4>-style tokens), found through decode() itself.
  Ids partial;
  for (int32_t id = 0; id < vocab && partial.size() < 400; ++id) {
    const Ids one = {id};
    const std::string s = tok_->decode(one, false);
    if (s == kReplacement) partial.push_back(id);
  }
  ASSERT_FALSE(partial.empty());
  Ids specials;
  for (const int32_t id : {tok_->bos_id(), tok_->eos_id()}) {
    if (id >= 0) specials.push_back(id);
  }
  std::mt19937 rng(11);
  std::uniform_int_distribution<int32_t> any(0, vocab - 1);
  for (int round = 0; round < 300 && !::testing::Test::HasFailure(); ++round) {
    Ids ids;
    const int n = 1 + round % 40;
    for (int i = 0; i < n; ++i) {
      const uint32_t kind = rng() % 8;
      if (kind < 3) {
        ids.push_back(partial[rng() % partial.size()]);
      } else if (kind == 3 && !specials.empty()) {
        ids.push_back(specials[rng() % specials.size()]);
      } else {
        ids.push_back(any(rng));
      }
    }
    for (const bool skip : {true, false}) check_stream(*tok_, ids, skip, 1 + round % 3, rng);
  }
}

INSTANTIATE_TEST_SUITE_P(, RealTokenizer,
                         ::testing::Values("smollm2-gguf", "gemma3-gguf", "llama2", "llama3",
                                           "qwen3", "gemma3", "deepseek_v3", "gptoss"),
                         [](const auto& param_info) {
                           std::string name = param_info.param;
                           for (char& c : name) c = c == '-' ? '_' : c;
                           return name;
                         });

// GPT-2's 256 byte tokens and nothing else, with a pre-tokenizer that asks for
// llama.cpp's space clean-up (" ?" -> "?", " ' " -> "'", " 's" -> "'s"): a decoder that
// rewrites text behind its end, so spaces and quotes near the end must wait.
std::unique_ptr<Tokenizer> byte_vocabulary_with_clean_up() {
  VocabData data;
  data.model = VocabModel::Gpt2Bpe;
  data.pre = "gpt-2";
  for (uint32_t cp : gpt2_byte_to_codepoint()) {
    std::string token;
    utf8_append(token, cp);
    data.tokens.push_back(token);
  }
  return make_tokenizer(std::move(data));
}

// Byte b is token b: the vocabulary lists the alphabet in byte order.
Ids bytes_of(std::string_view text) {
  Ids ids;
  for (const char c : text) ids.push_back(static_cast<unsigned char>(c));
  return ids;
}

TEST(IncrementalDetokenizer, SpaceCleanUpIsWaitedFor) {
  const auto tok = byte_vocabulary_with_clean_up();
  // The reference decode does clean up (else this test would test nothing).
  ASSERT_EQ(tok->decode(bytes_of("a ?b ' c he 's")), "a?b'c he's");
  std::mt19937 rng(3);
  const std::string alphabet = " '?.,!smrevx";
  for (int round = 0; round < 3000 && !::testing::Test::HasFailure(); ++round) {
    std::string text;
    const size_t n = 1 + rng() % 14;
    for (size_t i = 0; i < n; ++i) text += alphabet[rng() % alphabet.size()];
    check_stream(*tok, bytes_of(text), true, 1 + round % 2, rng);
  }
}

TEST(IncrementalDetokenizer, SpaceCleanUpStillStreamsWords) {
  const auto tok = byte_vocabulary_with_clean_up();
  IncrementalDetokenizer detok(*tok, {});
  const Ids ids = bytes_of("the cat sat");
  std::string out;
  for (size_t i = 0; i < ids.size(); ++i) out += detok.add(std::span(ids).subspan(i, 1));
  EXPECT_EQ(out, "the cat sat");  // nothing needed to wait: no space or quote at the end
  EXPECT_EQ(detok.flush(), "");
}

TEST(IncrementalDetokenizer, BadIdIsAnErrorAndChangesNothing) {
  const auto tok = byte_vocabulary_with_clean_up();
  IncrementalDetokenizer detok(*tok, {});
  EXPECT_EQ(detok.add(bytes_of("ab")), "ab");
  const Ids bad = {'c', 256};
  EXPECT_THROW((void)detok.add(bad), Error);
  const Ids negative = {-1};
  EXPECT_THROW((void)detok.add(negative), Error);
  EXPECT_EQ(detok.num_ids(), 2);
  EXPECT_EQ(detok.add(bytes_of("cd")), "cd");
  EXPECT_EQ(detok.flush(), "");
}

TEST(IncrementalDetokenizer, IncompleteCharacterWaitsThenFlushesAsReplacement) {
  const auto tok = byte_vocabulary_with_clean_up();
  IncrementalDetokenizer detok(*tok, {});
  // U+65E5 is E6 97 A5: nothing goes out until its last byte.
  EXPECT_EQ(detok.add(bytes_of("x\xE6")), "x");
  EXPECT_EQ(detok.add(bytes_of("\x97")), "");
  EXPECT_EQ(detok.add(bytes_of("\xA5")), "\xE6\x97\xA5");
  // A sequence cut off by the end of the output ends as one U+FFFD, as decode() has it.
  EXPECT_EQ(detok.add(bytes_of("\xF0\x9F")), "");
  EXPECT_EQ(detok.flush(), kReplacement);
}

}  // namespace
}  // namespace pagoda
