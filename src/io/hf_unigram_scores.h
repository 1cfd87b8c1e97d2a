// The scores of a tokenizer.json Unigram vocabulary exactly as the `tokenizers` library
// holds them. The library reads JSON with serde_json, whose default float parsing (no
// `float_roundtrip` feature) is not correctly rounded: it gathers the digits into a u64
// and does one multiply or divide by a power of ten, which can land one ulp off the
// number written. Viterbi ties between segmentations into the same pieces in another
// order (runs of one letter, of newlines) are decided by those last bits, so we read the
// numbers the same way (checked against the library on 2,000 trained scores, of which
// 212 differ from the correctly rounded value).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace pagoda {

// serde_json's f64 for a JSON number's text (valid JSON number syntax); nullopt when
// serde_json would refuse it (out of range).
[[nodiscard]] std::optional<double> serde_json_f64(std::string_view number);

// The texts of the numbers at model.vocab[i][1] of a tokenizer.json, by i (empty where
// the score is an integer, which every parser reads exactly). Throws Error on bad JSON.
[[nodiscard]] std::vector<std::string> unigram_score_texts(const std::string& tokenizer_json);

}  // namespace pagoda
