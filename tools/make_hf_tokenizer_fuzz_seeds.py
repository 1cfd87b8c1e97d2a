#!/usr/bin/env python3
"""Writes the seed corpus of fuzz/hf_tokenizer_fuzz.cpp: small hand-made tokenizer.json
files, each followed by a NUL and a text to encode (and, for some, another NUL and a
tokenizer_config.json), covering the components src/io/hf_tokenizer.cpp translates.

Needs only the standard library.
Command:   python3 tools/make_hf_tokenizer_fuzz_seeds.py fuzz/corpus/hf_tokenizer_fuzz

Seeds: byte-level BPE (GPT-2 / Qwen style, and Llama 3 style with a Split regex before a
ByteLevel without regex), SentencePiece-style BPE with byte fallback (Prepend + Replace
normalizers; Replace, ByteFallback, Fuse, Strip decoders), Metaspace pre-tokenizer and
decoder, Gemma-style Split on spaces, WordPiece (BertNormalizer, BertPreTokenizer, WordPiece
decoder, TemplateProcessing [CLS] $A [SEP]), Unigram (Metaspace, byte fallback, unk_id,
scores in several number spellings), a normalizer and pre-tokenizer zoo (NFC/NFD/NFKC/NFKD,
Lowercase, StripAccents, Split with each behavior, Punctuation, Digits, WhitespaceSplit),
and a few files the loader refuses (Precompiled, dropout) so that error paths are seeded.
Each file is a few KB at most; the whole corpus stays far below 200 KB.
"""
import json
import pathlib
import sys

METASPACE = "\u2581"
TEXT = "Hello world! héllo WORLD 123 4567 ça va? 日本語 😀👍🏽 tab\tnew\nline  two  spaces <s> [CLS] <|im_start|>"


def gpt2_bytes_to_unicode():
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return {b: chr(c) for b, c in zip(bs, cs)}


BYTE_CHARS = gpt2_bytes_to_unicode()


def byte_level_text(s):
    return "".join(BYTE_CHARS[b] for b in s.encode("utf-8"))


def added(i, content, special=True, normalized=False):
    return {"id": i, "content": content, "single_word": False, "lstrip": False, "rstrip": False,
            "normalized": normalized, "special": special}


def byte_level_bpe(words, merges_as_pairs=False):
    """A byte-level vocabulary: the 256 byte characters, then merged pieces of `words`."""
    vocab = {}
    for b in range(256):
        vocab[BYTE_CHARS[b]] = len(vocab)
    merges = []
    for w in words:
        chars = list(byte_level_text(w))
        cur = chars[0]
        for c in chars[1:]:
            merged = cur + c
            if merged not in vocab:
                merges.append([cur, c] if merges_as_pairs else f"{cur} {c}")
                vocab[merged] = len(vocab)
            cur = merged
    return vocab, merges


def sentencepiece_bpe(words):
    """<unk> <s> </s>, the 256 <0xXX> byte tokens, letters, then merged pieces."""
    vocab = {"<unk>": 0, "<s>": 1, "</s>": 2}
    for b in range(256):
        vocab[f"<0x{b:02X}>"] = len(vocab)
    merges = []
    for w in words:
        for c in w:
            if c not in vocab:
                vocab[c] = len(vocab)
    for w in words:
        cur = w[0]
        for c in w[1:]:
            merged = cur + c
            if merged not in vocab:
                merges.append(f"{cur} {c}")
                vocab[merged] = len(vocab)
            cur = merged
    return vocab, merges


def seed_gpt2():
    vocab, merges = byte_level_bpe([" Hello", " world", "Hello", " the", "123", " héllo", "日本"])
    n = len(vocab)
    return {
        "version": "1.0",
        "added_tokens": [added(n, "<|endoftext|>"), added(n + 1, "<|im_start|>"), added(n + 2, "<|im_end|>"),
                         added(n + 3, "<tool>", special=False)],
        "normalizer": {"type": "NFC"},
        "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True},
        "post_processor": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": True},
        "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True},
        "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": "",
                  "end_of_word_suffix": "", "fuse_unk": False, "byte_fallback": False, "ignore_merges": False,
                  "vocab": vocab, "merges": merges},
    }, None


def seed_llama3():
    vocab, merges = byte_level_bpe([" Hello", " world", "123", " ça", " va", "😀"], merges_as_pairs=True)
    n = len(vocab)
    regex = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"
             r"|\s*[\r\n]+|\s+(?!\S)|\s+")
    return {
        "version": "1.0",
        "added_tokens": [added(n, "<|begin_of_text|>"), added(n + 1, "<|eot_id|>")],
        "normalizer": None,
        "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
            {"type": "Split", "pattern": {"Regex": regex}, "behavior": "Isolated", "invert": False},
            {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False}]},
        "post_processor": {"type": "Sequence", "processors": [
            {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": False, "use_regex": True},
            {"type": "TemplateProcessing",
             "single": [{"SpecialToken": {"id": "<|begin_of_text|>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}],
             "pair": [],
             "special_tokens": {"<|begin_of_text|>": {"id": "<|begin_of_text|>", "ids": [n], "tokens": ["<|begin_of_text|>"]}}}]},
        "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True},
        "model": {"type": "BPE", "ignore_merges": True, "vocab": vocab, "merges": merges},
    }, {"bos_token": "<|begin_of_text|>", "eos_token": "<|eot_id|>"}


def seed_sentencepiece():
    vocab, merges = sentencepiece_bpe([METASPACE + "Hello", METASPACE + "world", "ab", METASPACE + "ça"])
    return {
        "version": "1.0",
        "added_tokens": [added(0, "<unk>"), added(1, "<s>"), added(2, "</s>")],
        "normalizer": {"type": "Sequence", "normalizers": [
            {"type": "Prepend", "prepend": METASPACE}, {"type": "Replace", "pattern": {"String": " "}, "content": METASPACE}]},
        "pre_tokenizer": None,
        "post_processor": {"type": "TemplateProcessing",
                           "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}],
                           "pair": [], "special_tokens": {"<s>": {"id": "<s>", "ids": [1], "tokens": ["<s>"]}}},
        "decoder": {"type": "Sequence", "decoders": [
            {"type": "Replace", "pattern": {"String": METASPACE}, "content": " "}, {"type": "ByteFallback"},
            {"type": "Fuse"}, {"type": "Strip", "content": " ", "start": 1, "stop": 0}]},
        "model": {"type": "BPE", "dropout": None, "unk_token": "<unk>", "continuing_subword_prefix": None,
                  "end_of_word_suffix": None, "fuse_unk": True, "byte_fallback": True, "vocab": vocab, "merges": merges},
    }, {"bos_token": "<s>", "eos_token": "</s>", "add_bos_token": True, "add_eos_token": False}


def seed_metaspace():
    vocab, merges = sentencepiece_bpe([METASPACE + "Hello", METASPACE + "world", METASPACE + "va"])
    return {
        "added_tokens": [added(0, "<unk>"), added(1, "<s>"), added(2, "</s>")],
        "normalizer": None,
        "pre_tokenizer": {"type": "Metaspace", "replacement": METASPACE, "prepend_scheme": "first", "split": True},
        "decoder": {"type": "Sequence", "decoders": [{"type": "ByteFallback"},
                                                      {"type": "Metaspace", "replacement": METASPACE, "prepend_scheme": "first", "split": True}]},
        "model": {"type": "BPE", "unk_token": "<unk>", "byte_fallback": True, "vocab": vocab, "merges": merges},
    }, None


def seed_gemma():
    vocab, merges = sentencepiece_bpe(["Hello", METASPACE + "world", METASPACE * 2, METASPACE * 4])
    n = len(vocab)
    return {
        "added_tokens": [added(0, "<unk>"), added(1, "<s>"), added(2, "</s>"), added(n, "<start_of_turn>"),
                         added(n + 1, "<end_of_turn>"), added(n + 2, METASPACE * 8, special=False)],
        "normalizer": {"type": "Replace", "pattern": {"String": " "}, "content": METASPACE},
        "pre_tokenizer": {"type": "Split", "pattern": {"String": " "}, "behavior": "MergedWithPrevious", "invert": False},
        "decoder": {"type": "Sequence", "decoders": [
            {"type": "Replace", "pattern": {"String": METASPACE}, "content": " "}, {"type": "ByteFallback"}, {"type": "Fuse"}]},
        "model": {"type": "BPE", "unk_token": "<unk>", "byte_fallback": True, "fuse_unk": True, "vocab": vocab, "merges": merges},
    }, {"bos_token": "<s>", "eos_token": "<end_of_turn>", "add_bos_token": True}


def seed_wordpiece():
    words = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "hello", "world", "##s", "##ing", "hel", "##lo", "!", "?",
             ",", ".", "1", "##2", "##3", "ca", "##va", "日", "本", "語", "un", "##aff", "##able"]
    vocab = {w: i for i, w in enumerate(words)}
    return {
        "added_tokens": [added(0, "[PAD]"), added(1, "[UNK]"), added(2, "[CLS]"), added(3, "[SEP]"), added(4, "[MASK]")],
        "normalizer": {"type": "BertNormalizer", "clean_text": True, "handle_chinese_chars": True,
                       "strip_accents": None, "lowercase": True},
        "pre_tokenizer": {"type": "BertPreTokenizer"},
        "post_processor": {"type": "TemplateProcessing",
                           "single": [{"SpecialToken": {"id": "[CLS]", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
                                      {"SpecialToken": {"id": "[SEP]", "type_id": 0}}],
                           "pair": [], "special_tokens": {"[CLS]": {"id": "[CLS]", "ids": [2], "tokens": ["[CLS]"]},
                                                          "[SEP]": {"id": "[SEP]", "ids": [3], "tokens": ["[SEP]"]}}},
        "decoder": {"type": "WordPiece", "prefix": "##", "cleanup": True},
        "model": {"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##",
                  "max_input_chars_per_word": 100, "vocab": vocab},
    }, None


def seed_wordpiece_plain():
    words = ["<unk>", "a", "b", "ab", "@@b", "@@a", "c"]
    return {
        "added_tokens": [added(0, "<unk>")],
        "normalizer": {"type": "BertNormalizer", "lowercase": False, "strip_accents": True, "clean_text": False,
                       "handle_chinese_chars": False},
        "pre_tokenizer": {"type": "WhitespaceSplit"},
        "decoder": {"type": "WordPiece", "prefix": "@@", "cleanup": False},
        "model": {"type": "WordPiece", "unk_token": "<unk>", "continuing_subword_prefix": "@@",
                  "max_input_chars_per_word": 4, "vocab": {w: i for i, w in enumerate(words)}},
    }, None


def unigram_vocab():
    pieces = [["<unk>", 0.0], ["<s>", 0.0], ["</s>", 0.0]]
    pieces += [[f"<0x{b:02X}>", 0.0] for b in range(256)]
    pieces += [[METASPACE, -2.5], [METASPACE + "Hello", -5.25], ["Hello", -7.0], [METASPACE + "world", -6.125],
               ["o", -3.0], ["l", -3.5], ["H", -4], ["e", -3.0000000000000004], ["w", -4.5e0], ["r", -1e1],
               ["d", -12.345678901234567], [METASPACE + "ça", -8.75], ["日本", -9.5], ["語", -10.0]]
    return pieces


def seed_unigram():
    return {
        "added_tokens": [added(0, "<unk>"), added(1, "<s>"), added(2, "</s>")],
        "normalizer": {"type": "NFKC"},
        "pre_tokenizer": {"type": "Metaspace", "replacement": METASPACE, "prepend_scheme": "always", "split": True},
        "decoder": {"type": "Sequence", "decoders": [
            {"type": "ByteFallback"}, {"type": "Metaspace", "replacement": METASPACE, "prepend_scheme": "always", "split": True}]},
        "post_processor": {"type": "TemplateProcessing",
                           "single": [{"Sequence": {"id": "A", "type_id": 0}}, {"SpecialToken": {"id": "</s>", "type_id": 0}}],
                           "pair": [], "special_tokens": {"</s>": {"id": "</s>", "ids": [2], "tokens": ["</s>"]}}},
        "model": {"type": "Unigram", "unk_id": 0, "byte_fallback": True, "vocab": unigram_vocab()},
    }, {"eos_token": "</s>"}


def seed_unigram_plain():
    return {
        "added_tokens": [added(0, "<unk>")],
        "normalizer": {"type": "Sequence", "normalizers": [{"type": "NFD"}, {"type": "StripAccents"}, {"type": "Lowercase"}]},
        "pre_tokenizer": {"type": "WhitespaceSplit"},
        "decoder": None,
        "model": {"type": "Unigram", "unk_id": 0,
                  "vocab": [["<unk>", 0.0], ["hello", -1.5], ["h", -3], ["e", -3], ["l", -2], ["o", -2], ["world", -1.75]]},
    }, None


def seed_zoo():
    vocab, merges = sentencepiece_bpe(["hello", "world", "123", "ca", "va"])
    return {
        "added_tokens": [added(0, "<unk>"), added(1, "<s>"), added(2, "</s>"), added(len(vocab), "<sep>", special=False)],
        "normalizer": {"type": "Sequence", "normalizers": [
            {"type": "NFKD"}, {"type": "NFC"}, {"type": "NFD"}, {"type": "StripAccents"}, {"type": "NFKC"}, {"type": "Lowercase"},
            {"type": "Replace", "pattern": {"String": "  "}, "content": " "}, {"type": "Prepend", "prepend": " "}]},
        "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
            {"type": "WhitespaceSplit"},
            {"type": "Punctuation", "behavior": "Isolated"},
            {"type": "Digits", "individual_digits": True},
            {"type": "Split", "pattern": {"String": "a"}, "behavior": "MergedWithNext", "invert": False},
            {"type": "Split", "pattern": {"Regex": r"\s+|[xyz]"}, "behavior": "Removed", "invert": False},
            {"type": "Split", "pattern": {"Regex": r"l+"}, "behavior": "MergedWithPrevious", "invert": False},
            {"type": "Digits", "individual_digits": False}]},
        "decoder": {"type": "Sequence", "decoders": [{"type": "ByteFallback"}, {"type": "Fuse"}]},
        "model": {"type": "BPE", "unk_token": "<unk>", "byte_fallback": True, "vocab": vocab, "merges": merges},
    }, None


def seed_no_decoder():
    vocab, merges = byte_level_bpe(["ab", "abc"])
    return {
        "added_tokens": [added(len(vocab), "<eos>")],
        "normalizer": None,
        "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "use_regex": False},
        "decoder": None,
        "model": {"vocab": vocab, "merges": merges},
    }, {"eos_token": "<eos>", "add_eos_token": True}


def seed_refused_precompiled():
    j, _ = seed_unigram_plain()
    j["normalizer"] = {"type": "Precompiled", "precompiled_charsmap": "AAAA"}
    return j, None


def seed_refused_dropout():
    j, _ = seed_no_decoder()
    j["model"]["dropout"] = 0.1
    return j, None


SEEDS = {
    "bpe_byte_level_gpt2": seed_gpt2,
    "bpe_byte_level_llama3": seed_llama3,
    "bpe_sentencepiece_byte_fallback": seed_sentencepiece,
    "bpe_metaspace": seed_metaspace,
    "bpe_gemma_split": seed_gemma,
    "wordpiece_bert": seed_wordpiece,
    "wordpiece_plain": seed_wordpiece_plain,
    "unigram_metaspace_byte_fallback": seed_unigram,
    "unigram_plain": seed_unigram_plain,
    "bpe_normalizer_pretokenizer_zoo": seed_zoo,
    "bpe_no_decoder": seed_no_decoder,
    "refused_precompiled": seed_refused_precompiled,
    "refused_dropout": seed_refused_dropout,
}


def main():
    out = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "fuzz/corpus/hf_tokenizer_fuzz")
    out.mkdir(parents=True, exist_ok=True)
    for name, make in SEEDS.items():
        tokenizer, config = make()
        data = json.dumps(tokenizer, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        data += b"\0" + TEXT.encode("utf-8")
        if config is not None:
            data += b"\0" + json.dumps(config, ensure_ascii=False).encode("utf-8")
        (out / name).write_bytes(data)
    # A text with invalid UTF-8 and a special-token spelling, on the byte-fallback vocabulary.
    tokenizer, config = seed_sentencepiece()
    data = json.dumps(tokenizer, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    (out / "bpe_sentencepiece_invalid_utf8").write_bytes(data + b"\0a\xff\xc3 \xe2\x82 <s>b\xf0\x9f\x98")


if __name__ == "__main__":
    main()
