"""A real `pagoda serve` for the HTTP tests: started once per session on SmolLM2 with a free
port (--port 0; the bound port is read from its first line), ready once /health answers.

Use the `pagoda_server` fixture (a Server with .base_url, .model, .proc) or call
`start_pagoda_server(extra_args)` for a second server with other flags (stop it with .stop()).
Tests that need it are skipped, with the reason, when the binary or the model is missing.
"""
import json
import re
import subprocess
import threading
import time
import urllib.error
import urllib.request

import pytest

from conftest import BIN, MODELS

MODEL_NAME = "smollm2"
# Small enough for a shared 2-core machine, large enough for the context tests.
BASE_ARGS = ["--served-model-name", MODEL_NAME, "--max-model-len", "512", "--kv-cache-memory", "128M",
             "--max-num-seqs", "16", "--threads", "2"]


class Server:
    def __init__(self, proc, port, model):
        self.proc = proc
        self.port = port
        self.model = model
        self.base_url = f"http://127.0.0.1:{port}"
        self.log = []

    def url(self, path):
        return self.base_url + path

    def request(self, method, path, body=None, headers=None, raw=None, timeout=120):
        """(status, headers, body bytes) of one request; body is JSON-encoded unless raw bytes are given."""
        data = raw if raw is not None else (None if body is None else json.dumps(body).encode())
        req = urllib.request.Request(self.url(path), data=data, method=method)
        req.add_header("Content-Type", "application/json")
        for k, v in (headers or {}).items():
            req.add_header(k, v)
        try:
            with urllib.request.urlopen(req, timeout=timeout) as resp:
                return resp.status, dict(resp.headers), resp.read()
        except urllib.error.HTTPError as e:
            return e.code, dict(e.headers), e.read()

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return self.proc.returncode


def start_pagoda_server(extra_args=(), timeout=180):
    binary = BIN / "pagoda"
    model = MODELS["smollm2"]
    if not binary.exists():
        pytest.skip(f"{binary} missing: build it first (see README)")
    if not model.exists():
        pytest.skip(f"{model} missing: run scripts/fetch_models.sh to test the server")
    proc = subprocess.Popen([str(binary), "serve", str(model), "--port", "0", *BASE_ARGS, *extra_args],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    first = proc.stdout.readline()
    match = re.search(r"http://[^:]+:(\d+)", first)
    if not match:
        rest = proc.stdout.read() if proc.poll() is not None else ""
        proc.kill()
        raise RuntimeError(f"pagoda serve did not start: {first}{rest}")
    server = Server(proc, int(match.group(1)), MODEL_NAME)
    # Keep draining its output so a chatty server never blocks on a full pipe.
    threading.Thread(target=lambda: [server.log.append(line) for line in proc.stdout], daemon=True).start()
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"pagoda serve exited with {proc.returncode}: {''.join(server.log)}")
        try:
            status, _, _ = server.request("GET", "/health", timeout=5)
            if status == 200:
                return server
        except OSError:
            pass
        time.sleep(0.2)
    server.stop()
    raise RuntimeError("pagoda serve did not answer /health in time")


@pytest.fixture(scope="session")
def pagoda_server():
    server = start_pagoda_server()
    yield server
    code = server.stop()
    assert code == 0, f"pagoda serve exited with {code} on SIGTERM"
