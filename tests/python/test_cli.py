"""The CLI answers --help and refuses unknown commands with a non-zero status; `pagoda
bench tokenize` reports what `pagoda tokenize` gives."""
import json
import subprocess

from conftest import ROOT, model_path


def test_unknown_command_is_refused(pagoda_bin):
    result = subprocess.run([pagoda_bin, "no-such-command"], capture_output=True, text=True)
    assert result.returncode != 0
    assert "unknown command" in result.stderr


def corpus_texts(n):
    lines = (ROOT / "tools" / "corpus" / "corpus.jsonl").read_bytes().split(b"\n")
    return [json.loads(line.decode("utf-8"))["text"] for line in lines if line][:n]


def test_bench_tokenize_counts_what_tokenize_gives(pagoda_bin, tmp_path):
    model = model_path("smollm2")
    # Every 40th corpus string, one line written as a bare JSON string (also accepted).
    texts = corpus_texts(13000)[::40]
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join((json.dumps(t) if i == 3 else json.dumps({"category": "x", "text": t})) + "\n"
                              for i, t in enumerate(texts)), encoding="utf-8")
    out = tmp_path / "bench.json"
    r = subprocess.run([pagoda_bin, "bench", "tokenize", str(model), "--corpus", str(corpus),
                        "--repeat", "2", "--output-json", str(out)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    result = json.loads(out.read_text())
    assert json.loads(r.stdout) == result
    assert result["tokenizer"] == str(model)
    assert result["strings"] == len(texts)
    assert result["bytes"] == sum(len(t.encode("utf-8")) for t in texts)
    assert result["threads"] == 1 and result["repeat"] == 2
    assert len(result["seconds_per_pass"]) == 2
    assert result["seconds"] == min(result["seconds_per_pass"]) > 0
    assert abs(result["mb_per_s"] - result["bytes"] / result["seconds"] / 1e6) < 1e-6 * result["mb_per_s"]
    # The same encoding as `pagoda tokenize` without BOS and with special-token text as text.
    tok = subprocess.run([pagoda_bin, "tokenize", str(model), "--jsonl", "--no-add-special"],
                         input="".join(json.dumps(t) + "\n" for t in texts), capture_output=True,
                         text=True)
    assert tok.returncode == 0, tok.stderr
    ids = [json.loads(line) for line in tok.stdout.split("\n") if line]
    assert len(ids) == len(texts)
    assert result["tokens"] == sum(len(i) for i in ids) > len(texts)


def test_bench_tokenize_refuses_a_bad_corpus(pagoda_bin, tmp_path):
    model = model_path("smollm2")
    corpus = tmp_path / "bad.jsonl"
    corpus.write_text('{"text": "fine"}\n[1, 2]\n')
    r = subprocess.run([pagoda_bin, "bench", "tokenize", str(model), "--corpus", str(corpus)],
                       capture_output=True, text=True)
    assert r.returncode != 0
    assert "bad.jsonl:2" in r.stderr
    r = subprocess.run([pagoda_bin, "bench", "tokenize", str(model), "--corpus", str(tmp_path / "none")],
                       capture_output=True, text=True)
    assert r.returncode != 0 and "cannot open corpus" in r.stderr


def test_bench_peak_rss_is_pagodas_own(pagoda_bin, tmp_path):
    """`peak_rss_mb` is pagoda's own high-water mark. getrusage's ru_maxrss is not: Linux
    carries the parent's peak over fork and exec, so a bench started from a Python process
    that held a 16 GB model reported 16 GB. Here the parent holds 1 GB, the model is ~100 MB."""
    ballast = bytearray(1 << 30)
    for i in range(0, len(ballast), 4096):  # touched: resident, not just reserved
        ballast[i] = 1
    out = tmp_path / "latency.json"
    r = subprocess.run([pagoda_bin, "bench", "latency", str(model_path("smollm2")), "--device", "cpu",
                        "--input-len", "8", "--output-len", "2", "--num-iters", "1", "--output-json", str(out)],
                       capture_output=True, text=True)
    del ballast
    assert r.returncode == 0, r.stderr
    peak = json.loads(out.read_text())["peak_rss_mb"]
    assert 20 < peak < 700, peak
