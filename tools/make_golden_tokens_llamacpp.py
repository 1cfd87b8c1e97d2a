#!/usr/bin/env python3
"""Tokenizer reference data from llama.cpp: tests/data/tokenizer/<model>_llamacpp.jsonl.

Reference: llama-cpp-python 0.3.36 (bundles ggml-org/llama.cpp@0c1e57098); the model is
loaded vocab-only and each corpus string is tokenized with
    llama_tokenize(vocab, text, add_special=False, parse_special=False)
i.e. no BOS/EOS and special-token text treated as ordinary text.

Input: tools/corpus/corpus.jsonl (made by tools/corpus/make_corpus.py; valid UTF-8 only:
invalid UTF-8 is excluded from the corpus, since llama.cpp's handling of it is not a
contract pagoda needs to copy). Output lines: {"text": ..., "ids": [...]}, in corpus
order, every line exactly one such object. Provenance goes beside it in
<model>_llamacpp.meta.json: {"reference", "command", "model_file", "model_sha256",
"add_special", "parse_special", "corpus", "corpus_sha256", "count"}.
Strings longer than --max-chars (default 600, as the corpus) are truncated to keep each
file small.

Command (from the repo root):
    /opt/llama-venv/bin/python tools/make_golden_tokens_llamacpp.py
Models come from $PAGODA_CACHE or ~/.cache/pagoda.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent / "corpus"))
import llamacpp_ref as R  # noqa: E402
from make_corpus import json_line  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
CORPUS = REPO / "tools" / "corpus" / "corpus.jsonl"
OUT_DIR = REPO / "tests" / "data" / "tokenizer"
MODELS = {
    "smollm2": "SmolLM2-135M-Instruct.Q4_1.gguf",
    "gemma3": "gemma-3-270m-q4_k_m.gguf",
}


def read_corpus(path: Path) -> list[str]:
    # split on "\n" only: str.splitlines() would also split on characters inside strings
    lines = path.read_text(encoding="utf-8").split("\n")
    return [json.loads(line)["text"] for line in lines if line]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--models", nargs="*", default=list(MODELS), choices=list(MODELS))
    ap.add_argument("--corpus", type=Path, default=CORPUS)
    ap.add_argument("--max-chars", type=int, default=600)
    ap.add_argument("--out-dir", type=Path, default=OUT_DIR)
    args = ap.parse_args()

    texts = [t[: args.max_chars] for t in read_corpus(args.corpus)]
    corpus_sha = hashlib.sha256(args.corpus.read_bytes()).hexdigest()
    args.out_dir.mkdir(parents=True, exist_ok=True)
    for key in args.models:
        filename = MODELS[key]
        path = R.model_dir() / filename
        model = R.Model(path, vocab_only=True)
        out = args.out_dir / f"{key}_llamacpp.jsonl"
        header = {"reference": R.reference_string(),
                  "command": "/opt/llama-venv/bin/python tools/make_golden_tokens_llamacpp.py",
                  "model_file": filename, "model_sha256": R.sha256_file(path),
                  "add_special": False, "parse_special": False,
                  "corpus": "tools/corpus/corpus.jsonl", "corpus_sha256": corpus_sha,
                  "count": len(texts)}
        n_ids = 0
        with open(out, "w", encoding="utf-8", newline="\n") as f:
            for text in texts:
                ids = model.tokenize(text, add_special=False, parse_special=False)
                n_ids += len(ids)
                f.write(json_line({"text": text, "ids": ids}) + "\n")
        model.close()
        header["total_ids"] = n_ids
        (args.out_dir / f"{key}_llamacpp.meta.json").write_text(
            json.dumps(header, indent=1) + "\n", encoding="utf-8")
        print(f"wrote {out}: {len(texts)} strings, {n_ids} ids, "
              f"{out.stat().st_size / 1e6:.2f} MB", file=sys.stderr)


if __name__ == "__main__":
    main()
