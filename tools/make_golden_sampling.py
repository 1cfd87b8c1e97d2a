#!/usr/bin/env python3
"""Golden data for pagoda's sampler filters (tests/data/sampling/filters.json).

Reference: Hugging Face transformers' logits processors / warpers, run in vLLM v1's order:
RepetitionPenaltyLogitsProcessor (over prompt + output ids), TemperatureLogitsWarper,
MinPLogitsWarper, TopKLogitsWarper, TopPLogitsWarper; then torch.softmax over the result
for the renormalized distribution, and torch.log_softmax of the raw logits for logprobs.
Every computation is torch float32 on CPU, as in HF generate().

Made with transformers 5.24.0, torch 2.15.0 (CPU), by:
    /opt/ref-venv/bin/python tools/make_golden_sampling.py

Cases whose min_p or top_p boundary falls within 1e-4 of a token's (relative or cumulative)
probability are redrawn: there, float32 rounding alone decides, and pagoda sums in double.
Logits are random normal floats, so there are no ties (pagoda's tie rule is tested in C++).
"""

import json
import math
import pathlib

import torch
import transformers
from transformers.generation.logits_process import (
    MinPLogitsWarper,
    RepetitionPenaltyLogitsProcessor,
    TemperatureLogitsWarper,
    TopKLogitsWarper,
    TopPLogitsWarper,
)

OUT = pathlib.Path(__file__).resolve().parent.parent / "tests" / "data" / "sampling" / "filters.json"
MARGIN = 1e-4


def process(logits, params, history):
    scores = logits.clone().unsqueeze(0)
    ids = torch.tensor([history], dtype=torch.long)
    if params["repetition_penalty"] != 1.0 and history:
        scores = RepetitionPenaltyLogitsProcessor(params["repetition_penalty"])(ids, scores)
    penalized = scores.clone()
    scores = TemperatureLogitsWarper(params["temperature"])(ids, scores)
    if params["min_p"] > 0.0:
        scores = MinPLogitsWarper(params["min_p"])(ids, scores)
    if params["top_k"] > 0:
        scores = TopKLogitsWarper(params["top_k"])(ids, scores)
    if params["top_p"] < 1.0:
        scores = TopPLogitsWarper(params["top_p"])(ids, scores)
    return penalized[0], scores[0]


def near_boundary(penalized, params):
    """True when a filter boundary is within MARGIN of some token (in float64)."""
    x = penalized.double() / params["temperature"]
    keep = torch.ones_like(x, dtype=torch.bool)
    if params["min_p"] > 0.0:
        rel = torch.exp(x - x.max())
        if torch.any(torch.abs(rel - params["min_p"]) < MARGIN):
            return True
        keep &= rel >= params["min_p"]
    if params["top_k"] > 0 and params["top_k"] < int(keep.sum()):
        kth = torch.sort(x[keep], descending=True).values[params["top_k"] - 1]
        keep &= x >= kth
    if params["top_p"] < 1.0:
        vals = torch.sort(x[keep], descending=True).values
        probs = torch.softmax(vals, dim=0)
        before = torch.cumsum(probs, dim=0) - probs
        if torch.any(torch.abs(before - params["top_p"]) < MARGIN):
            return True
    return False


def main():
    gen = torch.Generator().manual_seed(20261202)
    grid = []
    for temperature in (0.6, 1.0, 1.7):
        for top_k, top_p, min_p in ((0, 1.0, 0.0), (1, 1.0, 0.0), (7, 1.0, 0.0), (0, 0.9, 0.0),
                                    (0, 0.35, 0.0), (0, 1.0, 0.05), (0, 1.0, 0.3),
                                    (12, 0.8, 0.0), (20, 0.95, 0.02), (5, 0.5, 0.1)):
            for repetition_penalty in (1.0, 1.3, 0.85):
                grid.append(dict(temperature=temperature, top_k=top_k, top_p=top_p,
                                 min_p=min_p, repetition_penalty=repetition_penalty))
    cases = []
    for i, params in enumerate(grid):
        vocab = 48 if i % 2 == 0 else 130
        scale = (1.0, 3.0, 6.0)[i % 3]
        while True:
            logits = (torch.randn(vocab, generator=gen) * scale).float()
            n_hist = int(torch.randint(0, 12, (1,), generator=gen))
            history = torch.randint(0, vocab, (n_hist,), generator=gen).tolist()
            penalized, processed = process(logits, params, history)
            if not near_boundary(penalized, params):
                break
        probs = torch.softmax(processed.double(), dim=0)
        survivors = torch.nonzero(torch.isfinite(processed)).flatten().tolist()
        raw_logprobs = torch.log_softmax(logits, dim=0)
        cases.append({
            "params": params,
            "history": history,
            "logits": [float(v) for v in logits.tolist()],
            "penalized": [float(v) for v in penalized.tolist()],
            "survivors": survivors,
            "probs": [float(probs[j]) for j in survivors],
            "raw_logprobs": [float(v) for v in raw_logprobs.tolist()],
        })
    doc = {
        "reference": f"transformers {transformers.__version__}, torch {torch.__version__}",
        "command": "/opt/ref-venv/bin/python tools/make_golden_sampling.py",
        "order": "repetition_penalty(prompt+output) -> temperature -> min_p -> top_k -> top_p",
        "cases": cases,
    }
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(doc, separators=(",", ":")) + "\n")
    print(f"wrote {len(cases)} cases to {OUT} ({OUT.stat().st_size} bytes)")
    assert all(math.isclose(sum(c["probs"]), 1.0, abs_tol=1e-9) for c in cases)


if __name__ == "__main__":
    main()
