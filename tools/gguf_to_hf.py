#!/usr/bin/env python3
"""Writes a Hugging Face directory (config.json, model.safetensors, tokenizer) from a GGUF
file, through transformers' own GGUF loader (it dequantizes every tensor). For running the
same model under references that cannot read our GGUF files, e.g. vLLM on the CPU:

    python3 tools/gguf_to_hf.py ~/.cache/pagoda/SmolLM2-135M-Instruct.Q4_1.gguf OUT_DIR [--dtype bfloat16]

pagoda loads OUT_DIR too, so a side-by-side can run both on identical weights. Needs
transformers and gguf (PyPI).
"""

import argparse
import os

import torch
from safetensors.torch import save_file
from transformers import AutoModelForCausalLM, AutoTokenizer


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("gguf")
    parser.add_argument("out")
    parser.add_argument("--dtype", default="bfloat16", choices=["bfloat16", "float32", "float16"])
    args = parser.parse_args()
    directory, filename = os.path.split(os.path.abspath(args.gguf))
    tokenizer = AutoTokenizer.from_pretrained(directory, gguf_file=filename)
    model = AutoModelForCausalLM.from_pretrained(directory, gguf_file=filename, dtype=getattr(torch, args.dtype))
    # save_pretrained refuses a model loaded from GGUF ("quantized"); the weights are plain
    # tensors after dequantization, so write them and a config without the marker.
    os.makedirs(args.out, exist_ok=True)
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    model.config.architectures = [type(model).__name__]  # not set by the GGUF loader
    model.config.save_pretrained(args.out)
    model.generation_config.save_pretrained(args.out)
    # Tied embeddings are one tensor under two names; keep the embedding, as HF files do.
    tensors = {k: v.contiguous() for k, v in model.state_dict().items()}
    if getattr(model.config, "tie_word_embeddings", False):
        tensors.pop("lm_head.weight", None)
    save_file(tensors, os.path.join(args.out, "model.safetensors"), metadata={"format": "pt"})
    tokenizer.save_pretrained(args.out)
    print(f"wrote {args.out} ({model.config.model_type}, {args.dtype})")


if __name__ == "__main__":
    main()
