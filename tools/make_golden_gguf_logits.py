#!/usr/bin/env python3
"""Golden logits for the real GGUF models, computed by Hugging Face transformers on the CPU.

transformers loads the GGUF file itself (dequantizing every tensor with the `gguf` package
to float32, un-permuting llama's q/k rows, subtracting Gemma's +1 from norms) and runs its
own float32 forward pass. We store, for a fixed prompt of >= 64 tokens:
  - <model>.json: prompt ids, the vocabulary columns sampled, the reference's top-1 id and
    top-1/top-2 logits at every position (over the full vocabulary), versions, command;
  - <model>.bin: little-endian float32 logits [positions, sampled columns].
The full [positions, vocab] matrix would be 12-67 MB; the sample is 2048 fixed random
columns plus every position's top-8 ids, which covers both the bulk and the argmax.

Run:  /opt/ref-venv/bin/python tools/make_golden_gguf_logits.py [--cache ~/.cache/pagoda]
"""
import argparse
import json
import os
import pathlib

import numpy as np
import torch
import transformers
from transformers import AutoModelForCausalLM, AutoTokenizer

ROOT = pathlib.Path(__file__).resolve().parents[1]
OUT = ROOT / "tests" / "data" / "gguf_logits"

PROMPT = (
    "The history of the printing press begins in the fifteenth century, when Johannes "
    "Gutenberg combined movable metal type, oil-based inks and a wooden press adapted from "
    "those used to make wine. Within fifty years, presses had spread to more than two hundred "
    "cities across Europe, and the price of books fell so far that ordinary merchants could "
    "own a small library. Historians still argue about"
)

MODELS = {
    "smollm2": "SmolLM2-135M-Instruct.Q4_1.gguf",
    "gemma3": "gemma-3-270m-q4_k_m.gguf",
}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--cache", default=os.environ.get(
        "PAGODA_CACHE", str(pathlib.Path.home() / ".cache" / "pagoda")))
    parser.add_argument("--columns", type=int, default=2048)
    args = parser.parse_args()
    OUT.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(0)
    for name, filename in MODELS.items():
        tok = AutoTokenizer.from_pretrained(args.cache, gguf_file=filename)
        model = AutoModelForCausalLM.from_pretrained(args.cache, gguf_file=filename,
                                                     torch_dtype=torch.float32)
        model.eval()
        ids = tok(PROMPT)["input_ids"]
        assert len(ids) >= 64, len(ids)
        with torch.no_grad():
            logits = model(torch.tensor([ids])).logits[0].float().numpy()
        vocab = logits.shape[1]
        rng = np.random.default_rng(1234)
        columns = set(rng.choice(vocab, size=args.columns, replace=False).tolist())
        top = np.argsort(-logits, axis=1)
        for row in top[:, :8]:
            columns.update(int(c) for c in row)
        columns = sorted(columns)
        sample = logits[:, columns].astype("<f4")
        sample.tofile(OUT / f"{name}.bin")
        meta = {
            "model_file": filename,
            "reference": f"transformers {transformers.__version__}, torch {torch.__version__}, "
                         "float32 on CPU, GGUF dequantized by transformers (gguf package)",
            "command": "/opt/ref-venv/bin/python tools/make_golden_gguf_logits.py",
            "prompt": PROMPT,
            "ids": [int(i) for i in ids],
            "vocab_size": int(vocab),
            "columns": columns,
            "top1_ids": [int(r[0]) for r in top],
            "top1_logits": [float(logits[i, top[i, 0]]) for i in range(len(ids))],
            "top2_logits": [float(logits[i, top[i, 1]]) for i in range(len(ids))],
        }
        (OUT / f"{name}.json").write_text(json.dumps(meta, indent=1) + "\n")
        print(name, len(ids), "tokens", vocab, "vocab", len(columns), "columns")


if __name__ == "__main__":
    main()
