"""`pagoda inspect` against the gguf PyPI package's GGUFReader (gguf==0.19.0, see
tools/requirements-test.txt) on both cached real models: every metadata scalar, every
array's element type and length (and contents where printed), every tensor's name, type,
shape and offset."""
import json
import pathlib
import subprocess

import pytest
from gguf import GGUFReader, GGUFValueType

from conftest import ROOT, model_path

# Written by tools/make_gguf_fuzz_seeds.py.
SEEDS = sorted((ROOT / "fuzz" / "corpus" / "gguf_fuzz").glob("*.gguf"))

SUMMARY_LENGTH = 64  # arrays longer than this are summarized unless --full


def flatten(value):
    if not isinstance(value, list):
        return [value]
    return [leaf for element in value for leaf in flatten(element)]


def inspect(pagoda_bin, path, *args):
    result = subprocess.run(
        [pagoda_bin, "inspect", str(path), *args], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def reference_value(field):
    value = field.contents()
    if field.types[0] == GGUFValueType.BOOL:
        return bool(value)
    return value


@pytest.mark.parametrize("name", ["smollm2", "gemma3"])
def test_inspect_matches_gguf_reader(pagoda_bin, name):
    compare_with_reader(pagoda_bin, model_path(name))


@pytest.mark.parametrize("path", SEEDS, ids=[p.name for p in SEEDS])
def test_inspect_matches_gguf_reader_on_seeds(pagoda_bin, path):
    """The fuzz seeds were written by gguf's GGUFWriter: every value type, nested arrays."""
    compare_with_reader(pagoda_bin, path)


def test_seeds_exist():
    assert len(SEEDS) >= 4, "fuzz/corpus/gguf_fuzz: run tools/make_gguf_fuzz_seeds.py"


def compare_with_reader(pagoda_bin, path: pathlib.Path):
    ours = inspect(pagoda_bin, path)
    ref = GGUFReader(path)

    assert ours["version"] == ref.fields["GGUF.version"].contents()
    assert ours["alignment"] == ref.alignment
    assert ours["data_offset"] == ref.data_offset

    ref_keys = [k for k in ref.fields if not k.startswith("GGUF.")]
    assert list(ours["metadata"]) == ref_keys
    for key in ref_keys:
        field = ref.fields[key]
        got = ours["metadata"][key]
        if field.types[0] != GGUFValueType.ARRAY:
            assert got == reference_value(field), key
            continue
        if field.types[1] == GGUFValueType.ARRAY:
            # GGUFReader.contents() flattens nested arrays: compare the leaves (the nesting
            # itself is checked by tests/loader/gguf_test.cpp).
            assert flatten(got) == field.contents(), key
            continue
        length = len(field.data)
        if length > SUMMARY_LENGTH:
            assert got == {"type": field.types[1].name.lower(), "length": length}, key
        else:
            assert got == field.contents(), key

    assert len(ours["tensors"]) == len(ref.tensors)
    for t, r in zip(ours["tensors"], ref.tensors):
        assert t["name"] == r.name
        assert t["type"] == r.tensor_type.name, r.name
        assert t["shape"] == [int(d) for d in reversed(r.shape)], r.name  # outermost first
        assert t["offset"] == r.data_offset, r.name


def test_inspect_full_prints_whole_arrays(pagoda_bin):
    path = model_path("smollm2")
    ours = inspect(pagoda_bin, path, "--full")
    ref = GGUFReader(path)
    for key in ("tokenizer.ggml.tokens", "tokenizer.ggml.merges", "tokenizer.ggml.token_type"):
        assert ours["metadata"][key] == ref.fields[key].contents(), key


def test_inspect_refuses_truncated_file(pagoda_bin, tmp_path):
    head = model_path("smollm2").read_bytes()[:4096]
    broken = tmp_path / "truncated.gguf"
    broken.write_bytes(head)
    result = subprocess.run([pagoda_bin, "inspect", str(broken)], capture_output=True, text=True)
    assert result.returncode == 1
    assert str(broken) in result.stderr
    assert "exceeds" in result.stderr or "truncated" in result.stderr, result.stderr
