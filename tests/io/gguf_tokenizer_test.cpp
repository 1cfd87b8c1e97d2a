// The GGUF-vocabulary tokenizers of SmolLM2 (byte-level BPE) and Gemma 3 (SentencePiece
// BPE) against golden ids from independent implementations: Hugging Face tokenizers
// (tools/make_tokenizer_golden_hf.py) and llama.cpp (tools/make_golden_tokens_llamacpp.py),
// over the 13,000-string corpus of tools/corpus/ (tests/data/tokenizer/README.md).
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "io/tokenizer.h"
#include "loader/gguf.h"

namespace pagoda {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

struct ModelInfo {
  const char* name;  // golden file prefix
  const char* file;  // in the model cache
};
constexpr ModelInfo kSmolLM2{"smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf"};
constexpr ModelInfo kGemma3{"gemma3", "gemma-3-270m-q4_k_m.gguf"};

fs::path cache_dir() {
  if (const char* dir = std::getenv("PAGODA_CACHE")) return dir;
  const char* home = std::getenv("HOME");
  return fs::path(home ? home : "/root") / ".cache" / "pagoda";
}

fs::path data_dir() { return fs::path(PAGODA_TEST_DATA) / "tokenizer"; }

// One tokenizer per model for the whole test binary (Gemma's has 262,144 tokens).
const Tokenizer* model_tokenizer(const ModelInfo& m, std::string* why) {
  static std::mutex mutex;
  static std::map<std::string, std::unique_ptr<Tokenizer>> cache;
  std::lock_guard lock(mutex);
  if (auto it = cache.find(m.name); it != cache.end()) return it->second.get();
  const fs::path gguf = cache_dir() / m.file;
  if (!fs::exists(gguf)) {
    *why = "model file " + gguf.string() + " is absent";
    return nullptr;
  }
  const auto file = GgufFile::open(gguf.string());
  return (cache[m.name] = load_gguf_tokenizer(*file)).get();
}

std::vector<json> read_jsonl(const fs::path& path) {
  std::vector<json> rows;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty()) rows.push_back(json::parse(line));
  }
  return rows;
}

json read_json(const fs::path& path) {
  std::ifstream in(path);
  return json::parse(in);
}

std::string show(const std::vector<int32_t>& ids) {
  std::string s = "[";
  for (size_t i = 0; i < ids.size(); ++i) {
    if (i) s += ',';
    s += std::to_string(ids[i]);
  }
  s += ']';
  return s;
}

#define REQUIRE_TOKENIZER(var, model)                   \
  std::string why_##var;                                \
  const Tokenizer* var = model_tokenizer(model, &why_##var); \
  if (var == nullptr) GTEST_SKIP() << why_##var

// The corpus texts, split on '\n' only (the texts hold other line breaks).
const std::vector<std::string>& corpus() {
  static const std::vector<std::string> texts = [] {
    std::vector<std::string> out;
    for (const json& row : read_jsonl(fs::path(PAGODA_TEST_DATA) / ".." / ".." / "tools" / "corpus" /
                                      "corpus.jsonl")) {
      out.push_back(row.at("text"));
    }
    return out;
  }();
  return texts;
}

// The lines of a .zst file through the zstd command; false when that fails.
bool read_zst_lines(const fs::path& path, std::vector<std::string>& lines) {
  const std::string command = "zstd -dcq '" + path.string() + "' 2>/dev/null";
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return false;
  std::string text;
  char buffer[1 << 16];
  for (size_t n; (n = fread(buffer, 1, sizeof buffer, pipe)) > 0;) text.append(buffer, n);
  if (pclose(pipe) != 0) return false;
  lines.clear();
  for (size_t begin = 0; begin < text.size();) {
    const size_t end = text.find('\n', begin);
    lines.push_back(text.substr(begin, end - begin));
    if (end == std::string::npos) break;
    begin = end + 1;
  }
  return true;
}

using IdLists = std::vector<std::vector<int32_t>>;

// Both references' ids for every corpus line: Hugging Face's from <model>_hf.jsonl.zst,
// llama.cpp's as those with the lines of <model>_llamacpp_diff.jsonl replaced.
struct Golden {
  IdLists hf, llamacpp;
  json hf_meta;
};

const Golden* golden(const ModelInfo& m, std::string* why) {
  static std::mutex mutex;
  static std::map<std::string, std::unique_ptr<Golden>> cache;
  std::lock_guard lock(mutex);
  if (auto it = cache.find(m.name); it != cache.end()) return it->second.get();
  const std::string name = m.name;
  auto g = std::make_unique<Golden>();
  std::vector<std::string> lines;
  if (!read_zst_lines(data_dir() / (name + "_hf.jsonl.zst"), lines)) {
    *why = "cannot decompress " + (data_dir() / (name + "_hf.jsonl.zst")).string() + " (zstd missing?)";
    return nullptr;
  }
  for (const std::string& line : lines) g->hf.push_back(json::parse(line).get<std::vector<int32_t>>());
  g->hf_meta = read_json(data_dir() / (name + "_hf_meta.json"));
  g->llamacpp = g->hf;
  for (const json& row : read_jsonl(data_dir() / (name + "_llamacpp_diff.jsonl"))) {
    g->llamacpp.at(row.at("i").get<size_t>()) = row.at("ids").get<std::vector<int32_t>>();
  }
  return (cache[m.name] = std::move(g)).get();
}

#define REQUIRE_GOLDEN(var, model)                  \
  std::string why_##var;                            \
  const Golden* var = golden(model, &why_##var);    \
  if (var == nullptr) GTEST_SKIP() << why_##var;    \
  ASSERT_EQ(var->hf.size(), corpus().size()) << "golden data of another corpus"

// Where the two references disagree (both are right by their own lights; see
// tests/data/tokenizer/README.md), pagoda follows one of them:
enum class Follows { Both, HuggingFace, LlamaCpp };

// U+2581 in the text, next to a space or another U+2581.
bool has_spaced_metaspace(std::string_view text) {
  constexpr std::string_view kMeta = "\xE2\x96\x81";
  for (size_t at = text.find(kMeta); at != std::string_view::npos; at = text.find(kMeta, at + 1)) {
    const std::string_view before = text.substr(0, at), after = text.substr(at + kMeta.size());
    if ((!before.empty() && before.back() == ' ') || (!after.empty() && after.front() == ' ') ||
        after.starts_with(kMeta)) {
      return true;
    }
  }
  return false;
}

Follows which_reference(const ModelInfo& m, std::string_view text) {
  if (std::string(m.name) != "gemma3") return Follows::Both;
  // llama.cpp makes every token spelled "</s>" a control, end-of-generation token (by text,
  // for other models), so for Gemma 3 it leaves the HTML tag "</s>" (user-defined id 212,
  // matched always by Gemma's own tokenizer.json) as plain text. pagoda follows the GGUF's
  // token types and Gemma's tokenizer.
  if (text.find("</s>") != std::string_view::npos) return Follows::HuggingFace;
  // The GGUF spells Gemma's whitespace-run tokens with spaces ("  ", id 138), the
  // tokenizer.json with U+2581 ("▁▁"), so a literal U+2581 next to a space reaches them in
  // `tokenizers` but not in llama.cpp, which matches user-defined tokens in the raw text
  // and finds no "▁▁" token to merge into. pagoda reads the GGUF as llama.cpp does.
  if (has_spaced_metaspace(text)) return Follows::LlamaCpp;
  return Follows::Both;
}

// Every corpus line, encoded without BOS and with special-token text left as plain text,
// against `reference`'s ids; on the lines where pagoda follows the other reference, the
// two must differ and pagoda must give the other one's ids.
void expect_golden_ids(const ModelInfo& m, const Tokenizer& tok, const Golden& g, Follows reference) {
  const IdLists& mine = reference == Follows::HuggingFace ? g.hf : g.llamacpp;
  const IdLists& other = reference == Follows::HuggingFace ? g.llamacpp : g.hf;
  const char* name = reference == Follows::HuggingFace ? "Hugging Face" : "llama.cpp";
  const std::vector<std::string>& texts = corpus();
  size_t mismatches = 0, other_lines = 0, unexplained = 0;
  for (size_t i = 0; i < texts.size(); ++i) {
    const std::string& text = texts[i];
    const Follows follows = which_reference(m, text);
    const bool follows_other = follows != Follows::Both && follows != reference;
    if (g.hf[i] != g.llamacpp[i] && follows == Follows::Both && ++unexplained <= 10) {
      ADD_FAILURE() << m.name << ": the references disagree on corpus line " << i
                    << ", for no documented reason\n  text: " << json(text).dump()
                    << "\n  hf:       " << show(g.hf[i]) << "\n  llama.cpp: " << show(g.llamacpp[i]);
    }
    const std::vector<int32_t>& want = follows_other ? other[i] : mine[i];
    other_lines += follows_other ? 1 : 0;
    const auto got = tok.encode(text, /*add_special=*/false, /*parse_special=*/false);
    if (got != want && ++mismatches <= 10) {
      ADD_FAILURE() << m.name << " vs " << (follows_other ? "the other reference" : name)
                    << ", corpus line " << i << "\n  text: " << json(text).dump()
                    << "\n  want: " << show(want) << "\n  got:  " << show(got);
    }
  }
  EXPECT_EQ(mismatches, 0u) << "of " << texts.size() << " lines";
  EXPECT_EQ(unexplained, 0u);
  EXPECT_LT(other_lines, texts.size() / 100) << "lines where pagoda follows the other reference";
}

class ModelTokenizer : public testing::TestWithParam<ModelInfo> {};

TEST_P(ModelTokenizer, MatchesHuggingFaceOnCorpus) {
  REQUIRE_TOKENIZER(tok, GetParam());
  REQUIRE_GOLDEN(g, GetParam());
  EXPECT_EQ(g->hf_meta.at("count").get<size_t>(), corpus().size());
  expect_golden_ids(GetParam(), *tok, *g, Follows::HuggingFace);
}

TEST_P(ModelTokenizer, MatchesLlamaCppOnCorpus) {
  REQUIRE_TOKENIZER(tok, GetParam());
  REQUIRE_GOLDEN(g, GetParam());
  expect_golden_ids(GetParam(), *tok, *g, Follows::LlamaCpp);
}

TEST_P(ModelTokenizer, SpecialTokenTextAndBos) {
  REQUIRE_TOKENIZER(tok, GetParam());
  const auto rows = read_jsonl(data_dir() / (std::string(GetParam().name) + "_hf_special.jsonl"));
  ASSERT_FALSE(rows.empty());
  for (const json& row : rows) {
    const std::string text = row.at("text");
    SCOPED_TRACE(json(text).dump());
    EXPECT_EQ(show(tok->encode(text, false, false)), show(row.at("ids_plain").get<std::vector<int32_t>>()));
    EXPECT_EQ(show(tok->encode(text, false, true)), show(row.at("ids_parsed").get<std::vector<int32_t>>()));
    EXPECT_EQ(show(tok->encode(text, true, true)), show(row.at("ids_bos").get<std::vector<int32_t>>()));
  }
}

TEST_P(ModelTokenizer, BosAndVocabSizeMatchReference) {
  REQUIRE_TOKENIZER(tok, GetParam());
  const json meta = read_json(data_dir() / (std::string(GetParam().name) + "_hf_meta.json"));
  // (Gemma 3's tokenizer.json has one id more than its GGUF: <image_soft_token>.)
  EXPECT_LE(tok->vocab_size(), meta.at("vocab_size").get<int>());
  // BOS exactly when the model wants one (Gemma: add_bos_token; SmolLM2: none).
  const auto bos = meta.at("empty_with_special").get<std::vector<int32_t>>();
  EXPECT_EQ(show(tok->encode("", true, false)), show(bos));
  EXPECT_TRUE(tok->encode("", false, false).empty());
  if (!bos.empty()) {
    EXPECT_EQ(tok->bos_id(), bos[0]);
  }
  EXPECT_TRUE(tok->is_end_of_generation(tok->eos_id()));
  EXPECT_FALSE(tok->is_end_of_generation(tok->bos_id()));
}

TEST_P(ModelTokenizer, DecodeMatchesHuggingFace) {
  REQUIRE_TOKENIZER(tok, GetParam());
  const auto rows = read_jsonl(data_dir() / (std::string(GetParam().name) + "_hf_decode.jsonl"));
  ASSERT_FALSE(rows.empty());
  // Every line, those with invalid byte sequences too: Gemma's byte tokens decode as Hugging
  // Face's ByteFallback decoder has them (one U+FFFD per byte token of an invalid run),
  // SmolLM2's byte-level tokens as its ByteLevel decoder (one per maximal invalid subpart).
  size_t with_replacement = 0;
  for (const json& row : rows) {
    const auto ids = row.at("ids").get<std::vector<int32_t>>();
    const std::string text = row.at("text"), text_skip = row.at("text_skip");
    if (text.find("\xEF\xBF\xBD") != std::string::npos) ++with_replacement;
    SCOPED_TRACE(show(ids));
    EXPECT_EQ(tok->decode(ids, false), text);
    EXPECT_EQ(tok->decode(ids, true), text_skip);
  }
  EXPECT_GT(with_replacement, 0u) << "no line tests invalid byte sequences";
}

TEST_P(ModelTokenizer, DecodeInvertsEncodeWhereTheReferenceDoes) {
  REQUIRE_TOKENIZER(tok, GetParam());
  const json meta = read_json(data_dir() / (std::string(GetParam().name) + "_hf_meta.json"));
  std::vector<char> roundtrips(corpus().size(), 1);
  for (const json& i : meta.at("not_roundtrip")) roundtrips.at(i.get<size_t>()) = 0;
  size_t checked = 0;
  for (size_t i = 0; i < corpus().size(); ++i) {
    if (!roundtrips[i]) continue;
    const std::string& text = corpus()[i];
    ++checked;
    EXPECT_EQ(tok->decode(tok->encode(text, false, false), false), text) << json(text).dump();
    // With BOS: the BOS is a control token, which decode skips by default.
    EXPECT_EQ(tok->decode(tok->encode(text, true, false)), text) << json(text).dump();
  }
  EXPECT_GT(checked, corpus().size() * 9 / 10);
}

TEST_P(ModelTokenizer, LongInputsAreFastAndRoundTrip) {
  REQUIRE_TOKENIZER(tok, GetParam());
  // Runs that make one huge pre-token (or, for SentencePiece, one huge merge sequence).
  for (const std::string& text :
       {std::string(1 << 20, 'a'), std::string(200000, ' '), std::string(100000, '\n'),
        std::string(300000, '7')}) {
    const auto ids = tok->encode(text, false, false);
    EXPECT_EQ(tok->decode(ids, false), text);
    EXPECT_LE(ids.size(), text.size());
  }
}

INSTANTIATE_TEST_SUITE_P(Gguf, ModelTokenizer, testing::Values(kSmolLM2, kGemma3),
                         [](const auto& p) { return std::string(p.param.name); });

}  // namespace
}  // namespace pagoda
