#!/usr/bin/env bash
# Fills .dev/ (git-ignored) with what tools/device/run.sh needs on the device machine: the
# Release binaries (gzipped), the shared libraries its image may lack (ICU, PCRE2), and Llama
# 3's tokenizer from ../shared for the throughput bench. Run from the repository root after
# building build/.
set -euo pipefail
rm -rf .dev && mkdir -p .dev/bin .dev/tok
gzip -c build/bin/pagoda > .dev/bin/pagoda.gz
gzip -c build/bin/pagoda_tests > .dev/bin/pagoda_tests.gz
gzip -c build/bin/cuda_kernel_bench > .dev/bin/cuda_kernel_bench.gz
# run.sh ab compares against this binary (the same build of an earlier commit).
if [ -n "${PAGODA_BASE_BIN:-}" ]; then gzip -c "$PAGODA_BASE_BIN" > .dev/bin/pagoda_base.gz; fi
libs=$(ldd build/bin/pagoda | awk '/libicu|libpcre2/ {print $3}')
tar -czhf .dev/libs.tar.gz -C / $(for l in $libs; do echo "${l#/}"; done) --transform 's|.*/||'
if [ -f ../shared/tokenizers/llama3/tokenizer.json.zst ]; then
  zstd -q -d -f ../shared/tokenizers/llama3/tokenizer.json.zst -o .dev/tok/tokenizer.json
  cp ../shared/tokenizers/llama3/tokenizer_config.json .dev/tok/
fi
du -sh .dev
