#include "loader/hf_config.h"

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "core/error.h"

namespace pagoda {
namespace {

using nlohmann::json;

json read_json(const std::string& path) {
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << path;
  return json::parse(in);
}

float f(const json& v) { return v.get<float>(); }

void expect_rope(const json& params, float theta, const RopeScaling& scaling, const std::string& name) {
  EXPECT_FLOAT_EQ(theta, f(params.at("rope_theta"))) << name;
  const std::string type = params.at("rope_type");
  if (type == "default") {
    EXPECT_EQ(scaling.type, RopeScalingType::None) << name;
  } else if (type == "linear") {
    EXPECT_EQ(scaling.type, RopeScalingType::Linear) << name;
    EXPECT_FLOAT_EQ(scaling.factor, f(params.at("factor"))) << name;
  } else {
    ASSERT_EQ(type, "llama3") << name;
    EXPECT_EQ(scaling.type, RopeScalingType::Llama3) << name;
    EXPECT_FLOAT_EQ(scaling.factor, f(params.at("factor"))) << name;
    EXPECT_FLOAT_EQ(scaling.low_freq_factor, f(params.at("low_freq_factor"))) << name;
    EXPECT_FLOAT_EQ(scaling.high_freq_factor, f(params.at("high_freq_factor"))) << name;
    EXPECT_EQ(scaling.original_max_position_embeddings, params.at("original_max_position_embeddings").get<int>())
        << name;
  }
}

// tests/data/hf/configs.json: config.json files (real hub layouts, the test checkpoints,
// fields left to defaults) with what transformers' config classes resolve them to.
TEST(HfConfig, MatchesTransformersResolution) {
  const json cases = read_json(std::string(PAGODA_TEST_DATA) + "/hf/configs.json");
  ASSERT_GE(cases.at("cases").size(), 30u);
  for (const json& c : cases.at("cases")) {
    const std::string name = c.at("name");
    SCOPED_TRACE(name);
    const json& r = c.at("resolved");
    ModelSpec spec;
    ASSERT_NO_THROW(spec = parse_hf_config(c.at("config"), nullptr));
    EXPECT_EQ(spec.hidden_size, r.at("hidden_size").get<int>());
    EXPECT_EQ(spec.intermediate_size, r.at("intermediate_size").get<int>());
    EXPECT_EQ(spec.num_layers, r.at("num_hidden_layers").get<int>());
    EXPECT_EQ(spec.num_heads, r.at("num_attention_heads").get<int>());
    EXPECT_EQ(spec.num_kv_heads, r.at("num_key_value_heads").get<int>());
    EXPECT_EQ(spec.head_dim, r.at("head_dim").get<int>());
    EXPECT_EQ(spec.vocab_size, r.at("vocab_size").get<int>());
    EXPECT_EQ(spec.max_position_embeddings, r.at("max_position_embeddings").get<int>());
    EXPECT_FLOAT_EQ(spec.rms_norm_eps, f(r.at("rms_norm_eps")));
    EXPECT_EQ(spec.tie_word_embeddings, r.at("tie_word_embeddings").get<bool>());
    EXPECT_TRUE(spec.rope_neox);
    EXPECT_EQ(spec.activation, r.at("activation") == "silu" ? Activation::Silu : Activation::GeluTanh);

    const json& rope = r.at("rope_parameters");
    if (spec.arch == Arch::Gemma3) {
      expect_rope(rope.at("full_attention"), spec.rope_theta, spec.rope_scaling, name);
      RopeScaling none;
      expect_rope(rope.at("sliding_attention"), spec.rope_local_theta, none, name);
      EXPECT_FLOAT_EQ(spec.query_pre_attn_scalar, f(r.at("query_pre_attn_scalar")));
      EXPECT_TRUE(spec.embed_scale && spec.sandwich_norms && spec.qk_norm);
    } else {
      expect_rope(rope, spec.rope_theta, spec.rope_scaling, name);
      EXPECT_EQ(spec.qk_norm, spec.arch == Arch::Qwen3);
      EXPECT_EQ(spec.attention_bias, spec.arch == Arch::Qwen2);
    }
    const json& softcap = r.at("final_logit_softcapping");
    EXPECT_FLOAT_EQ(spec.final_logit_softcap, softcap.is_null() ? 0.0f : f(softcap));
    const json& attn_softcap = r.at("attn_logit_softcapping");
    EXPECT_FLOAT_EQ(spec.attn_logit_softcap, attn_softcap.is_null() ? 0.0f : f(attn_softcap));

    ASSERT_EQ(spec.layer_sliding.size(), static_cast<size_t>(spec.num_layers));
    const json& window = r.at("sliding_window");
    const json& types = r.at("layer_types");
    if (window.is_null()) {
      EXPECT_EQ(spec.sliding_window, 0);
      for (bool s : spec.layer_sliding) EXPECT_FALSE(s);
    } else {
      EXPECT_EQ(spec.sliding_window, window.get<int>());
      for (int i = 0; i < spec.num_layers; ++i) {
        const bool expected = types.is_null() || types[static_cast<size_t>(i)] == "sliding_attention";
        EXPECT_EQ(spec.layer_sliding[static_cast<size_t>(i)], expected) << "layer " << i;
      }
    }
    if (!r.at("bos_token_id").is_null()) {
      EXPECT_EQ(spec.bos_token_id, r.at("bos_token_id").get<int>());
    }
    const json& eos = r.at("eos_token_id");
    if (eos.is_array()) {
      EXPECT_EQ(spec.eos_token_ids, eos.get<std::vector<int>>());
    } else if (!eos.is_null()) {
      EXPECT_EQ(spec.eos_token_ids, std::vector<int>{eos.get<int>()});
    }
  }
}

TEST(HfConfig, ArchitecturesMapToArchs) {
  const json cases = read_json(std::string(PAGODA_TEST_DATA) + "/hf/configs.json");
  for (const json& c : cases.at("cases")) {
    const std::string arch = c.at("config").at("architectures")[0];
    const ModelSpec spec = parse_hf_config(c.at("config"), nullptr);
    const Arch expected = arch == "LlamaForCausalLM"     ? Arch::Llama
                          : arch == "MistralForCausalLM" ? Arch::Mistral
                          : arch == "Qwen2ForCausalLM"   ? Arch::Qwen2
                          : arch == "Qwen3ForCausalLM"   ? Arch::Qwen3
                                                         : Arch::Gemma3;
    EXPECT_EQ(spec.arch, expected) << c.at("name");
    EXPECT_EQ(spec.arch_name, arch_name(expected));
  }
}

TEST(HfConfig, GenerationConfigIdsWin) {
  const std::string dir = std::string(PAGODA_TEST_DATA) + "/hf/gemma3-fp32";
  const json config = read_json(dir + "/config.json");
  const json generation = read_json(dir + "/generation_config.json");
  EXPECT_EQ(parse_hf_config(config, nullptr).eos_token_ids, std::vector<int>{config.at("eos_token_id").get<int>()});
  const ModelSpec spec = load_hf_config(dir);
  EXPECT_EQ(spec.eos_token_ids, generation.at("eos_token_id").get<std::vector<int>>());
  EXPECT_EQ(spec.bos_token_id, generation.at("bos_token_id").get<int>());
}

const json kBase = {{"architectures", {"LlamaForCausalLM"}}, {"hidden_size", 64}, {"intermediate_size", 128},
                    {"num_hidden_layers", 2}, {"num_attention_heads", 4}, {"vocab_size", 100}};

std::string error_of(const json& config, const json* generation = nullptr) {
  try {
    (void)parse_hf_config(config, generation);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

json with(const std::string& key, const json& value) {
  json c = kBase;
  c[key] = value;
  return c;
}

TEST(HfConfig, ErrorsNameTheField) {
  EXPECT_EQ(error_of(kBase), "");
  for (const char* key : {"hidden_size", "intermediate_size", "num_hidden_layers", "num_attention_heads", "vocab_size"}) {
    json c = kBase;
    c.erase(key);
    EXPECT_NE(error_of(c).find(std::string("required field ") + key + " is missing"), std::string::npos) << key;
    EXPECT_NE(error_of(with(key, "64")).find(std::string("field ") + key + " must be an integer"), std::string::npos);
    EXPECT_NE(error_of(with(key, 64.5)).find(key), std::string::npos);
    EXPECT_NE(error_of(with(key, 0)).find(std::string(key) + " = 0 is out of range"), std::string::npos);
    EXPECT_NE(error_of(with(key, 1ll << 40)).find("out of range"), std::string::npos);
  }
  // Parsed from text, a non-negative literal is unsigned in nlohmann: still range-checked.
  EXPECT_NE(error_of(json::parse(R"({"architectures":["LlamaForCausalLM"],"hidden_size":0,"intermediate_size":1,)"
                                 R"("num_hidden_layers":1,"num_attention_heads":1,"vocab_size":1})"))
                .find("hidden_size = 0 is out of range"),
            std::string::npos);
  EXPECT_NE(error_of(with("rope_theta", 1e300)).find("rope_theta = 1e+300 is out of range"), std::string::npos);
  EXPECT_NE(error_of(with("rms_norm_eps", "x")).find("rms_norm_eps must be a number"), std::string::npos);
  EXPECT_NE(error_of(with("tie_word_embeddings", 1)).find("tie_word_embeddings must be true or false"),
            std::string::npos);
  EXPECT_NE(error_of(with("num_key_value_heads", 3)).find("not a multiple"), std::string::npos);
  EXPECT_NE(error_of(with("head_dim", 15)).find("head_dim"), std::string::npos);
  EXPECT_NE(error_of(with("hidden_act", "relu")).find("activation \"relu\""), std::string::npos);
  EXPECT_NE(error_of(with("mlp_bias", true)).find("mlp_bias"), std::string::npos);
  EXPECT_NE(error_of(with("attention_bias", true)).find("attention_bias"), std::string::npos);
  EXPECT_NE(error_of(with("eos_token_id", "2")).find("eos_token_id"), std::string::npos);
  EXPECT_NE(error_of(with("bos_token_id", json::array({1, 2}))).find("bos_token_id"), std::string::npos);
  EXPECT_NE(error_of(json::array()).find("not a JSON object"), std::string::npos);
  const json bad_generation = {{"eos_token_id", -1}};
  EXPECT_NE(error_of(kBase, &bad_generation).find("generation_config.json: eos_token_id"), std::string::npos);
}

TEST(HfConfig, UnsupportedArchitecturesAndRope) {
  EXPECT_NE(error_of(with("architectures", {"GPT2LMHeadModel"})).find("architecture GPT2LMHeadModel is not supported"),
            std::string::npos);
  EXPECT_NE(error_of(with("architectures", json::array())).find("architectures"), std::string::npos);
  EXPECT_NE(error_of(with("rope_scaling", {{"rope_type", "yarn"}, {"factor", 4.0}})).find("rope type \"yarn\""),
            std::string::npos);
  EXPECT_NE(error_of(with("rope_scaling", {{"type", "dynamic"}, {"factor", 4.0}})).find("\"dynamic\""),
            std::string::npos);
  EXPECT_NE(error_of(with("rope_scaling", {{"rope_type", "linear"}})).find("rope_scaling: required field factor"),
            std::string::npos);
  EXPECT_NE(error_of(with("rope_parameters", {{"rope_type", "llama3"}, {"factor", 8.0}}))
                .find("rope_parameters: required field low_freq_factor"),
            std::string::npos);
  EXPECT_NE(error_of(with("rope_scaling", "linear")).find("rope_scaling must be an object"), std::string::npos);
  EXPECT_NE(error_of(with("rope_theta", "big")).find("rope_theta must be a number"), std::string::npos);
  EXPECT_NE(error_of(with("rope_theta", -5)).find("rope_theta"), std::string::npos);
  EXPECT_NE(error_of(with("rope_scaling", {{"rope_type", "linear"}, {"factor", -2.0}})).find("factor"),
            std::string::npos);
  // Old-style "type" key, as in Llama 2 era configs.
  const ModelSpec spec = parse_hf_config(with("rope_scaling", {{"type", "linear"}, {"factor", 2.0}}), nullptr);
  EXPECT_EQ(spec.rope_scaling.type, RopeScalingType::Linear);
}

TEST(HfConfig, GemmaErrors) {
  json g = kBase;
  g["architectures"] = {"Gemma3ForCausalLM"};
  g["head_dim"] = 16;
  EXPECT_EQ(error_of(g), "");
  json bad = g;
  bad["layer_types"] = {"sliding_attention"};
  EXPECT_NE(error_of(bad).find("layer_types must be a list of 2"), std::string::npos);
  bad["layer_types"] = {"sliding_attention", "chunked_attention"};
  EXPECT_NE(error_of(bad).find("layer_types[1]"), std::string::npos);
  bad = g;
  bad["final_logit_softcapping"] = "30";
  EXPECT_NE(error_of(bad).find("final_logit_softcapping must be a number"), std::string::npos);
  bad = g;
  bad["rope_parameters"] = {{"full_attention", {{"rope_type", "default"}}},
                            {"sliding_attention", {{"rope_type", "linear"}, {"factor", 2.0}}}};
  EXPECT_NE(error_of(bad).find("sliding_attention"), std::string::npos);
  bad = g;
  bad["use_bidirectional_attention"] = true;
  EXPECT_NE(error_of(bad).find("use_bidirectional_attention"), std::string::npos);
  bad = g;
  bad["sliding_window_pattern"] = 0;
  EXPECT_NE(error_of(bad).find("sliding_window_pattern"), std::string::npos);
}

TEST(HfConfig, LoadErrorsNameThePath) {
  try {
    (void)load_hf_config("/nonexistent/model");
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/model/config.json"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace pagoda
