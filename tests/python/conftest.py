"""Shared fixtures for the Python tests: where the binaries and cached models are."""
import os
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
# The build to test: $PAGODA_BUILD (a build directory, relative to the repo root or
# absolute), else build/.
BIN = (ROOT / os.environ.get("PAGODA_BUILD", "build")) / "bin"
CACHE = pathlib.Path(os.environ.get("PAGODA_CACHE", pathlib.Path.home() / ".cache" / "pagoda"))
MODELS = {
    "smollm2": CACHE / "SmolLM2-135M-Instruct.Q4_1.gguf",
    "gemma3": CACHE / "gemma-3-270m-q4_k_m.gguf",
}


@pytest.fixture(scope="session")
def pagoda_bin():
    path = BIN / "pagoda"
    assert path.exists(), f"{path} missing: run scripts/setup.sh"
    return path


def model_path(name):
    path = MODELS[name]
    assert path.exists(), f"{path} missing: run scripts/fetch_models.sh"
    return path


# The session-scoped `pagoda serve` fixture (tests/python/server_fixture.py).
from server_fixture import pagoda_server  # noqa: E402,F401
