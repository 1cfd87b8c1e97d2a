#include "loader/hf_config.h"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

#include "core/error.h"

namespace pagoda {

namespace {

using nlohmann::json;

// Reads typed fields of one JSON object; `where_` prefixes every error ("config.json").
class Fields {
 public:
  Fields(const json& object, std::string where) : object_(object), where_(std::move(where)) {}

  // nullptr when absent or null (transformers treats both as "use the default").
  [[nodiscard]] const json* get(const std::string& key) const {
    const auto it = object_.find(key);
    return it == object_.end() || it->is_null() ? nullptr : &*it;
  }
  [[nodiscard]] bool has(const std::string& key) const { return get(key) != nullptr; }
  // Present, possibly as null.
  [[nodiscard]] bool present(const std::string& key) const { return object_.contains(key); }

  [[nodiscard]] int integer(const std::string& key, std::optional<int> fallback = std::nullopt,
                            int64_t min = 1) const {
    const json* v = get(key);
    if (v == nullptr) {
      if (!fallback) fail(where_, ": required field ", key, " is missing");
      return *fallback;
    }
    if (!v->is_number_integer()) fail(where_, ": field ", key, " must be an integer, got ", v->dump());
    const bool too_big = v->is_number_unsigned()
                             ? v->get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int>::max())
                             : v->get<int64_t>() > std::numeric_limits<int>::max();
    // nlohmann reads a non-negative literal as unsigned: compare only once it fits.
    if (too_big || v->get<int64_t>() < min) {
      fail(where_, ": field ", key, " = ", v->dump(), " is out of range");
    }
    return static_cast<int>(v->get<int64_t>());
  }

  [[nodiscard]] float number(const std::string& key, std::optional<float> fallback = std::nullopt) const {
    const json* v = get(key);
    if (v == nullptr) {
      if (!fallback) fail(where_, ": required field ", key, " is missing");
      return *fallback;
    }
    if (!v->is_number()) fail(where_, ": field ", key, " must be a number, got ", v->dump());
    const double d = v->get<double>();
    if (!(std::fabs(d) <= std::numeric_limits<float>::max())) {
      fail(where_, ": field ", key, " = ", v->dump(), " is out of range");
    }
    return static_cast<float>(d);
  }

  [[nodiscard]] bool boolean(const std::string& key, bool fallback) const {
    const json* v = get(key);
    if (v == nullptr) return fallback;
    if (!v->is_boolean()) fail(where_, ": field ", key, " must be true or false, got ", v->dump());
    return v->get<bool>();
  }

  [[nodiscard]] std::string string(const std::string& key, std::optional<std::string> fallback = std::nullopt) const {
    const json* v = get(key);
    if (v == nullptr) {
      if (!fallback) fail(where_, ": required field ", key, " is missing");
      return *fallback;
    }
    if (!v->is_string()) fail(where_, ": field ", key, " must be a string, got ", v->dump());
    return v->get<std::string>();
  }

  [[nodiscard]] const json* object(const std::string& key) const {
    const json* v = get(key);
    if (v != nullptr && !v->is_object()) fail(where_, ": field ", key, " must be an object, got ", v->dump());
    return v;
  }

  [[nodiscard]] const std::string& where() const { return where_; }

 private:
  const json& object_;
  std::string where_;
};

struct ArchDefaults {
  Arch arch;
  const char* name;
  std::optional<int> num_kv_heads;  // nullopt: num_attention_heads
  std::optional<int> head_dim;      // nullopt: hidden_size / num_attention_heads
  int max_position_embeddings;
  float rms_norm_eps;
  float rope_theta;
  bool tie_word_embeddings;
  std::optional<int> sliding_window;  // the class default when the field is absent
  int bos_token_id;                   // class defaults when absent (-1: none)
  int eos_token_id;
};

// Defaults of transformers 5's config classes (configuration_<model>.py).
std::optional<ArchDefaults> arch_defaults(const std::string& architecture) {
  if (architecture == "LlamaForCausalLM") {
    return ArchDefaults{Arch::Llama, "llama", std::nullopt, std::nullopt, 2048, 1e-6f, 10000.0f, false, std::nullopt, 1, 2};
  }
  if (architecture == "MistralForCausalLM") {
    return ArchDefaults{Arch::Mistral, "mistral", 8, std::nullopt, 4096 * 32, 1e-6f, 10000.0f, false, 4096, 1, 2};
  }
  if (architecture == "Qwen2ForCausalLM") {
    return ArchDefaults{Arch::Qwen2, "qwen2", 32, std::nullopt, 32768, 1e-6f, 10000.0f, false, 4096, -1, -1};
  }
  if (architecture == "Qwen3ForCausalLM") {
    return ArchDefaults{Arch::Qwen3, "qwen3", 32, 128, 32768, 1e-6f, 10000.0f, false, 4096, -1, -1};
  }
  if (architecture == "Gemma3ForCausalLM") {
    return ArchDefaults{Arch::Gemma3, "gemma3", 4, 256, 131072, 1e-6f, 1000000.0f, true, 4096, 2, 1};
  }
  return std::nullopt;
}

// One rope parameter dict: {"rope_type" (or "type"), "factor", ...}.
RopeScaling parse_rope_scaling(const json& params, const std::string& where, int max_positions) {
  const Fields f(params, where);
  const std::string type = f.has("rope_type") ? f.string("rope_type") : f.string("type", "default");
  RopeScaling scaling;
  if (f.has("partial_rotary_factor") && f.number("partial_rotary_factor") != 1.0f) {
    fail(where, ": partial_rotary_factor ", f.number("partial_rotary_factor"), " is not supported");
  }
  if (type == "default") return scaling;
  if (type == "linear") {
    scaling.type = RopeScalingType::Linear;
    scaling.factor = f.number("factor");
  } else if (type == "llama3") {
    scaling.type = RopeScalingType::Llama3;
    scaling.factor = f.number("factor");
    scaling.low_freq_factor = f.number("low_freq_factor");
    scaling.high_freq_factor = f.number("high_freq_factor");
    scaling.original_max_position_embeddings = f.integer("original_max_position_embeddings", max_positions);
    if (!(scaling.high_freq_factor > scaling.low_freq_factor)) {
      fail(where, ": high_freq_factor must exceed low_freq_factor");
    }
  } else {
    fail(where, ": rope type \"", type, "\" is not supported (default, linear and llama3 only)");
  }
  if (!(scaling.factor >= 1.0f) || !(scaling.factor < 1e6f)) {
    fail(where, ": rope factor ", scaling.factor, " is out of range");
  }
  return scaling;
}

struct Rope {
  float theta;
  RopeScaling scaling;
};

Rope parse_rope(const json& params, const Fields& top, float default_theta, int max_positions,
                const std::string& where) {
  const Fields f(params, where);
  Rope rope;
  rope.theta = f.has("rope_theta") ? f.number("rope_theta") : top.number("rope_theta", default_theta);
  if (!(rope.theta > 1.0f)) fail(where, ": rope_theta ", rope.theta, " is out of range");
  rope.scaling = parse_rope_scaling(params, where, max_positions);
  return rope;
}

// As transformers: a non-null rope_scaling wins over rope_parameters; rope_theta may sit
// inside the dict or at the top level.
const json& rope_dict(const Fields& top, const json& empty, std::string& where) {
  if (const json* scaling = top.object("rope_scaling"); scaling != nullptr && !scaling->empty()) {
    where = top.where() + ": rope_scaling";
    return *scaling;
  }
  if (const json* params = top.object("rope_parameters")) {
    where = top.where() + ": rope_parameters";
    return *params;
  }
  where = top.where();
  return empty;
}

Activation parse_activation(const std::string& name, const std::string& where) {
  if (name == "silu" || name == "swish") return Activation::Silu;
  if (name == "gelu_pytorch_tanh" || name == "gelu_tanh") return Activation::GeluTanh;
  fail(where, ": activation \"", name, "\" is not supported (silu, gelu_pytorch_tanh)");
}

std::vector<int> parse_ids(const json& value, const std::string& where, const char* key) {
  std::vector<int> ids;
  auto one = [&](const json& v) {
    if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<int64_t>() > std::numeric_limits<int>::max()) {
      fail(where, ": ", key, " must hold non-negative integer ids, got ", v.dump());
    }
    ids.push_back(static_cast<int>(v.get<int64_t>()));
  };
  if (value.is_array()) {
    for (const json& v : value) one(v);
  } else if (!value.is_null()) {
    one(value);
  }
  return ids;
}

void parse_special_ids(ModelSpec& spec, const json& object, const std::string& where) {
  if (!object.is_object()) fail(where, ": not a JSON object");
  if (const auto it = object.find("bos_token_id"); it != object.end() && !it->is_null()) {
    const std::vector<int> bos = parse_ids(*it, where, "bos_token_id");
    if (bos.size() != 1) fail(where, ": bos_token_id must be one id, got ", it->dump());
    spec.bos_token_id = bos[0];
  }
  if (const auto it = object.find("eos_token_id"); it != object.end() && !it->is_null()) {
    spec.eos_token_ids = parse_ids(*it, where, "eos_token_id");
  }
}

void parse_gemma3(ModelSpec& spec, const Fields& f, const ArchDefaults& defaults) {
  spec.embed_scale = true;
  spec.sandwich_norms = true;
  spec.qk_norm = true;
  spec.query_pre_attn_scalar = f.number("query_pre_attn_scalar", 256.0f);
  if (!(spec.query_pre_attn_scalar > 0)) fail(f.where(), ": query_pre_attn_scalar must be positive");
  spec.final_logit_softcap = f.number("final_logit_softcapping", 0.0f);
  spec.attn_logit_softcap = f.number("attn_logit_softcapping", 0.0f);
  if (spec.final_logit_softcap < 0 || spec.attn_logit_softcap < 0) {
    fail(f.where(), ": logit softcapping must not be negative");
  }
  if (f.boolean("use_bidirectional_attention", false)) {
    fail(f.where(), ": use_bidirectional_attention is not supported");
  }

  // Gemma 3 nests rope parameters per layer type; the legacy layout has rope_theta (global
  // layers), rope_local_base_freq (sliding layers) and rope_scaling (global layers only).
  const json empty = json::object();
  const json* params = f.object("rope_parameters");
  const bool nested = f.get("rope_scaling") == nullptr && params != nullptr &&
                      (params->contains("full_attention") || params->contains("sliding_attention"));
  if (nested) {
    const Fields p(*params, f.where() + ": rope_parameters");
    const json* full = p.object("full_attention");
    const json* local = p.object("sliding_attention");
    const Rope global = parse_rope(full ? *full : empty, f, defaults.rope_theta, spec.max_position_embeddings,
                                   p.where() + ".full_attention");
    const Rope sliding = parse_rope(local ? *local : empty, Fields(empty, p.where()),
                                    f.number("rope_local_base_freq", 10000.0f), spec.max_position_embeddings,
                                    p.where() + ".sliding_attention");
    if (sliding.scaling.type != RopeScalingType::None) {
      fail(p.where(), ".sliding_attention: rope scaling on sliding layers is not supported");
    }
    spec.rope_theta = global.theta;
    spec.rope_scaling = global.scaling;
    spec.rope_local_theta = sliding.theta;
  } else {
    std::string where;
    const json& dict = rope_dict(f, empty, where);
    const Rope global = parse_rope(dict, f, defaults.rope_theta, spec.max_position_embeddings, where);
    spec.rope_theta = global.theta;
    spec.rope_scaling = global.scaling;
    spec.rope_local_theta = f.number("rope_local_base_freq", 10000.0f);
    if (!(spec.rope_local_theta > 1.0f)) fail(f.where(), ": rope_local_base_freq is out of range");
  }
}

// Which layers use the sliding window, when the model has one.
void parse_sliding(ModelSpec& spec, const Fields& f, const ArchDefaults& defaults) {
  spec.layer_sliding.assign(static_cast<size_t>(spec.num_layers), false);
  if (spec.arch == Arch::Llama) return;
  if ((spec.arch == Arch::Qwen2 || spec.arch == Arch::Qwen3) && !f.boolean("use_sliding_window", false)) return;
  // Absent takes the config class's default; null means no window.
  int window = 0;
  if (!f.present("sliding_window")) {
    if (!defaults.sliding_window) return;
    window = *defaults.sliding_window;
  } else if (!f.has("sliding_window")) {
    return;
  } else {
    window = f.integer("sliding_window");
  }
  spec.sliding_window = window;

  if (spec.arch == Arch::Mistral) {  // its modeling code windows every layer, whatever layer_types says
    spec.layer_sliding.assign(static_cast<size_t>(spec.num_layers), true);
  } else if (const json* types = f.get("layer_types")) {
    if (!types->is_array() || types->size() != static_cast<size_t>(spec.num_layers)) {
      fail(f.where(), ": layer_types must be a list of ", spec.num_layers, " layer types");
    }
    for (size_t i = 0; i < types->size(); ++i) {
      const json& t = (*types)[i];
      if (t == "sliding_attention") {
        spec.layer_sliding[i] = true;
      } else if (t != "full_attention") {
        fail(f.where(), ": layer_types[", i, "] = ", t.dump(), " is not sliding_attention or full_attention");
      }
    }
  } else if (spec.arch == Arch::Gemma3) {
    const int pattern = f.has("sliding_window_pattern") ? f.integer("sliding_window_pattern")
                                                        : f.integer("_sliding_window_pattern", 6);
    for (int i = 0; i < spec.num_layers; ++i) spec.layer_sliding[static_cast<size_t>(i)] = (i + 1) % pattern != 0;
  } else {  // Qwen: the layers from max_window_layers on
    const int first = f.integer("max_window_layers", 28, 0);
    for (int i = first; i < spec.num_layers; ++i) spec.layer_sliding[static_cast<size_t>(i)] = true;
  }
}

}  // namespace

ModelSpec parse_hf_config(const json& config, const json* generation) {
  if (!config.is_object()) fail("config.json: not a JSON object");
  const Fields f(config, "config.json");

  const json* archs = f.get("architectures");
  if (archs == nullptr || !archs->is_array() || archs->empty() || !(*archs)[0].is_string()) {
    fail("config.json: required field architectures (a list of class names) is missing");
  }
  const std::string architecture = (*archs)[0].get<std::string>();
  const std::optional<ArchDefaults> defaults = arch_defaults(architecture);
  if (!defaults) {
    fail("config.json: architecture ", architecture,
         " is not supported (LlamaForCausalLM, MistralForCausalLM, Qwen2ForCausalLM, "
         "Qwen3ForCausalLM, Gemma3ForCausalLM)");
  }

  ModelSpec spec;
  spec.arch = defaults->arch;
  spec.arch_name = defaults->name;
  spec.vocab_size = f.integer("vocab_size");
  spec.hidden_size = f.integer("hidden_size");
  spec.intermediate_size = f.integer("intermediate_size");
  spec.num_layers = f.integer("num_hidden_layers");
  spec.num_heads = f.integer("num_attention_heads");
  // An explicit null means "as many as the attention heads"; absent takes the class default.
  spec.num_kv_heads = f.integer("num_key_value_heads", f.present("num_key_value_heads")
                                                           ? spec.num_heads
                                                           : defaults->num_kv_heads.value_or(spec.num_heads));
  if (spec.num_heads % spec.num_kv_heads != 0) {
    fail("config.json: num_attention_heads ", spec.num_heads, " is not a multiple of num_key_value_heads ",
         spec.num_kv_heads);
  }
  if (spec.arch == Arch::Qwen2) {  // Qwen2's config class has no head_dim field
    spec.head_dim = spec.hidden_size / spec.num_heads;
  } else {
    spec.head_dim = f.integer("head_dim", defaults->head_dim.value_or(spec.hidden_size / spec.num_heads));
  }
  if (spec.head_dim <= 0 || spec.head_dim % 2 != 0) {
    fail("config.json: head_dim ", spec.head_dim, " must be positive and even");
  }
  if (static_cast<int64_t>(spec.head_dim) * spec.num_heads > std::numeric_limits<int>::max()) {
    fail("config.json: num_attention_heads * head_dim overflows");
  }
  spec.max_position_embeddings = f.integer("max_position_embeddings", defaults->max_position_embeddings);
  spec.rms_norm_eps = f.number("rms_norm_eps", defaults->rms_norm_eps);
  if (!(spec.rms_norm_eps > 0) || !(spec.rms_norm_eps < 1)) fail("config.json: rms_norm_eps is out of range");
  spec.rope_neox = true;
  spec.tie_word_embeddings = f.boolean("tie_word_embeddings", defaults->tie_word_embeddings);

  // Gemma 3's config class reads hidden_activation only.
  const std::string act_key = spec.arch == Arch::Gemma3 ? "hidden_activation" : "hidden_act";
  spec.activation = parse_activation(f.string(act_key, spec.arch == Arch::Gemma3 ? "gelu_pytorch_tanh" : "silu"),
                                     "config.json: " + act_key);

  if (f.boolean("mlp_bias", false)) fail("config.json: mlp_bias is not supported");
  if (spec.arch == Arch::Qwen2) {
    spec.attention_bias = true;  // Qwen2's q/k/v projections always carry a bias
  } else if (f.boolean("attention_bias", false)) {
    fail("config.json: attention_bias (a bias on every attention projection) is not supported for ",
         architecture);
  }
  spec.qk_norm = spec.arch == Arch::Qwen3;

  if (spec.arch == Arch::Gemma3) {
    parse_gemma3(spec, f, *defaults);
  } else {
    const json empty = json::object();
    std::string where;
    const json& dict = rope_dict(f, empty, where);
    const Rope rope = parse_rope(dict, f, defaults->rope_theta, spec.max_position_embeddings, where);
    spec.rope_theta = rope.theta;
    spec.rope_scaling = rope.scaling;
  }
  parse_sliding(spec, f, *defaults);

  if (!f.present("bos_token_id")) spec.bos_token_id = defaults->bos_token_id;
  if (!f.present("eos_token_id") && defaults->eos_token_id >= 0) spec.eos_token_ids = {defaults->eos_token_id};
  parse_special_ids(spec, config, "config.json");
  if (generation != nullptr) parse_special_ids(spec, *generation, "generation_config.json");
  return spec;
}

ModelSpec load_hf_config(const std::string& dir) {
  namespace fs = std::filesystem;
  auto read_json = [&](const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) fail("cannot read ", path.string());
    std::ostringstream text;
    text << in.rdbuf();
    try {
      return json::parse(text.str());
    } catch (const json::exception& e) {
      fail(path.string(), ": invalid JSON: ", e.what());
    }
  };
  const json config = read_json(fs::path(dir) / "config.json");
  const fs::path generation_path = fs::path(dir) / "generation_config.json";
  std::error_code ec;
  if (fs::exists(generation_path, ec)) {
    const json generation = read_json(generation_path);
    try {
      return parse_hf_config(config, &generation);
    } catch (const Error& e) {
      fail(dir, ": ", e.what());
    }
  }
  try {
    return parse_hf_config(config, nullptr);
  } catch (const Error& e) {
    fail(dir, ": ", e.what());
  }
}

}  // namespace pagoda
