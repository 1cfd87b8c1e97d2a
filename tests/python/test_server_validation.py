"""Bad requests to `pagoda serve`: each is answered with the right 4xx and OpenAI's error body
{"error": {"message", "type", "param", "code"}}, and afterwards the server still answers a
normal request with the same text as before (nothing leaked, nothing wedged)."""
import json
import re

import pytest

from server_fixture import start_pagoda_server

VOCAB = 49152  # SmolLM2's vocabulary
CHAT = [{"role": "user", "content": "hi"}]
TYPES = {400: "BadRequestError", 401: "AuthenticationError", 404: "NotFoundError", 405: "MethodNotAllowedError"}


def completion(**fields):
    return ("POST", "/v1/completions", {"prompt": "Hello", "max_tokens": 2, **fields})


def chat(**fields):
    return ("POST", "/v1/chat/completions", {"messages": CHAT, "max_tokens": 2, **fields})


def raw(body, path="/v1/completions"):
    return ("POST", path, body if isinstance(body, bytes) else body.encode())


NESTED = b'{"prompt": ' + b"[" * 100 + b"]" * 100 + b"}"
VERY_NESTED = b'{"prompt": ' + b"[" * 200_000 + b"]" * 200_000 + b"}"

# (name, request, status, param or None when not checked)
CASES = [
    ("malformed", raw("{"), 400, None),
    ("trailing comma", raw('{"prompt": "a",}'), 400, None),
    ("array body", raw("[1, 2]"), 400, None),
    ("empty body", raw(""), 400, None),
    ("invalid utf8", raw(b'{"prompt": "caf\xe9"}'), 400, None),
    ("lone surrogate", raw('{"prompt": "\\ud800"}'), 400, None),
    ("nested 100", raw(NESTED), 400, None),
    ("nested 200k", raw(VERY_NESTED), 400, None),
    ("no prompt", ("POST", "/v1/completions", {"max_tokens": 2}), 400, "prompt"),
    ("prompt number", completion(prompt=5), 400, "prompt"),
    ("prompt empty list", completion(prompt=[]), 400, "prompt"),
    ("prompt mixed list", completion(prompt=["a", 1]), 400, "prompt"),
    ("prompt negative id", completion(prompt=[1, -3]), 400, "prompt"),
    ("prompt id beyond vocab", completion(prompt=[1, VOCAB + 10]), 400, "prompt"),
    ("temperature string", completion(temperature="hot"), 400, "temperature"),
    ("temperature negative", completion(temperature=-0.5), 400, "temperature"),
    ("temperature huge", completion(temperature=1e300), 400, "temperature"),
    ("top_p zero", completion(top_p=0), 400, "top_p"),
    ("top_p above one", completion(top_p=1.5), 400, "top_p"),
    ("top_k negative", completion(top_k=-5), 400, "top_k"),
    ("min_p above one", completion(min_p=2), 400, "min_p"),
    ("n zero", completion(n=0), 400, "n"),
    ("n huge", completion(n=10**12), 400, "n"),
    ("n over cap", completion(n=129, temperature=1), 400, "n"),
    ("max_tokens zero", completion(max_tokens=0), 400, "max_tokens"),
    ("max_tokens negative", completion(max_tokens=-5), 400, "max_tokens"),
    ("max_tokens huge", completion(max_tokens=10**30), 400, "max_tokens"),
    ("max_tokens string", completion(max_tokens="2"), 400, "max_tokens"),
    ("max_tokens fraction", completion(max_tokens=2.5), 400, "max_tokens"),
    ("logprobs over cap", completion(logprobs=21), 400, "logprobs"),
    ("logprobs negative", completion(logprobs=-2), 400, "logprobs"),
    ("presence_penalty", completion(presence_penalty=5), 400, "presence_penalty"),
    ("frequency_penalty", completion(frequency_penalty=-3), 400, "frequency_penalty"),
    ("repetition_penalty", completion(repetition_penalty=0), 400, "repetition_penalty"),
    ("too many stops", completion(stop=[f"s{i}" for i in range(65)]), 400, "stop"),
    ("stop too long", completion(stop=["x" * 2000]), 400, "stop"),
    ("stop empty", completion(stop=[""]), 400, "stop"),
    ("stop wrong type", completion(stop=[1, 2]), 400, "stop"),
    ("stop_token_ids beyond vocab", completion(stop_token_ids=[VOCAB]), 400, "stop_token_ids"),
    ("logit_bias key", completion(logit_bias={"abc": 1}), 400, "logit_bias"),
    ("logit_bias beyond vocab", completion(logit_bias={str(VOCAB + 1): 1}), 400, "logit_bias"),
    ("allowed_token_ids empty", completion(allowed_token_ids=[]), 400, "allowed_token_ids"),
    ("min_tokens over max", completion(min_tokens=5, max_tokens=2), 400, "min_tokens"),
    ("bad_words too many", completion(bad_words=[f"w{i}" for i in range(200)]), 400, "bad_words"),
    ("seed string", completion(seed="7"), 400, "seed"),
    ("stream_options without stream", completion(stream_options={"include_usage": True}), 400, "stream_options"),
    ("prompt_logprobs streamed", completion(prompt_logprobs=2, stream=True), 400, "prompt_logprobs"),
    ("prompt_logprobs all streamed", completion(prompt_logprobs=-1, stream=True), 400, "prompt_logprobs"),
    ("chat prompt_logprobs streamed", chat(prompt_logprobs=1, stream=True), 400, "prompt_logprobs"),
    ("prompt_logprobs negative", completion(prompt_logprobs=-2), 400, "prompt_logprobs"),
    ("greedy n > 1", completion(n=2, temperature=0), 400, "n"),
    ("context overflow", completion(max_tokens=600), 400, None),
    ("prompt beyond context", completion(prompt=[33] * 600), 400, None),
    ("unknown model", completion(model="gpt-4"), 404, "model"),
    ("chat empty messages", chat(messages=[]), 400, "messages"),
    ("chat unknown role", chat(messages=[{"role": "wizard", "content": "x"}]), 400, "messages"),
    ("chat content int", chat(messages=[{"role": "user", "content": 3}]), 400, "messages"),
    ("chat image part", chat(messages=[{"role": "user", "content": [
        {"type": "image_url", "image_url": {"url": "http://x/y.png"}}]}]), 400, "messages"),
    ("chat no role", chat(messages=[{"content": "x"}]), 400, "messages"),
    ("chat too many messages", chat(messages=CHAT * 1001), 400, "messages"),
    ("chat top_logprobs without logprobs", chat(top_logprobs=2), 400, "top_logprobs"),
    ("chat top_logprobs over cap", chat(logprobs=True, top_logprobs=50), 400, "logprobs"),
    ("chat logprobs not bool", chat(logprobs="yes"), 400, "logprobs"),
    ("chat context overflow", chat(max_tokens=10000), 400, None),
    ("chat continue and generation prompt", chat(messages=CHAT + [{"role": "assistant", "content": "a"}],
                                                 continue_final_message=True, add_generation_prompt=True),
     400, "continue_final_message"),
    ("chat unknown model", chat(model="nope"), 404, "model"),
    ("tokenize nothing", ("POST", "/tokenize", {}), 400, "prompt"),
    ("detokenize beyond vocab", ("POST", "/detokenize", {"tokens": [VOCAB + 5]}), 400, "tokens"),
    ("detokenize wrong type", ("POST", "/detokenize", {"tokens": "1 2"}), 400, "tokens"),
    ("unknown route", ("GET", "/v1/nothing", None), 404, None),
    ("wrong method", ("GET", "/v1/completions", None), 405, None),
]


def send(server, request, headers=None):
    method, path, body = request
    if isinstance(body, bytes):
        return server.request(method, path, raw=body, headers=headers)
    return server.request(method, path, body, headers=headers)


def check_error(status, data, expected_status, param=None):
    assert status == expected_status, data[:500]
    body = json.loads(data)
    error = body["error"]
    assert isinstance(error["message"], str) and error["message"]
    assert error["code"] == expected_status
    assert error["type"] == TYPES[expected_status]
    assert "param" in error
    if param is not None:
        assert error["param"] == param, error
    return error


@pytest.fixture(scope="module")
def baseline(pagoda_server):
    status, _, data = pagoda_server.request("POST", "/v1/completions",
                                            {"prompt": "Hello", "max_tokens": 4, "temperature": 0})
    assert status == 200, data
    return json.loads(data)["choices"][0]["text"]


def assert_still_serving(server, baseline):
    status, _, data = server.request("POST", "/v1/completions", {"prompt": "Hello", "max_tokens": 4, "temperature": 0})
    assert status == 200, data
    assert json.loads(data)["choices"][0]["text"] == baseline


@pytest.mark.parametrize("name,request_,status,param", CASES, ids=[c[0] for c in CASES])
def test_bad_request(pagoda_server, baseline, name, request_, status, param):
    code, _, data = send(pagoda_server, request_)
    check_error(code, data, status, param)
    assert_still_serving(pagoda_server, baseline)


def test_context_overflow_in_vllm_wording(pagoda_server):
    code, _, data = send(pagoda_server, completion(max_tokens=600))
    message = check_error(code, data, 400)["message"]
    count = len(json.loads(pagoda_server.request("POST", "/tokenize", {"prompt": "Hello"})[2])["tokens"])
    assert message == (f"This model's maximum context length is 512 tokens. However, you requested {count + 600} "
                       f"tokens ({count} in the messages, 600 in the completion). Please reduce the length of the "
                       "messages or completion.")


def test_body_too_large(pagoda_server, baseline):
    code, _, data = pagoda_server.request("POST", "/v1/completions", raw=b'{"prompt": "' + b"a" * (33 << 20) + b'"}')
    assert code == 413
    assert_still_serving(pagoda_server, baseline)


def test_streamed_request_errors_are_plain_json(pagoda_server, baseline):
    # A refused streaming request gets the error body, not an event stream.
    code, headers, data = send(pagoda_server, completion(stream=True, temperature=-1))
    check_error(code, data, 400, "temperature")
    assert_still_serving(pagoda_server, baseline)


@pytest.fixture(scope="module")
def keyed_server():
    server = start_pagoda_server(["--api-key", "sekrit"])
    yield server
    assert server.stop() == 0


@pytest.mark.parametrize("headers", [None, {"Authorization": "Bearer wrong"}, {"Authorization": "sekrit"},
                                     {"Authorization": "Bearer sekrit2"}, {"Authorization": "Basic sekrit"}],
                         ids=["missing", "wrong", "no scheme", "longer", "basic"])
def test_api_key_required(keyed_server, headers):
    for request in (completion(), chat(), ("GET", "/v1/models", None), ("POST", "/tokenize", {"prompt": "a"})):
        code, _, data = send(keyed_server, request, headers=headers)
        check_error(code, data, 401)
    # Health, version and metrics stay open, as in vLLM.
    for path in ("/health", "/version", "/metrics"):
        assert keyed_server.request("GET", path, headers=headers)[0] == 200
    good = {"Authorization": "Bearer sekrit"}
    code, _, data = send(keyed_server, completion(temperature=0), headers=good)
    assert code == 200, data
    assert json.loads(data)["choices"][0]["text"]
    assert re.match(r"^cmpl-[0-9a-f]{32}$", json.loads(data)["id"])
