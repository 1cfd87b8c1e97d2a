#!/usr/bin/env python3
"""Golden pre-tokenizer splits from Hugging Face `tokenizers`, for the regexes pagoda
runs per tokenizer.ggml.pre name (src/io/pretokenizer.cpp).

Reference: tokenizers 0.23.3 (in /opt/ref-venv). The pre-tokenizers are the real ones:
  gpt-2   ByteLevel(add_prefix_space=False, use_regex=True) (GPT-2's own regex)
  smollm  Sequence[Digits(individual_digits=True), ByteLevel(...)] (SmolLM2's tokenizer.json)
  llama3  the pre_tokenizer of Llama 3's tokenizer.json (/work/shared/tokenizers/llama3)
  qwen2   the pre_tokenizer of Qwen 3's tokenizer.json (/work/shared/tokenizers/qwen3),
          which GGUF converters name "qwen2"
over the first 400 strings of the corpus. Each line: {"pre", "text", "pieces"}, the
pieces being the substrings of text that the pre-tokenizer cuts it into.

Command (from the repo root):
    /opt/ref-venv/bin/python tools/make_pretokenizer_golden_hf.py [--corpus tools/corpus/corpus.jsonl]
"""

import argparse
import json
import subprocess
import tempfile
from pathlib import Path

from tokenizers import Tokenizer, pre_tokenizers


def from_shared(name):
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "tokenizer.json"
        subprocess.run(["zstd", "-d", "-q", f"/work/shared/tokenizers/{name}/tokenizer.json.zst",
                        "-o", str(path)], check=True)
        return Tokenizer.from_file(str(path)).pre_tokenizer


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", default="tools/corpus/corpus.jsonl")
    ap.add_argument("--out", default="tests/data/tokenizer/pretokenizer_hf.jsonl")
    args = ap.parse_args()
    texts = [json.loads(line)["text"] for line in open(args.corpus, encoding="utf-8")][:400]
    byte_level = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    pres = {
        "gpt-2": byte_level,
        "smollm": pre_tokenizers.Sequence([pre_tokenizers.Digits(individual_digits=True),
                                           byte_level]),
        "llama3": from_shared("llama3"),
        "qwen2": from_shared("qwen3"),
    }
    with open(args.out, "w", encoding="utf-8") as f:
        for name, pre in pres.items():
            for text in texts:
                pieces = [text[a:b] for _, (a, b) in pre.pre_tokenize_str(text)]
                f.write(json.dumps({"pre": name, "text": text, "pieces": pieces},
                                   ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
