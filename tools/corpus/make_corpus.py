#!/usr/bin/env python3
"""Builds tools/corpus/corpus.jsonl: 13,000 strings for tokenizer reference tests and the
tokenizer benchmark (tools/corpus/README.md describes it).

Deterministic (fixed seed, no input but seeds.py and seeds_extra.py): the same Python
version gives the same file byte for byte (the committed file: CPython 3.11, whose
unicodedata is Unicode 14.0; NFC/NFKC forms and case changes depend on that version).
Each line is {"category": ..., "text": ...}. Sections 1-12 are the first ~2,000 strings:
the hand-written seeds of seeds.py plus variations that tend to break tokenizers: leading
and trailing spaces, whitespace runs (spaces, tabs, newlines, CRLF), NFC/NFD/NFKC forms,
case changes, numbers of every length, punctuation runs, cross-script joins, random
character soups, and prefixes cut at arbitrary code points (inside ZWJ emoji sequences,
between a base letter and its combining marks, ...). Sections 13-23 (extra.py) add the
wider material of seeds_extra.py: sentences in ~80 languages, words of ~60 scripts, code
in ~30 languages, emoji sequences, whitespace and digit runs, special-token look-alikes,
control characters and long mixed paragraphs.

Only valid Unicode scalar values are produced, so every string encodes to valid UTF-8;
invalid UTF-8 is deliberately not part of the corpus (a byte string is not a `text`; the
README says what pagoda does with invalid bytes).

Command (from the repo root; no third-party packages):
    python3 tools/corpus/make_corpus.py [OUT]     # OUT defaults to tools/corpus/corpus.jsonl
"""

from __future__ import annotations

import json
import random
import sys
import unicodedata
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import extra  # noqa: E402
from seeds import CATEGORIES  # noqa: E402

OUT = Path(__file__).resolve().parent / "corpus.jsonl"
BASE_TARGET = 2000  # sections 1-12 (the first corpus) fill up to this many strings
TARGET = 13000  # in all; section 23 joins and soups fill up to it
MAX_CHARS = 2000  # long paragraphs are truncated here
SEED = 20261202


class Corpus:
    def __init__(self):
        self.items: list[tuple[str, str]] = []
        self.seen: set[str] = set()

    def add(self, category: str, text: str) -> None:
        text = text[:MAX_CHARS]
        if not text or text in self.seen:
            return
        text.encode("utf-8")  # a lone surrogate would raise here
        self.seen.add(text)
        self.items.append((category, text))


def json_line(obj) -> str:
    """Compact UTF-8 JSON, with the few characters that some line splitters treat as line
    breaks (NEL, LS, PS) escaped, so one JSON object is always one physical line."""
    s = json.dumps(obj, ensure_ascii=False)
    return s.replace("\u0085", "\\u0085").replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


def main() -> None:
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else OUT
    rng = random.Random(SEED)
    c = Corpus()
    all_seeds = [(cat, s) for cat, items in CATEGORIES.items() for s in items]
    textual = [(cat, s) for cat, s in all_seeds if cat not in ("whitespace", "control")]

    # 1. The seeds themselves.
    for cat, s in all_seeds:
        c.add(cat, s)

    # 2. Leading / trailing whitespace (the SentencePiece and GPT-2 pre-tokenizers both
    #    treat a leading space specially).
    pads = [(" ", ""), ("", " "), (" ", " "), ("  ", ""), ("", "  "), ("\n", ""), ("", "\n"),
            ("\t", ""), ("   ", "   "), ("\r\n", "\r\n")]
    for cat, s in textual:
        for pre, post in rng.sample(pads, 2):
            c.add(cat + "+pad", pre + s + post)

    # 3. Unicode normalization forms.
    for cat, s in all_seeds:
        for form in ("NFC", "NFD", "NFKC", "NFKD"):
            c.add(cat + "+" + form.lower(), unicodedata.normalize(form, s))

    # 4. Case changes.
    for cat in ("latin", "cyrillic", "greek", "prose"):
        for s in CATEGORIES[cat]:
            for f in (str.upper, str.lower, str.title, str.swapcase):
                c.add(cat + "+case", f(s))

    # 5. Whitespace runs, alone and between words.
    for n in list(range(1, 17)) + [20, 31, 32, 33, 50, 64, 100, 127, 128, 200]:
        for ch in (" ", "\t", "\n", "\r\n"):
            c.add("ws_run", ch * n)
            c.add("ws_run", "a" + ch * n + "b")
        c.add("ws_run", "word" + " " * n + "word")
        c.add("ws_run", "x" + " " * n)
        c.add("ws_run", " " * n + "x")
        c.add("ws_run", "\n" * n + "  code")
    ws_atoms = [" ", "\t", "\n", "\r\n", "\r", "\u00a0", "\u3000", "\u2003"]
    for _ in range(80):
        run = "".join(rng.choice(ws_atoms) for _ in range(rng.randint(2, 12)))
        c.add("ws_mix", rng.choice(["", "a", "Hello", "def"]) + run + rng.choice(["", "b", "world", "x"]))

    # 6. Code with CRLF and tabs.
    for s in CATEGORIES["code"]:
        c.add("code+crlf", s.replace("\n", "\r\n"))
        c.add("code+tabs", s.replace("    ", "\t"))
        c.add("code+trailing", s.replace("\n", "   \n"))

    # 7. Numbers of every length and numbers glued to text.
    for n in range(1, 41):
        c.add("digits", "".join(rng.choice("0123456789") for _ in range(n)))
        c.add("digits", "1" * n)
    for _ in range(60):
        a = rng.randint(0, 10**rng.randint(1, 12))
        c.add("digits_mixed", rng.choice(["abc{}def", "x{}", "{}px", "v{}.0", "{} apples",
                                          "#{}", "{}%", "${}", "({})", "{},000"]).format(a))
        c.add("digits_float", f"{rng.uniform(-1e6, 1e6):.{rng.randint(0, 9)}f}")
    for digits in ("٠١٢٣٤٥٦٧٨٩", "०१२३४५६७८९", "０１２３４５６７８９", "①②③④⑤"):
        for n in (1, 3, 7, 10):
            c.add("digits_unicode", "".join(rng.choice(digits) for _ in range(n)))

    # 8. Punctuation runs.
    punct_chars = "!?.,;:-_=+*/\\|#@$%^&~`'\"()[]{}<>…—–«»“”"
    for _ in range(100):
        n = rng.choice([1, 2, 3, 4, 5, 8, 13, 21, 40])
        ch = rng.choice(punct_chars)
        c.add("punct_run", ch * n if rng.random() < 0.5 else
              "".join(rng.choice(punct_chars) for _ in range(n)))

    # 9. Special-token look-alikes embedded in text.
    for s in CATEGORIES["special_lookalikes"]:
        c.add("special+text", "Hello " + s + " world")
        c.add("special+text", s + s)
        c.add("special+text", " " + s)
        c.add("special+text", "x" + s + "\n")

    # 10. Prefixes cut at arbitrary code points (mid-word, mid-ZWJ-sequence, between a
    #     letter and its combining marks).
    for cat, s in textual:
        if len(s) > 2:
            for _ in range(1):
                c.add(cat + "+prefix", s[: rng.randint(1, len(s) - 1)])

    # 11. Cross-script joins.
    seps = [" ", "", "\n", "\t", ". ", "  ", ", ", "\r\n"]
    n_joins = len(c.items) + 200
    while len(c.items) < max(n_joins, BASE_TARGET - 150):
        parts = [rng.choice(textual)[1] for _ in range(rng.randint(2, 3))]
        c.add("join", rng.choice(seps).join(parts))

    # 12. Character soup drawn from all seeds (mixed scripts, emoji pieces, controls).
    pool = sorted(set("".join(s for _, s in all_seeds)))
    n_soup = len(c.items) + 100
    while len(c.items) < max(n_soup, BASE_TARGET):
        c.add("soup", "".join(rng.choice(pool) for _ in range(rng.randint(1, 30))))

    # 13-23: the wider material of seeds_extra.py (extra.py says what each part is).
    extra.add_all(c, rng, textual, pool, TARGET)

    with open(out, "w", encoding="utf-8", newline="\n") as f:
        for cat, text in c.items:
            f.write(json_line({"category": cat, "text": text}) + "\n")
    print(f"wrote {len(c.items)} strings to {out}", file=sys.stderr)


if __name__ == "__main__":
    main()
