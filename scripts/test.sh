#!/usr/bin/env bash
# The README's second command: set up, then run the whole test suite: the C++ tests in a
# Release build and in an ASan+UBSan build, and the Python tests against live references.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
jobs=$(nproc)

echo "== C++ tests (Release)"
ctest --test-dir build --output-on-failure -j "$jobs"

echo "== C++ tests (ASan + UBSan)"
# Without the CUDA backend: the sanitizers do not see into GPU code, and this keeps the
# CPU-only build (-DPAGODA_CUDA=OFF, for machines without nvcc) building and tested.
cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPAGODA_SANITIZE=ON -DPAGODA_CUDA=OFF >/dev/null
cmake --build build-asan
# The HTTP socket tests (timers, 2,000 connections) have not yet been run under the
# sanitizers on this 2-core machine; they run in the Release pass above. Drop the -E once
# they have passed here.
ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
  PAGODA_SKIP_SLOW=1 ctest --test-dir build-asan --output-on-failure -j "$jobs" -E '^Http(Server|Stream)\.'


echo "== Python tests"
.venv/bin/python -m pytest -q tests/python
