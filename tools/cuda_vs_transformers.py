#!/usr/bin/env python3
"""pagoda's CUDA backend against Hugging Face transformers on the device machine.

Reference: transformers (5.x) and PyTorch (2.11, CUDA) as installed on the device machine.
Run there from the repository root (tools/device/run.sh does):

    python3 tools/cuda_vs_transformers.py --pagoda PATH/pagoda --out DIR [--models a,b] [--bench]

For each real configuration in tools/configs/ it builds a random-weight checkpoint of that
shape in bf16 (transformers' from_config, then weights redrawn from a fixed seed with a
spread that keeps activations O(1): Linear ~ N(0, 1/in_features), embeddings ~ N(0, 1),
norm weights 1 + N(0, 0.1^2), biases N(0, 0.1^2)), saves it as safetensors, and compares
`pagoda logits --device cuda` over a 160-token prompt of random ids with:

  hf_fp32: transformers in float32 on the same (bf16-valued) weights: the precise reference;
  hf_bf16: transformers in bf16, as users run it.

Tolerance (bf16): tol = 1.5 x max|hf_bf16 - hf_fp32|, i.e. pagoda may be at most half again
as far from the precise answer as transformers' own bf16 forward is. Pass when
max|pagoda - hf_fp32| <= tol and pagoda's top-1 equals hf_bf16's top-1 at every position
where hf_bf16's top-1/top-2 margin exceeds tol.

With --bench (Llama-3.1-8B shape only): pagoda bench latency (1,024-token prefill, batch-1
decode) and bench throughput (1,000 prompts of 128 in / 128 out), transformers' prefill and
batch-1 decode on the same machine, and the device-to-device copy bandwidth. Everything is
written to DIR/report.json; a short table is printed last.
"""

import argparse
import gc
import json
import os
import shutil
import subprocess
import sys
import time

import numpy as np
import torch
import transformers
from transformers import AutoConfig, AutoModelForCausalLM

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CONFIGS = {
    "smollm2_135m": "SmolLM2-135M",
    "llama31_8b": "Llama-3.1-8B",
    "qwen25_05b": "Qwen2.5-0.5B",
    "qwen3_06b": "Qwen3-0.6B",
}
PROMPT_TOKENS = 160


def log(*parts):
    print(*parts, flush=True)


def build_checkpoint(name, out_dir, tokenizer_dir, **overrides):
    cfg = AutoConfig.from_pretrained(os.path.join(ROOT, "tools", "configs", name + ".json"), **overrides)
    torch.manual_seed(0)
    with torch.device("cuda"):
        model = AutoModelForCausalLM.from_config(cfg, dtype=torch.bfloat16)
    gen = torch.Generator(device="cuda").manual_seed(1234)
    with torch.no_grad():
        for pname, p in model.named_parameters():
            if p.ndim == 2 and "embed" in pname:
                p.copy_(torch.randn(p.shape, generator=gen, device="cuda"))
            elif p.ndim == 2:
                p.copy_(torch.randn(p.shape, generator=gen, device="cuda") / p.shape[1] ** 0.5)
            elif pname.endswith("bias"):
                p.copy_(0.1 * torch.randn(p.shape, generator=gen, device="cuda"))
            else:  # norm weights
                p.copy_(1 + 0.1 * torch.randn(p.shape, generator=gen, device="cuda"))
    model.eval()
    if os.path.exists(out_dir):
        shutil.rmtree(out_dir)
    model.save_pretrained(out_dir)
    if tokenizer_dir:
        for f in ("tokenizer.json", "tokenizer_config.json"):
            if os.path.exists(os.path.join(tokenizer_dir, f)):
                shutil.copy(os.path.join(tokenizer_dir, f), out_dir)
    return model, cfg


def hf_logits(model, ids):
    with torch.no_grad():
        return model(torch.tensor([ids], device="cuda")).logits[0].float().cpu().numpy()


def run(cmd, timeout=400):
    log("$", " ".join(cmd))
    t = time.time()
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    if p.returncode != 0:
        log(p.stdout[-3000:], p.stderr[-3000:])
        raise RuntimeError(f"{cmd[0]} failed with {p.returncode}")
    log(f"  ({time.time() - t:.1f} s)")
    return p.stdout


def compare(pg, bf16, fp32):
    err_hf = float(np.abs(bf16 - fp32).max())
    tol = 1.5 * err_hf
    err_pg = float(np.abs(pg - fp32).max())
    err_pg_hf = float(np.abs(pg - bf16).max())
    srt = np.sort(bf16, axis=1)
    margin = srt[:, -1] - srt[:, -2]
    decisive = margin > tol
    same_top1 = pg.argmax(1) == bf16.argmax(1)
    rel = lambda a, b: float(np.linalg.norm(a - b) / np.linalg.norm(b))
    return {
        "tolerance": tol,
        "max_abs_hf_bf16_vs_fp32": err_hf,
        "max_abs_pagoda_vs_fp32": err_pg,
        "max_abs_pagoda_vs_hf_bf16": err_pg_hf,
        "rel_hf_bf16_vs_fp32": rel(bf16, fp32),
        "rel_pagoda_vs_fp32": rel(pg, fp32),
        "logit_std": float(fp32.std()),
        "positions": int(pg.shape[0]),
        "decisive_positions": int(decisive.sum()),
        "top1_agree_decisive": int((same_top1 & decisive).sum()),
        "top1_agree_all": int(same_top1.sum()),
        "pass": bool(err_pg <= tol and (same_top1 | ~decisive).all()),
    }


def cuda_time(fn, iters=5):
    fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(iters):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        torch.cuda.synchronize()
        times.append(a.elapsed_time(b))
    return float(np.median(times))


def copy_bandwidth():
    x = torch.randn(1 << 30, device="cuda")  # 4 GiB
    y = torch.empty_like(x)
    ms = cuda_time(lambda: y.copy_(x), iters=10)
    del x, y
    return 2 * (4 << 30) / (ms / 1000) / 1e9


def hf_bench(model, vocab):
    g = torch.Generator(device="cuda").manual_seed(7)
    prompt = torch.randint(0, vocab, (1, 1024), device="cuda", generator=g)
    with torch.no_grad():
        prefill_ms = cuda_time(lambda: model(prompt))
        short = prompt[:, :128]
        p128_ms = cuda_time(lambda: model(short), iters=3)
        gen_ms = cuda_time(lambda: model.generate(short, max_new_tokens=128, min_new_tokens=128, do_sample=False,
                                                  pad_token_id=0), iters=2)
    return {"prefill_1024_ms": prefill_ms, "decode_ms_per_token": (gen_ms - p128_ms) / 127}


GREEDY_PROMPTS = ["The capital of France is", "def fibonacci(n):", "Once upon a time, in a small village,",
                  "List three primary colors:", "Water boils at a temperature of"]


def engine_model(out, args):
    """SmolLM2-135M's shape with Llama 3's tokenizer (its GGUF cannot travel to this machine):
    the model of the engine tests on the GPU, and of the CPU-vs-GPU greedy comparison."""
    ckpt = os.path.join(args.workdir, "engine_model")
    model, _ = build_checkpoint("smollm2_135m", ckpt, args.tokenizer, vocab_size=128256, bos_token_id=128000,
                                eos_token_id=128001)
    del model
    gc.collect()
    torch.cuda.empty_cache()
    results = []
    for prompt in GREEDY_PROMPTS:
        texts = {}
        for device in ("cpu", "cuda"):
            texts[device] = run([args.pagoda, "generate", ckpt, "--prompt", prompt, "--max-tokens", "32",
                                 "--temperature", "0", "--ignore-eos", "--device", device, "--max-model-len", "256",
                                 "--kv-cache-memory", "256M"])
        same = 0
        while same < min(len(texts["cpu"]), len(texts["cuda"])) and texts["cpu"][same] == texts["cuda"][same]:
            same += 1
        results.append({"prompt": prompt, "cpu": texts["cpu"], "cuda": texts["cuda"],
                        "identical": texts["cpu"] == texts["cuda"], "common_prefix_chars": same})
        log(f"  greedy identical={texts['cpu'] == texts['cuda']} prompt={prompt!r}")
    with open(os.path.join(out, "greedy.json"), "w") as f:
        json.dump(results, f, indent=2)
    print(ckpt)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pagoda", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--models", default="qwen25_05b,qwen3_06b,llama31_8b")
    ap.add_argument("--bench", action="store_true")
    ap.add_argument("--tokenizer", default="", help="folder with Llama 3's tokenizer.json (bench throughput)")
    ap.add_argument("--workdir", default="/tmp/pagoda_ckpt")
    ap.add_argument("--engine-model", action="store_true", help="build the engine tests' model, compare greedy")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    os.makedirs(args.workdir, exist_ok=True)
    if args.engine_model:
        return engine_model(args.out, args)
    report = {"reference": f"transformers {transformers.__version__} torch {torch.__version__}",
              "gpu": torch.cuda.get_device_name(0), "models": {}}
    report_path = os.path.join(args.out, "report.json")

    def save():
        with open(report_path, "w") as f:
            json.dump(report, f, indent=2)

    if args.bench:
        report["copy_bandwidth_GBps"] = copy_bandwidth()
        log("copy bandwidth GB/s", report["copy_bandwidth_GBps"])
        save()
    for name in args.models.split(","):
        label = CONFIGS[name]
        ckpt = os.path.join(args.workdir, name)
        log(f"== {label}")
        t = time.time()
        model, cfg = build_checkpoint(name, ckpt, args.tokenizer if name == "llama31_8b" else "")
        log(f"  built and saved in {time.time() - t:.1f} s")
        entry = {}
        rng = np.random.default_rng(42)
        ids = [int(i) for i in rng.integers(0, cfg.vocab_size, PROMPT_TOKENS)]
        with open(os.path.join(args.workdir, "ids.json"), "w") as f:
            json.dump(ids, f)
        if args.bench and name == "llama31_8b":
            entry["transformers_bench"] = hf_bench(model, cfg.vocab_size)
            log("  transformers", entry["transformers_bench"])
        bf16 = hf_logits(model, ids)
        model.float()
        fp32 = hf_logits(model, ids)
        del model
        gc.collect()
        torch.cuda.empty_cache()

        out = os.path.join(args.workdir, "pagoda.f32")
        summary = json.loads(run([args.pagoda, "logits", ckpt, "--ids-file", os.path.join(args.workdir, "ids.json"),
                                  "--device", "cuda", "--output", out]).strip().splitlines()[-1])
        pg = np.fromfile(out, dtype=np.float32).reshape(len(ids), -1)
        entry["logits"] = compare(pg, bf16, fp32)
        entry["logits"]["pagoda_seconds"] = summary["seconds"]
        entry["backend"] = summary["backend"]
        log("  logits", json.dumps(entry["logits"]))
        report["models"][label] = entry
        save()

        if args.bench and name == "llama31_8b":
            lat = os.path.join(args.out, "latency.json")
            run([args.pagoda, "bench", "latency", ckpt, "--device", "cuda", "--input-len", "1024", "--output-len",
                 "128", "--batch-size", "1", "--num-iters", "3", "--output-json", lat])
            entry["pagoda_latency"] = json.load(open(lat))
            save()
            # The same run without decode graphs, so the report shows what the graphs buy.
            lat_eager = os.path.join(args.out, "latency_eager.json")
            run([args.pagoda, "bench", "latency", ckpt, "--device", "cuda", "--input-len", "1024", "--output-len",
                 "128", "--batch-size", "1", "--num-iters", "3", "--enforce-eager", "--output-json", lat_eager])
            entry["pagoda_latency_eager"] = json.load(open(lat_eager))
            save()
            thr = os.path.join(args.out, "throughput.json")
            run([args.pagoda, "bench", "throughput", ckpt, "--device", "cuda", "--input-len", "128", "--output-len",
                 "128", "--num-prompts", "1000", "--max-num-seqs", "256", "--max-num-batched-tokens", "8192",
                 "--max-model-len", "256", "--output-json", thr], timeout=500)
            entry["pagoda_throughput"] = json.load(open(thr))
            save()
        if not os.environ.get("PAGODA_KEEP_CKPT"):  # run.sh profile reuses it
            shutil.rmtree(ckpt, ignore_errors=True)

    log("\n== summary")
    for label, e in report["models"].items():
        l = e["logits"]
        log(f"{label:14s} pass={l['pass']} tol={l['tolerance']:.4f} pagoda|d|={l['max_abs_pagoda_vs_fp32']:.4f} "
            f"hf_bf16|d|={l['max_abs_hf_bf16_vs_fp32']:.4f} top1 {l['top1_agree_decisive']}/{l['decisive_positions']}")
        if "pagoda_latency" in e:
            pl, hf = e["pagoda_latency"], e.get("transformers_bench", {})
            log(f"  pagoda prefill 1024: {1000 * pl['prefill_seconds']:.1f} ms, decode {pl['decode_ms_per_step']:.2f} ms/token"
                f" | transformers prefill {hf.get('prefill_1024_ms', 0):.1f} ms, decode {hf.get('decode_ms_per_token', 0):.2f} ms/token")
        if "pagoda_latency_eager" in e:
            log(f"  pagoda decode without graphs (--enforce-eager): "
                f"{e['pagoda_latency_eager']['decode_ms_per_step']:.2f} ms/token")
        if "pagoda_throughput" in e:
            log(f"  pagoda throughput: {e['pagoda_throughput']['output_tokens_per_second']:.0f} output tok/s")
    save()


if __name__ == "__main__":
    sys.exit(main())
