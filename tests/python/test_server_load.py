"""Load on the real `pagoda serve`: a storm of clients that hang up mid-stream must leave
no request, queue entry or KV block behind, and a thousand streaming clients held open at
once must all succeed on a handful of server threads."""
import asyncio
import json
import random
import resource
import threading
import time
import urllib.request

import pytest

from load_clients import hang_up_storm, metrics, open_stream, read_events, thread_count, value, wait_idle

# The `pagoda serve` fixture comes with the OpenAI server (tests/python/server_fixture.py).
start_pagoda_server = pytest.importorskip("server_fixture").start_pagoda_server

PROMPT = "Hi"


@pytest.fixture(autouse=True)
def enough_file_descriptors():
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < 4096:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 8192), hard))


@pytest.fixture(scope="module")
def wide_server():
    """A server that runs a thousand sequences in one batch (KV for ~1,400 blocks of 16)."""
    server = start_pagoda_server(["--max-num-seqs", "1024", "--max-num-batched-tokens", "4096",
                                  "--kv-cache-memory", "1G", "--max-model-len", "64"])
    yield server
    assert server.stop() == 0


def completion(base_url, max_tokens):
    req = urllib.request.Request(base_url + "/v1/completions", method="POST",
                                 headers={"Content-Type": "application/json"},
                                 data=json.dumps({"prompt": PROMPT, "max_tokens": max_tokens,
                                                  "ignore_eos": True}).encode())
    with urllib.request.urlopen(req, timeout=120) as r:
        return json.loads(r.read())


def test_disconnect_storm_leaves_nothing_behind(pagoda_server):
    base = pagoda_server.base_url
    _, before_state = wait_idle(base)
    assert before_state == (0, 0, 0)
    aborts_before = value(metrics(base), "pagoda:request_success_total", finished_reason="abort")
    rng = random.Random(5)
    plan = [(rng.randint(0, 5), rng.random() < 0.5) for _ in range(1000)]  # (chunks to read, RST?)
    body = {"prompt": PROMPT, "max_tokens": 64, "ignore_eos": True, "stream": True}
    got_chunks = hang_up_storm(base, body, plan, concurrency=200)
    m, state = wait_idle(base, timeout_s=15)
    assert state == (0, 0, 0), f"running, waiting, KV usage after the storm: {state}"
    # Every request that produced a chunk was cut before its 64 tokens: it ended as an abort.
    aborts = value(m, "pagoda:request_success_total", finished_reason="abort") - aborts_before
    assert got_chunks <= aborts <= len(plan)
    # And the server still serves.
    out = completion(base, 4)
    assert out["choices"][0]["finish_reason"] == "length" and out["usage"]["completion_tokens"] == 4


def test_thousand_concurrent_streams_on_few_threads(wide_server):
    base, pid = wide_server.base_url, wide_server.proc.pid
    n, max_tokens = 1000, 4
    idle_threads = thread_count(pid)
    samples = []
    stop = threading.Event()

    def sample_threads():
        while not stop.is_set():
            samples.append(thread_count(pid))
            time.sleep(0.05)

    sampler = threading.Thread(target=sample_threads, daemon=True)
    sampler.start()

    async def run():
        all_streaming = asyncio.Event()
        streaming = 0
        held = {}

        async def client(i):
            nonlocal streaming
            body = {"prompt": PROMPT, "max_tokens": max_tokens, "ignore_eos": True, "stream": True}
            reader, writer, status = await open_stream(base, "/v1/completions", body)
            assert status == 200
            events = read_events(reader)
            first = await events.__anext__()
            streaming += 1
            if streaming == n:
                held["threads"] = thread_count(pid)
                held["metrics"] = metrics(base)
                all_streaming.set()
            # Nobody reads on until every client is connected and has its first chunk.
            await all_streaming.wait()
            payloads = [first] + [e async for e in events]
            writer.close()
            return payloads

        return await asyncio.gather(*(client(i) for i in range(n))), held

    try:
        results, held = asyncio.run(asyncio.wait_for(run(), timeout=600))
    finally:
        stop.set()
        sampler.join()
    for payloads in results:
        assert payloads[-1] == "[DONE]"
        chunks = [json.loads(p) for p in payloads[:-1]]
        text = "".join(c["choices"][0]["text"] for c in chunks if c["choices"])
        reasons = [c["choices"][0].get("finish_reason") for c in chunks if c["choices"]]
        assert reasons[-1] == "length" and text
    # All n streams were open on the server at once (running or waiting when the last
    # client got its first chunk, or already done), on a small fixed set of threads.
    assert held["threads"] < 100 and max(samples) < 100, (idle_threads, held["threads"], max(samples))
    m, state = wait_idle(base)
    assert state == (0, 0, 0)
    assert value(m, "pagoda:request_success_total", finished_reason="length") >= n
