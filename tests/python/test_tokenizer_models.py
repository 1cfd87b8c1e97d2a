"""pagoda's WordPiece and Unigram tokenizer.json models against the `tokenizers` library.

The tokenizer.json files are made here, live, by the library's own trainers on
tools/corpus/corpus.jsonl: a BERT-style WordPiece (BertNormalizer, BertPreTokenizer,
WordPiece decoder, "[CLS] $A [SEP]" template, as bert-base-uncased's file), a cased one
with a short max_input_chars_per_word, and a SentencePiece-style Unigram (NFKC, Metaspace,
T5-like but without the Precompiled normalizer), alone and with byte_fallback over 256
<0xXX> pieces. Every corpus string and a list of edge cases (empty, whitespace runs,
accents, CJK, emoji, unknown characters, very long words) must give the library's ids
from `pagoda tokenize --jsonl`, and `pagoda detokenize` must give the library's decode.
"""
import json
import subprocess

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
    "[CLS] hi [SEP] [MASK]", "<unk> <s> </s>", "▁already▁metaspace", "tab\there\nline\r\nend",
    "🦀🥰🫠", "ᄀᄁ", "Ǆ ǅ ǆ", "Ⅻ ⅻ", "ㄱㄴ ｶﾀｶﾅ",
]
TEXTS = CORPUS + EDGE
WORDPIECE_SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


def train_wordpiece(lowercase, max_chars):
    tok = Tokenizer(models.WordPiece(unk_token="[UNK]", max_input_chars_per_word=max_chars))
    tok.normalizer = normalizers.BertNormalizer(lowercase=lowercase)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.decoder = decoders.WordPiece(prefix="##")
    tok.train_from_iterator(CORPUS, trainers.WordPieceTrainer(
        vocab_size=3000, special_tokens=WORDPIECE_SPECIALS, show_progress=False))
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        special_tokens=[("[CLS]", tok.token_to_id("[CLS]")), ("[SEP]", tok.token_to_id("[SEP]"))])
    return tok


# The UnigramTrainer learns a special token that the training text spells ("<unk>") as a
# piece too, giving two ids the same text (a file pagoda refuses): it trains without them.
UNIGRAM_TRAINING = [t for t in CORPUS if not any(s in t for s in ("<pad>", "</s>", "<unk>"))]


def train_wordpiece_plain():
    """The other common normalizers and pre-tokenizers, and no decoder (tokens joined by spaces)."""
    tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tok.normalizer = normalizers.Sequence([normalizers.NFD(), normalizers.Lowercase(),
                                           normalizers.StripAccents()])
    tok.pre_tokenizer = pre_tokenizers.Sequence([pre_tokenizers.WhitespaceSplit(),
                                                 pre_tokenizers.Punctuation()])
    tok.train_from_iterator(CORPUS, trainers.WordPieceTrainer(
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


MAKERS = {
    "wordpiece_uncased": lambda: train_wordpiece(lowercase=True, max_chars=100),
    "wordpiece_cased": lambda: train_wordpiece(lowercase=False, max_chars=12),
    "wordpiece_plain": train_wordpiece_plain,
    "unigram": train_unigram,
    "unigram_byte_fallback": lambda: with_byte_fallback(train_unigram()),
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
