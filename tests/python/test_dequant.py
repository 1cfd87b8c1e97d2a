"""`pagoda dequant` is bit-identical to the PyPI gguf package's gguf.quants.dequantize
(the pinned version in tools/requirements-test.txt), on random blocks of every type and on
real tensors of both cached models."""
import subprocess

import numpy as np
import pytest
from gguf import GGMLQuantizationType as T
from gguf import GGUFReader
from gguf.constants import GGML_QUANT_SIZES
from gguf.quants import dequantize

from conftest import model_path

# Byte offsets of the f16 scale fields inside one block (ggml-common.h).
F16_FIELDS = {
    T.Q4_0: [0], T.Q4_1: [0, 2], T.Q5_0: [0], T.Q5_1: [0, 2], T.Q8_0: [0],
    T.Q2_K: [80, 82], T.Q3_K: [108], T.Q4_K: [0, 2], T.Q5_K: [0, 2], T.Q6_K: [208],
}
MAX_BYTES = 1 << 18  # per real tensor, to keep the test fast


def run_pagoda(pagoda_bin, tmp_path, qtype, raw):
    src, dst = tmp_path / "in.bin", tmp_path / "out.f32"
    src.write_bytes(raw.tobytes())
    subprocess.run([pagoda_bin, "dequant", "--type", qtype.name, "--input", src, "--output", dst],
                   check=True, capture_output=True)
    return np.fromfile(dst, dtype="<f4")


def assert_bit_exact(ours, ref):
    ref = np.ascontiguousarray(ref, dtype=np.float32).ravel()
    assert ours.shape == ref.shape
    diff = np.flatnonzero(ours.view(np.uint32) != ref.view(np.uint32))
    assert diff.size == 0, f"{diff.size} values differ, first at {diff[0]}: {ours[diff[0]]} vs {ref[diff[0]]}"


@pytest.mark.parametrize("qtype", list(F16_FIELDS), ids=lambda t: t.name)
def test_random_blocks(pagoda_bin, tmp_path, qtype):
    rng = np.random.default_rng(int(qtype))
    block_size, block_bytes = GGML_QUANT_SIZES[qtype]
    blocks = rng.integers(0, 256, size=(512, block_bytes), dtype=np.uint8)
    for off in F16_FIELDS[qtype]:
        scales = (rng.standard_normal(len(blocks)) * 0.05).astype(np.float16)
        blocks[:, off:off + 2] = scales.view(np.uint8).reshape(-1, 2)
    ours = run_pagoda(pagoda_bin, tmp_path, qtype, blocks)
    assert ours.size == 512 * block_size
    assert_bit_exact(ours, dequantize(blocks, qtype))


def test_every_f16_and_bf16_value(pagoda_bin, tmp_path):
    bits = np.arange(1 << 16, dtype=np.uint16)
    f16 = bits.view(np.float16)
    finite = bits[np.isfinite(f16) | np.isinf(f16)]  # NaN payloads are not compared
    for qtype, raw in ((T.F16, finite), (T.BF16, bits)):
        raw8 = raw.view(np.uint8)
        ours = run_pagoda(pagoda_bin, tmp_path, qtype, raw8)
        assert_bit_exact(ours, dequantize(raw8, qtype))


def test_f32_is_copied(pagoda_bin, tmp_path):
    values = np.random.default_rng(1).standard_normal(1000).astype(np.float32)
    raw8 = values.view(np.uint8)
    assert_bit_exact(run_pagoda(pagoda_bin, tmp_path, T.F32, raw8), dequantize(raw8, T.F32))


@pytest.mark.parametrize("model", ["smollm2", "gemma3"])
def test_real_tensors(pagoda_bin, tmp_path, model):
    reader = GGUFReader(model_path(model))
    seen = {}
    for tensor in reader.tensors:
        qtype = T(tensor.tensor_type)
        if qtype in seen:
            continue
        block_size, block_bytes = GGML_QUANT_SIZES[qtype]
        data = tensor.data  # a memmap: slice rows before touching the bytes
        row_bytes = data.nbytes // len(data)
        raw = np.ascontiguousarray(data[:max(1, MAX_BYTES // row_bytes)]).view(np.uint8).ravel()
        ours = run_pagoda(pagoda_bin, tmp_path, qtype, raw)
        assert ours.size == raw.size // block_bytes * block_size
        assert_bit_exact(ours, dequantize(raw, qtype))
        seen[qtype] = tensor.name
    print(model, {t.name: name for t, name in seen.items()})
    assert len(seen) >= 2, seen


def test_rejects_partial_block(pagoda_bin, tmp_path):
    src = tmp_path / "in.bin"
    src.write_bytes(bytes(145))
    result = subprocess.run([pagoda_bin, "dequant", "--type", "Q4_K", "--input", src,
                             "--output", tmp_path / "out.f32"], capture_output=True, text=True)
    assert result.returncode != 0
    assert "not a whole number of Q4_K blocks" in result.stderr


def test_rejects_unknown_type(pagoda_bin, tmp_path):
    src = tmp_path / "in.bin"
    src.write_bytes(bytes(4))
    result = subprocess.run([pagoda_bin, "dequant", "--type", "Q7_X", "--input", src,
                             "--output", tmp_path / "out.f32"], capture_output=True, text=True)
    assert result.returncode != 0
    assert "unknown --type Q7_X" in result.stderr
