"""`pagoda serve --async-scheduling` (on by default on a GPU; forced here on the CPU, where it is
off by default) through the official openai client: every answer equals the synchronous
server's (the shared fixture) for the same requests sent concurrently, streamed or not, greedy,
seeded, n > 1, stop strings, logprobs; and a storm of clients hanging up mid-stream leaves no
request or KV block behind."""
import random
from concurrent.futures import ThreadPoolExecutor

import pytest

from load_clients import hang_up_storm, wait_idle

openai = pytest.importorskip("openai")
start_pagoda_server = pytest.importorskip("server_fixture").start_pagoda_server

REQUESTS = [
    {"prompt": "The capital of France is", "max_tokens": 16, "temperature": 0},
    {"prompt": "Once upon a time", "max_tokens": 20, "temperature": 0.8, "seed": 7},
    {"prompt": "List three colors:", "max_tokens": 12, "temperature": 1.0, "seed": 3, "n": 2},
    {"prompt": "Count: one, two,", "max_tokens": 24, "temperature": 0, "stop": [" five"]},
    {"prompt": "Water boils at", "max_tokens": 8, "temperature": 0, "logprobs": 2},
    {"prompt": "Hello", "max_tokens": 1, "temperature": 0},
    {"prompt": "The best way to learn is", "max_tokens": 16, "temperature": 0.7, "seed": 11,
     "frequency_penalty": 0.5},
]


@pytest.fixture(scope="module")
def async_server():
    server = start_pagoda_server(["--async-scheduling"])
    yield server
    assert server.stop() == 0


def answers(base_url, stream):
    client = openai.OpenAI(base_url=base_url + "/v1", api_key="unused", max_retries=0, timeout=300)

    def one(body):
        if not stream:
            r = client.completions.create(model="smollm2", **body)
            return sorted((c.index, c.text, c.finish_reason,
                           c.logprobs.tokens if c.logprobs else None,
                           c.logprobs.token_logprobs if c.logprobs else None) for c in r.choices)
        texts, reasons = {}, {}
        for chunk in client.completions.create(model="smollm2", stream=True, **body):
            for c in chunk.choices:
                texts[c.index] = texts.get(c.index, "") + c.text
                if c.finish_reason:
                    reasons[c.index] = c.finish_reason
        return sorted((i, texts[i], reasons.get(i)) for i in texts)

    with ThreadPoolExecutor(len(REQUESTS)) as pool:  # all at once: they share steps
        return list(pool.map(one, REQUESTS))


@pytest.mark.parametrize("stream", [False, True])
def test_async_server_answers_as_the_synchronous_one(pagoda_server, async_server, stream):
    want = answers(pagoda_server.base_url, stream)
    got = answers(async_server.base_url, stream)
    assert got == want
    assert any(reason == "stop" for a in want for (_, _, reason, *_) in a)  # the stop string cut one


def test_async_server_disconnect_storm_leaves_nothing_behind(async_server):
    base = async_server.base_url
    rng = random.Random(9)
    plan = [(rng.randint(0, 4), rng.random() < 0.5) for _ in range(200)]  # (chunks to read, RST?)
    hang_up_storm(base, {"prompt": "Hi", "max_tokens": 32, "ignore_eos": True, "stream": True}, plan, concurrency=64)
    _, state = wait_idle(base, timeout_s=30)
    assert state == (0, 0, 0), f"running, waiting, KV usage after the storm: {state}"
