#!/usr/bin/env python3
"""llama.cpp latency on this machine, measured the way `pagoda bench latency` measures.

Reference: llama-cpp-python 0.3.36 (bundles ggml-org/llama.cpp@0c1e57098), CPU build
with GGML_NATIVE=ON. Batch size 1, one sequence:
  * input: --input-len token ids drawn uniformly (fixed seed) from the vocab's
    non-control tokens — random but valid, so no tokenizer is involved;
  * warm-up: one full prefill + a few decode steps, then the KV cache is cleared;
  * prefill: ONE llama_decode of all input ids (logits for the last position only),
    wall clock until llama_synchronize returns;
  * decode: --output-len single-token llama_decode steps after it, each feeding the
    argmax of the previous logits (greedy), wall clock for all steps together;
  * repeated --iters times (cache cleared in between); the median of each is reported.
peak_rss_mb is the process's peak resident set (VmHWM), which includes the
Python interpreter (baseline_rss_mb, measured before the model is loaded). CPU seconds
per phase and the load average are recorded too: wall clock on a shared machine is only
meaningful when load_average is below the core count.

Command:
    /opt/llama-venv/bin/python tools/bench_llamacpp.py --model ~/.cache/pagoda/X.gguf \
        --input-len 128 --output-len 128 --threads 2 --output-json out.json
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import llamacpp_ref as R  # noqa: E402


def rss_mb() -> float:
    """The peak resident set of this process's own address space (VmHWM): getrusage's
    ru_maxrss also carries over a parent's peak through fork and exec."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return float(line.split()[1]) / 1024.0  # kB
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # KiB on Linux


def valid_ids(model: R.Model) -> np.ndarray:
    ids = [t for t in range(model.n_vocab) if not R.L.llama_vocab_is_control(model.vocab, t)]
    return np.array(ids, dtype=np.int64)


def one_run(ctx: R.Context, prompt: list[int], n_out: int) -> tuple[float, float, float, float]:
    """(prefill wall s, decode wall s, prefill cpu s, decode cpu s); cpu = all threads."""
    ctx.clear()
    c0, t0 = time.process_time(), time.perf_counter()
    ctx.decode(prompt)
    ctx.synchronize()
    c1, t1 = time.process_time(), time.perf_counter()
    tid = int(np.argmax(ctx.last_logits()))
    for _ in range(n_out):
        ctx.decode([tid])
        tid = int(np.argmax(ctx.last_logits()))
    ctx.synchronize()
    c2, t2 = time.process_time(), time.perf_counter()
    return t1 - t0, t2 - t1, c1 - c0, c2 - c1


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", type=Path, required=True)
    ap.add_argument("--input-len", type=int, default=128)
    ap.add_argument("--output-len", type=int, default=128)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--iters", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--output-json", type=Path)
    args = ap.parse_args()
    if args.input_len < 1 or args.output_len < 1 or args.iters < 1 or args.threads < 1:
        ap.error("--input-len, --output-len, --iters and --threads must be >= 1")

    baseline = rss_mb()
    model = R.Model(args.model.expanduser())
    n_ctx = args.input_len + args.output_len + 8
    ctx = model.new_context(n_ctx, args.threads, n_batch=args.input_len)
    pool = valid_ids(model)
    rng = np.random.default_rng(args.seed)
    prompt = [int(x) for x in rng.choice(pool, size=args.input_len)]

    one_run(ctx, prompt, min(4, args.output_len))  # warm-up: page in weights, fill caches
    prefill_s, decode_s, prefill_cpu, decode_cpu = [], [], [], []
    for _ in range(args.iters):
        p, d, pc, dc = one_run(ctx, prompt, args.output_len)
        prefill_s.append(p)
        decode_s.append(d)
        prefill_cpu.append(pc)
        decode_cpu.append(dc)
    ctx.close()
    model.close()

    p_med, d_med = statistics.median(prefill_s), statistics.median(decode_s)
    result = {
        "prefill_tokens_per_s": round(args.input_len / p_med, 2),
        "decode_tokens_per_s": round(args.output_len / d_med, 2),
        "peak_rss_mb": round(rss_mb(), 1),
        "baseline_rss_mb": round(baseline, 1),
        "reference": R.reference_string(),
        "model": args.model.name,
        "input_len": args.input_len,
        "output_len": args.output_len,
        "threads": args.threads,
        "iters": args.iters,
        "prefill_s": [round(x, 5) for x in prefill_s],
        "decode_s": [round(x, 5) for x in decode_s],
        # CPU seconds of all threads: on a shared, overloaded machine wall clock mostly
        # measures waiting; these show the work itself (spin-waiting counts as work
        # unless OMP_WAIT_POLICY=PASSIVE).
        "prefill_cpu_s": [round(x, 5) for x in prefill_cpu],
        "decode_cpu_s": [round(x, 5) for x in decode_cpu],
        "load_average": [round(x, 2) for x in os.getloadavg()],
        "omp_wait_policy": os.environ.get("OMP_WAIT_POLICY", "(default)"),
        "context": ctx.params,
        "system_info": R.system_info(),
    }
    text = json.dumps(result, indent=1)
    if args.output_json:
        args.output_json.write_text(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
