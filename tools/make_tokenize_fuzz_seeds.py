#!/usr/bin/env python3
"""Writes the seed corpus of fuzz/tokenize_fuzz.cpp: short texts, each behind a first byte
that picks the tokenizer (bits 0-2) and the flags (bit 3 parse_special, bit 4 add BOS/EOS,
bit 5 skip special tokens, bits 6-7 the detokenizer's chunk size). The seeds spread over
all eight tokenizer slots and flag combinations.

Needs only the standard library.
Command:   python3 tools/make_tokenize_fuzz_seeds.py fuzz/corpus/tokenize_fuzz

Texts: several scripts (Latin with accents, Cyrillic, Greek, Arabic, Hebrew, Devanagari,
Thai, CJK, Hangul), emoji with skin tones, ZWJ sequences and flags, combining marks,
whitespace runs (tabs, newlines, NBSP, U+3000, U+0085), digits runs, contractions, chat
and special-token spellings and near misses, byte-token spellings, and invalid UTF-8
(lone continuation bytes, truncated sequences, overlong forms, surrogates, > U+10FFFF).
"""
import pathlib
import sys

TEXTS = {
    "latin_accents": "Ça va? Déjà vu, naïve façade, Ångström, Straße, œuvre.".encode(),
    "cyrillic": "Привет, как дела? Всё хорошо.".encode(),
    "greek": "Καλημέρα κόσμε, ΣΊΣΥΦΟΣ ς".encode(),
    "arabic_hebrew": "مرحبا بالعالم שלום עולם ١٢٣".encode(),
    "devanagari_thai": "नमस्ते दुनिया สวัสดีชาวโลก".encode(),
    "cjk": "你好，世界！日本語のテキスト。漢字かなカナ".encode(),
    "hangul": "안녕하세요 세계 각".encode(),
    "emoji_zwj": "👨‍👩‍👧‍👦 👩🏽‍💻 🏳️‍🌈 ❤️‍🔥".encode(),
    "emoji_flags_tones": "🇫🇷🇯🇵 👍🏻👍🏿 ✋🏽 1️⃣ #️⃣".encode(),
    "combining": "e\u0301 a\u0308\u0304 Z\u0351\u0352\u0353 \u1e9b\u0323 ﬁ ﬀ ㎏ Ⅻ".encode(),
    "whitespace_runs": b"a  b   c    d\t\t\te\n\n\nf \r\n g\x0b\x0c h",
    "unicode_spaces": "x\u00a0y\u3000z\u0085w\u2028v\u2029u\u200bt\ufeffs\u202fr".encode(),
    "leading_trailing_spaces": b"     leading and trailing     ",
    "only_spaces": b"                                ",
    "digits": b"0 12 345 6789 1234567890 3.14159 1,000,000 007",
    "mixed_digits": "٣٤٥ ४५६ 123abc456 ²³ ½".encode(),
    "contractions": b"I'm you're they've it's we'll he'd 'S 'T ' ' ''",
    "code": b"def f(x):\n    return x**2  # comment\n\tif (a && b) { c[i] = '\\n'; }",
    "special_chatml": b"<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n",
    "special_llama3": b"<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nhi<|eot_id|>",
    "special_gemma": b"<bos><start_of_turn>user\nhi<end_of_turn>\n<start_of_turn>model\n",
    "special_lookalikes": b"<|im_start| <|im_end|x <s> </s> <unk> <|endoftext|> <pad> [INST] <<SYS>> <|im_end",
    "byte_token_spellings": b"<0x41><0xFF><0x0A> <0x> <0xZZ> <0x100>",
    "metaspace_chars": "\u2581hello\u2581\u2581world \u2581 \u0120 \u010a".encode(),
    "invalid_continuation": b"abc\x80\x81\xbf def \xc0\xc1 ghi",
    "invalid_truncated": b"\xe2\x82 \xf0\x9f\x98 \xc3 end\xe6\x97",
    "invalid_overlong_surrogate": b"\xc0\xaf \xe0\x80\xaf \xed\xa0\x80 \xed\xbf\xbf \xf4\x90\x80\x80 \xf8\x88\x80\x80\x80",
    "invalid_mixed": b"ok \xff\xfe\xfd caf\xe9 na\xefve \x00nul\x00 \x1b[31mred\x1b[0m",
    "nul_and_controls": b"\x00\x01\x02\x03\x04\x05\x06\x07\x08\x7f",
    "long_word": b"Supercalifragilisticexpialidocious" * 4 + b" pneumonoultramicroscopicsilicovolcanoconiosis",
    "repeated_chars": b"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!!!!!!!!!!!!!!??????........",
    "url_email": b"https://example.com/path?q=1&r=2#frag user.name+tag@example.org",
}


def main():
    out = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "fuzz/corpus/tokenize_fuzz")
    out.mkdir(parents=True, exist_ok=True)
    for i, (name, text) in enumerate(TEXTS.items()):
        # Tokenizer slot i % 8; the flags walk through their combinations as i grows.
        flags = (i % 8) | ((i // 4) % 8) << 3 | (i % 4) << 6
        (out / name).write_bytes(bytes([flags]) + text)


if __name__ == "__main__":
    main()
