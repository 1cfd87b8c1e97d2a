#!/usr/bin/env bash
# What one call of the device machine runs (from the repository root there). Built here with
# tools/device/pack.sh, which puts the binaries and the shared libraries the device image
# lacks into .dev/ (git-ignored; named in the call's `carry`). Usage on the device:
#   tools/device/run.sh verify|tests|ops|engine|logits|bench|all|profile|kernels|attention|pdl|ab|ncu|async|mma
# verify: what one call should run (about 460 s on the H200, under the 600 s a call may take),
# most important first in case it is cut short: ops, compute-sanitizer over the tests of the
# graph memory, the prefetch and the split attention, bench, an A/B of the opt-in decode
# settings (VERIFY_OPT_IN, each alone and together), engine with them on, and an eager
# per-op profile with them on.
# tests = ops (the Cuda* op tests) + engine (greedy CPU vs GPU, the engine tests on the GPU).
# kernels: cuda_kernel_bench (GEMV configurations, tensor-core vs CUDA-core prefill attention).
# attention: cuda_kernel_bench attention (the decode attention's split counts, folded or not),
# and the same of each .dev/bin/kbench_* (an earlier build's: pack.sh with PAGODA_BASE_KBENCH).
# pdl (after bench or profile, which keep the checkpoint): batch-1 decode and throughput with
# programmatic dependent launch off and on, one after the other.
# profile (after bench, which builds the Llama-3.1-8B-shaped checkpoint): GPU time per op
# (PAGODA_PROFILE=1) for a 1,024-token prefill, batch-1 decode (graphs, and eager) and the
# throughput run.
# ab (after bench, which keeps the checkpoint in /tmp/pagoda_ckpt): batch-1 decode of
# .dev/bin/pagoda_base (an earlier commit, packed by pack.sh when PAGODA_BASE_BIN names it),
# of .dev/bin/pagoda under each setting in AB_VARIANTS (space-separated; a setting is
# VAR=value, or several joined by +; default PAGODA_FUSED_GEMV=0) and as it is, alternately,
# AB_ROUNDS times (2), with any other builds named in AB_BINARIES (files in .dev/bin, packed
# by hand) beside the base;
# then, unless AB_THROUGHPUT=0, the throughput of the base and this one: a same-machine A/B.
# ncu (after bench): every kernel of one decode step timed alone (tools/device/ncu_step.py).
# mma (after bench): the decode attention's chunks on the tensor cores (the default) against
# the CUDA cores (PAGODA_ATTENTION_MMA=0), one binary: batch-1 decode (MMA_ROUNDS rounds, 2;
# also on the tensor cores at each PAGODA_MAX_ATTENTION_SPLITS in MMA_SPLITS), throughput, and
# cuda_kernel_bench attention's chain both ways.
# Writes logs and report.json under $OUT; end a call's command with tools/device/collect.sh
# (only about eight files under $OUT come back, so it packs them into one).
set -uo pipefail
what=${1:-all}
out=${OUT:-/tmp/pagoda-out}
mkdir -p "$out" .dev/lib
[ -f .dev/libs.tar.gz ] && tar -xzf .dev/libs.tar.gz -C .dev/lib
for f in .dev/bin/*.gz .dev/tok/*.gz; do [ -f "$f" ] && gunzip -f "$f"; done
chmod +x .dev/bin/* 2>/dev/null
cublas=$(find / -name 'libcublasLt.so.13*' -not -path '/proc/*' 2>/dev/null | head -1)
export LD_LIBRARY_PATH="$PWD/.dev/lib:$(dirname "${cublas:-/x/x}")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
nvidia-smi --query-gpu=name,memory.total,memory.used,clocks.sm,clocks.mem --format=csv
ldd .dev/bin/pagoda | grep -i "not found"

if [[ $what == kernels ]]; then
  .dev/bin/cuda_kernel_bench 2>&1 | tee "$out/kernels.jsonl" | grep -E '"chosen": true|gemv_chain|decode_attention_chain|paged_attention'
fi
if [[ $what == attention ]]; then
  # The decode attention chain's sweep (splits, folded combine) of cuda_kernel_bench and of
  # any variant built beside it as .dev/bin/kbench_<name>.
  for bin in .dev/bin/cuda_kernel_bench .dev/bin/kbench_*; do
    [ -x "$bin" ] || continue
    name=$(basename "$bin")
    "$bin" attention > "$out/chain_$name.jsonl" 2>&1
    python3 -c "import json,sys
for l in open('$out/chain_$name.jsonl'):
    if l.startswith('{'):
        r=json.loads(l); print('$name', r['stages'], 'splits', r['max_splits'], 'min_keys', r.get('min_split_keys'), 'fold', r['fold_combine'], '%.2f us/layer' % r['us_per_layer'])
    else: print('$name', l.rstrip())"
  done
fi
if [[ $what == tests || $what == all || $what == ops ]]; then
  .dev/bin/pagoda_tests --gtest_filter='Cuda*' 2>&1 | tee "$out/cuda_tests.log" | tail -25
fi
if [[ $what == tests || $what == all || $what == engine ]]; then
  # The engine tests on the GPU, on a model built here (the SmolLM2 GGUF cannot travel).
  PYTHONUNBUFFERED=1 python3 tools/cuda_vs_transformers.py --pagoda .dev/bin/pagoda --out "$out" \
    --engine-model --tokenizer .dev/tok 2>&1 | tee "$out/greedy.log" | tail -8
  PAGODA_TEST_MODEL=/tmp/pagoda_ckpt/engine_model PAGODA_TEST_DEVICE=cuda .dev/bin/pagoda_tests \
    --gtest_filter='*EngineBatchInvariance*:*EnginePreemption*:*EngineAbortStorm*:*EngineAsyncScheduling*:ParallelSampling*:DecodeGraphs*:DeviceLogprobs*' 2>&1 |
    tee "$out/engine_gpu_tests.log" | tail -15
  PAGODA_BATCH_INVARIANT=1 PAGODA_TEST_MODEL=/tmp/pagoda_ckpt/engine_model PAGODA_TEST_DEVICE=cuda \
    .dev/bin/pagoda_tests --gtest_filter='*EngineBatchInvariance*' 2>&1 | tee "$out/engine_gpu_invariant.log" | tail -6
fi
if [[ $what == logits ]]; then
  PYTHONUNBUFFERED=1 python3 tools/cuda_vs_transformers.py --pagoda .dev/bin/pagoda --out "$out" \
    --models qwen25_05b,qwen3_06b 2>&1 | tee "$out/logits.log" | tail -40
fi
if [[ $what == bench || $what == all ]]; then
  models=qwen25_05b,qwen3_06b,llama31_8b
  [[ $what == bench ]] && models=llama31_8b
  PAGODA_KEEP_CKPT=1 PYTHONUNBUFFERED=1 python3 tools/cuda_vs_transformers.py --pagoda .dev/bin/pagoda --out "$out" \
    --models $models --bench --tokenizer .dev/tok 2>&1 | tee "$out/bench.log" | tail -40
  # A long prefill right after a one-token decode: the prefill grows the BF16 activation
  # buffer the decode graphs write, which once handed the graphs' memory to its block tables
  # (an illegal address; tests/backend/cuda_graph_memory_test.cpp).
  .dev/bin/pagoda bench latency /tmp/pagoda_ckpt/llama31_8b --device cuda --input-len 1024 --output-len 2 \
    --num-iters 1 --output-json "$out/prefill_after_decode.json" > /dev/null 2> "$out/prefill_after_decode.err" &&
    echo "prefill after a one-token decode: ok" || { echo "prefill after a one-token decode FAILED:"; tail -2 "$out/prefill_after_decode.err"; }
fi
if [[ $what == pdl ]]; then
  ckpt=/tmp/pagoda_ckpt/llama31_8b
  for pdl in 0 1; do
    PAGODA_PDL=$pdl .dev/bin/pagoda bench latency $ckpt --device cuda --input-len 1024 --output-len 128 --num-iters 3 \
      --output-json "$out/latency_pdl$pdl.json" > /dev/null
    PAGODA_PDL=$pdl .dev/bin/pagoda bench throughput $ckpt --device cuda --input-len 128 --output-len 128 \
      --num-prompts 1000 --max-num-seqs 256 --max-num-batched-tokens 8192 --max-model-len 256 \
      --output-json "$out/throughput_pdl$pdl.json" > /dev/null
    python3 -c "import json; l=json.load(open('$out/latency_pdl$pdl.json')); t=json.load(open('$out/throughput_pdl$pdl.json'));
print('PAGODA_PDL=$pdl decode %.3f ms/token prefill %.1f ms throughput %.0f tok/s' % (l['decode_ms_per_step'], 1000*l['prefill_seconds'], t['output_tokens_per_second']))"
  done
fi
if [[ $what == ab ]]; then
  ckpt=/tmp/pagoda_ckpt/llama31_8b
  lat() {  # name, binary, env...: batch-1 decode and 1k prefill
    local name=$1 bin=$2; shift 2
    env "$@" .dev/bin/$bin bench latency $ckpt --device cuda --input-len 1024 --output-len 128 --num-iters 3 \
      --output-json "$out/ab_latency_$name.json" > /dev/null &&
      python3 -c "import json; l=json.load(open('$out/ab_latency_$name.json'));
print('$name: decode %.3f ms/token prefill %.1f ms' % (l['decode_ms_per_step'], 1000*l['prefill_seconds']))"
  }
  thr() {
    local name=$1 bin=$2; shift 2
    env "$@" .dev/bin/$bin bench throughput $ckpt --device cuda --input-len 128 --output-len 128 --num-prompts 1000 \
      --max-num-seqs 256 --max-num-batched-tokens 8192 --max-model-len 256 \
      --output-json "$out/ab_throughput_$name.json" > /dev/null &&
      python3 -c "import json; t=json.load(open('$out/ab_throughput_$name.json'));
print('$name: throughput %.0f output tok/s' % t['output_tokens_per_second'])"
  }
  for round in $(seq "${AB_ROUNDS:-2}"); do
    [ -x .dev/bin/pagoda_base ] && lat base_$round pagoda_base
    for bin in ${AB_BINARIES:-}; do lat "${bin}_$round" "$bin"; done
    for variant in ${AB_VARIANTS:-PAGODA_FUSED_GEMV=0}; do lat "${variant}_$round" pagoda ${variant//+/ }; done
    lat new_$round pagoda
  done
  if [[ ${AB_THROUGHPUT:-1} == 1 ]]; then
    [ -x .dev/bin/pagoda_base ] && thr base pagoda_base
    for bin in ${AB_BINARIES:-}; do thr "$bin" "$bin"; done
    thr new pagoda
  fi
fi
if [[ $what == async ]]; then
  # (after bench, which keeps the checkpoint) Async scheduling against synchronous steps, same
  # binary, and the base build (pack.sh's PAGODA_BASE_BIN) beside them: batch-1 decode, then
  # throughput at ASYNC_LENS max-model-len (the block tables a decode graph uploads grow with it).
  ckpt=/tmp/pagoda_ckpt/llama31_8b
  run() {  # name, binary, extra flags...
    local name=$1 bin=$2; shift 2
    [ -x .dev/bin/$bin ] || return 0
    .dev/bin/$bin bench latency $ckpt --device cuda --input-len 1024 --output-len 128 --num-iters 3 "$@" \
      --output-json "$out/async_latency_$name.json" > /dev/null 2> "$out/async_latency_$name.err" &&
      python3 -c "import json; l=json.load(open('$out/async_latency_$name.json'));
print('$name: decode %.3f ms/token prefill %.1f ms' % (l['decode_ms_per_step'], 1000*l['prefill_seconds']))" ||
      tail -3 "$out/async_latency_$name.err"
  }
  thr() {  # name, max-model-len, binary, extra flags...
    local name=$1 len=$2 bin=$3; shift 3
    [ -x .dev/bin/$bin ] || return 0
    .dev/bin/$bin bench throughput $ckpt --device cuda --input-len 128 --output-len 128 --num-prompts 1000 \
      --max-num-seqs 256 --max-num-batched-tokens 8192 --max-model-len $len "$@" \
      --output-json "$out/async_throughput_${name}_$len.json" > /dev/null 2> "$out/async_throughput_${name}_$len.err" &&
      python3 -c "import json; t=json.load(open('$out/async_throughput_${name}_$len.json'));
print('$name max-model-len $len: %.0f output tok/s' % t['output_tokens_per_second'], t.get('time_breakdown', ''))" ||
      tail -3 "$out/async_throughput_${name}_$len.err"
  }
  for round in 1 2; do
    run base_$round pagoda_base; run sync_$round pagoda --no-async-scheduling; run async_$round pagoda --async-scheduling
  done
  for len in ${ASYNC_LENS:-256 131072}; do
    thr base $len pagoda_base; thr sync $len pagoda --no-async-scheduling; thr async $len pagoda --async-scheduling
  done
fi
if [[ $what == mma ]]; then
  ckpt=/tmp/pagoda_ckpt/llama31_8b
  lat() {  # name, env...
    local name=$1; shift
    env "$@" .dev/bin/pagoda bench latency $ckpt --device cuda --input-len 1024 --output-len 128 --num-iters 3 \
      --output-json "$out/mma_latency_$name.json" > /dev/null 2> "$out/mma_latency_$name.err" &&
      python3 -c "import json; l=json.load(open('$out/mma_latency_$name.json'));
print('$name: decode %.3f ms/token prefill %.1f ms' % (l['decode_ms_per_step'], 1000*l['prefill_seconds']))" ||
      tail -3 "$out/mma_latency_$name.err"
  }
  for round in $(seq "${MMA_ROUNDS:-2}"); do
    lat "cuda_cores_$round" PAGODA_ATTENTION_MMA=0
    lat "tensor_cores_$round" PAGODA_ATTENTION_MMA=1
    for splits in ${MMA_SPLITS:-}; do lat "tensor_cores_splits${splits}_$round" PAGODA_MAX_ATTENTION_SPLITS=$splits; done
  done
  for mma in 0 1; do
    PAGODA_ATTENTION_MMA=$mma .dev/bin/pagoda bench throughput $ckpt --device cuda --input-len 128 --output-len 128 \
      --num-prompts 1000 --max-num-seqs 256 --max-num-batched-tokens 8192 --max-model-len 256 \
      --output-json "$out/mma${mma}_throughput.json" > /dev/null 2> "$out/mma${mma}_throughput.err" &&
      python3 -c "import json; t=json.load(open('$out/mma${mma}_throughput.json'));
print('PAGODA_ATTENTION_MMA=$mma: throughput %.0f output tok/s' % t['output_tokens_per_second'])" ||
      tail -3 "$out/mma${mma}_throughput.err"
  done
  for mma in 0 1; do
    PAGODA_ATTENTION_MMA=$mma .dev/bin/cuda_kernel_bench attention > "$out/chain_mma$mma.jsonl" 2>&1
    python3 -c "import json
for l in open('$out/chain_mma$mma.jsonl'):
    if l.startswith('{'):
        r=json.loads(l); print('mma $mma', r['stages'], 'splits', r['max_splits'], 'min_keys', r.get('min_split_keys'), 'fold', r['fold_combine'], '%.2f us/layer' % r['us_per_layer'])
    else: print('mma $mma', l.rstrip())"
  done
fi
if [[ $what == profile ]]; then
  ckpt=/tmp/pagoda_ckpt/llama31_8b
  [ -d $ckpt ] || PAGODA_KEEP_CKPT=1 PYTHONUNBUFFERED=1 python3 tools/cuda_vs_transformers.py --pagoda .dev/bin/pagoda \
    --out "$out" --models llama31_8b --bench --tokenizer .dev/tok > "$out/bench.log" 2>&1
  .dev/bin/pagoda_tests --gtest_filter='CudaSampling*' 2>&1 | tee "$out/cuda_sampling_tests.log" | tail -4
  PAGODA_PROFILE=1 .dev/bin/pagoda bench latency $ckpt --device cuda --input-len 1024 --output-len 2 --num-iters 1 \
    > "$out/prefill.json" 2> "$out/profile_prefill.txt"
  PAGODA_PROFILE=1 .dev/bin/pagoda bench latency $ckpt --device cuda --input-len 16 --output-len 256 --num-iters 1 \
    > "$out/decode.json" 2> "$out/profile_decode.txt"
  # Inside a graph the ops are not timed one by one: the eager run shows where a step goes.
  PAGODA_PROFILE=1 .dev/bin/pagoda bench latency $ckpt --device cuda --input-len 16 --output-len 256 --num-iters 1 \
    --enforce-eager > "$out/decode_eager.json" 2> "$out/profile_decode_eager.txt"
  PAGODA_PROFILE=1 .dev/bin/pagoda bench throughput $ckpt --device cuda --input-len 128 --output-len 128 \
    --num-prompts 1000 --max-num-seqs 256 --max-num-batched-tokens 8192 --max-model-len 256 \
    > "$out/throughput_profiled.json" 2> "$out/profile_throughput.txt"
  head -30 "$out"/profile_*.txt
fi
if [[ $what == ncu ]]; then
  # (after bench, which keeps the checkpoint) Each kernel of one decode step (the 100th graph
  # replay: in the measured pass) timed alone by Nsight Compute; NCU_BATCH sequences (1) after
  # NCU_INPUT-token prompts (1,024; the step attends over ~1,060 keys).
  ckpt=/tmp/pagoda_ckpt/llama31_8b
  ncu=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu /usr/local/cuda/bin/ncu 2>/dev/null | head -1)
  PAGODA_PROFILE_REPLAY=100 timeout 240 "$ncu" --profile-from-start off --graph-profiling node --clock-control none \
    --cache-control none --metrics gpu__time_duration.sum --csv --page raw --print-units base \
    .dev/bin/pagoda bench latency $ckpt --device cuda --input-len "${NCU_INPUT:-1024}" --output-len 64 --num-iters 1 \
    --batch-size "${NCU_BATCH:-1}" --max-num-seqs "${NCU_BATCH:-1}" > "$out/ncu_step.csv" 2> "$out/ncu_step.err"
  tail -3 "$out/ncu_step.err"
  python3 tools/device/ncu_step.py "$out/ncu_step.csv" | tee "$out/ncu_step.txt" | head -40
fi
if [[ $what == verify ]]; then
  opt_in=${VERIFY_OPT_IN:-PAGODA_FOLD_COMBINE=1 PAGODA_L2_PREFETCH=60}
  timeout 90 "$0" ops > "$out/ops_console.log" 2>&1
  grep -E "^\[  (FAILED|PASSED) |Failure" "$out/cuda_tests.log"
  sanitizer=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
  timeout 60 "$sanitizer" --print-limit 3 .dev/bin/pagoda_tests \
    --gtest_filter='CudaGraphMemory*:CudaBackend.Prefetch*:CudaBackend.PagedAttentionOnBf16*' > "$out/sanitizer.log" 2>&1
  echo "compute-sanitizer: $(grep -E 'ERROR SUMMARY' "$out/sanitizer.log" | tail -1)"
  timeout 240 "$0" bench > "$out/bench_console.log" 2>&1
  tail -8 "$out/bench_console.log"
  AB_ROUNDS=2 AB_THROUGHPUT=0 AB_VARIANTS="$opt_in ${opt_in// /+}" timeout 150 "$0" ab 2>&1 | grep decode
  env $opt_in timeout 120 "$0" engine > "$out/engine_console.log" 2>&1
  grep -E "^\[  (FAILED|PASSED) |Failure" "$out/engine_gpu_tests.log" "$out/engine_gpu_invariant.log"
  tail -3 "$out/greedy.log"
  env $opt_in PAGODA_PROFILE=1 timeout 40 .dev/bin/pagoda bench latency /tmp/pagoda_ckpt/llama31_8b --device cuda \
    --input-len 16 --output-len 256 --num-iters 1 --enforce-eager > "$out/decode_eager_opt_in.json" \
    2> "$out/profile_decode_eager_opt_in.txt"
  head -14 "$out/profile_decode_eager_opt_in.txt"
fi
