#!/usr/bin/env python3
"""Tokenizer reference data from llama.cpp: tests/data/tokenizer/<model>_llamacpp_diff.jsonl.

Reference: llama-cpp-python 0.3.36 (bundles ggml-org/llama.cpp@0c1e57098); the model is
loaded vocab-only and each corpus string is tokenized with
    llama_tokenize(vocab, text, add_special=False, parse_special=False)
i.e. no BOS/EOS and special-token text treated as ordinary text.

Input: tools/corpus/corpus.jsonl (made by tools/corpus/make_corpus.py; valid UTF-8 only:
invalid UTF-8 is excluded from the corpus, since llama.cpp's handling of it is not a
contract pagoda needs to copy), and the Hugging Face reference ids of the same corpus,
tests/data/tokenizer/<model>_hf.jsonl.zst (tools/make_tokenizer_golden_hf.py; run it
first). The two references agree on almost every string, so only the difference is
stored: <model>_llamacpp_diff.jsonl has one line {"i": corpus line index, "ids": [...]}
for each string whose llama.cpp ids differ from the Hugging Face ones. The full llama.cpp
id list is the HF one with those lines replaced; its sha256 (of the text with one JSON
array per line, as in the uncompressed HF file) is in <model>_llamacpp.meta.json with the
provenance: {"reference", "command", "model_file", "model_sha256", "add_special",
"parse_special", "corpus", "corpus_sha256", "count", "total_ids", "ids_sha256",
"hf_ids_sha256", "differing"}.

Command (from the repo root):
    OMP_WAIT_POLICY=PASSIVE /opt/llama-venv/bin/python tools/make_golden_tokens_llamacpp.py
Models come from $PAGODA_CACHE or ~/.cache/pagoda.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent / "corpus"))
import llamacpp_ref as R  # noqa: E402

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


def ids_line(ids) -> str:
    return json.dumps(ids, separators=(",", ":")) + "\n"


def read_hf_ids(path: Path) -> list[list[int]]:
    text = subprocess.run(["zstd", "-dc", str(path)], check=True, capture_output=True).stdout
    return [json.loads(line) for line in text.decode().split("\n") if line]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--models", nargs="*", default=list(MODELS), choices=list(MODELS))
    ap.add_argument("--corpus", type=Path, default=CORPUS)
    ap.add_argument("--out-dir", type=Path, default=OUT_DIR)
    args = ap.parse_args()

    texts = read_corpus(args.corpus)
    corpus_sha = hashlib.sha256(args.corpus.read_bytes()).hexdigest()
    args.out_dir.mkdir(parents=True, exist_ok=True)
    for key in args.models:
        filename = MODELS[key]
        hf_path = args.out_dir / f"{key}_hf.jsonl.zst"
        hf_ids = read_hf_ids(hf_path)
        hf_meta = json.loads((args.out_dir / f"{key}_hf_meta.json").read_text())
        if hf_meta["corpus_sha256"] != corpus_sha or len(hf_ids) != len(texts):
            sys.exit(f"{hf_path} is not of this corpus: run tools/make_tokenizer_golden_hf.py")
        path = R.model_dir() / filename
        model = R.Model(path, vocab_only=True)
        out = args.out_dir / f"{key}_llamacpp_diff.jsonl"
        full = hashlib.sha256()
        n_ids = differing = 0
        with open(out, "w", encoding="utf-8", newline="\n") as f:
            for i, text in enumerate(texts):
                ids = model.tokenize(text, add_special=False, parse_special=False)
                n_ids += len(ids)
                full.update(ids_line(ids).encode())
                if ids != hf_ids[i]:
                    differing += 1
                    f.write(json.dumps({"i": i, "ids": ids}, separators=(",", ":")) + "\n")
        model.close()
        header = {"reference": R.reference_string(),
                  "command": "OMP_WAIT_POLICY=PASSIVE /opt/llama-venv/bin/python tools/make_golden_tokens_llamacpp.py",
                  "model_file": filename, "model_sha256": R.sha256_file(path),
                  "add_special": False, "parse_special": False,
                  "corpus": "tools/corpus/corpus.jsonl", "corpus_sha256": corpus_sha,
                  "count": len(texts), "total_ids": n_ids, "ids_sha256": full.hexdigest(),
                  "hf_ids_sha256": hf_meta["ids_sha256"], "differing": differing}
        (args.out_dir / f"{key}_llamacpp.meta.json").write_text(
            json.dumps(header, indent=1) + "\n", encoding="utf-8")
        print(f"wrote {out}: {len(texts)} strings, {n_ids} ids, {differing} differ from "
              f"Hugging Face", file=sys.stderr)


if __name__ == "__main__":
    main()
