// load_gguf_tokenizer: copies a GGUF file's tokenizer.ggml.* keys into a VocabData, with
// llama.cpp's defaults for keys a file leaves out, and builds the tokenizer from it.
#include <limits>

#include "core/error.h"
#include "io/pretokenizer.h"
#include "io/tokenizer.h"
#include "io/vocab.h"
#include "loader/gguf.h"

namespace pagoda {

namespace {

int32_t get_id(const GgufFile& file, std::string_view key, int32_t fallback) {
  const int64_t id = file.get_int_or(key, fallback);
  // Out of range: no such token (make_tokenizer also drops ids beyond the vocabulary).
  return id < 0 || id > std::numeric_limits<int32_t>::max() ? -1 : static_cast<int32_t>(id);
}

}  // namespace

std::unique_ptr<Tokenizer> load_gguf_tokenizer(const GgufFile& file) {
  VocabData v;
  const std::string model = file.get_string_or("tokenizer.ggml.model", "");
  if (model.empty()) fail("gguf: the file has no tokenizer (tokenizer.ggml.model is missing)");
  int32_t bos = -1, eos = -1, unk = -1;
  if (model == "gpt2") {
    v.model = VocabModel::Gpt2Bpe;
    v.pre = file.get_string_or("tokenizer.ggml.pre", "default");
    if (!file.has("tokenizer.ggml.merges")) fail("gguf: tokenizer.ggml.merges is missing");
    v.merges = file.get_string_array("tokenizer.ggml.merges");
    const auto spec = find_pre_tokenizer(v.pre);
    if (!spec) fail("gguf: unsupported tokenizer.ggml.pre '", v.pre, "'");
    v.add_bos = spec->add_bos;
    v.add_space_prefix = false;
    bos = eos = 11;  // llama.cpp's defaults for BPE files (dropped if out of range)
  } else if (model == "llama") {
    v.model = VocabModel::SentencePiece;
    v.add_bos = true;
    v.add_space_prefix = true;
    bos = 1;
    eos = 2;
    unk = 0;
  } else {
    fail("gguf: unsupported tokenizer.ggml.model '", model, "' (supported: gpt2, llama)");
  }

  v.tokens = file.get_string_array("tokenizer.ggml.tokens");
  if (file.has("tokenizer.ggml.scores")) {
    const std::vector<double> scores = file.get_float_array("tokenizer.ggml.scores");
    v.scores.assign(scores.begin(), scores.end());
  }
  if (file.has("tokenizer.ggml.token_type")) {
    const std::vector<int64_t> types = file.get_int_array("tokenizer.ggml.token_type");
    v.token_types.reserve(types.size());
    for (size_t i = 0; i < types.size(); ++i) {
      if (types[i] < 0 || types[i] > std::numeric_limits<int32_t>::max()) {
        fail("gguf: tokenizer.ggml.token_type[", i, "] = ", types[i], " is not a token type");
      }
      v.token_types.push_back(static_cast<int32_t>(types[i]));
    }
  }
  v.bos = get_id(file, "tokenizer.ggml.bos_token_id", bos);
  v.eos = get_id(file, "tokenizer.ggml.eos_token_id", eos);
  v.unk = get_id(file, "tokenizer.ggml.unknown_token_id", unk);
  v.pad = get_id(file, "tokenizer.ggml.padding_token_id", -1);
  v.eot = get_id(file, "tokenizer.ggml.eot_token_id", -1);
  v.eom = get_id(file, "tokenizer.ggml.eom_token_id", -1);
  v.add_bos = file.get_bool_or("tokenizer.ggml.add_bos_token", v.add_bos);
  v.add_eos = file.get_bool_or("tokenizer.ggml.add_eos_token", false);
  v.add_space_prefix = file.get_bool_or("tokenizer.ggml.add_space_prefix", v.add_space_prefix);
  return make_tokenizer(std::move(v));
}

}  // namespace pagoda
