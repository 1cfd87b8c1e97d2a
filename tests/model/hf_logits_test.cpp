// Logits of random-weight Hugging Face checkpoints in small real shapes of every supported
// architecture, fp32 and bf16, against transformers' float32 forward pass
// (golden data: tests/data/hf/*, made by tools/make_hf_checkpoints.py).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <memory>
#include <tuple>
#include <nlohmann/json.hpp>

#include "model/decoder.h"
#include "model/forward_util.h"

namespace pagoda {
namespace {

// Max |logit difference| allowed: both sides run float32 on identical weights (a bf16
// checkpoint's weights are exactly representable in f32, and the reference runs it
// upcast to f32), so only summation order differs: ~1e-7 relative per op over 2-4 layers
// of logits of magnitude ~1-10. Observed: at most 3.3e-5 (AVX-512); a wrong rope base,
// norm offset or attention window moves logits by > 1e-2.
constexpr float kTolerance = 2e-4f;

std::vector<std::string> checkpoints() {
  std::vector<std::string> dirs;
  const std::filesystem::path root = std::filesystem::path(PAGODA_TEST_DATA) / "hf";
  if (!std::filesystem::exists(root)) return dirs;
  for (const auto& entry : std::filesystem::directory_iterator(root)) {
    if (std::filesystem::exists(entry.path() / "logits.bin")) dirs.push_back(entry.path().filename());
  }
  std::sort(dirs.begin(), dirs.end());
  return dirs;
}

// (checkpoint, stacked): stacked runs the model with its q/k/v and gate/up projections
// stacked into one weight each (what the CUDA backend does), unstacked as they are stored.
class HfLogits : public ::testing::TestWithParam<std::tuple<std::string, bool>> {};

TEST_P(HfLogits, MatchTransformers) {
  const auto& [name, stacked] = GetParam();
  const std::filesystem::path dir = std::filesystem::path(PAGODA_TEST_DATA) / "hf" / name;
  std::ifstream prompt_file(dir / "prompt.json");
  const nlohmann::json prompt = nlohmann::json::parse(prompt_file);
  const std::vector<int32_t> ids = prompt["ids"].get<std::vector<int32_t>>();
  ASSERT_GE(ids.size(), 64u);

  LoadedModel loaded = load_model(dir.string());
  auto backend = make_cpu_backend();
  std::unique_ptr<Model> model;
  {
    const testing::ScopedEnv stack("PAGODA_STACK_PROJECTIONS", stacked ? "1" : "0");
    model = make_model(loaded, *backend);
  }
  const auto* decoder = dynamic_cast<const Decoder*>(model.get());
  ASSERT_NE(decoder, nullptr);
  // Every checkpoint here is one dtype: with stacking on, each layer stacks qkv and gate_up.
  EXPECT_EQ(decoder->stacked_weights() >= 2 * model->spec().num_layers, stacked);
  const size_t vocab = static_cast<size_t>(model->spec().vocab_size);
  const std::vector<float> golden = testing::read_f32_file((dir / "logits.bin").string());
  ASSERT_EQ(golden.size(), ids.size() * vocab);
  // Chunks of 13 tokens: prefill continues over earlier blocks, crossing block edges.
  const std::vector<float> logits = testing::all_position_logits(*model, *backend, ids, 13, 8);

  float max_diff = 0;
  int checked = 0;
  for (size_t t = 0; t < ids.size(); ++t) {
    const float* ours = logits.data() + t * vocab;
    const float* ref = golden.data() + t * vocab;
    for (size_t j = 0; j < vocab; ++j) max_diff = std::max(max_diff, std::fabs(ours[j] - ref[j]));
    std::vector<float> sorted(ref, ref + vocab);
    std::partial_sort(sorted.begin(), sorted.begin() + 2, sorted.end(), std::greater<>());
    if (sorted[0] - sorted[1] > kTolerance) {
      EXPECT_EQ(std::max_element(ours, ours + vocab) - ours, std::max_element(ref, ref + vocab) - ref)
          << "position " << t;
      ++checked;
    }
  }
  std::printf("%s%s: max |dlogit| %.3g, top-1 checked at %d of %zu positions\n", name.c_str(),
              stacked ? " (stacked)" : "", max_diff, checked, ids.size());
  EXPECT_LE(max_diff, kTolerance);
}

INSTANTIATE_TEST_SUITE_P(Checkpoints, HfLogits,
                         ::testing::Combine(::testing::ValuesIn(checkpoints()), ::testing::Bool()),
                         [](const auto& p) {
                           std::string name = std::get<0>(p.param);
                           for (char& ch : name) if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           return name + (std::get<1>(p.param) ? "_stacked" : "");
                         });
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(HfLogits);

}  // namespace
}  // namespace pagoda
