"""GET /metrics of the real server, read by prometheus_client's parser: vLLM's metric set
under pagoda:, and counters and histograms that move by exactly what a known batch of
requests did (prompt lengths from the server's own usage, output fixed by ignore_eos)."""
import json
import urllib.request

import pytest

from load_clients import metrics, value

pytest.importorskip("server_fixture")  # brings the `pagoda_server` fixture (OpenAI server branch)

N, MAX_TOKENS = 3, 5


def post(base_url, path, body):
    req = urllib.request.Request(base_url + path, method="POST", data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=120) as r:
        return r.read().decode()


def histogram(m, name):
    """(cumulative bucket counts by le, count, sum) of one histogram."""
    buckets = sorted(((float(dict(k)["le"]), v) for k, v in m[name + "_bucket"].items()))
    return buckets, value(m, name + "_count"), value(m, name + "_sum")


def test_metrics_move_by_what_the_requests_did(pagoda_server):
    base = pagoda_server.base_url
    before = metrics(base)
    prompt_tokens = 0
    for i in range(N):
        body = {"prompt": f"Count to {i}:", "max_tokens": MAX_TOKENS, "ignore_eos": True,
                "stream": True, "stream_options": {"include_usage": True}}
        events = [line[6:] for line in post(base, "/v1/completions", body).split("\n\n")
                  if line.startswith("data: ")]
        assert events[-1] == "[DONE]"
        usage = json.loads(events[-2])["usage"]
        assert usage["completion_tokens"] == MAX_TOKENS
        prompt_tokens += usage["prompt_tokens"]
    after = metrics(base)

    for name in ("num_requests_running", "num_requests_waiting", "kv_cache_usage_perc",
                 "prefix_cache_queries_total", "prefix_cache_hits_total", "prompt_tokens_total",
                 "generation_tokens_total", "request_success_total", "num_preemptions_total",
                 "time_to_first_token_seconds_count", "inter_token_latency_seconds_count",
                 "e2e_request_latency_seconds_count", "request_queue_time_seconds_count",
                 "request_prompt_tokens_count", "request_generation_tokens_count"):
        assert "pagoda:" + name in after, name
    for samples in after.values():
        for labels in samples:
            assert "model_name" in dict(labels)

    def delta(name, **labels):
        return value(after, name, **labels) - value(before, name, **labels)

    assert delta("pagoda:request_success_total", finished_reason="length") == N
    assert delta("pagoda:generation_tokens_total") == N * MAX_TOKENS
    assert delta("pagoda:prompt_tokens_total") == prompt_tokens
    assert delta("pagoda:request_generation_tokens_sum") == N * MAX_TOKENS
    assert delta("pagoda:request_prompt_tokens_sum") == prompt_tokens
    for h in ("time_to_first_token_seconds", "e2e_request_latency_seconds",
              "request_queue_time_seconds", "request_prompt_tokens", "request_generation_tokens"):
        assert delta(f"pagoda:{h}_count") == N, h
    # One token per step for a lone request: MAX_TOKENS - 1 gaps each.
    assert delta("pagoda:inter_token_latency_seconds_count") == N * (MAX_TOKENS - 1)
    assert 0 <= value(after, "pagoda:prefix_cache_hits_total") <= value(after, "pagoda:prefix_cache_queries_total")

    for h in ("time_to_first_token_seconds", "inter_token_latency_seconds", "e2e_request_latency_seconds",
              "request_queue_time_seconds", "request_prompt_tokens", "request_generation_tokens"):
        buckets, count, total = histogram(after, "pagoda:" + h)
        counts = [c for _, c in buckets]
        assert counts == sorted(counts), f"{h}: buckets are cumulative"
        assert buckets[-1][0] == float("inf") and counts[-1] == count, h
        assert total >= 0, h
    # Every generation histogram observation was MAX_TOKENS: the delta sits at le >= 5 only.
    b0, _, _ = histogram(before, "pagoda:request_generation_tokens")
    b1, _, _ = histogram(after, "pagoda:request_generation_tokens")
    for (le, c0), (_, c1) in zip(b0, b1):
        assert c1 - c0 == (N if le >= MAX_TOKENS else 0), le
