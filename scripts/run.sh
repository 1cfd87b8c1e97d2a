#!/usr/bin/env bash
# The README's first command: set up, then run pagoda's main job on the default model.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
prompt="${1:-The capital of France is}"
echo "pagoda generate --prompt \"$prompt\" --max-tokens 48"
build/bin/pagoda generate --prompt "$prompt" --max-tokens 48
