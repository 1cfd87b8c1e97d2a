#!/usr/bin/env bash
# Sets up everything pagoda needs on a fresh Debian machine and builds it (Release) into
# build/. Safe to rerun. Installs Debian -dev packages with apt-get, light test
# references into .venv (pip), and caches the models (scripts/fetch_models.sh).
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(build-essential cmake ninja-build pkg-config git unzip
  ccache libgtest-dev nlohmann-json3-dev libboost1.81-dev libpcre2-dev libicu-dev zstd clang-14 libclang-rt-14-dev python3-venv)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing: ${missing[*]}"
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

if [ ! -x .venv/bin/python ]; then
  python3 -m venv .venv
fi
# Reinstall whenever the requirements change (the stamp records what was installed).
want="$(sha256sum tools/requirements-test.txt | cut -d' ' -f1)"
if [ "$(cat .venv/.requirements.sha256 2>/dev/null)" != "$want" ]; then
  .venv/bin/pip install -q --upgrade pip
  .venv/bin/pip install -q -r tools/requirements-test.txt
  echo "$want" > .venv/.requirements.sha256
fi

PYTHON=.venv/bin/python scripts/fetch_models.sh

cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build
