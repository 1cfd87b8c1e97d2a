#!/usr/bin/env python3
"""Random-weight Hugging Face checkpoints with golden logits for pagoda's HF loader and models.

Reference: Hugging Face transformers (5.x) with PyTorch on CPU, float32, eager attention.
Command (from the repository root):

    /opt/ref-venv/bin/python tools/make_hf_checkpoints.py

For each architecture below it builds a tiny model shaped like the real one (same config
fields, small sizes), fills its weights from a fixed torch seed with a spread large enough
that logits differ clearly, and writes tests/data/hf/<name>-<dtype>/ for dtype fp32 and bf16:

    config.json, generation_config.json, model.safetensors   (save_pretrained, safetensors;
                                      llama2-fp32 is sharded: model.safetensors.index.json)
and tests/data/hf/configs.json: config.json cases (real hub layouts, defaults) with what
transformers' config classes resolve them to, for the config parser's test.

    logits.bin    little-endian f32 [tokens, vocab]: logits of every prompt position
    prompt.json   {"ids": [...], "reference": "transformers X torch Y", "command": "..."}

Some configs are rewritten into the legacy hub layout (top-level rope_theta / rope_scaling /
rope_local_base_freq, as the real Llama 3.1 and Gemma 3 config.json files have) so the loader
is exercised on both layouts. The reference logits are always computed from the model
re-loaded from the written folder (float32; a bf16 checkpoint's weights are upcast exactly),
so they are exactly what the folder says.
"""

import json
import os
import shutil
import sys

import torch
import transformers
from transformers import (AutoConfig, AutoModelForCausalLM, GenerationConfig, Gemma3TextConfig,
                          LlamaConfig, MistralConfig, Qwen2Config, Qwen3Config)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "tests", "data", "hf")
COMMAND = "/opt/ref-venv/bin/python tools/make_hf_checkpoints.py"
PROMPT_TOKENS = 80

SMALL = dict(hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
             num_key_value_heads=2, head_dim=16, vocab_size=512, max_position_embeddings=256)


def llama3():
    cfg = LlamaConfig(**SMALL, rms_norm_eps=1e-5, bos_token_id=1, eos_token_id=[2, 3],
                      tie_word_embeddings=False,
                      rope_parameters={"rope_type": "llama3", "rope_theta": 500000.0, "factor": 8.0,
                                       "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                                       # small so that the scaling bends most frequencies at 80 tokens
                                       "original_max_position_embeddings": 32})
    return cfg, {"eos_token_id": [2, 3], "bos_token_id": 1}, True


def llama2():
    cfg = LlamaConfig(**dict(SMALL, num_key_value_heads=4), rms_norm_eps=1e-6, bos_token_id=1,
                      eos_token_id=2, tie_word_embeddings=False,
                      rope_parameters={"rope_type": "default", "rope_theta": 10000.0})
    return cfg, {"eos_token_id": 2, "bos_token_id": 1}, True


def smollm2():
    cfg = LlamaConfig(**dict(SMALL, num_hidden_layers=3), rms_norm_eps=1e-5, bos_token_id=1,
                      eos_token_id=2, tie_word_embeddings=True,
                      rope_parameters={"rope_type": "default", "rope_theta": 100000.0})
    return cfg, {"eos_token_id": 2, "bos_token_id": 1}, False


def llama_linear():
    cfg = LlamaConfig(**SMALL, rms_norm_eps=1e-5, bos_token_id=1, eos_token_id=2,
                      rope_parameters={"rope_type": "linear", "rope_theta": 10000.0, "factor": 4.0})
    return cfg, {"eos_token_id": 2, "bos_token_id": 1}, True


def mistral():
    cfg = MistralConfig(**SMALL, rms_norm_eps=1e-5, bos_token_id=1, eos_token_id=2,
                        sliding_window=None, tie_word_embeddings=False,
                        rope_parameters={"rope_type": "default", "rope_theta": 1000000.0})
    return cfg, {"eos_token_id": 2, "bos_token_id": 1}, False


def qwen2():
    cfg = Qwen2Config(**{k: v for k, v in SMALL.items() if k != "head_dim"}, rms_norm_eps=1e-6,
                      bos_token_id=5, eos_token_id=6, tie_word_embeddings=False,
                      use_sliding_window=False,
                      rope_parameters={"rope_type": "default", "rope_theta": 1000000.0})
    return cfg, {"eos_token_id": [6, 7], "bos_token_id": 5}, True


def qwen3():
    # head_dim explicit and != hidden / heads, as in the real Qwen3 models.
    cfg = Qwen3Config(**dict(SMALL, head_dim=32), rms_norm_eps=1e-6, bos_token_id=5,
                      eos_token_id=6, tie_word_embeddings=True, use_sliding_window=False,
                      rope_parameters={"rope_type": "default", "rope_theta": 1000000.0})
    return cfg, {"eos_token_id": [6, 7], "bos_token_id": 5}, False


def gemma3():
    cfg = Gemma3TextConfig(hidden_size=64, intermediate_size=96, num_hidden_layers=4,
                           num_attention_heads=4, num_key_value_heads=1, head_dim=32,
                           query_pre_attn_scalar=48, vocab_size=256, max_position_embeddings=256,
                           rms_norm_eps=1e-6, sliding_window=16,
                           layer_types=["sliding_attention", "sliding_attention", "full_attention",
                                        "sliding_attention"],
                           rope_parameters={"full_attention": {"rope_type": "default", "rope_theta": 1000000.0},
                                            "sliding_attention": {"rope_type": "default", "rope_theta": 10000.0}},
                           final_logit_softcapping=None, attn_logit_softcapping=None,
                           hidden_activation="gelu_pytorch_tanh", tie_word_embeddings=True,
                           bos_token_id=2, eos_token_id=1, pad_token_id=0)
    return cfg, {"eos_token_id": [1, 106], "bos_token_id": 2}, True


def gemma3_softcap():
    cfg, gen, _ = gemma3()
    cfg.final_logit_softcapping = 6.0
    cfg.attn_logit_softcapping = 8.0
    cfg.num_hidden_layers = 2
    cfg.layer_types = ["sliding_attention", "full_attention"]
    return cfg, gen, False


MODELS = {
    "llama3": llama3, "llama2": llama2, "smollm2": smollm2, "llama-linear": llama_linear,
    "mistral": mistral, "qwen2": qwen2, "qwen3": qwen3, "gemma3": gemma3,
    "gemma3-softcap": gemma3_softcap,
}


# config.json cases (without weights) whose resolution by transformers' config classes the
# C++ config parser is checked against: real hub layouts and fields left to their defaults.
LLAMA31_8B = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 4096,
              "intermediate_size": 14336, "num_hidden_layers": 32, "num_attention_heads": 32,
              "num_key_value_heads": 8, "vocab_size": 128256, "max_position_embeddings": 131072,
              "rms_norm_eps": 1e-05, "rope_theta": 500000.0, "hidden_act": "silu",
              "rope_scaling": {"factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                               "original_max_position_embeddings": 8192, "rope_type": "llama3"},
              "bos_token_id": 128000, "eos_token_id": [128001, 128008, 128009],
              "tie_word_embeddings": False, "attention_bias": False, "mlp_bias": False}
SMOLLM2_135M = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 576,
                "intermediate_size": 1536, "num_hidden_layers": 30, "num_attention_heads": 9,
                "num_key_value_heads": 3, "vocab_size": 49152, "max_position_embeddings": 8192,
                "rms_norm_eps": 1e-05, "rope_theta": 100000, "rope_scaling": None,
                "tie_word_embeddings": True, "bos_token_id": 1, "eos_token_id": 2, "hidden_act": "silu"}
GEMMA3_270M = {"architectures": ["Gemma3ForCausalLM"], "model_type": "gemma3_text", "hidden_size": 640,
               "intermediate_size": 2048, "num_hidden_layers": 18, "num_attention_heads": 4,
               "num_key_value_heads": 1, "head_dim": 256, "vocab_size": 262144,
               "max_position_embeddings": 32768, "rms_norm_eps": 1e-06, "rope_theta": 1000000.0,
               "rope_local_base_freq": 10000.0, "rope_scaling": None, "sliding_window": 512,
               "query_pre_attn_scalar": 256, "hidden_activation": "gelu_pytorch_tanh",
               "final_logit_softcapping": None, "attn_logit_softcapping": None,
               "_sliding_window_pattern": 6, "use_bidirectional_attention": False,
               "layer_types": ["sliding_attention"] * 5 + ["full_attention"] + ["sliding_attention"] * 5
               + ["full_attention"] + ["sliding_attention"] * 5 + ["full_attention"],
               "bos_token_id": 2, "eos_token_id": 1, "pad_token_id": 0}
SMALL_ARCH = {"hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 7,
              "num_attention_heads": 4, "vocab_size": 512}


def _with(base, **changes):
    d = dict(base, **changes)
    return {k: v for k, v in d.items() if v is not _DROP}


_DROP = object()

CONFIG_CASES = {
    "llama-3.1-8b": LLAMA31_8B,
    "smollm2-135m": SMOLLM2_135M,
    "llama-defaults": dict(SMALL_ARCH, architectures=["LlamaForCausalLM"], model_type="llama"),
    "llama-linear-v5": dict(SMALL_ARCH, architectures=["LlamaForCausalLM"], model_type="llama",
                            rope_parameters={"rope_type": "linear", "factor": 2.0, "rope_theta": 20000.0}),
    "llama3-v5-no-original": dict(SMALL_ARCH, architectures=["LlamaForCausalLM"], model_type="llama",
                                  max_position_embeddings=4096,
                                  rope_parameters={"rope_type": "llama3", "factor": 4.0, "rope_theta": 1e5,
                                                   "low_freq_factor": 2.0, "high_freq_factor": 8.0}),
    "mistral-defaults": dict(SMALL_ARCH, architectures=["MistralForCausalLM"], model_type="mistral",
                             num_key_value_heads=2),
    "mistral-null-window": dict(SMALL_ARCH, architectures=["MistralForCausalLM"], model_type="mistral",
                                sliding_window=None, rope_theta=1e6, head_dim=32, num_key_value_heads=1),
    "qwen2.5-0.5b": {"architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2", "hidden_size": 896,
                     "intermediate_size": 4864, "num_hidden_layers": 24, "num_attention_heads": 14,
                     "num_key_value_heads": 2, "vocab_size": 151936, "max_position_embeddings": 32768,
                     "max_window_layers": 21, "rms_norm_eps": 1e-06, "rope_theta": 1000000.0,
                     "sliding_window": 32768, "use_sliding_window": False, "tie_word_embeddings": True,
                     "bos_token_id": 151643, "eos_token_id": 151645, "hidden_act": "silu"},
    "qwen2-sliding": dict(SMALL_ARCH, architectures=["Qwen2ForCausalLM"], model_type="qwen2",
                          num_key_value_heads=2, use_sliding_window=True, sliding_window=64,
                          max_window_layers=3),
    "qwen3-defaults": dict(SMALL_ARCH, architectures=["Qwen3ForCausalLM"], model_type="qwen3",
                           num_key_value_heads=2),
    "gemma-3-270m": GEMMA3_270M,
    "gemma3-pattern": _with(GEMMA3_270M, layer_types=_DROP, _sliding_window_pattern=_DROP,
                            sliding_window_pattern=3, num_hidden_layers=7),
    "gemma3-linear": _with(GEMMA3_270M, rope_scaling={"rope_type": "linear", "factor": 8.0},
                           final_logit_softcapping=30.0, attn_logit_softcapping=50.0),
    "gemma3-v5-nested": _with(GEMMA3_270M, rope_theta=_DROP, rope_local_base_freq=_DROP, rope_scaling=_DROP,
                              rope_parameters={"full_attention": {"rope_type": "linear", "factor": 4.0,
                                                                  "rope_theta": 2e6},
                                               "sliding_attention": {"rope_type": "default",
                                                                     "rope_theta": 5e4}}),
    "gemma3-defaults": dict(SMALL_ARCH, architectures=["Gemma3ForCausalLM"], model_type="gemma3_text"),
}


def resolve(raw):
    """What transformers makes of a config.json: the fields pagoda's ModelSpec needs."""
    c = AutoConfig.for_model(raw["model_type"], **{k: v for k, v in raw.items() if k != "model_type"})
    out = {k: getattr(c, k, None) for k in (
        "hidden_size", "intermediate_size", "num_hidden_layers", "num_attention_heads",
        "num_key_value_heads", "vocab_size", "max_position_embeddings", "rms_norm_eps",
        "tie_word_embeddings", "rope_parameters", "layer_types", "sliding_window",
        "query_pre_attn_scalar", "final_logit_softcapping", "attn_logit_softcapping",
        "bos_token_id", "eos_token_id")}
    out["head_dim"] = getattr(c, "head_dim", None) or c.hidden_size // c.num_attention_heads
    out["activation"] = c.hidden_activation if c.model_type == "gemma3_text" else c.hidden_act
    if c.model_type == "mistral":
        out["layer_types"] = None  # MistralModel windows every layer when sliding_window is set
    return json.loads(json.dumps(out))


def write_config_cases(folders):
    cases = [{"name": name, "config": raw, "resolved": resolve(raw)} for name, raw in CONFIG_CASES.items()]
    for folder in folders:
        with open(os.path.join(folder, "config.json")) as f:
            raw = json.load(f)
        cases.append({"name": os.path.basename(folder), "config": raw, "resolved": resolve(raw)})
    with open(os.path.join(OUT, "configs.json"), "w") as f:
        json.dump({"reference": f"transformers {transformers.__version__}", "command": COMMAND,
                   "cases": cases}, f, indent=1)
        f.write("\n")


def randomize(model, gemma, seed):
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in sorted(model.named_parameters()):
            r = torch.randn(p.shape, generator=g, dtype=torch.float32)
            if name.endswith("norm.weight"):
                # HF Gemma multiplies by (1 + w): store w around 0 so the factor is around 1.
                p.copy_(0.2 * r if gemma else 1.0 + 0.2 * r)
            elif name.endswith(".bias"):
                p.copy_(0.3 * r)
            elif "embed_tokens" in name:
                p.copy_(0.5 * r)
            else:
                p.copy_(0.15 * r)


def legacy_config(path, arch):
    """Rewrites a transformers-5 config.json into the layout the hub files use."""
    with open(path) as f:
        c = json.load(f)
    rp = c.pop("rope_parameters")
    if arch == "gemma3":
        c["rope_theta"] = rp["full_attention"]["rope_theta"]
        c["rope_local_base_freq"] = rp["sliding_attention"]["rope_theta"]
        c["rope_scaling"] = None
    else:
        c["rope_theta"] = rp.pop("rope_theta")
        c["rope_scaling"] = None if rp.get("rope_type") == "default" else rp
    with open(path, "w") as f:
        json.dump(c, f, indent=2, sort_keys=True)
        f.write("\n")


def main():
    names = sys.argv[1:] or list(MODELS)
    torch.manual_seed(0)
    folders = []
    reference = f"transformers {transformers.__version__} torch {torch.__version__}"
    for index, name in enumerate(MODELS):
        cfg, gen, legacy = MODELS[name]()
        if name not in names:
            continue
        is_gemma = cfg.model_type == "gemma3_text"
        ids = torch.randint(0, cfg.vocab_size, (PROMPT_TOKENS,),
                            generator=torch.Generator().manual_seed(1000 + index))
        torch.manual_seed(0)
        model = AutoModelForCausalLM.from_config(cfg, dtype=torch.float32)
        randomize(model, is_gemma, seed=index + 1)
        model.generation_config = GenerationConfig(**gen)
        for dtype_name, dtype in (("fp32", torch.float32), ("bf16", torch.bfloat16)):
            folder = os.path.join(OUT, f"{name}-{dtype_name}")
            folders.append(folder)
            shutil.rmtree(folder, ignore_errors=True)
            # One checkpoint is sharded (model.safetensors.index.json + shards), as big models are.
            shard = "200KB" if (name, dtype_name) == ("llama2", "fp32") else "50GB"
            model.to(dtype).save_pretrained(folder, safe_serialization=True, max_shard_size=shard)
            model.to(torch.float32)
            if legacy:
                legacy_config(os.path.join(folder, "config.json"), "gemma3" if is_gemma else "llama")
            # The reference runs on what the folder holds: bf16 weights upcast exactly to f32.
            ref = AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32,
                                                       attn_implementation="eager")
            ref.eval()
            # A legacy rewrite must mean the same model to transformers.
            assert ref.config.rope_parameters == model.config.rope_parameters, name
            assert getattr(ref.config, "layer_types", None) == getattr(model.config, "layer_types", None)
            if dtype == torch.bfloat16:
                for (_, a), (_, b) in zip(sorted(ref.state_dict().items()),
                                          sorted(model.state_dict().items())):
                    assert torch.equal(a, b.to(torch.bfloat16).float())
            with torch.no_grad():
                logits = ref(ids[None, :]).logits[0].float().contiguous()
            assert logits.shape == (PROMPT_TOKENS, cfg.vocab_size)
            with open(os.path.join(folder, "logits.bin"), "wb") as f:
                f.write(logits.numpy().astype("<f4").tobytes())
            with open(os.path.join(folder, "prompt.json"), "w") as f:
                json.dump({"ids": ids.tolist(), "reference": reference, "command": COMMAND,
                           "attn_implementation": "eager", "compute_dtype": "float32"}, f)
                f.write("\n")
            size = sum(os.path.getsize(os.path.join(folder, x)) for x in os.listdir(folder))
            print(f"{name}-{dtype_name}: {size / 1024:.0f} KiB, logits std {logits.std():.2f} "
                  f"min {logits.min():.1f} max {logits.max():.1f}, "
                  f"top-1 distinct {len(set(logits.argmax(-1).tolist()))}")
    if len(names) == len(MODELS):
        write_config_cases(folders)


if __name__ == "__main__":
    main()
