#!/usr/bin/env bash
# The README's first command: set up, then serve the default model (SmolLM2-135M-Instruct)
# through the OpenAI-compatible API, as `vllm serve` would. Ctrl-C stops it.
#   scripts/run.sh [--port N] [other pagoda serve flags]
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
port=8000
port_flag=(--port "$port")
args=("$@")
for ((i = 0; i < ${#args[@]}; i++)); do
  if [[ "${args[i]}" == "--port" && $((i + 1)) -lt ${#args[@]} ]]; then
    port="${args[i + 1]}"
    port_flag=()
  fi
done
cat <<MSG

Starting: build/bin/pagoda serve --served-model-name SmolLM2-135M-Instruct ${port_flag[*]} $*
Once it prints its address, query it from another shell:

  curl http://127.0.0.1:$port/v1/chat/completions -H 'Content-Type: application/json' \\
    -d '{"model": "SmolLM2-135M-Instruct", "messages": [{"role": "user", "content": "Name three colors."}], "max_tokens": 48}'

  .venv/bin/python - <<'PY'
  from openai import OpenAI
  client = OpenAI(base_url="http://127.0.0.1:$port/v1", api_key="unused")
  r = client.chat.completions.create(model="SmolLM2-135M-Instruct", max_tokens=48,
                                     messages=[{"role": "user", "content": "Name three colors."}])
  print(r.choices[0].message.content)
  PY

MSG
exec build/bin/pagoda serve --served-model-name SmolLM2-135M-Instruct "${port_flag[@]}" "$@"
