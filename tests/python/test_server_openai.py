"""`pagoda serve` through the official openai client, checked against independent references:
the Hugging Face `tokenizers` library (a byte-level BPE built from the GGUF's own vocabulary and
merges, read with the gguf package) for token counts, Python's jinja2 for the chat prompt, and
exact properties of the API (stream == non-stream for one seed, stop strings, logprob layout)."""
import json

import pytest

openai = pytest.importorskip("openai")
tokenizers = pytest.importorskip("tokenizers")

from conftest import MODELS  # noqa: E402

PROMPT = "The capital of France is"
MESSAGES = [{"role": "system", "content": "You are a helpful assistant."},
            {"role": "user", "content": "Name three colors."}]


@pytest.fixture(scope="module")
def client(pagoda_server):
    return openai.OpenAI(base_url=pagoda_server.url("/v1"), api_key="unused", max_retries=0, timeout=300)


@pytest.fixture(scope="module")
def gguf_fields():
    from gguf import GGUFReader
    reader = GGUFReader(MODELS["smollm2"])
    return {k: reader.fields[k].contents() for k in reader.fields
            if k.startswith("tokenizer.") and k != "tokenizer.ggml.scores"}


@pytest.fixture(scope="module")
def hf_tokenizer(gguf_fields):
    """SmolLM2's tokenizer.json rebuilt from the GGUF: BPE over GPT-2 bytes, digits split one by one."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    tokens = gguf_fields["tokenizer.ggml.tokens"]
    merges = [tuple(m.split(" ", 1)) for m in gguf_fields["tokenizer.ggml.merges"]]
    tok = Tokenizer(models.BPE(vocab={t: i for i, t in enumerate(tokens)}, merges=merges))
    tok.pre_tokenizer = pre_tokenizers.Sequence([pre_tokenizers.Digits(individual_digits=True),
                                                 pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)])
    tok.decoder = decoders.ByteLevel()
    types = gguf_fields["tokenizer.ggml.token_type"]
    tok.add_special_tokens([t for t, ty in zip(tokens, types) if ty == 3])  # 3: control tokens
    return tok


def chat_prompt_reference(gguf_fields, messages):
    from test_chat_templates import prepare_message, reference_env
    tokens = gguf_fields["tokenizer.ggml.tokens"]
    kwargs = {f"{k}_token": tokens[gguf_fields[f"tokenizer.ggml.{k}_token_id"]] for k in ("bos", "eos")
              if f"tokenizer.ggml.{k}_token_id" in gguf_fields}
    template = reference_env().from_string(gguf_fields["tokenizer.chat_template"])
    return template.render(messages=[prepare_message(m) for m in messages], tools=None, documents=None,
                           add_generation_prompt=True, **kwargs)


def tokenize(server, **body):
    status, _, data = server.request("POST", "/tokenize", {"model": server.model, **body})
    assert status == 200, data
    return json.loads(data)


def sse_events(server, path, body):
    """The raw server-sent events of a streamed request, checked for exact framing."""
    status, headers, data = server.request("POST", path, {**body, "stream": True})
    assert status == 200, data
    assert headers.get("Content-Type", headers.get("content-type", "")).startswith("text/event-stream")
    text = data.decode("utf-8")
    assert text.endswith("data: [DONE]\n\n")
    events = text.split("\n\n")
    assert events[-1] == "" and events[-2] == "data: [DONE]"
    for e in events[:-2]:
        assert e.startswith("data: {"), e
    return [json.loads(e[len("data: "):]) for e in events[:-2]]


def test_health_version_models(pagoda_server, client):
    assert pagoda_server.request("GET", "/health")[0] == 200
    status, _, data = pagoda_server.request("GET", "/version")
    assert status == 200 and json.loads(data)["version"]
    models = client.models.list()
    assert [m.id for m in models.data] == [pagoda_server.model]
    assert models.data[0].object == "model"
    assert models.data[0].model_extra["max_model_len"] == 512


@pytest.mark.parametrize("text", [PROMPT, "Zürich 2024: naïve café — 12345 ✓", "  spaces\tand\nlines  "])
def test_tokenize_and_detokenize_match_hf_tokenizers(pagoda_server, hf_tokenizer, text):
    out = tokenize(pagoda_server, prompt=text, add_special_tokens=False)
    expected = hf_tokenizer.encode(text, add_special_tokens=False).ids
    assert out["tokens"] == expected and out["count"] == len(expected)
    assert out["max_model_len"] == 512
    status, _, data = pagoda_server.request("POST", "/detokenize", {"model": pagoda_server.model, "tokens": expected})
    assert status == 200 and json.loads(data)["prompt"] == hf_tokenizer.decode(expected, skip_special_tokens=False)


def test_completion_usage_and_logprobs(pagoda_server, client, hf_tokenizer):
    r = client.completions.create(model=pagoda_server.model, prompt=PROMPT, max_tokens=8, temperature=0,
                                  logprobs=2, extra_body={"ignore_eos": True})
    assert r.id.startswith("cmpl-") and r.object == "text_completion" and r.model == pagoda_server.model
    choice = r.choices[0]
    assert choice.finish_reason == "length"
    num_prompt = len(tokenize(pagoda_server, prompt=PROMPT)["tokens"])
    assert num_prompt == len(hf_tokenizer.encode(PROMPT, add_special_tokens=False).ids)
    assert r.usage.prompt_tokens == num_prompt
    assert r.usage.completion_tokens == 8 and r.usage.total_tokens == num_prompt + 8
    lp = choice.logprobs
    assert len(lp.tokens) == len(lp.token_logprobs) == len(lp.top_logprobs) == len(lp.text_offset) == 8
    assert "".join(lp.tokens) == choice.text
    offsets = [0]
    for t in lp.tokens[:-1]:
        offsets.append(offsets[-1] + len(t))
    assert lp.text_offset == offsets
    for token, logprob, top in zip(lp.tokens, lp.token_logprobs, lp.top_logprobs):
        assert logprob <= 0 and 1 <= len(top) <= 3
        # Greedy: the sampled token is the most likely one.
        assert logprob == pytest.approx(max(top.values()), abs=1e-6) and top[token] == logprob


def test_stream_equals_non_stream_for_one_seed(pagoda_server, client):
    args = dict(model=pagoda_server.model, prompt=PROMPT, max_tokens=12, temperature=0.9, seed=1234)
    whole = client.completions.create(**args)
    chunks = list(client.completions.create(**args, stream=True, stream_options={"include_usage": True}))
    assert chunks[-1].choices == [] and chunks[-1].usage.completion_tokens == whole.usage.completion_tokens
    text = "".join(c.choices[0].text for c in chunks if c.choices)
    assert text == whole.choices[0].text
    finals = [c.choices[0].finish_reason for c in chunks if c.choices and c.choices[0].finish_reason]
    assert finals == [whole.choices[0].finish_reason]
    assert all(c.id == chunks[0].id for c in chunks)
    # The same seed again: the same text; other seeds: not all the same text.
    assert client.completions.create(**args).choices[0].text == whole.choices[0].text
    others = {client.completions.create(**{**args, "seed": s}).choices[0].text for s in (1, 2, 3)}
    assert len(others | {whole.choices[0].text}) > 1


def test_stream_framing_and_usage_chunk(pagoda_server):
    events = sse_events(pagoda_server, "/v1/completions",
                        {"model": pagoda_server.model, "prompt": PROMPT, "max_tokens": 5, "temperature": 0,
                         "stream_options": {"include_usage": True}})
    assert events[-1]["choices"] == [] and events[-1]["usage"]["completion_tokens"] >= 1
    assert all(e["object"] == "text_completion" and e["id"].startswith("cmpl-") for e in events)
    assert events[-2]["choices"][0]["finish_reason"] in ("stop", "length")
    no_usage = sse_events(pagoda_server, "/v1/completions",
                          {"model": pagoda_server.model, "prompt": PROMPT, "max_tokens": 3, "temperature": 0})
    assert all("usage" not in e or e["usage"] is None for e in no_usage)


def test_stop_string_ends_the_text(pagoda_server, client):
    args = dict(model=pagoda_server.model, prompt=PROMPT, max_tokens=16, temperature=0,
                extra_body={"ignore_eos": True})
    free = client.completions.create(**args).choices[0].text
    stop = free.strip()[3:6]
    assert stop and stop in free
    r = client.completions.create(**args, stop=[stop, "\x00never"])
    assert r.choices[0].text == free[:free.index(stop)]
    assert r.choices[0].finish_reason == "stop"
    assert r.choices[0].model_extra["stop_reason"] == stop


def test_echo_and_batched_prompts(pagoda_server, client):
    r = client.completions.create(model=pagoda_server.model, prompt=[PROMPT, "Once upon a time"], max_tokens=4,
                                  temperature=0, echo=True)
    assert [c.index for c in r.choices] == [0, 1]
    assert r.choices[0].text.startswith(PROMPT) and r.choices[1].text.startswith("Once upon a time")
    counts = [len(tokenize(pagoda_server, prompt=p)["tokens"]) for p in (PROMPT, "Once upon a time")]
    assert r.usage.prompt_tokens == sum(counts)
    ids = tokenize(pagoda_server, prompt=PROMPT)["tokens"]
    by_ids = client.completions.create(model=pagoda_server.model, prompt=ids, max_tokens=4, temperature=0)
    plain = client.completions.create(model=pagoda_server.model, prompt=PROMPT, max_tokens=4, temperature=0)
    assert by_ids.choices[0].text == plain.choices[0].text


def test_n_choices(pagoda_server, client):
    status, _, data = pagoda_server.request("POST", "/v1/completions", {"prompt": PROMPT, "n": 2, "max_tokens": 4})
    if status == 400 and b"not supported yet" in data:
        pytest.skip("the engine does not run n > 1 yet (branch engine2)")
    r = client.completions.create(model=pagoda_server.model, prompt=PROMPT, n=3, max_tokens=6, seed=5,
                                  temperature=1.0, logprobs=0)
    assert sorted(c.index for c in r.choices) == [0, 1, 2]
    assert r.usage.completion_tokens == sum(len(c.logprobs.tokens) for c in r.choices)
    assert r.usage.prompt_tokens == len(tokenize(pagoda_server, prompt=PROMPT)["tokens"])  # counted once
    chunks = list(client.completions.create(model=pagoda_server.model, prompt=PROMPT, n=3, max_tokens=6, seed=5,
                                            temperature=1.0, logprobs=0, stream=True))
    for i in range(3):
        assert "".join(c.choices[0].text for c in chunks if c.choices and c.choices[0].index == i) == \
            r.choices[i].text


def test_chat_prompt_matches_jinja2_and_hf_tokenizers(pagoda_server, client, gguf_fields, hf_tokenizer):
    r = client.chat.completions.create(model=pagoda_server.model, messages=MESSAGES, max_tokens=10, temperature=0)
    assert r.id.startswith("chatcmpl-") and r.object == "chat.completion"
    assert r.choices[0].message.role == "assistant" and r.choices[0].finish_reason in ("stop", "length")
    reference = chat_prompt_reference(gguf_fields, MESSAGES)
    expected = hf_tokenizer.encode(reference, add_special_tokens=False).ids
    assert r.usage.prompt_tokens == len(expected)
    assert tokenize(pagoda_server, messages=MESSAGES)["tokens"] == expected


def test_chat_stream_equals_non_stream(pagoda_server, client):
    args = dict(model=pagoda_server.model, messages=MESSAGES, max_tokens=12, temperature=0.7, seed=99)
    whole = client.chat.completions.create(**args)
    chunks = list(client.chat.completions.create(**args, stream=True, stream_options={"include_usage": True}))
    assert chunks[0].choices[0].delta.role == "assistant"
    assert all(c.object == "chat.completion.chunk" for c in chunks)
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == whole.choices[0].message.content
    with_reason = [c for c in chunks if c.choices and c.choices[0].finish_reason]
    assert len(with_reason) == 1 and with_reason[0] is chunks[-2]
    assert chunks[-1].choices == [] and chunks[-1].usage.total_tokens == whole.usage.total_tokens


def test_chat_logprobs(pagoda_server, client):
    r = client.chat.completions.create(model=pagoda_server.model, messages=MESSAGES, max_tokens=6, temperature=0,
                                       logprobs=True, top_logprobs=3)
    content = r.choices[0].logprobs.content
    assert len(content) == r.usage.completion_tokens
    assert "".join(c.token for c in content) == r.choices[0].message.content
    for c in content:
        assert bytes(c.bytes) == c.token.encode("utf-8")
        assert len(c.top_logprobs) == 3
        lps = [t.logprob for t in c.top_logprobs]
        assert lps == sorted(lps, reverse=True) and c.logprob == pytest.approx(lps[0], abs=1e-6)
        assert c.top_logprobs[0].token == c.token


def test_echo_with_logprobs_scores_the_prompt(pagoda_server, client, hf_tokenizer):
    ids = tokenize(pagoda_server, prompt=PROMPT)["tokens"]
    args = dict(model=pagoda_server.model, max_tokens=2, temperature=0, logprobs=3)
    r = client.completions.create(prompt=PROMPT, echo=True, **args)
    lp = r.choices[0].logprobs
    assert len(lp.tokens) == len(ids) + 2
    # vLLM: the echoed prompt's tokens come first, the first without a logprob.
    assert lp.tokens[:len(ids)] == [hf_tokenizer.decode([i], skip_special_tokens=False) for i in ids]
    assert lp.token_logprobs[0] is None and lp.top_logprobs[0] is None
    assert all(v <= 0 for v in lp.token_logprobs[1:])
    assert lp.text_offset == sorted(lp.text_offset) and lp.text_offset[0] == 0
    # Scoring prompt token k in the prefill equals the logprob the sampler reports for the
    # same token after the prefix ids[:k] (both from the raw logits).
    for k in range(1, len(ids)):
        prefix = client.completions.create(prompt=ids[:k], max_tokens=1, temperature=0, logprobs=20,
                                           model=pagoda_server.model)
        top = prefix.choices[0].logprobs.top_logprobs[0]
        if lp.tokens[k] in top:
            assert top[lp.tokens[k]] == pytest.approx(lp.token_logprobs[k], abs=1e-3), k
    stream = list(client.completions.create(prompt=PROMPT, echo=True, stream=True, **args))
    streamed = [t for c in stream if c.choices and c.choices[0].logprobs for t in c.choices[0].logprobs.tokens]
    assert streamed == lp.tokens


def check_prompt_logprobs(plp, ids, hf_tokenizer, echo_logprobs, k):
    """vLLM's prompt_logprobs layout, each prompt token's logprob as echo+logprobs scores it."""
    assert len(plp) == len(ids) and plp[0] is None
    for pos in range(1, len(ids)):
        entries = plp[pos]
        own = entries[str(ids[pos])]  # the actual prompt token is always there
        assert own["decoded_token"] == hf_tokenizer.decode([ids[pos]], skip_special_tokens=False)
        assert own["logprob"] == pytest.approx(echo_logprobs[pos], abs=1e-4), pos
        assert own["rank"] >= 1
        # The top k (ranks 1..k), plus the prompt token when it is not among them.
        ranks = sorted(e["rank"] for e in entries.values())
        assert ranks[:k] == list(range(1, k + 1)) and len(entries) in (k, k + 1), entries
        for e in entries.values():
            assert e["decoded_token"] is not None and e["logprob"] <= 0
            for other in entries.values():
                if e["rank"] < other["rank"]:
                    assert e["logprob"] >= other["logprob"] - 1e-6, entries


def test_prompt_logprobs_as_vllm(pagoda_server, client, hf_tokenizer):
    ids = tokenize(pagoda_server, prompt=PROMPT)["tokens"]
    args = dict(model=pagoda_server.model, max_tokens=2, temperature=0)
    echo = client.completions.create(prompt=PROMPT, echo=True, logprobs=2, **args).choices[0].logprobs
    r = client.completions.create(prompt=PROMPT, extra_body={"prompt_logprobs": 2}, n=1, **args)
    check_prompt_logprobs(r.choices[0].model_extra["prompt_logprobs"], ids, hf_tokenizer, echo.token_logprobs, 2)
    # Every choice of every prompt carries its own prompt's list (vLLM's CompletionResponseChoice).
    other = "Paris is the capital of"
    other_ids = tokenize(pagoda_server, prompt=other)["tokens"]
    other_echo = client.completions.create(prompt=other, echo=True, logprobs=2, **args).choices[0].logprobs
    both = client.completions.create(prompt=[PROMPT, other], extra_body={"prompt_logprobs": 2}, **args)
    check_prompt_logprobs(both.choices[0].model_extra["prompt_logprobs"], ids, hf_tokenizer, echo.token_logprobs, 2)
    check_prompt_logprobs(both.choices[1].model_extra["prompt_logprobs"], other_ids, hf_tokenizer,
                          other_echo.token_logprobs, 2)
    # Not asked: null, as vLLM writes it.
    plain = client.completions.create(prompt=PROMPT, **args)
    assert plain.choices[0].model_extra["prompt_logprobs"] is None


def test_chat_prompt_logprobs_on_the_response(pagoda_server, client, hf_tokenizer):
    args = dict(model=pagoda_server.model, messages=MESSAGES, max_tokens=2, temperature=0)
    r = client.chat.completions.create(extra_body={"prompt_logprobs": 1}, **args)
    plp = r.model_extra["prompt_logprobs"]  # vLLM: once, on ChatCompletionResponse
    assert "prompt_logprobs" not in (r.choices[0].model_extra or {})
    ids = tokenize(pagoda_server, messages=MESSAGES, add_generation_prompt=True)["tokens"]
    assert len(ids) == r.usage.prompt_tokens
    # The same ids as a completions prompt: scored the same way.
    echo = client.completions.create(model=pagoda_server.model, prompt=ids, echo=True, logprobs=1, max_tokens=1,
                                     temperature=0).choices[0].logprobs
    check_prompt_logprobs(plp, ids, hf_tokenizer, echo.token_logprobs, 1)
    assert client.chat.completions.create(**args).model_extra["prompt_logprobs"] is None
