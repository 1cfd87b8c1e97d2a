"""`pagoda detokenize --incremental` against the Hugging Face `tokenizers` library.

For each tokenizer.json in the shared folder (decompressed as in test_hf_tokenizers.py),
id sequences are streamed one id at a time through pagoda's IncrementalDetokenizer; the
concatenated deltas must equal `tokenizers.Tokenizer.decode(ids, skip_special_tokens=...)`.
The sequences: the library's own encodings of the corpus (with the special tokens of the
vocabulary spliced in), and random ids drawn with a fixed seed from the whole vocabulary,
from the special tokens, and from the ids that decode to a lone piece of a UTF-8 character
(byte-fallback <0xXX> tokens, byte-level tokens of one non-ASCII byte), so characters are
split across ids. Deltas must also never hold a U+FFFD where the reference has none.
"""
import json
import random

import pytest

from conftest import ROOT
from test_hf_tokenizers import NAMES, pagoda, tok  # noqa: F401  (tok is the fixture)

tokenizers = pytest.importorskip("tokenizers")
CORPUS = [json.loads(line)["text"] for line in (ROOT / "tools" / "corpus" / "corpus.jsonl").open()]
FFFD = "\ufffd"


def sequences(lib):
    rng = random.Random(1234)
    vocab = lib.get_vocab_size(with_added_tokens=True)
    specials = [i for i, t in lib.get_added_tokens_decoder().items() if t.special]
    # Ids whose text alone is an incomplete character: the library decodes them to U+FFFD.
    partial = [i for i in range(min(vocab, 300000)) if lib.decode([i]) == FFFD][:500]
    seqs = []
    for text in CORPUS[::3]:
        ids = lib.encode(text, add_special_tokens=False).ids
        if specials and ids:
            ids.insert(rng.randrange(len(ids) + 1), rng.choice(specials))
        seqs.append(ids)
    for n in range(400):
        ids = []
        for _ in range(1 + n % 30):
            r = rng.random()
            if r < 0.35 and partial:
                ids.append(rng.choice(partial))
            elif r < 0.45 and specials:
                ids.append(rng.choice(specials))
            else:
                ids.append(rng.randrange(vocab))
        seqs.append(ids)
    return seqs, partial


@pytest.mark.parametrize("skip_special", [True, False])
def test_incremental_deltas_add_up_to_tokenizers_decode(pagoda_bin, tok, skip_special):
    name, path, lib = tok
    seqs, partial = sequences(lib)
    assert partial, f"{name}: no id splits a UTF-8 character (the test would not test that)"
    flags = [] if skip_special else ["--keep-special"]
    stdin = "".join(json.dumps(ids) + "\n" for ids in seqs)
    lines = pagoda(pagoda_bin, "detokenize", str(path), "--incremental", *flags, stdin=stdin)
    assert len(lines) == len(seqs)
    # pagoda's whole-sequence decode, to tell a detokenizer fault from a decode() one.
    whole = pagoda(pagoda_bin, "detokenize", str(path), *flags, stdin=stdin)
    bad, with_fffd = [], 0
    for ids, line, whole_line in zip(seqs, lines, whole):
        deltas = json.loads(line)
        assert len(deltas) == len(ids) + 1, "one delta per id, then the flushed rest"
        expected = lib.decode(ids, skip_special_tokens=skip_special)
        with_fffd += FFFD in expected
        joined = "".join(deltas)
        assert joined == json.loads(whole_line), f"{name}: deltas of {ids} != pagoda decode"
        if joined != expected:
            bad.append((ids, expected, deltas))
            continue
        at = 0
        for d in deltas[:-1]:  # the flush may end with an unfinished character's U+FFFD
            for k, ch in enumerate(d):
                if ch == FFFD and expected[at + k] != FFFD:
                    bad.append((ids, expected, deltas))
            at += len(d)
    assert not bad, f"{name}: {len(bad)} of {len(seqs)} differ, first: {bad[0]}"
    assert with_fffd > 0, f"{name}: no sequence decodes to U+FFFD (invalid runs untested)"
