"""Extracts the chat templates of the cached GGUF models into tests/data/templates/.

Reference: the `gguf` Python package (version pinned in tools/requirements-test.txt) reading
the `tokenizer.chat_template` metadata and the BOS/EOS token strings of each model under
$PAGODA_CACHE (default ~/.cache/pagoda). Command, from the repository root:

    .venv/bin/python tools/extract_gguf_chat_templates.py

It writes <name>.jinja for each model that carries a template and records the special tokens
in tests/data/templates/templates.json (other entries there are kept). Models without a
template (gemma-3-270m's GGUF has none) are reported and skipped.
"""
import json
import os
import pathlib

from gguf import GGUFReader

ROOT = pathlib.Path(__file__).resolve().parents[1]
OUT = ROOT / "tests" / "data" / "templates"
CACHE = pathlib.Path(os.environ.get("PAGODA_CACHE", pathlib.Path.home() / ".cache" / "pagoda"))
MODELS = {
    "smollm2_gguf": "SmolLM2-135M-Instruct.Q4_1.gguf",
    "gemma3_gguf": "gemma-3-270m-q4_k_m.gguf",
}


def field(reader, key):
    f = reader.fields.get(key)
    return None if f is None else f.contents()


def main():
    meta_path = OUT / "templates.json"
    meta = json.loads(meta_path.read_text()) if meta_path.exists() else {}
    for name, filename in MODELS.items():
        reader = GGUFReader(CACHE / filename)
        template = field(reader, "tokenizer.chat_template")
        if template is None:
            print(f"{filename}: no tokenizer.chat_template, skipped")
            continue
        tokens = field(reader, "tokenizer.ggml.tokens")
        entry = {"source": f"GGUF metadata tokenizer.chat_template of {filename}"}
        for key in ("bos", "eos"):
            token_id = field(reader, f"tokenizer.ggml.{key}_token_id")
            if token_id is not None:
                entry[f"{key}_token"] = tokens[token_id]
        (OUT / f"{name}.jinja").write_text(template, encoding="utf-8")
        meta[name] = entry
        print(f"{filename}: wrote {name}.jinja ({len(template)} chars)")
    meta_path.write_text(json.dumps(meta, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
