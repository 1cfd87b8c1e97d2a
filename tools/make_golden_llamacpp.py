#!/usr/bin/env python3
"""Greedy-decoding reference data from llama.cpp for pagoda's end-to-end tests.

Reference: llama-cpp-python 0.3.36 (bundles ggml-org/llama.cpp@0c1e57098), built from
source for this CPU (GGML_NATIVE=ON, AVX-512), run on the CPU with 2 threads.

For each model and each of 40 prompts (8 original cases, then 32 more) it
  * tokenizes the prompt as llama.cpp does for a completion: add_special=True (so BOS is
    prepended exactly when the GGUF's tokenizer.ggml.add_bos_token says so),
    parse_special=False for plain text, True for the chat-formatted prompt;
  * decodes 64 tokens greedily with its own loop over the C API: llama_decode, then
    argmax over the last position's logits. No sampler chain at all (so: temperature 0,
    top_k 1, no repeat penalty, nothing else), and EOS does not stop the loop;
  * records, at each step, the logit margin between the top-1 and the runner-up, so a
    test can tell a real divergence from a near-tie (quantized matmuls differ in the
    last bits between implementations).

Output: tests/data/llamacpp/greedy_<model>.json (see tests/data/llamacpp/README.md).

Command (from the repo root):
    /opt/llama-venv/bin/python tools/make_golden_llamacpp.py
Models come from $PAGODA_CACHE or ~/.cache/pagoda. Chat templates: SmolLM2's is the
GGUF's tokenizer.chat_template; the gemma-3 GGUF carries none, so its template is read
from /work/shared/tokenizers/gemma3/tokenizer_config.json (override: --gemma-template).
Both are rendered with jinja2 (a dependency of llama-cpp-python).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import jinja2

sys.path.insert(0, str(Path(__file__).resolve().parent))
import llamacpp_ref as R  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
OUT_DIR = REPO / "tests" / "data" / "llamacpp"

MODELS = {
    "smollm2": "SmolLM2-135M-Instruct.Q4_1.gguf",
    "gemma3": "gemma-3-270m-q4_k_m.gguf",
}
DEFAULT_GEMMA_TEMPLATE = Path("/work/shared/tokenizers/gemma3/tokenizer_config.json")

N_OUT = 64
N_CTX = 512
N_THREADS = 2

PLAIN_PROMPTS = [
    "The capital of France is",
    "Once upon a time, in a small village by the sea,",
    ("The history of the printing press begins in the fifteenth century. Before it, books "
     "were copied by hand, which made them rare and expensive. Within fifty years of its "
     "invention, millions of books had been printed across Europe, and"),
    "def fibonacci(n):",
    "#include <stdio.h>\n\nint main(void) {\n    int i;\n    for (i = 0; i < 10; i++) {\n",
    "La capitale de la France est une ville célèbre pour",
    "日本の首都は東京です。東京は",
]
CHAT_MESSAGES = [{"role": "user",
                  "content": "What is the capital of France? Answer in one sentence."}]
CHAT_INDEX = 5  # where the chat prompt sits in the case list

# 32 more cases after the original 8 (which stay first and unchanged, so older results
# remain comparable): plain continuations (questions, code, lists, prose, other languages)
# and chat conversations rendered with the model's template.
EXTRA_PLAIN_PROMPTS = [
    "Q: What is the boiling point of water at sea level?\nA:",
    "1, 2, 3, 4, 5, 6, 7, 8,",
    "The days of the week are Monday, Tuesday,",
    "import numpy as np\n\ndef mean_squared_error(y_true, y_pred):\n",
    "Here is a list of fruits:\n1. Apple\n2. Banana\n3.",
    "The quick brown fox jumps over the lazy dog. The quick brown fox",
    "Der schnellste Weg von München nach Berlin ist",
    "El sol sale por el este y se pone por",
    "SELECT name, age FROM users WHERE",
    "<html>\n<head>\n<title>My Page</title>\n</head>\n<body>\n",
    "Photosynthesis is the process by which plants",
    "In 1969, Neil Armstrong became the first person to",
    "The dragon opened one golden eye and said,",
    "A B C D E F G H I J",
    ("class Stack:\n    def __init__(self):\n        self.items = []\n\n"
     "    def push(self, item):\n"),
    "Water is made of hydrogen and oxygen. Its chemical formula is",
    "Москва — столица России. Это город",
    "To make a good cup of tea, first",
    "fn main() {\n    let v = vec![1, 2, 3];\n",
    "The three primary colors are",
]
EXTRA_CHATS = [
    [{"role": "user", "content": "List three animals that live in the ocean."}],
    [{"role": "user", "content": "Write a Python function that reverses a string."}],
    [{"role": "user", "content": "Tell me a short story about a robot who learns to paint."}],
    [{"role": "user", "content": "What is 12 times 12?"}],
    [{"role": "user", "content": "Translate 'good morning' into Spanish."}],
    [{"role": "user", "content": "Why is the sky blue?"}],
    [{"role": "user", "content": "Write a haiku about autumn."}],
    [{"role": "user", "content": "Wie spät ist es in Tokio, wenn es in Berlin Mittag ist?"}],
    [{"role": "user", "content": "Explain what a linked list is in two sentences."}],
    [{"role": "user", "content": "Name the planets of the solar system in order."}],
    [{"role": "user", "content": "Hi!"},
     {"role": "assistant", "content": "Hello! How can I help you today?"},
     {"role": "user", "content": "What is the largest mammal?"}],
    [{"role": "user", "content": "Write a JavaScript function that adds two numbers."}],
]


def render_chat(template: str, messages: list[dict], bos_token: str, eos_token: str,
                add_bos: bool) -> str:
    env = jinja2.Environment(trim_blocks=True, lstrip_blocks=True)

    def raise_exception(msg):
        raise jinja2.TemplateError(msg)

    env.globals["raise_exception"] = raise_exception
    text = env.from_string(template).render(messages=messages, add_generation_prompt=True,
                                            bos_token=bos_token, eos_token=eos_token)
    # When the tokenizer adds BOS itself (add_bos_token), llama.cpp's chat code
    # (common/chat.cpp) drops a template's leading BOS text so the prompt does not start
    # with two BOS tokens. Without add_bos the text stays (SmolLM2's BOS is <|im_start|>).
    return R.strip_leading(text, bos_token) if add_bos else text


def chat_template_for(key: str, model: R.Model, gemma_template: Path) -> str:
    tmpl = model.meta("tokenizer.chat_template")
    if tmpl:
        return tmpl
    if key != "gemma3":
        raise SystemExit(f"{model.path.name} has no chat template")
    if not gemma_template.is_file():
        raise SystemExit(f"gemma3 chat template not found at {gemma_template} (--gemma-template)")
    return json.loads(gemma_template.read_text())["chat_template"]


def token_text(model: R.Model, tid: int) -> str:
    return model.detokenize([tid], unparse_special=True).decode("utf-8", errors="replace")


def greedy(ctx: R.Context, prompt_ids: list[int]) -> tuple[list[int], list[float]]:
    ctx.clear()
    ctx.decode(prompt_ids)
    out, margins = [], []
    for _ in range(N_OUT):
        tid, margin = R.greedy_pick(ctx.last_logits())
        out.append(tid)
        margins.append(round(margin, 5))
        ctx.decode([tid])
    return out, margins


def run_model(key: str, filename: str, gemma_template: Path) -> dict:
    path = R.model_dir() / filename
    model = R.Model(path)
    bos_id = R.L.llama_vocab_bos(model.vocab)
    eos_id = R.L.llama_vocab_eos(model.vocab)
    bos_text, eos_text = token_text(model, bos_id), token_text(model, eos_id)
    template = chat_template_for(key, model, gemma_template)

    def chat(messages: list[dict]) -> tuple[str, bool]:
        return render_chat(template, messages, bos_text, eos_text, model.add_bos), True

    prompts = [(p, False) for p in PLAIN_PROMPTS]
    prompts.insert(CHAT_INDEX, chat(CHAT_MESSAGES))
    prompts += [(p, False) for p in EXTRA_PLAIN_PROMPTS]
    prompts += [chat(m) for m in EXTRA_CHATS]

    ctx = model.new_context(N_CTX, N_THREADS)
    cases = []
    for text, special in prompts:
        ids = model.tokenize(text, add_special=True, parse_special=special)
        out, margins = greedy(ctx, ids)
        cases.append({
            "prompt": text,
            "parse_special": special,
            "prompt_ids": ids,
            "output_ids": out,
            "output_text": model.detokenize(out).decode("utf-8", errors="replace"),
            "top2_margins": margins,
        })
        print(f"  {key}: {len(ids):3d} prompt ids, min margin {min(margins):.4f}: "
              f"{cases[-1]['output_text'][:60]!r}", file=sys.stderr)
    result = {
        "reference": R.reference_string(),
        "command": "/opt/llama-venv/bin/python tools/make_golden_llamacpp.py",
        "system_info": R.system_info(),
        "model_file": filename,
        "model_sha256": R.sha256_file(path),
        "add_bos": model.add_bos,
        "bos_id": bos_id,
        "eos_id": eos_id,
        "decoding": {"mode": "greedy argmax over llama_get_logits_ith(-1), ties to lowest id",
                     "n_out": N_OUT, "stop_at_eos": False, "samplers": "none",
                     "context": ctx.params},
        "output_text_mode": ("llama_detokenize(output_ids, remove_special=false, "
                             "unparse_special=false), invalid UTF-8 replaced by U+FFFD"),
        "margin_note": "top2_margins[i] = logit(top1) - logit(top2) at step i (raw logits)",
        "cases": cases,
    }
    ctx.close()
    model.close()
    return result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--models", nargs="*", default=list(MODELS), choices=list(MODELS))
    ap.add_argument("--gemma-template", type=Path, default=DEFAULT_GEMMA_TEMPLATE)
    ap.add_argument("--out-dir", type=Path, default=OUT_DIR)
    args = ap.parse_args()
    args.out_dir.mkdir(parents=True, exist_ok=True)
    print(R.reference_string(), file=sys.stderr)
    for key in args.models:
        data = run_model(key, MODELS[key], args.gemma_template)
        out = args.out_dir / f"greedy_{key}.json"
        out.write_text(json.dumps(data, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
        print(f"wrote {out}", file=sys.stderr)


if __name__ == "__main__":
    main()
