#!/usr/bin/env python3
"""Golden token ids from Hugging Face `tokenizers` for the two GGUF vocabularies we test.

References (in /opt/ref-venv): tokenizers 0.23.3, transformers 5.24.0, gguf 0.19.0.
  smollm2: the tokenizer transformers builds from the GGUF file itself
           (AutoTokenizer.from_pretrained(folder, gguf_file=name).backend_tokenizer), with
           one repair: transformers' GGUF converter drops the Digits(individual_digits)
           step that tokenizer.ggml.pre = "smollm" stands for (SmolLM2's own tokenizer.json
           pre-tokenizer is Sequence[Digits(individual_digits=True), ByteLevel]), so it is
           put back here. Without it every digit after a space tokenizes differently.
  gemma3:  Gemma 3's own tokenizer.json (/work/shared/tokenizers/gemma3, same 262,144
           ids as the GGUF). transformers' GGUF conversion of Gemma is not used because it
           loses the user-defined whitespace-run tokens (33 spaces become 16+17 spaces
           instead of 31+2, unlike both the real tokenizer and llama.cpp). Which added
           tokens are "special" (matched only when special tokens are parsed, dropped by
           skip_special_tokens) is taken from the GGUF's token types (3 = control: special;
           4 = user-defined: not), because tokenizer.json disagrees with the GGUF on a few
           (<mask>, <start_of_image>, most <unusedN>) and the GGUF is what we tokenize.

Writes, for each model, to tests/data/tokenizer/:
  <model>_hf.jsonl.zst      zstd-compressed; line i is the JSON array of ids of corpus line
                            i (tools/corpus/corpus.jsonl), encoded with
                            add_special_tokens=False and encode_special_tokens=True, i.e.
                            text that spells a special token stays plain text (pagoda:
                            add_special=false, parse_special=false);
  <model>_hf_special.jsonl  strings that spell special tokens: {"text", "ids_plain" (as
                            above), "ids_parsed" (special tokens matched: pagoda
                            parse_special=true), "ids_bos" (parsed, add_special_tokens=True)};
  <model>_hf_decode.jsonl   random id sequences (fixed seed): {"ids", "text"
                            (skip_special_tokens=False), "text_skip" (True)};
  <model>_hf_meta.json      {"reference", "command", "corpus", "corpus_sha256", "count",
                            "total_ids", "ids_sha256" (of the uncompressed id lines),
                            "not_roundtrip" (corpus line indexes whose ids the reference's
                            decode does not turn back into the text), "vocab_size",
                            "empty_with_special" (ids of "" with add_special_tokens=True,
                            i.e. the BOS if the model wants one)}.

Command (from the repo root):
    /opt/ref-venv/bin/python tools/make_tokenizer_golden_hf.py [--corpus tools/corpus/corpus.jsonl]
Models come from $PAGODA_CACHE or ~/.cache/pagoda; the corpus is the multilingual corpus
of tools/corpus/ (one {"text": ...} per line).
"""

import argparse
import hashlib
import importlib.metadata
import json
import os
import random
import subprocess
import tempfile
from pathlib import Path

import gguf
import tokenizers
import transformers
from tokenizers import Tokenizer, pre_tokenizers
from transformers import AutoTokenizer

SPECIAL_TEXTS = {
    "smollm2": [
        "<|im_start|>user\nHello!<|im_end|>\n<|im_start|>assistant\n",
        "<|im_start|>system\nYou are helpful.<|im_end|>",
        "text<|endoftext|>more text",
        "<|im_end|><|im_end|>",
        "a<|im_start|b",
        "<repo_name>pagoda<file_sep>main.cpp",
        " <|im_start|> spaced <|im_end|> ",
    ],
    "gemma3": [
        "<start_of_turn>user\nHello!<end_of_turn>\n<start_of_turn>model\n",
        "<bos><start_of_turn>user\nWrite a poem.<end_of_turn>",
        "text<eos>more text",
        "<end_of_turn><end_of_turn>",
        "a<start_of_turn b",
        "<unused0><unused17> and <mask>",
        " <start_of_turn> spaced <end_of_turn> ",
        "<b>bold</b>  and <table><tr><td>cell</td></tr></table>\n\n\n\t\tx",
        "[multimodal]<start_of_image><end_of_image>",
    ],
}


def cache_dir():
    return Path(os.environ.get("PAGODA_CACHE", Path.home() / ".cache" / "pagoda"))


def smollm2():
    tok = AutoTokenizer.from_pretrained(str(cache_dir()), gguf_file="SmolLM2-135M-Instruct.Q4_1.gguf")
    backend = tok.backend_tokenizer
    backend.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Digits(individual_digits=True),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True),
    ])
    return backend


def gguf_token_types(filename):
    reader = gguf.GGUFReader(str(cache_dir() / filename))
    field = reader.fields["tokenizer.ggml.token_type"]
    return [int(field.parts[i][0]) for i in field.data]


def gemma3():
    types = gguf_token_types("gemma-3-270m-q4_k_m.gguf")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "tokenizer.json"
        subprocess.run(["zstd", "-d", "-q", "/work/shared/tokenizers/gemma3/tokenizer.json.zst",
                        "-o", str(path)], check=True)
        spec = json.loads(path.read_text(encoding="utf-8"))
    for added in spec["added_tokens"]:
        if added["id"] < len(types) and types[added["id"]] in (3, 4):
            added["special"] = types[added["id"]] == 3
    return Tokenizer.from_str(json.dumps(spec))


def write_ids_zst(path, rows):
    """One JSON array per line, compressed with the zstd command; returns the sha256 of the
    uncompressed text."""
    text = "".join(json.dumps(ids, separators=(",", ":")) + "\n" for ids in rows).encode()
    subprocess.run(["zstd", "-19", "-q", "-f", "-o", str(path)], input=text, check=True)
    return hashlib.sha256(text).hexdigest()


def meta_json(meta):
    """One key per line, lists on one line."""
    items = (f" {json.dumps(k)}: {json.dumps(v, separators=(',', ':'))}" for k, v in meta.items())
    return "{\n" + ",\n".join(items) + "\n}\n"


def write_jsonl(path, rows):
    with open(path, "w", encoding="utf-8") as f:
        for row in rows:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")


def encode(tok, text, add_special, parse_special):
    tok.encode_special_tokens = not parse_special
    return tok.encode(text, add_special_tokens=add_special).ids


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", default="tools/corpus/corpus.jsonl")
    ap.add_argument("--out", default="tests/data/tokenizer")
    args = ap.parse_args()
    corpus = Path(args.corpus)
    # Split on "\n" only: the texts hold other line-break characters (escaped or not).
    texts = [json.loads(line)["text"] for line in corpus.read_text(encoding="utf-8").split("\n") if line]
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    print(f"transformers {transformers.__version__}, tokenizers {tokenizers.__version__}")

    for model, make in (("smollm2", smollm2), ("gemma3", gemma3)):
        tok = make()
        all_ids, not_roundtrip = [], []
        for i, t in enumerate(texts):
            ids = encode(tok, t, False, False)
            all_ids.append(ids)
            if tok.decode(ids, skip_special_tokens=False) != t:
                not_roundtrip.append(i)
        ids_sha = write_ids_zst(out / f"{model}_hf.jsonl.zst", all_ids)

        rows = [{"text": t,
                 "ids_plain": encode(tok, t, False, False),
                 "ids_parsed": encode(tok, t, False, True),
                 "ids_bos": encode(tok, t, True, True)} for t in SPECIAL_TEXTS[model]]
        write_jsonl(out / f"{model}_hf_special.jsonl", rows)

        # Random sequences: mostly ordinary tokens (whose pieces cut UTF-8 sequences at
        # random, which exercises the U+FFFD replacement), some with a special token.
        added = tok.get_added_tokens_decoder()
        special = sorted(i for i, a in added.items() if a.special)
        n = tok.get_vocab_size(with_added_tokens=True)
        rng = random.Random(20261202)
        rows = []
        for _ in range(300):
            ids = [rng.randrange(n) for _ in range(rng.randint(1, 12))]
            if rng.random() < 0.3:
                ids.insert(rng.randrange(len(ids) + 1), rng.choice(special))
            rows.append({"ids": ids,
                         "text": tok.decode(ids, skip_special_tokens=False),
                         "text_skip": tok.decode(ids, skip_special_tokens=True)})
        write_jsonl(out / f"{model}_hf_decode.jsonl", rows)

        meta = {
            "reference": f"tokenizers {tokenizers.__version__}, transformers {transformers.__version__}, "
                         f"gguf {importlib.metadata.version('gguf')}",
            "command": "/opt/ref-venv/bin/python tools/make_tokenizer_golden_hf.py",
            "corpus": "tools/corpus/corpus.jsonl",
            "corpus_sha256": hashlib.sha256(corpus.read_bytes()).hexdigest(),
            "count": len(texts),
            "total_ids": sum(len(ids) for ids in all_ids),
            "ids_sha256": ids_sha,
            "vocab_size": n,
            "empty_with_special": encode(tok, "", True, False),
            "not_roundtrip": not_roundtrip,
        }
        (out / f"{model}_hf_meta.json").write_text(meta_json(meta), encoding="utf-8")
        print(model, "done")


if __name__ == "__main__":
    main()
