"""pagoda's tokenizer.json loader against the Hugging Face `tokenizers` library itself.

For each tokenizer in the shared folder (../shared/tokenizers from the repo root, or
$PAGODA_SHARED/tokenizers), the compressed tokenizer.json is decompressed into a temp dir
with its tokenizer_config.json, and every string of tools/corpus/corpus.jsonl is encoded
by `tokenizers.Tokenizer.from_file(...).encode(text, add_special_tokens=False)` and by
`pagoda tokenize --jsonl --no-add-special` (one process, one JSON string per stdin line);
the ids must be identical for every string. Special-token look-alikes are compared with
and without --special (the library's encode_special_tokens=True is the "no" case), BOS is
compared with add_special_tokens=True, and detokenize must give back what the library's
decode gives wherever the library round-trips the text.
"""
import json
import os
import pathlib
import shutil
import subprocess

import pytest

from conftest import ROOT

tokenizers = pytest.importorskip("tokenizers")
zstd_bin = shutil.which("zstd")

NAMES = ["llama2", "llama3", "qwen3", "gemma3", "deepseek_v3", "gptoss"]
CORPUS = [json.loads(line)["text"] for line in (ROOT / "tools" / "corpus" / "corpus.jsonl").open()]
# Strings that spell (or nearly spell) the special tokens of the six vocabularies.
LOOKALIKES = [
    "<s>", "</s>", "<unk>", "<s> hi </s>", "a<s>b", "<|begin_of_text|>hello", "<|eot_id|>",
    "<|im_start|>user\nhi<|im_end|>\n", "<|endoftext|>", "<|im_start", "<bos>Hello<eos>",
    "<start_of_turn>user\nhi<end_of_turn>\n", "<｜begin▁of▁sentence｜>x", "<|start|>x<|end|>",
    "<tool_call>{}</tool_call>", "<mask> and [multimodal]", "<unused0><unused1>",
    "<|return|><|channel|>", "text <think>x</think>", "<<s>>", "<|im_end|><|im_end|>",
]


def shared_dir():
    base = os.environ.get("PAGODA_SHARED")
    path = pathlib.Path(base) / "tokenizers" if base else ROOT.parent / "shared" / "tokenizers"
    if not path.is_dir():
        # Worktrees sit one level deeper than the main checkout.
        alt = ROOT.parent.parent / "shared" / "tokenizers"
        path = alt if alt.is_dir() else path
    return path


@pytest.fixture(scope="module", params=NAMES)
def tok(request, tmp_path_factory):
    src = shared_dir() / request.param
    if not (src / "tokenizer.json.zst").exists():
        pytest.skip(f"{src}/tokenizer.json.zst missing (shared tokenizers folder absent)")
    if zstd_bin is None:
        pytest.skip("the zstd command is missing")
    out = tmp_path_factory.mktemp(request.param)
    subprocess.run([zstd_bin, "-dqf", str(src / "tokenizer.json.zst"), "-o",
                    str(out / "tokenizer.json")], check=True)
    shutil.copy(src / "tokenizer_config.json", out / "tokenizer_config.json")
    return request.param, out, tokenizers.Tokenizer.from_file(str(out / "tokenizer.json"))


def pagoda(pagoda_bin, *args, stdin):
    r = subprocess.run([str(pagoda_bin), *args], input=stdin.encode(), capture_output=True)
    assert r.returncode == 0, r.stderr.decode()
    out = r.stdout.decode()
    assert out.endswith("\n") or not out
    return out.split("\n")[:-1]  # not splitlines(): U+2028 and U+0085 are in the text


def pagoda_encode(pagoda_bin, path, texts, *flags):
    stdin = "".join(json.dumps(t) + "\n" for t in texts)
    lines = pagoda(pagoda_bin, "tokenize", str(path), "--jsonl", *flags, stdin=stdin)
    assert len(lines) == len(texts)
    return [json.loads(line) for line in lines]


def mismatches(texts, expected, got):
    return [(t, e, g) for t, e, g in zip(texts, expected, got) if e != g]


@pytest.mark.parametrize("special", [True, False], ids=["special", "no_special"])
def test_corpus_ids_match(pagoda_bin, tok, special):
    name, path, ref = tok
    ref.encode_special_tokens = not special  # True: special tokens in the text stay text
    try:
        expected = [e.ids for e in ref.encode_batch(CORPUS, add_special_tokens=False)]
    finally:
        ref.encode_special_tokens = False
    flags = ["--no-add-special"] + (["--special"] if special else [])
    got = pagoda_encode(pagoda_bin, path, CORPUS, *flags)
    bad = mismatches(CORPUS, expected, got)
    assert not bad, f"{name}: {len(bad)}/{len(CORPUS)} differ, first: {bad[:3]}"


def test_lookalikes_with_and_without_special(pagoda_bin, tok):
    name, path, ref = tok
    with_special = [e.ids for e in ref.encode_batch(LOOKALIKES, add_special_tokens=False)]
    got = pagoda_encode(pagoda_bin, path, LOOKALIKES, "--no-add-special", "--special")
    bad = mismatches(LOOKALIKES, with_special, got)
    assert not bad, f"{name} --special: {bad[:3]}"
    ref.encode_special_tokens = True  # special tokens in the text stay text
    try:
        without = [e.ids for e in ref.encode_batch(LOOKALIKES, add_special_tokens=False)]
    finally:
        ref.encode_special_tokens = False
    got = pagoda_encode(pagoda_bin, path, LOOKALIKES, "--no-add-special")
    bad = mismatches(LOOKALIKES, without, got)
    assert not bad, f"{name} without --special: {bad[:3]}"
    # Without --special no id of a special added token can come out of user text.
    special_ids = {t.content for t in ref.get_added_tokens_decoder().values() if t.special}
    special_ids = {ref.token_to_id(c) for c in special_ids}
    assert not any(i in special_ids for ids in got for i in ids)


def test_add_special(pagoda_bin, tok):
    name, path, ref = tok
    texts = CORPUS[:50]
    got = pagoda_encode(pagoda_bin, path, texts)
    config = json.loads((path / "tokenizer_config.json").read_text())
    if "add_bos_token" in config:
        # tokenizer_config.json's explicit add_bos_token wins over the post-processor, as
        # in transformers' Llama tokenizers (DeepSeek V3 asks for BOS; its post-processor
        # adds none).
        bos = config["bos_token"]
        bos = bos["content"] if isinstance(bos, dict) else bos
        plain = [e.ids for e in ref.encode_batch(texts, add_special_tokens=False)]
        prefix = [ref.token_to_id(bos)] if config["add_bos_token"] else []
        expected = [prefix + ids for ids in plain]
        if config["add_bos_token"]:
            with_special = [e.ids for e in ref.encode_batch(texts, add_special_tokens=True)]
            if name != "deepseek_v3":
                assert with_special == expected  # the post-processor agrees with the config
    else:
        expected = [e.ids for e in ref.encode_batch(texts, add_special_tokens=True)]
    bad = mismatches(texts, expected, got)
    assert not bad, f"{name}: {bad[:3]}"


def test_decode_round_trip(pagoda_bin, tok):
    name, path, ref = tok
    ids = [e.ids for e in ref.encode_batch(CORPUS, add_special_tokens=False)]
    stdin = "".join(json.dumps(i) + "\n" for i in ids)
    got = [json.loads(line) for line in pagoda(pagoda_bin, "detokenize", str(path), stdin=stdin)]
    assert len(got) == len(CORPUS)
    expected = ref.decode_batch(ids, skip_special_tokens=True)
    compared = 0
    bad = []
    for text, e, g in zip(CORPUS, expected, got):
        if e != text:
            continue  # the library itself does not round-trip this text (e.g. NFC)
        compared += 1
        if g != e:
            bad.append((text, g))
    assert compared > len(CORPUS) // 2
    assert not bad, f"{name}: {len(bad)}/{compared} differ, first: {bad[:3]}"


def test_missing_tokenizer_json_is_an_error(pagoda_bin, tmp_path):
    r = subprocess.run([str(pagoda_bin), "tokenize", str(tmp_path), "--text", "x"],
                       capture_output=True)
    assert r.returncode == 1
    assert b"tokenizer.json" in r.stderr


@pytest.mark.parametrize("skip", [True, False], ids=["skip_special", "keep_special"])
def test_decode_with_special_tokens(pagoda_bin, tok, skip):
    name, path, ref = tok
    ids = [e.ids for e in ref.encode_batch(LOOKALIKES, add_special_tokens=True)]
    stdin = "".join(json.dumps(i) + "\n" for i in ids)
    flags = [] if skip else ["--keep-special"]
    got = [json.loads(line)
           for line in pagoda(pagoda_bin, "detokenize", str(path), *flags, stdin=stdin)]
    expected = ref.decode_batch(ids, skip_special_tokens=skip)
    bad = [(t, e, g) for t, e, g in zip(LOOKALIKES, expected, got) if e != g]
    assert not bad, f"{name}: {bad[:3]}"


def test_hf_model_directory_without_tokenizer_json(pagoda_bin):
    model_dir = ROOT / "tests" / "data" / "hf" / "llama2-fp32"
    if not (model_dir / "config.json").exists():
        pytest.skip(f"{model_dir} missing")
    assert not (model_dir / "tokenizer.json").exists()
    r = subprocess.run([str(pagoda_bin), "generate", str(model_dir), "--prompt", "hi"],
                       capture_output=True)
    assert r.returncode == 1
    assert b"no tokenizer.json at" in r.stderr
