"""Thin wrapper over llama-cpp-python's low-level (ctypes) API, shared by the tools that
make llama.cpp reference data (make_golden_llamacpp.py, make_golden_tokens_llamacpp.py)
and by bench_llamacpp.py.

Only the C API is used (llama_tokenize, llama_decode, llama_get_logits_ith, ...), never
the high-level `Llama` class, whose generate() applies default samplers and stops at EOS.

Runs in the llama.cpp venv, not the repo's .venv:
    python3 -m venv /opt/llama-venv
    CMAKE_BUILD_PARALLEL_LEVEL=2 \
    CMAKE_ARGS="-DGGML_NATIVE=ON -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_TESTS=OFF" \
        /opt/llama-venv/bin/pip install llama-cpp-python==0.3.36
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import re
from pathlib import Path

import llama_cpp as L
import numpy as np

# The llama.cpp commit that llama-cpp-python 0.3.36 vendors (its CHANGELOG: "update
# llama.cpp to ggml-org/llama.cpp@0c1e57098"); the sdist has no .git, so the library
# itself reports no commit.
LLAMA_CPP_COMMIT_BY_VERSION = {"0.3.36": "0c1e57098"}


def reference_string() -> str:
    commit = LLAMA_CPP_COMMIT_BY_VERSION.get(L.__version__, "unknown")
    return f"llama-cpp-python {L.__version__} (llama.cpp {commit})"


def system_info() -> str:
    return L.llama_print_system_info().decode("utf-8", errors="replace").strip()


def model_dir() -> Path:
    return Path(os.environ.get("PAGODA_CACHE", Path.home() / ".cache" / "pagoda"))


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


@L.llama_log_callback
def _quiet_log(level, text, user_data):  # llama.cpp is chatty on stderr otherwise
    if level >= 4 and os.environ.get("LLAMACPP_VERBOSE") != "1":  # 4 = ERROR
        print(text.decode("utf-8", errors="replace"), end="")


_backend_ready = False


def _init_backend() -> None:
    global _backend_ready
    if not _backend_ready:
        L.llama_log_set(_quiet_log, ctypes.c_void_p())
        L.llama_backend_init()
        _backend_ready = True


class Model:
    """A loaded GGUF model and its vocab; contexts are made on demand."""

    def __init__(self, path: Path, vocab_only: bool = False):
        _init_backend()
        self.path = Path(path)
        mp = L.llama_model_default_params()
        mp.n_gpu_layers = 0
        mp.vocab_only = vocab_only
        self.model = L.llama_model_load_from_file(str(self.path).encode(), mp)
        if not self.model:
            raise RuntimeError(f"llama.cpp could not load {self.path}")
        self.vocab = L.llama_model_get_vocab(self.model)
        self.n_vocab = L.llama_vocab_n_tokens(self.vocab)
        self.add_bos = bool(L.llama_vocab_get_add_bos(self.vocab))

    def close(self) -> None:
        if self.model:
            L.llama_model_free(self.model)
            self.model = None

    def meta(self, key: str) -> str | None:
        buf = ctypes.create_string_buffer(1 << 16)
        n = L.llama_model_meta_val_str(self.model, key.encode(), buf, len(buf))
        if n < 0:
            return None
        if n >= len(buf):
            buf = ctypes.create_string_buffer(n + 1)
            L.llama_model_meta_val_str(self.model, key.encode(), buf, len(buf))
        return buf.value.decode("utf-8")

    def tokenize(self, text: str, add_special: bool, parse_special: bool) -> list[int]:
        data = text.encode("utf-8")  # raises on lone surrogates: such text is never sent
        cap = len(data) + 16
        while True:
            buf = (L.llama_token * cap)()
            n = L.llama_tokenize(self.vocab, data, len(data), buf, cap, add_special, parse_special)
            if n >= 0:
                return list(buf[:n])
            cap = -n

    def detokenize(self, ids: list[int], remove_special: bool = False,
                   unparse_special: bool = False) -> bytes:
        arr = (L.llama_token * max(1, len(ids)))(*ids)
        cap = 64 + 32 * len(ids)
        while True:
            buf = ctypes.create_string_buffer(cap)
            n = L.llama_detokenize(self.vocab, arr, len(ids), buf, cap, remove_special,
                                   unparse_special)
            if n >= 0:
                return buf.raw[:n]
            cap = -n

    def new_context(self, n_ctx: int, n_threads: int, n_batch: int | None = None) -> "Context":
        return Context(self, n_ctx, n_threads, n_batch or n_ctx)


class Context:
    """One llama_context with a single sequence (seq 0)."""

    def __init__(self, model: Model, n_ctx: int, n_threads: int, n_batch: int):
        cp = L.llama_context_default_params()
        cp.n_ctx = n_ctx
        cp.n_batch = n_batch
        cp.n_ubatch = n_batch
        cp.n_seq_max = 1
        cp.n_threads = n_threads
        cp.n_threads_batch = n_threads
        cp.no_perf = True
        self.params = {"n_ctx": n_ctx, "n_batch": n_batch, "n_ubatch": n_batch,
                       "n_threads": n_threads, "n_threads_batch": n_threads,
                       "flash_attn_type": int(cp.flash_attn_type),
                       "type_k": int(cp.type_k), "type_v": int(cp.type_v)}
        self.model = model
        self.ctx = L.llama_init_from_model(model.model, cp)
        if not self.ctx:
            raise RuntimeError("llama_init_from_model failed")
        self.n_pos = 0

    def close(self) -> None:
        if self.ctx:
            L.llama_free(self.ctx)
            self.ctx = None

    def clear(self) -> None:
        L.llama_memory_clear(L.llama_get_memory(self.ctx), True)
        self.n_pos = 0

    def decode(self, ids: list[int]) -> None:
        """Appends ids to seq 0; only the last position produces logits."""
        arr = (L.llama_token * len(ids))(*ids)
        batch = L.llama_batch_get_one(arr, len(ids))
        rc = L.llama_decode(self.ctx, batch)
        if rc != 0:
            raise RuntimeError(f"llama_decode returned {rc}")
        self.n_pos += len(ids)

    def last_logits(self) -> np.ndarray:
        ptr = L.llama_get_logits_ith(self.ctx, -1)
        return np.ctypeslib.as_array(ptr, shape=(self.model.n_vocab,)).copy()

    def synchronize(self) -> None:
        L.llama_synchronize(self.ctx)


def greedy_pick(logits: np.ndarray) -> tuple[int, float]:
    """Top-1 id (lowest id wins a tie, as argmax does) and its margin over the runner-up."""
    top = int(np.argmax(logits))
    best = float(logits[top])
    rest = np.delete(logits, top)
    return top, best - float(rest.max())


def strip_leading(text: str, prefix: str) -> str:
    return text[len(prefix):] if prefix and text.startswith(prefix) else text


def safe_name(path: Path) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", path.name)
