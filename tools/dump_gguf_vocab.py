#!/usr/bin/env python3
"""Dumps a GGUF file's tokenizer.ggml.* metadata to JSON, with the python `gguf` reader.

A stand-in for pagoda's own GGUF parser while that is being written: the tokenizer test
can build its vocabulary from this dump (set PAGODA_VOCAB_DUMP_DIR to the folder) and so
compare the tokenizer core with the references before src/loader/gguf.cpp exists. The
dumps are large (the Gemma 3 vocabulary is 262,144 tokens) and stay out of git.

Reference: gguf 0.19.0 (the python package from llama.cpp's gguf-py).
Command (from the repo root):
    /opt/ref-venv/bin/python tools/dump_gguf_vocab.py MODEL.gguf OUT.json
"""

import json
import sys

import gguf


def field_value(field):
    types = field.types
    if types[0] == gguf.GGUFValueType.ARRAY:
        if types[-1] == gguf.GGUFValueType.STRING:
            return [bytes(field.parts[i]).decode("utf-8") for i in field.data]
        return [field.parts[i].tolist()[0] for i in field.data]
    if types[0] == gguf.GGUFValueType.STRING:
        return bytes(field.parts[field.data[0]]).decode("utf-8")
    return field.parts[field.data[0]].tolist()[0]


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: dump_gguf_vocab.py MODEL.gguf OUT.json")
    reader = gguf.GGUFReader(sys.argv[1])
    out = {}
    for key, field in reader.fields.items():
        if key.startswith("tokenizer.ggml."):
            out[key] = field_value(field)
    with open(sys.argv[2], "w", encoding="utf-8") as f:
        json.dump(out, f, ensure_ascii=False)


if __name__ == "__main__":
    main()
