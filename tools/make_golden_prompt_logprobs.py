#!/usr/bin/env python3
"""Golden prompt logprobs (vLLM's prompt_logprobs) for tests/engine/prompt_logprobs_test.cpp.

Reference: the logits of Hugging Face transformers (float32, eager attention, CPU) over the
random-weight SmolLM2-shaped checkpoint tests/data/hf/smollm2-fp32, so pagoda and the
reference run on exactly the same weights. Those logits are tests/data/hf/smollm2-fp32/
logits.bin, written by tools/make_hf_checkpoints.py (transformers 5.24.0, torch 2.15.0); with
--recompute this script runs transformers itself instead and checks that it agrees with the
committed logits. From the logits it derives, in float64 with numpy, what vLLM returns as
prompt_logprobs: for every prompt token after the first, its logprob given the prefix
(log_softmax of the previous position's raw logits), its rank as vLLM counts it (the number
of tokens whose logprob is >= its own) and the top-k tokens by descending logprob (ties by
ascending id).

Command (from the repository root):

    .venv/bin/python tools/make_golden_prompt_logprobs.py            # logits from logits.bin
    /tmp/refvenv/bin/python tools/make_golden_prompt_logprobs.py --recompute   # needs torch
"""

import argparse
import json
import os
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CHECKPOINT = os.path.join(ROOT, "tests", "data", "hf", "smollm2-fp32")
OUT = os.path.join(ROOT, "tests", "data", "prompt_logprobs", "smollm2-fp32.json")
TOP_K = 5


def transformers_logits(ids):
    import torch
    import transformers
    model = transformers.AutoModelForCausalLM.from_pretrained(CHECKPOINT, dtype=torch.float32,
                                                              attn_implementation="eager")
    model.eval()
    with torch.no_grad():
        out = model(torch.tensor([ids])).logits[0].float().numpy()
    return out, f"transformers {transformers.__version__} torch {torch.__version__} (run by this script)"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--recompute", action="store_true", help="run transformers instead of reading logits.bin")
    args = parser.parse_args()
    prompt = json.load(open(os.path.join(CHECKPOINT, "prompt.json")))
    ids = prompt["ids"]
    vocab = json.load(open(os.path.join(CHECKPOINT, "config.json")))["vocab_size"]
    logits = np.fromfile(os.path.join(CHECKPOINT, "logits.bin"), dtype="<f4").reshape(len(ids), vocab)
    source = f"{prompt['reference']} via tests/data/hf/smollm2-fp32/logits.bin ({prompt['command']})"
    if args.recompute:
        fresh, source = transformers_logits(ids)
        diff = float(np.abs(fresh - logits).max())
        print(f"max |recomputed - committed logits| = {diff:.3g}", file=sys.stderr)
        logits = fresh

    entries = []
    for pos in range(len(ids) - 1):
        row = logits[pos].astype(np.float64)
        lp = row - (row.max() + np.log(np.exp(row - row.max()).sum()))
        token = ids[pos + 1]
        rank = int((lp >= lp[token]).sum())
        order = sorted(range(vocab), key=lambda i: (-lp[i], i))[:TOP_K]
        entries.append({"token": token, "logprob": float(lp[token]), "rank": rank,
                        "top": [[i, float(lp[i])] for i in order]})
    golden = {
        "note": "prompt logprobs of tests/data/hf/smollm2-fp32's prompt: entries[k] scores prompt token k + 1 "
                "(token 0 has none); top are [id, logprob] by descending logprob, ties by ascending id",
        "logits_reference": source,
        "derived_with": f"numpy {np.__version__}, float64 log_softmax",
        "command": ".venv/bin/python tools/make_golden_prompt_logprobs.py" + (" --recompute" if args.recompute else ""),
        "top_k": TOP_K,
        "ids": ids,
        "entries": entries,
    }
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w") as f:
        json.dump(golden, f, indent=1)
        f.write("\n")
    print(f"wrote {OUT}: {len(entries)} positions")


if __name__ == "__main__":
    main()
