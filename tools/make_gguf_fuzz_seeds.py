#!/usr/bin/env python3
"""Writes the seed corpus of fuzz/gguf_fuzz.cpp: a few tiny, valid GGUF files made with
the gguf PyPI package's GGUFWriter (an implementation independent of ours).

Reference: gguf==0.19.0 (tools/requirements-test.txt), numpy.
Command:   .venv/bin/python tools/make_gguf_fuzz_seeds.py fuzz/corpus/gguf_fuzz

Seeds: tiny llama / qwen2 / gemma3 models that load_gguf_model accepts (F32 norms, F16
and Q8_0 weights, a small vocabulary) and a file with every metadata value type and a
nested array. Each stays a few KB so that the fuzzer mutates them quickly.
"""
import pathlib
import sys

import numpy as np
from gguf import GGMLQuantizationType, GGUFWriter
from gguf.quants import quantize

HIDDEN, HEADS, KV_HEADS, HEAD_DIM, INTER, VOCAB = 32, 2, 1, 16, 32, 8


def weight(rng, rows, cols, dtype=np.float16):
    return rng.standard_normal((rows, cols)).astype(dtype)


def tiny_model(path, arch, *, layers, bias=False, qk_norm=False, sandwich=False, tied=True):
    rng = np.random.default_rng(0)
    w = GGUFWriter(path, arch)
    w.add_uint32(f"{arch}.embedding_length", HIDDEN)
    w.add_uint32(f"{arch}.feed_forward_length", INTER)
    w.add_uint32(f"{arch}.block_count", layers)
    w.add_uint32(f"{arch}.attention.head_count", HEADS)
    w.add_uint32(f"{arch}.attention.head_count_kv", KV_HEADS)
    w.add_uint32(f"{arch}.attention.key_length", HEAD_DIM)
    w.add_uint32(f"{arch}.context_length", 64)
    w.add_float32(f"{arch}.attention.layer_norm_rms_epsilon", 1e-6)
    w.add_float32(f"{arch}.rope.freq_base", 10000.0)
    if arch == "gemma3":
        w.add_uint32(f"{arch}.attention.sliding_window", 16)
    w.add_string("tokenizer.ggml.model", "gpt2")
    w.add_array("tokenizer.ggml.tokens", [f"t{i}" for i in range(VOCAB)])
    w.add_array("tokenizer.ggml.token_type", [1] * VOCAB)
    w.add_uint32("tokenizer.ggml.bos_token_id", 1)
    w.add_uint32("tokenizer.ggml.eos_token_id", 2)

    embd = rng.standard_normal((VOCAB, HIDDEN)).astype(np.float32)
    w.add_tensor("token_embd.weight", quantize(embd, GGMLQuantizationType.Q8_0),
                 raw_dtype=GGMLQuantizationType.Q8_0)
    w.add_tensor("output_norm.weight", np.ones(HIDDEN, dtype=np.float32))
    if not tied:
        w.add_tensor("output.weight", weight(rng, VOCAB, HIDDEN))
    q, kv = HEADS * HEAD_DIM, KV_HEADS * HEAD_DIM
    for i in range(layers):
        b = f"blk.{i}."
        w.add_tensor(b + "attn_norm.weight", np.ones(HIDDEN, dtype=np.float32))
        w.add_tensor(b + "attn_q.weight", weight(rng, q, HIDDEN))
        w.add_tensor(b + "attn_k.weight", weight(rng, kv, HIDDEN))
        w.add_tensor(b + "attn_v.weight", weight(rng, kv, HIDDEN))
        w.add_tensor(b + "attn_output.weight", weight(rng, HIDDEN, q))
        w.add_tensor(b + "ffn_norm.weight", np.ones(HIDDEN, dtype=np.float16))
        w.add_tensor(b + "ffn_gate.weight", weight(rng, INTER, HIDDEN))
        w.add_tensor(b + "ffn_up.weight", weight(rng, INTER, HIDDEN))
        w.add_tensor(b + "ffn_down.weight", weight(rng, HIDDEN, INTER))
        if bias:
            for name, rows in (("attn_q", q), ("attn_k", kv), ("attn_v", kv)):
                w.add_tensor(b + name + ".bias", np.zeros(rows, dtype=np.float32))
        if qk_norm:
            w.add_tensor(b + "attn_q_norm.weight", np.ones(HEAD_DIM, dtype=np.float32))
            w.add_tensor(b + "attn_k_norm.weight", np.ones(HEAD_DIM, dtype=np.float32))
        if sandwich:
            w.add_tensor(b + "post_attention_norm.weight", np.ones(HIDDEN, dtype=np.float32))
            w.add_tensor(b + "post_ffw_norm.weight", np.ones(HIDDEN, dtype=np.float32))
    finish(w)


def metadata_types(path):
    w = GGUFWriter(path, "llama")
    w.add_uint8("t.u8", 200)
    w.add_int8("t.i8", -100)
    w.add_uint16("t.u16", 60000)
    w.add_int16("t.i16", -30000)
    w.add_uint32("t.u32", 4000000000)
    w.add_int32("t.i32", -2000000000)
    w.add_float32("t.f32", 0.5)
    w.add_bool("t.bool", True)
    w.add_string("t.string", "héllo")
    w.add_uint64("t.u64", 2**63)
    w.add_int64("t.i64", -(2**62))
    w.add_float64("t.f64", 1e300)
    w.add_array("t.strings", ["a", "", "ccc"])
    w.add_array("t.nested", [[1, 2], [3]])
    w.add_custom_alignment(64)  # writes general.alignment and lays the file out by it
    w.add_tensor("t.tensor", np.arange(6, dtype=np.float32).reshape(2, 3))
    finish(w)


def finish(w):
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def main():
    out = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "fuzz/corpus/gguf_fuzz")
    out.mkdir(parents=True, exist_ok=True)
    tiny_model(out / "tiny_llama.gguf", "llama", layers=1)
    tiny_model(out / "tiny_qwen2.gguf", "qwen2", layers=1, bias=True, tied=False)
    tiny_model(out / "tiny_gemma3.gguf", "gemma3", layers=2, qk_norm=True, sandwich=True)
    metadata_types(out / "metadata_types.gguf")


if __name__ == "__main__":
    main()
