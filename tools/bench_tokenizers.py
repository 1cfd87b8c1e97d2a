#!/usr/bin/env python3
"""Encode throughput of pagoda's tokenizers against PyPI `tokenizers`, one thread each,
over tools/corpus/corpus.jsonl, for the tokenizer.json files of the shared folder.

For each tokenizer (llama3, qwen3, gemma3 and the other three by default):
  tokenizers encode        Tokenizer.encode(text, add_special_tokens=False), one string at
                           a time (TOKENIZERS_PARALLELISM=false, RAYON_NUM_THREADS=1);
  tokenizers encode_batch  encode_batch(all strings) with RAYON_NUM_THREADS=1, i.e. without
                           the per-call Python overhead;
  pagoda                   `pagoda bench tokenize DIR --corpus ... --repeat N`: every string
                           through Tokenizer::encode on one thread.
Special-token text stays plain text in all three (encode_special_tokens=True; pagoda's
parse_special=false), so all of them produce the same ids (tests/python/test_hf_tokenizers.py
checks that), and the script checks that the token totals agree. Each figure is the best
of --repeat timed passes after one untimed pass; MB/s is 10^6 bytes of UTF-8 input per
second. Prints a table (and --output-json writes the numbers).

Command (from the repo root, after a Release build):
    .venv/bin/python tools/bench_tokenizers.py [--pagoda build/bin/pagoda] [--repeat 5]
        [--names llama3 qwen3 gemma3] [--output-json FILE]
"""

from __future__ import annotations

import os

# Before `tokenizers` is imported: its Rust thread pool reads these once.
os.environ["TOKENIZERS_PARALLELISM"] = "false"
os.environ["RAYON_NUM_THREADS"] = "1"

import argparse  # noqa: E402
import datetime  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import shutil  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import tokenizers  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
NAMES = ["llama3", "qwen3", "gemma3", "llama2", "deepseek_v3", "gptoss"]


def shared_dir() -> Path:
    base = os.environ.get("PAGODA_SHARED")
    if base:
        return Path(base) / "tokenizers"
    for candidate in (ROOT.parent / "shared", ROOT.parent.parent / "shared"):
        if (candidate / "tokenizers").is_dir():
            return candidate / "tokenizers"
    sys.exit("no shared tokenizers folder (set PAGODA_SHARED)")


def read_corpus(path: Path) -> list[str]:
    lines = path.read_text(encoding="utf-8").split("\n")  # "\n" only: texts hold other breaks
    return [json.loads(line)["text"] for line in lines if line]


def best_of(repeat: int, run) -> tuple[float, int]:
    tokens = run()  # untimed pass
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        n = run()
        best = min(best, time.perf_counter() - start)
        assert n == tokens
    return best, tokens


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--pagoda", default=str(ROOT / "build" / "bin" / "pagoda"))
    ap.add_argument("--corpus", type=Path, default=ROOT / "tools" / "corpus" / "corpus.jsonl")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--names", nargs="*", default=NAMES, choices=NAMES)
    ap.add_argument("--no-batch", action="store_true", help="skip encode_batch")
    ap.add_argument("--output-json", type=Path)
    args = ap.parse_args()

    texts = read_corpus(args.corpus)
    n_bytes = sum(len(t.encode("utf-8")) for t in texts)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.names:
            src = shared_dir() / name
            out = Path(tmp) / name
            out.mkdir()
            subprocess.run(["zstd", "-dqf", str(src / "tokenizer.json.zst"), "-o",
                            str(out / "tokenizer.json")], check=True)
            if (src / "tokenizer_config.json").exists():
                shutil.copy(src / "tokenizer_config.json", out / "tokenizer_config.json")
            ref = tokenizers.Tokenizer.from_file(str(out / "tokenizer.json"))
            ref.encode_special_tokens = True  # special-token text stays text, as in pagoda

            def one_at_a_time():
                return sum(len(ref.encode(t, add_special_tokens=False).ids) for t in texts)

            def batch():
                return sum(len(e.ids) for e in ref.encode_batch(texts, add_special_tokens=False))

            hf_s, hf_tokens = best_of(args.repeat, one_at_a_time)
            batch_s = None if args.no_batch else best_of(args.repeat, batch)[0]
            r = subprocess.run([args.pagoda, "bench", "tokenize", str(out), "--corpus", str(args.corpus),
                                "--repeat", str(args.repeat)], check=True, capture_output=True, text=True)
            pg = json.loads(r.stdout)
            if pg["tokens"] != hf_tokens:
                sys.exit(f"{name}: pagoda made {pg['tokens']} tokens, tokenizers {hf_tokens}")
            row = {"tokenizer": name, "strings": len(texts), "bytes": n_bytes, "tokens": hf_tokens,
                   "tokenizers_encode_mb_per_s": n_bytes / hf_s / 1e6,
                   "tokenizers_encode_batch_mb_per_s": None if batch_s is None else n_bytes / batch_s / 1e6,
                   "pagoda_mb_per_s": pg["mb_per_s"]}
            row["ratio"] = row["pagoda_mb_per_s"] / row["tokenizers_encode_mb_per_s"]
            rows.append(row)
            print(f"{name}: done", file=sys.stderr)

    when = datetime.date.today().isoformat()
    print(f"{len(texts)} strings, {n_bytes / 1e6:.2f} MB; tokenizers {tokenizers.__version__}; "
          f"one thread; best of {args.repeat}; {when}; {platform.processor() or platform.machine()}")
    print("| tokenizer | tokens | tokenizers encode MB/s | tokenizers encode_batch MB/s | pagoda MB/s | pagoda / encode |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for r in rows:
        b = "-" if r["tokenizers_encode_batch_mb_per_s"] is None else f"{r['tokenizers_encode_batch_mb_per_s']:.2f}"
        print(f"| {r['tokenizer']} | {r['tokens']:,} | {r['tokenizers_encode_mb_per_s']:.2f} | {b} | "
              f"{r['pagoda_mb_per_s']:.2f} | {r['ratio']:.1f}x |")
    if args.output_json:
        args.output_json.write_text(json.dumps({"date": when, "tokenizers": tokenizers.__version__,
                                                "repeat": args.repeat, "rows": rows}, indent=1) + "\n")


if __name__ == "__main__":
    main()
