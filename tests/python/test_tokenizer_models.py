"""pagoda's WordPiece and Unigram tokenizer.json models against the `tokenizers` library.

The tokenizer.json files are made here, live, by the library's own trainers on
(the first 2,150 strings of) tools/corpus/corpus.jsonl: a BERT-style WordPiece (BertNormalizer, BertPreTokenizer,
WordPiece decoder, "[CLS] $A [SEP]" template, as bert-base-uncased's file), a cased one
with a short max_input_chars_per_word, and a SentencePiece-style Unigram (NFKC, Metaspace,
T5-like but without the Precompiled normalizer), alone and with byte_fallback over 256
<0xXX> pieces. Every corpus string and a list of edge cases (empty, whitespace runs,
accents, CJK, emoji, unknown characters, very long words) must give the library's ids
from `pagoda tokenize --jsonl`, and `pagoda detokenize` must give the library's decode.
"""
import json
import subprocess
import unicodedata

import pytest

from conftest import ROOT

tokenizers = pytest.importorskip("tokenizers")
from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers  # noqa: E402

CORPUS = [json.loads(line)["text"] for line in (ROOT / "tools" / "corpus" / "corpus.jsonl").open()]
EDGE = [
    "", " ", "   ", "\t\n", "a  b", "  leading", "trailing  ", "a \t\n b", "\u3000x\u00a0y\u2009z",
    "héllo wörld", "Café CAFÉ", "ÅNGSTRÖM", "e\u0301 a\u0308", "İstanbul ΣΑΣ ß ẞ", "ﬁ ﬂ ① ² ½ ｆｕｌｌ",
    "日本語のテキスト", "中文字符测试，句号。", "한국어 텍스트", "emoji 😀🎉👍🏽 👨‍👩‍👧",
    "unknown ☃ ⌘ 𝔘𝔫𝔦 ꙮ ᚠ", "\u0000nul \u0085nel \u200bzw \ufffd \u00adsoft \ue000pua",
    "x" * 300, "supercalifragilisticexpialidocious" * 4, "pneumonoultramicroscopic",
    "don't I'm they're we've it's", "a.b,c!d?e;f:(g)[h]{i}", "$5 + 3 < 7 = ^_^ ~ | `q`",
    "[CLS] hi [SEP] [MASK]", "<unk> <s> </s>", "</s>after", "x</s>y </s> z", "<pad>", "▁already▁metaspace", "tab\there\nline\r\nend",
    "🦀🥰🫠", "ᄀᄁ", "Ǆ ǅ ǆ", "Ⅻ ⅻ", "ㄱㄴ ｶﾀｶﾅ",
]
TEXTS = CORPUS + EDGE
# The trainers learn from the corpus's first 2,150 strings (sections 1-12 of make_corpus.py):
# the whole corpus has more distinct characters than a 2,000-piece Unigram can hold, and
# characters the vocabulary lacks are what the unknown-token paths are tested with.
TRAINING = CORPUS[:2150]
WORDPIECE_SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


def train_wordpiece(lowercase, max_chars):
    tok = Tokenizer(models.WordPiece(unk_token="[UNK]", max_input_chars_per_word=max_chars))
    tok.normalizer = normalizers.BertNormalizer(lowercase=lowercase)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.decoder = decoders.WordPiece(prefix="##")
    tok.train_from_iterator(TRAINING, trainers.WordPieceTrainer(
        vocab_size=3000, special_tokens=WORDPIECE_SPECIALS, show_progress=False))
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        special_tokens=[("[CLS]", tok.token_to_id("[CLS]")), ("[SEP]", tok.token_to_id("[SEP]"))])
    return tok


# The UnigramTrainer learns a special token that the training text spells ("<unk>") as a
# piece too, giving two ids the same text (a file pagoda refuses): it trains without them.
UNIGRAM_TRAINING = [t for t in TRAINING if not any(s in t for s in ("<pad>", "</s>", "<unk>"))]


def train_wordpiece_plain():
    """The other common normalizers and pre-tokenizers, and no decoder (tokens joined by spaces)."""
    tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tok.normalizer = normalizers.Sequence([normalizers.NFD(), normalizers.Lowercase(),
                                           normalizers.StripAccents()])
    tok.pre_tokenizer = pre_tokenizers.Sequence([pre_tokenizers.WhitespaceSplit(),
                                                 pre_tokenizers.Punctuation()])
    tok.train_from_iterator(TRAINING, trainers.WordPieceTrainer(
        vocab_size=2000, special_tokens=WORDPIECE_SPECIALS, show_progress=False))
    return tok


def train_unigram():
    tok = Tokenizer(models.Unigram())
    tok.normalizer = normalizers.NFKC()
    tok.pre_tokenizer = pre_tokenizers.Metaspace()
    tok.decoder = decoders.Metaspace()
    tok.train_from_iterator(UNIGRAM_TRAINING, trainers.UnigramTrainer(
        vocab_size=2000, unk_token="<unk>", special_tokens=["<pad>", "</s>", "<unk>"],
        show_progress=False))
    return tok


def with_byte_fallback(unigram):
    """The trained Unigram's pieces plus the 256 byte pieces, with byte_fallback on."""
    spec = json.loads(unigram.to_str())
    vocab = [tuple(v) for v in spec["model"]["vocab"]]
    lowest = min(score for _, score in vocab)
    vocab += [(f"<0x{b:02X}>", lowest - 1.0) for b in range(256)]
    tok = Tokenizer(models.Unigram(vocab, unk_id=spec["model"]["unk_id"], byte_fallback=True))
    tok.normalizer = normalizers.NFKC()
    tok.pre_tokenizer = pre_tokenizers.Metaspace()
    tok.decoder = decoders.Sequence([decoders.ByteFallback(), decoders.Metaspace()])
    tok.add_special_tokens(["<pad>", "</s>", "<unk>"])
    return tok


def with_prepend_first(unigram):
    """Metaspace's prepend_scheme "first" (transformers' non-legacy conversions): only the
    text's first fragment gets the U+2581, not one after a special token."""
    unigram.pre_tokenizer = pre_tokenizers.Metaspace(prepend_scheme="first")
    unigram.decoder = decoders.Metaspace(prepend_scheme="first")
    return unigram


MAKERS = {
    "wordpiece_uncased": lambda: train_wordpiece(lowercase=True, max_chars=100),
    "wordpiece_cased": lambda: train_wordpiece(lowercase=False, max_chars=12),
    "wordpiece_plain": train_wordpiece_plain,
    "unigram": train_unigram,
    "unigram_byte_fallback": lambda: with_byte_fallback(train_unigram()),
    "unigram_prepend_first": lambda: with_prepend_first(train_unigram()),
}


@pytest.fixture(scope="module", params=list(MAKERS))
def tok(request, tmp_path_factory):
    ref = MAKERS[request.param]()
    path = tmp_path_factory.mktemp(request.param) / "tokenizer.json"
    ref.save(str(path))
    # Read back from the file, so that the reference is exactly what pagoda loads.
    return request.param, path, Tokenizer.from_file(str(path))


def pagoda(pagoda_bin, *args, stdin):
    r = subprocess.run([str(pagoda_bin), *args], input=stdin.encode(), capture_output=True)
    assert r.returncode == 0, r.stderr.decode()
    return r.stdout.decode().split("\n")[:-1]  # not splitlines(): U+2028 and U+0085 occur


def pagoda_encode(pagoda_bin, path, texts, *flags):
    stdin = "".join(json.dumps(t) + "\n" for t in texts)
    lines = pagoda(pagoda_bin, "tokenize", str(path), "--jsonl", *flags, stdin=stdin)
    assert len(lines) == len(texts)
    return [json.loads(line) for line in lines]


def pagoda_decode(pagoda_bin, path, ids, *flags):
    stdin = "".join(json.dumps(i) + "\n" for i in ids)
    lines = pagoda(pagoda_bin, "detokenize", str(path), *flags, stdin=stdin)
    assert len(lines) == len(ids)
    return [json.loads(line) for line in lines]


def differ(texts, expected, got):
    return [(t, e, g) for t, e, g in zip(texts, expected, got) if e != g]


def test_the_file_uses_the_model_under_test(tok):
    name, path, _ = tok
    spec = json.loads(path.read_text())
    assert spec["model"]["type"] == ("WordPiece" if name.startswith("wordpiece") else "Unigram")
    assert spec["normalizer"]["type"] != "Precompiled"


def test_ids_match(pagoda_bin, tok):
    name, path, ref = tok
    ref.encode_special_tokens = True  # as pagoda without --special: "[CLS]" in text is text
    try:
        expected = [e.ids for e in ref.encode_batch(TEXTS, add_special_tokens=False)]
    finally:
        ref.encode_special_tokens = False
    got = pagoda_encode(pagoda_bin, path, TEXTS, "--no-add-special")
    bad = differ(TEXTS, expected, got)
    assert not bad, f"{name}: {len(bad)}/{len(TEXTS)} differ, first: {bad[:3]}"
    # The edge cases do reach the unknown/long-word paths.
    unk = ref.token_to_id("[UNK]" if name.startswith("wordpiece") else "<unk>")
    if name != "unigram_byte_fallback":
        assert any(unk in ids for ids in expected[len(CORPUS):])


def test_ids_with_special_tokens(pagoda_bin, tok):
    name, path, ref = tok
    texts = CORPUS[:200] + EDGE
    expected = [e.ids for e in ref.encode_batch(texts, add_special_tokens=True)]
    got = pagoda_encode(pagoda_bin, path, texts, "--special")
    bad = differ(texts, expected, got)
    assert not bad, f"{name}: {bad[:3]}"


@pytest.mark.parametrize("skip", [True, False], ids=["skip_special", "keep_special"])
def test_decode_matches(pagoda_bin, tok, skip):
    name, path, ref = tok
    ids = [e.ids for e in ref.encode_batch(TEXTS, add_special_tokens=True)]
    expected = ref.decode_batch(ids, skip_special_tokens=skip)
    got = pagoda_decode(pagoda_bin, path, ids, *([] if skip else ["--keep-special"]))
    bad = differ(TEXTS, expected, got)
    assert not bad, f"{name}: {len(bad)}/{len(TEXTS)} differ, first: {bad[:3]}"


def test_decode_of_arbitrary_id_sequences(pagoda_bin, tok):
    # Ids in orders the encoder never makes ("##" first, pieces after specials, bytes
    # that are no UTF-8): the decoder's own rules, not a round trip.
    name, path, ref = tok
    n = ref.get_vocab_size()
    ids = [[(i * 7919 + k * 104729) % n for k in range(1 + i % 9)] for i in range(400)]
    expected = ref.decode_batch(ids, skip_special_tokens=False)
    got = pagoda_decode(pagoda_bin, path, ids, "--keep-special")
    bad = differ(ids, expected, got)
    assert not bad, f"{name}: {len(bad)}/{len(ids)} differ, first: {bad[:3]}"


# Every normalizer over (nearly) every code point: a Unigram of only the 256 byte pieces
# spells whatever the normalizer made in UTF-8 bytes, so the ids show the normalized text
# exactly. The library's Unicode tables are older than ICU's (marks, format characters),
# which is what this catches.
NORMALIZERS = {
    "bert_uncased": lambda: normalizers.BertNormalizer(lowercase=True),
    "bert_cased": lambda: normalizers.BertNormalizer(lowercase=False),
    "bert_strip_cased": lambda: normalizers.BertNormalizer(lowercase=False, strip_accents=True,
                                                           handle_chinese_chars=False),
    "strip_accents": normalizers.StripAccents,
    "lowercase": normalizers.Lowercase,
    "nfc": normalizers.NFC,
    "nfd": normalizers.NFD,
    "nfkc": normalizers.NFKC,
    "nfkd": normalizers.NFKD,
}
# Only characters Python's unicodedata knows (Unicode 14 on Python 3.11): the library's
# Rust tables already have Unicode 16 and the system ICU (72) has 15, so characters newer
# than 15 cannot agree (Lowercase of U+1C89, canonical order around U+0897).
CODE_POINTS = [cp for cp in [*range(0x20, 0x40000), *range(0xE0000, 0xE1000)]
               if not 0xD800 <= cp < 0xE000 and unicodedata.category(chr(cp)) != "Cn"]
# 128 code points a line, and each also alone after a letter (marks attach to it).
CODE_POINT_TEXTS = (["".join(map(chr, CODE_POINTS[i:i + 128])) for i in range(0, len(CODE_POINTS), 128)]
                    + ["".join("a" + chr(cp) + " " for cp in CODE_POINTS[i:i + 64])
                       for i in range(0, len(CODE_POINTS), 64)])


@pytest.mark.parametrize("normalizer", list(NORMALIZERS))
def test_normalizer_over_all_code_points(pagoda_bin, tmp_path, normalizer):
    vocab = [("<unk>", 0.0)] + [(f"<0x{b:02X}>", -1.0) for b in range(256)]
    ref = Tokenizer(models.Unigram(vocab, unk_id=0, byte_fallback=True))
    ref.normalizer = NORMALIZERS[normalizer]()
    path = tmp_path / "tokenizer.json"
    ref.save(str(path))
    ref = Tokenizer.from_file(str(path))
    expected = [e.ids for e in ref.encode_batch(CODE_POINT_TEXTS, add_special_tokens=False)]
    got = pagoda_encode(pagoda_bin, path, CODE_POINT_TEXTS, "--no-add-special")
    bad = []
    for text, e, g in zip(CODE_POINT_TEXTS, expected, got):
        if e != g:
            norm = ref.normalizer.normalize_str(text)
            mine = bytes(i - 1 for i in g).decode("utf-8", "replace")
            first = next((k for k, (a, b) in enumerate(zip(norm, mine)) if a != b), None)
            bad.append((hex(ord(text[0])), first, norm[first - 2:first + 3] if first else None,
                        mine[first - 2:first + 3] if first else None))
    assert not bad, f"{normalizer}: {len(bad)}/{len(CODE_POINT_TEXTS)} lines differ, first: {bad[:4]}"


# Every pre-tokenizer over the same code points: a WordPiece whose vocabulary is every
# character alone and after "##" shows each word boundary as a token without "##".
PRE_TOKENIZERS = {
    "bert": pre_tokenizers.BertPreTokenizer,
    "whitespace_split": pre_tokenizers.WhitespaceSplit,
    "punctuation": pre_tokenizers.Punctuation,
}


@pytest.fixture(scope="module")
def char_vocab():
    chars = [chr(cp) for cp in CODE_POINTS] + ["\t", "\n", "\r", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x1f", "\x85"]
    vocab = {"[UNK]": 0}
    for c in chars:
        vocab.setdefault(c, len(vocab))
        vocab.setdefault("##" + c, len(vocab))
    return vocab


@pytest.mark.parametrize("pre_tokenizer", list(PRE_TOKENIZERS))
def test_pre_tokenizer_over_all_code_points(pagoda_bin, tmp_path, char_vocab, pre_tokenizer):
    ref = Tokenizer(models.WordPiece(char_vocab, unk_token="[UNK]", max_input_chars_per_word=10**6))
    ref.pre_tokenizer = PRE_TOKENIZERS[pre_tokenizer]()
    path = tmp_path / "tokenizer.json"
    ref.save(str(path))
    ref = Tokenizer.from_file(str(path))
    texts = CODE_POINT_TEXTS + ["a\t\n\r\x0b\x0c\x1c\x1d\x1e\x1f\x85b c"]
    expected = [e.ids for e in ref.encode_batch(texts, add_special_tokens=False)]
    got = pagoda_encode(pagoda_bin, path, texts, "--no-add-special")
    inverse = {i: t for t, i in char_vocab.items()}
    bad = []
    for text, e, g in zip(texts, expected, got):
        if e != g:
            k = next((k for k, (a, b) in enumerate(zip(e, g)) if a != b), min(len(e), len(g)))
            bad.append((hex(ord(text[0])), [inverse.get(i) for i in e[k - 1:k + 2]],
                        [inverse.get(i) for i in g[k - 1:k + 2]]))
    assert not bad, f"{pre_tokenizer}: {len(bad)}/{len(texts)} lines differ, first: {bad[:4]}"


def byte_run_cases(ref):
    """Id sequences around runs of <0xXX> tokens: valid and invalid UTF-8, at the start and
    inside, split by a special token, next to ordinary pieces."""
    b = [ref.token_to_id(f"<0x{x:02X}>") for x in range(256)]
    word = ref.encode("the", add_special_tokens=False).ids
    eos = ref.token_to_id("</s>")
    runs = [[0xC3, 0xA9], [0xF0, 0x9F, 0x98, 0x80], [0xC3], [0xE2, 0x82], [0x80, 0xC3, 0xA9],
            [0x41, 0x20, 0x42], [0xE2, 0x96, 0x81], [0xE2, 0x96, 0x81, 0x41], [0xFF, 0x41]]
    cases = []
    for run in runs:
        ids = [b[x] for x in run]
        cases += [ids, word + ids, ids + word, word + ids + word, ids + [eos] + ids,
                  ids[:1] + [eos] + ids[1:], [eos] + ids + word]
    return cases


@pytest.mark.parametrize("decoder", ["byte_fallback", "no_byte_fallback"])
@pytest.mark.parametrize("skip", [True, False], ids=["skip_special", "keep_special"])
def test_decode_of_byte_runs(pagoda_bin, tmp_path, decoder, skip):
    # A run of byte tokens is its bytes when valid UTF-8 as a whole, else one U+FFFD per
    # byte token, and only under a ByteFallback decoder; without one "<0xXX>" is text.
    ref = with_byte_fallback(train_unigram())
    if decoder == "no_byte_fallback":
        ref.decoder = decoders.Metaspace()
    path = tmp_path / "tokenizer.json"
    ref.save(str(path))
    ref = Tokenizer.from_file(str(path))
    cases = byte_run_cases(ref)
    expected = ref.decode_batch(cases, skip_special_tokens=skip)
    got = pagoda_decode(pagoda_bin, path, cases, *([] if skip else ["--keep-special"]))
    bad = differ(cases, expected, got)
    assert not bad, f"{decoder}: {len(bad)}/{len(cases)} differ, first: {bad[:3]}"
