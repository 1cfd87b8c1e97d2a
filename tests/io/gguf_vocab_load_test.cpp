// load_gguf_tokenizer on small GGUF files made by the test writer: the keys it reads, the
// defaults it applies, and clear errors for files without a usable vocabulary.
#include <gtest/gtest.h>

#include "core/error.h"
#include "io/tokenizer.h"
#include "loader/gguf.h"
#include "loader/gguf_writer.h"

namespace pagoda {
namespace {

using test::GgufWriter;

std::unique_ptr<Tokenizer> load(const GgufWriter& w, std::vector<uint8_t>& keep) {
  keep = w.bytes();
  const auto file = GgufFile::parse(keep);
  return load_gguf_tokenizer(*file);
}

GgufWriter spm_file() {
  GgufWriter w;
  w.add_string("general.architecture", "llama");
  w.add_string("tokenizer.ggml.model", "llama");
  w.add_string_array("tokenizer.ggml.tokens",
                     {"<unk>", "<s>", "</s>", "\xE2\x96\x81", "a", "b", "\xE2\x96\x81" "a", "ab"});
  w.add_array<float>("tokenizer.ggml.scores", test::kF32, {0, 0, 0, -1, -2, -3, -4, -5});
  w.add_array<int32_t>("tokenizer.ggml.token_type", test::kI32, {2, 3, 3, 1, 1, 1, 1, 1});
  return w;
}

TEST(GgufVocabLoad, SentencePieceDefaultsFollowLlamaCpp) {
  std::vector<uint8_t> bytes;
  const auto tok = load(spm_file(), bytes);
  // No bos/eos keys: llama.cpp's SPM defaults (BOS 1, EOS 2), BOS added, space prefix on.
  EXPECT_EQ(tok->bos_id(), 1);
  EXPECT_EQ(tok->eos_id(), 2);
  EXPECT_EQ(tok->encode("ab a", true, false), (std::vector<int32_t>{1, 6, 5, 6}));
  EXPECT_EQ(tok->decode(tok->encode("ab a", true, false)), "ab a");
}

TEST(GgufVocabLoad, MetadataOverridesDefaults) {
  GgufWriter w = spm_file();
  w.add_bool("tokenizer.ggml.add_bos_token", false);
  w.add_bool("tokenizer.ggml.add_space_prefix", false);
  w.add_u32("tokenizer.ggml.eos_token_id", 1);
  std::vector<uint8_t> bytes;
  const auto tok = load(w, bytes);
  EXPECT_EQ(tok->eos_id(), 1);
  // "ab▁a": "▁a" (score -4) merges before "ab" (-5).
  EXPECT_EQ(tok->encode("ab a", true, false), (std::vector<int32_t>{7, 6}));
}

TEST(GgufVocabLoad, FilesWithoutAUsableVocabularyAreErrors) {
  std::vector<uint8_t> bytes;
  {
    GgufWriter w;
    w.add_string("general.architecture", "llama");
    EXPECT_THROW((void)load(w, bytes), Error);  // no tokenizer at all
  }
  {
    GgufWriter w = spm_file();
    w.add_string("tokenizer.ggml.model", "bert");  // a later key of the same name: refused
    EXPECT_ANY_THROW((void)load(w, bytes));
  }
  {
    GgufWriter w;
    w.add_string("tokenizer.ggml.model", "t5");
    w.add_string_array("tokenizer.ggml.tokens", {"a"});
    EXPECT_THROW((void)load(w, bytes), Error);
  }
  {
    GgufWriter w;
    w.add_string("tokenizer.ggml.model", "gpt2");
    w.add_string("tokenizer.ggml.pre", "gpt-2");
    w.add_string_array("tokenizer.ggml.tokens", {"a", "b"});
    EXPECT_THROW((void)load(w, bytes), Error);  // merges missing
  }
  {
    GgufWriter w;
    w.add_string("tokenizer.ggml.model", "llama");
    w.add_string_array("tokenizer.ggml.tokens", {"a", "b", "c"});
    w.add_string_array("tokenizer.ggml.token_type", {"x", "y", "z"});  // wrong type
    EXPECT_THROW((void)load(w, bytes), Error);
  }
  {
    GgufWriter w;
    w.add_string("tokenizer.ggml.model", "llama");
    w.add_string_array("tokenizer.ggml.tokens", {"a", "b", "c"});
    w.add_array<float>("tokenizer.ggml.scores", test::kF32, {0, 0});  // too few
    EXPECT_THROW((void)load(w, bytes), Error);
  }
}

}  // namespace
}  // namespace pagoda
