"""`pagoda bench serve` against a scripted OpenAI-style SSE server.

The fake server decides how many chunks each request gets and what usage it reports, and
logs every request body and its in-flight count; the tests check the benchmark's counts
against that log and recompute its summary from its own per-request lists with numpy,
following vllm/benchmarks/serve.py (calculate_metrics)."""
import asyncio
import json
import subprocess
import threading
import zlib

import numpy as np
import pytest

from conftest import model_path

MODEL_ID = "fake-model"


class FakeServer:
    def __init__(self, fail_nth=None):
        self.bodies = []          # every POST body, in arrival order
        self.served = []          # (num_chunks, prompt_tokens) of each complete stream
        self.in_flight = 0
        self.max_in_flight = 0
        self.fail_nth = fail_nth  # the n-th POST (1-based) gets HTTP 500
        self.loop = asyncio.new_event_loop()
        ready = threading.Event()
        self.thread = threading.Thread(target=self._run, args=(ready,), daemon=True)
        self.thread.start()
        ready.wait()

    def _run(self, ready):
        asyncio.set_event_loop(self.loop)
        self.server = self.loop.run_until_complete(asyncio.start_server(self._client, "127.0.0.1", 0))
        self.port = self.server.sockets[0].getsockname()[1]
        ready.set()
        self.loop.run_forever()

    def stop(self):
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)

    async def _client(self, reader, writer):
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                lines = head.decode().split("\r\n")
                method, path, _ = lines[0].split(" ")
                headers = {k.lower(): v.strip() for k, v in (l.split(":", 1) for l in lines[1:] if l)}
                body = await reader.readexactly(int(headers.get("content-length", 0)))
                if method == "GET" and path == "/v1/models":
                    self._send(writer, 200, json.dumps({"object": "list", "data": [{"id": MODEL_ID, "root": MODEL_ID}]}))
                elif method == "POST" and path in ("/v1/completions", "/v1/chat/completions"):
                    await self._stream(writer, path, json.loads(body))
                else:
                    self._send(writer, 404, "{}")
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    @staticmethod
    def _send(writer, status, text):
        data = text.encode()
        writer.write(b"HTTP/1.1 %d X\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s"
                     % (status, len(data), data))

    async def _stream(self, writer, path, body):
        self.bodies.append(body)
        if len(self.bodies) == self.fail_nth:
            self._send(writer, 500, '{"error": {"message": "scripted failure"}}')
            return
        chat = path.endswith("chat/completions")
        prompt = body["messages"][0]["content"] if chat else body["prompt"]
        num_chunks = 1 + zlib.crc32(prompt.encode()) % 5
        prompt_tokens = len(prompt)
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n")

        def event(obj):
            data = ("data: " + (obj if isinstance(obj, str) else json.dumps(obj)) + "\n\n").encode()
            writer.write(b"%x\r\n%s\r\n" % (len(data), data))

        for i in range(num_chunks):
            choice = {"index": 0, "delta": {"content": "ab"}} if chat else {"index": 0, "text": "ab"}
            event({"id": "x", "choices": [choice]})
            await writer.drain()
            await asyncio.sleep(0.002)
        # Two tokens per chunk: a client that counted chunks instead of usage would be off.
        event({"id": "x", "choices": [], "usage": {"prompt_tokens": prompt_tokens,
                                                   "completion_tokens": 2 * num_chunks}})
        event("[DONE]")
        # Logged before the last bytes go out: the client may exit the moment they arrive.
        self.in_flight -= 1
        self.served.append((num_chunks, prompt_tokens))
        writer.write(b"0\r\n\r\n")


@pytest.fixture
def fake_server():
    servers = []

    def make(**kw):
        servers.append(FakeServer(**kw))
        return servers[-1]

    yield make
    for s in servers:
        s.stop()


def run_bench(pagoda_bin, server, tmp_path, *extra):
    out = tmp_path / "result.json"
    cmd = [str(pagoda_bin), "bench", "serve", "--base-url", f"http://127.0.0.1:{server.port}",
           "--tokenizer", str(model_path("smollm2")), "--random-input-len", "16",
           "--random-output-len", "8", "--seed", "3", "--output-json", str(out), *extra]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout)
    full = json.loads(out.read_text())
    assert {k: v for k, v in full.items() if k in summary} == summary
    return full


def expect_vllm_summary(r, percentile=99):
    """calculate_metrics of vllm/benchmarks/serve.py, on the benchmark's own lists."""
    ok = [i for i, e in enumerate(r["errors"]) if e == ""]
    ttfts = [r["ttfts"][i] for i in ok]
    lats = [r["latencies"][i] for i in ok]
    outs = [r["output_lens"][i] for i in ok]
    itls = [x for i in ok for x in r["itls"][i]]
    tpots = [(l - t) / (o - 1) for l, t, o in zip(lats, ttfts, outs) if o > 1]
    for name, values in (("ttft", ttfts), ("tpot", tpots), ("itl", itls), ("e2el", lats)):
        v = values or 0
        assert r[f"mean_{name}_ms"] == pytest.approx(np.mean(v) * 1000, rel=1e-9, abs=1e-9), name
        assert r[f"median_{name}_ms"] == pytest.approx(np.median(v) * 1000, rel=1e-9, abs=1e-9), name
        assert r[f"std_{name}_ms"] == pytest.approx(np.std(v) * 1000, rel=1e-7, abs=1e-9), name
        assert r[f"p{percentile}_{name}_ms"] == pytest.approx(np.percentile(v, percentile) * 1000,
                                                              rel=1e-9, abs=1e-9), name
    total_in = sum(r["input_lens"][i] for i in ok)
    assert r["completed"] == len(ok)
    assert r["total_input_tokens"] == total_in
    assert r["total_output_tokens"] == sum(outs)
    assert r["request_throughput"] == pytest.approx(len(ok) / r["duration"])
    assert r["output_throughput"] == pytest.approx(sum(outs) / r["duration"])
    assert r["total_token_throughput"] == pytest.approx((total_in + sum(outs)) / r["duration"])
    for t, l in zip(ttfts, lats):
        assert 0 <= t <= l


@pytest.mark.parametrize("endpoint", ["/v1/completions", "/v1/chat/completions"])
def test_bench_serve_counts_and_summary(pagoda_bin, fake_server, tmp_path, endpoint):
    server = fake_server(fail_nth=4)
    n, c = 30, 4
    r = run_bench(pagoda_bin, server, tmp_path, "--endpoint", endpoint, "--num-prompts", str(n),
                  "--max-concurrency", str(c))
    # One uncounted test request first, then n; the 4th POST failed.
    assert len(server.bodies) == n + 1
    assert r["completed"] == n - 1 and r["failed"] == 1
    assert sum(1 for e in r["errors"] if "500" in e) == 1
    assert server.max_in_flight <= c
    for body in server.bodies:
        assert body["model"] == MODEL_ID  # from GET /v1/models
        assert body["stream"] is True and body["ignore_eos"] is True
        assert body["stream_options"] == {"include_usage": True}
        assert body["max_completion_tokens" if "chat" in endpoint else "max_tokens"] == 8
    # Output tokens come from usage (2 per chunk); ITLs are the gaps between chunks.
    served = server.served[1:]
    assert sorted(o for o, e in zip(r["output_lens"], r["errors"]) if e == "") == sorted(2 * k for k, _ in served)
    assert sorted(len(x) + 1 for x, e in zip(r["itls"], r["errors"]) if e == "") == sorted(k for k, _ in served)
    assert r["total_input_tokens"] == sum(p for _, p in served)  # usage.prompt_tokens wins
    expect_vllm_summary(r)


def test_bench_serve_poisson_rate_and_percentiles(pagoda_bin, fake_server, tmp_path):
    server = fake_server()
    r = run_bench(pagoda_bin, server, tmp_path, "--num-prompts", "12", "--request-rate", "200",
                  "--percentiles", "50,90,99.9")
    assert r["completed"] == 12 and r["failed"] == 0 and r["request_rate"] == 200
    for p in ("p50_ttft_ms", "p90_itl_ms", "p99.9_e2el_ms"):
        assert p in r
    expect_vllm_summary(r, percentile=99.9)
    assert r["p50_ttft_ms"] == pytest.approx(r["median_ttft_ms"])


def test_bench_serve_bad_arguments(pagoda_bin):
    for args in (["--base-url", "https://x"], ["--base-url", "http://127.0.0.1:1", "--endpoint", "/v1/x"],
                 [], ["--base-url", "http://127.0.0.1:1", "--dataset", "sharegpt"]):
        proc = subprocess.run([str(pagoda_bin), "bench", "serve", *args], capture_output=True, text=True,
                              timeout=60)
        assert proc.returncode != 0 and proc.stderr, args
