#!/usr/bin/env bash
# Fills .dev/ (git-ignored) with what tools/device/run.sh needs on the device machine: the
# Release binaries (gzipped), the shared libraries its image may lack (ICU, PCRE2), and Llama
# 3's tokenizer from ../shared for the throughput bench. Run from the repository root after
# building build/.
set -euo pipefail
rm -rf .dev && mkdir -p .dev/bin .dev/tok
# Stripped and gzipped: a call carries at most 64 MiB, the working tree included.
pack() { strip -o .dev/bin/"$2" "$1" && gzip -f .dev/bin/"$2"; }
pack build/bin/pagoda pagoda
pack build/bin/pagoda_tests pagoda_tests
pack build/bin/cuda_kernel_bench cuda_kernel_bench
# run.sh ab compares against this binary (the same build of an earlier commit).
if [ -n "${PAGODA_BASE_BIN:-}" ]; then pack "$PAGODA_BASE_BIN" pagoda_base; fi
# run.sh attention sweeps this kernel bench (an earlier build's) beside the current one.
if [ -n "${PAGODA_BASE_KBENCH:-}" ]; then pack "$PAGODA_BASE_KBENCH" kbench_base; fi
libs=$(ldd build/bin/pagoda | awk '/libicu|libpcre2/ {print $3}')
tar -czhf .dev/libs.tar.gz -C / $(for l in $libs; do echo "${l#/}"; done) --transform 's|.*/||'
if [ -f ../shared/tokenizers/llama3/tokenizer.json.zst ]; then
  zstd -q -d -f ../shared/tokenizers/llama3/tokenizer.json.zst -o .dev/tok/tokenizer.json
  gzip -f .dev/tok/tokenizer.json
  cp ../shared/tokenizers/llama3/tokenizer_config.json .dev/tok/
fi
du -sh .dev
