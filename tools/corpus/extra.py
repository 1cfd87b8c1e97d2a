"""Sections 13-23 of the corpus (make_corpus.py): the wider material of seeds_extra.py,
varied with the same seeded random generator, so that the corpus stays deterministic.

13 sentences in ~80 languages, padded, cased, cut and normalized;
14 random words and sentences in ~60 scripts (explicit code-point ranges);
15 code in ~30 languages: identifiers renamed, re-indented, CRLF, cut, fenced;
16 emoji: skin tones, ZWJ sequences (professions, genders, families), flags, tag flags,
   keycaps, broken sequences, emoji inside text;
17 whitespace runs of every Unicode space and line break, alone and around text;
18 digit runs (1-300 digits) of 25 numbering systems, and numbers in every format;
19 special-token look-alikes of the six shared vocabularies: alone, glued, broken,
   re-cased, and whole chat templates;
20 control and format characters: every C0/C1 control, bidi and zero-width characters,
   variation selectors, tags, noncharacters, private use, unassigned code points;
21 combining-mark stacks and normalization edge cases;
22 long mixed paragraphs (400-2,000 characters) of sentences, code and emoji;
23 cross-script joins and character soups until the corpus has TARGET strings.
"""

from __future__ import annotations

import unicodedata

import seeds_extra as X
from seeds import CATEGORIES, PROSE

PADS = [(" ", ""), ("", " "), ("  ", ""), ("\n", ""), ("", "\n"), ("\t", ""), ("", "\n\n"),
        ("\u00a0", ""), ("", "\r\n"), (" ", " ")]


def alphabet(ranges):
    return [chr(cp) for lo, hi in ranges for cp in range(lo, hi + 1)]


def sentences(c, rng):
    for s in X.SENTENCES:
        c.add("sentence", s)
        for pre, post in rng.sample(PADS, 2):
            c.add("sentence+pad", pre + s + post)
        c.add("sentence+prefix", s[: rng.randint(1, max(1, len(s) - 1))])
        c.add("sentence+suffix", s[rng.randint(1, max(1, len(s) - 1)):])
        for form in ("NFD", "NFKC"):
            c.add("sentence+" + form.lower(), unicodedata.normalize(form, s))
        c.add("sentence+upper", s.upper())
        c.add("sentence+lower", s.lower())
        words = s.split(" ")
        if len(words) > 3:
            rng.shuffle(words)
            c.add("sentence+shuffled", " ".join(words))
            c.add("sentence+nospace", "".join(words))
            c.add("sentence+lines", "\n".join(words))


def script_words(c, rng):
    for name, ranges in X.ALPHABETS:
        letters = alphabet(ranges)
        no_space = name in X.NO_SPACE_SCRIPTS
        for k in range(32):
            n_words = rng.choice([1, 1, 2, 3, 5, 8, 13, 20, 40])
            words = ["".join(rng.choice(letters) for _ in range(rng.randint(1, 10)))
                     for _ in range(n_words)]
            if no_space:
                text = "".join(w + (rng.choice(["、", "。", "，", " ", ""]) if rng.random() < 0.2 else "")
                               for w in words)
            else:
                text = ""
                for i, w in enumerate(words):
                    text += w
                    if i + 1 < len(words):
                        text += rng.choice(X.PHRASE_SEPARATORS) if rng.random() < 0.2 else " "
            if k % 4 == 1:
                text += rng.choice([".", "!", "?", "...", " 123", " 2024", ":", ""])
            elif k % 4 == 2:
                text = rng.choice(["The word ", "«", "(", "1. ", "# ", "- ", "\"", ""]) + text
            elif k % 4 == 3:
                text = text + " " + rng.choice(X.SENTENCES)
            c.add("script_" + name, text)


def rename(code, rng):
    """Replaces a few of the snippet's identifiers with others (word-boundary aware)."""
    import re
    names = sorted(set(re.findall(r"\b[A-Za-z_][A-Za-z0-9_]{1,}\b", code)))
    if not names:
        return code
    mapping = {n: rng.choice(X.IDENTIFIERS) for n in rng.sample(names, min(3, len(names)))}
    return re.sub(r"\b[A-Za-z_][A-Za-z0-9_]{1,}\b", lambda m: mapping.get(m.group(0), m.group(0)), code)


def reindent(code, unit):
    out = []
    for line in code.split("\n"):
        stripped = line.lstrip(" \t")
        depth = 0
        for ch in line[: len(line) - len(stripped)]:
            depth += 1 if ch == "\t" else 0.25
        out.append(unit * int(depth + 0.5) + stripped)
    return "\n".join(out)


def code(c, rng):
    snippets = X.CODE + CATEGORIES["code"]
    langs = ["python", "c", "cpp", "rust", "go", "js", "ts", "java", "kotlin", "bash", "sql", ""]
    for s in snippets:
        c.add("code", s)
        c.add("code+renamed", rename(s, rng))
        c.add("code+renamed", rename(s, rng))
        c.add("code+indent2", reindent(s, "  "))
        c.add("code+indent8", reindent(s, "        "))
        c.add("code+tabs", reindent(s, "\t"))
        c.add("code+crlf", s.replace("\n", "\r\n"))
        c.add("code+trailing_ws", s.replace("\n", rng.choice(["  \n", "\t\n", " \r\n"])))
        c.add("code+fenced", "```" + rng.choice(langs) + "\n" + s + "```\n")
        c.add("code+nonewline", s.rstrip("\n"))
        lines = s.split("\n")
        if len(lines) > 2:
            a = rng.randrange(len(lines) - 1)
            b = rng.randint(a + 1, len(lines))
            c.add("code+lines", "\n".join(lines[a:b]))
        c.add("code+cut", s[: rng.randint(1, len(s))])
        c.add("code+deep", reindent(s, "    ").replace("\n", "\n" + "    " * rng.randint(2, 6)))
    ops = ["+", "-", "*", "/", "%", "**", "//", "<<", ">>", "&", "|", "^", "&&", "||", "==", "!=",
           "<=", ">=", "<", ">", "->", "=>", "::", ".", "?.", "??", "+=", "-=", "|>", "..="]
    for _ in range(300):
        parts = []
        for _ in range(rng.randint(1, 8)):
            atom = rng.choice([rng.choice(X.IDENTIFIERS), str(rng.randint(0, 10**rng.randint(1, 9))),
                               f"{rng.random():.{rng.randint(1, 6)}f}", "'" + rng.choice(X.IDENTIFIERS) + "'",
                               rng.choice(X.IDENTIFIERS) + "(" + rng.choice(X.IDENTIFIERS) + ")",
                               rng.choice(X.IDENTIFIERS) + "[" + str(rng.randint(0, 99)) + "]"])
            parts.append(atom)
        spaced = rng.random() < 0.6
        expr = (" " if spaced else "").join(
            p + ((" " if spaced else "") + rng.choice(ops) if i + 1 < len(parts) else "")
            for i, p in enumerate(parts))
        line = rng.choice(["{} = {};", "let {} = {};", "if ({} > {}) {{", "return {} + {}", "{}({})",
                           "assert {} != {}", "{}: {}", "#define {} ({})", "{} := {}"])
        c.add("code_expr", line.format(rng.choice(X.IDENTIFIERS), expr))


def emoji(c, rng):
    tones = list(X.SKIN_TONES)
    for b in X.SKIN_TONE_BASES:
        c.add("emoji_tone", b)
        c.add("emoji_tone", "".join(b + t for t in tones))
        c.add("emoji_tone", "Hi " + b + rng.choice(tones) + " there")
    for p in X.PERSONS:
        for o in X.PROFESSION_OBJECTS:
            c.add("emoji_zwj", p + "\u200d" + o)
            t = rng.choice(tones)
            c.add("emoji_zwj", p + t + "\u200d" + o + " " + rng.choice(X.SENTENCES)[:40])
    for g in X.GENDERABLE:
        for sign in X.GENDER_SIGNS:
            c.add("emoji_zwj", g + "\u200d" + sign)
        c.add("emoji_zwj", g + rng.choice(tones) + "\u200d" + rng.choice(X.GENDER_SIGNS))
    for s in X.ZWJ_FIXED:
        c.add("emoji_zwj", s)
        c.add("emoji_zwj", s + s + s)
        c.add("emoji_zwj", "family: " + s + ".")
        c.add("emoji_zwj", s.replace("\u200d", ""))  # the same pieces without joiners
    ri = {ch: chr(0x1F1E6 + ord(ch) - ord("A")) for ch in "ABCDEFGHIJKLMNOPQRSTUVWXYZ"}
    flags = ["".join(ri[ch] for ch in code) for code in X.COUNTRY_CODES]
    for f in flags:
        c.add("emoji_flag", f)
    for _ in range(80):
        c.add("emoji_flag", "".join(rng.choice(flags) for _ in range(rng.randint(2, 8))))
        c.add("emoji_flag", rng.choice(X.COUNTRY_CODES) + " " + rng.choice(flags) + " " +
              rng.choice(X.SENTENCES)[:30])
    for _ in range(30):  # odd numbers of regional indicators
        c.add("emoji_flag_broken", "".join(rng.choice(list(ri.values())) for _ in range(rng.choice([1, 3, 5]))))
    for tag in X.TAG_FLAGS:
        seq = "🏴" + "".join(chr(0xE0000 + ord(ch)) for ch in tag) + "\U000e007f"
        c.add("emoji_tagflag", seq)
        c.add("emoji_tagflag", seq + " and " + seq[:-1])  # the second lacks its cancel tag
    for k in X.KEYCAP_BASES:
        c.add("emoji_keycap", k + "\ufe0f\u20e3")
        c.add("emoji_keycap", k + "\u20e3")  # without the variation selector
    c.add("emoji_keycap", "".join(k + "\ufe0f\u20e3" for k in X.KEYCAP_BASES))
    plain = list(X.PLAIN_EMOJI)
    for _ in range(200):
        n = rng.choice([1, 2, 3, 5, 8, 20, 60])
        c.add("emoji_run", "".join(rng.choice(plain) for _ in range(n)))
    for _ in range(200):
        words = rng.choice(X.SENTENCES).split(" ")
        for _ in range(rng.randint(1, 4)):
            at = rng.randrange(len(words) + 1)
            e = rng.choice(plain + flags + X.ZWJ_FIXED)
            words.insert(at, e * rng.choice([1, 1, 2, 3]))
        c.add("emoji_text", rng.choice([" ", "", " "]).join(words))
    broken = ["\u200d", "\u200d\u200d", "👨\u200d", "\u200d👩", "👨\u200d\u200d👩", "\U0001F3FB",
              "\U0001F3FB\U0001F3FC", "a\U0001F3FD", "\ufe0f", "\ufe0f\ufe0f", "x\ufe0f", "\u20e3",
              "❤\ufe0e", "☺\ufe0e\ufe0f", "\U000e0067\U000e0062", "👍\U0001F3FB\U0001F3FB",
              "🏳\u200d", "\u200d🌈", "💁\u200d♀", "👁\u200d🗨"]
    for b in broken:
        c.add("emoji_broken", b)
        c.add("emoji_broken", "text" + b + "text")
        c.add("emoji_broken", " " + b + " ")


def whitespace(c, rng):
    atoms = X.SPACES + X.LINE_BREAKS + ["\t"]
    for ch in atoms:
        for n in (1, 2, 3, 7, 16, 33, 100):
            c.add("ws_char", ch * n)
        c.add("ws_char", "a" + ch + "b")
        c.add("ws_char", "word" + ch * 3 + "word")
        c.add("ws_char", ch + "lead")
        c.add("ws_char", "trail" + ch)
    for n in (128, 255, 256, 257, 300, 511, 512, 1000, 1999):
        for ch in (" ", "\t", "\n", "\r\n", "\u00a0"):
            c.add("ws_long", ch * n)
        c.add("ws_long", "x" + " " * n + "y")
    for _ in range(400):
        run = "".join(rng.choice(atoms if rng.random() < 0.3 else [" ", "\t", "\n", "\u00a0"])
                      for _ in range(rng.choice([2, 3, 4, 6, 10, 25, 60, 150, 300])))
        left = rng.choice(["", "a", "Hello", "def f():", "}", "你好", "مرحبا", "1", "<s>", "😀"])
        right = rng.choice(["", "b", "world", "return x", "{", "世界", "שלום", "2", "</s>", "🙂"])
        c.add("ws_mix", left + run + right)
    for _ in range(150):  # indentation the way files have it
        lines = []
        for _ in range(rng.randint(2, 10)):
            lines.append(rng.choice(["", " ", "  ", "    ", "\t", "\t\t", "        ", "   \t"]) * rng.randint(1, 3)
                         + rng.choice(["x", "if y:", "}", "- item", "", "# c", "end"]) +
                         rng.choice(["", " ", "  ", "\t"]))
        c.add("ws_indent", rng.choice(["\n", "\r\n", "\n\n"]).join(lines))


def digits(c, rng):
    for ds in X.DIGIT_SETS:
        for n in (1, 2, 3, 4, 5, 6, 7, 9, 12, 17, 33):
            c.add("digits_run", "".join(rng.choice(ds) for _ in range(n)))
        c.add("digits_run", ds)
        c.add("digits_run", ds[::-1])
        c.add("digits_run", " ".join(ds))
        c.add("digits_run", "abc" + "".join(rng.choice(ds) for _ in range(5)) + "xyz")
    for n in list(range(41, 101, 3)) + [127, 128, 129, 200, 255, 256, 300]:
        c.add("digits_long", "".join(rng.choice("0123456789") for _ in range(n)))
        c.add("digits_long", "9" * n)
        c.add("digits_long", " " + "".join(rng.choice("0123456789") for _ in range(n)))
    fmts = [
        lambda: f"{rng.randint(0, 10**9):,}",
        lambda: f"{rng.randint(0, 10**9):_}",
        lambda: f"{rng.uniform(-1e3, 1e3):.{rng.randint(1, 12)}f}",
        lambda: f"{rng.uniform(1e-30, 1e30):e}",
        lambda: f"{rng.uniform(1e-30, 1e30):.3E}",
        lambda: f"0x{rng.getrandbits(rng.choice([8, 16, 32, 64])):X}",
        lambda: f"0x{rng.getrandbits(rng.choice([8, 16, 32, 64])):x}",
        lambda: f"0b{rng.getrandbits(rng.randint(1, 32)):b}",
        lambda: f"{rng.randint(1900, 2100)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}",
        lambda: f"{rng.randint(1, 28)}/{rng.randint(1, 12)}/{rng.randint(0, 99):02d}",
        lambda: f"{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}.{rng.randint(0, 999):03d}",
        lambda: f"v{rng.randint(0, 20)}.{rng.randint(0, 99)}.{rng.randint(0, 999)}",
        lambda: ".".join(str(rng.randint(0, 255)) for _ in range(4)),
        lambda: f"+{rng.randint(1, 99)} {rng.randint(100, 999)} {rng.randint(100, 999)} {rng.randint(1000, 9999)}",
        lambda: rng.choice(["$", "€", "£", "¥", "₹", "₩", "₽", "₺", "฿", "₫", "CHF "]) +
        f"{rng.uniform(0, 1e6):,.2f}",
        lambda: f"{rng.uniform(0, 100):.1f}%",
        lambda: f"{rng.randint(1, 100)}{rng.choice(['st', 'nd', 'rd', 'th', 'er', 'ème', '.', 'º'])}",
        lambda: f"{rng.randint(1, 9)}/{rng.randint(2, 99)}",
        lambda: f"{rng.randint(1, 999)}{rng.choice(['km', 'kg', 'ms', 'px', 'GB', 'MHz', '°C', 'µm', 'x'])}",
        lambda: f"{rng.randint(0, 99)}×{rng.randint(0, 99)}={rng.randint(0, 9999)}",
        lambda: "".join(rng.choice("0123456789") for _ in range(rng.randint(2, 20))) + rng.choice(["", "th", "L", "n", "u64"]),
        lambda: rng.choice(X.DIGIT_SETS)[rng.randint(1, 9)] + rng.choice(["", ".", ",", "/"]) +
        "".join(rng.choice(rng.choice(X.DIGIT_SETS)) for _ in range(rng.randint(1, 8))),
        lambda: "".join(rng.choice(X.NUMBER_SYMBOLS) for _ in range(rng.randint(1, 6))),
        lambda: f"ISBN 978-{rng.randint(0, 9)}-{rng.randint(100, 999)}-{rng.randint(10000, 99999)}-{rng.randint(0, 9)}",
        lambda: f"{rng.randint(1000, 9999)} {rng.randint(1000, 9999)} {rng.randint(1000, 9999)} {rng.randint(1000, 9999)}",
    ]
    for _ in range(500):
        text = rng.choice(fmts)()
        if rng.random() < 0.3:
            text = rng.choice(["Total: ", "in ", "价格", "السعر ", "цена ", "(", "#", " "]) + text + \
                rng.choice(["", ".", ")", " units", "円", " руб.", "\n"])
        c.add("digits_format", text)


def specials(c, rng):
    toks = X.SPECIAL_TOKENS
    for t in toks:
        c.add("special", t)
        c.add("special", t + t)
        c.add("special", "Hello" + t + "world")
        c.add("special", " " + t + " ")
        c.add("special", "\n" + t + "\n")
        c.add("special", t.upper() if t.upper() != t else t.lower())
        if len(t) > 2:
            c.add("special_broken", t[:-1])
            c.add("special_broken", t[1:])
            k = rng.randint(1, len(t) - 1)
            c.add("special_broken", t[:k] + " " + t[k:])
            c.add("special_broken", t[:k] + t[k + 1:])
            c.add("special_broken", t.replace("|", "｜") if "|" in t else t.replace("｜", "|"))
            c.add("special_broken", "<" + t + ">")
    for _ in range(250):
        parts = [rng.choice(toks) for _ in range(rng.randint(2, 6))]
        glue = [rng.choice(["", " ", "\n", "x", "user", "\n\n", "😀", "é"]) for _ in parts]
        c.add("special_mix", "".join(p + g for p, g in zip(parts, glue)))
    for tpl in X.CHAT_TEMPLATES:
        for _ in range(20):
            c.add("chat_template", tpl.format(sys=rng.choice(X.SENTENCES + PROSE),
                                              user=rng.choice(X.SENTENCES + CATEGORIES["latin"])))


def controls(c, rng):
    every = X.C0 + X.C1
    for ch in every:
        c.add("control_char", ch)
        c.add("control_char", ch * 3)
        c.add("control_char", "a" + ch + "b")
        c.add("control_char", "Hello" + ch + " world")
        c.add("control_char", " " + ch)
        c.add("control_char", ch + "\n")
    for ch in X.FORMAT_CHARS + X.NONCHARACTERS + X.PRIVATE_USE + X.UNASSIGNED:
        c.add("format_char", ch)
        c.add("format_char", ch + ch)
        c.add("format_char", "word" + ch + "word")
        c.add("format_char", ch + " lead")
        c.add("format_char", "ｱ" + ch + "中")
    for _ in range(200):
        n = rng.choice([2, 3, 5, 10, 30])
        pool = rng.choice([X.C0, X.C1, X.FORMAT_CHARS, every + X.FORMAT_CHARS + [" ", "a", "é", "中"]])
        c.add("control_mix", "".join(rng.choice(pool) for _ in range(n)))
    seqs = ["\x1b[0m", "\x1b[1;31m", "\x1b[38;5;208m", "\x1b[2J\x1b[H", "\x1b]0;title\x07",
            "\x1b[?25l", "\r\x1b[K", "\x08\x08\x08", "\x00\x00\x00\x00", "\x0c\x0b", "\x1a", "\x04"]
    for s in seqs:
        c.add("control_ansi", s)
        c.add("control_ansi", s + "colored text" + "\x1b[0m")


def combining(c, rng):
    marks = [chr(cp) for cp in range(0x300, 0x370)] + ["\u0483", "\u0591", "\u05b0", "\u064b",
                                                       "\u0670", "\u093c", "\u094d", "\u0e31",
                                                       "\u0e48", "\u1ab0", "\u1dc0", "\u20d0",
                                                       "\u302a", "\u3099", "\ufe20"]
    bases = list("aeiouAEIOUnczsyxq") + ["α", "д", "א", "ب", "क", "ก", "か", "ㄱ", " ", "1", "😀"]
    for _ in range(300):
        text = ""
        for _ in range(rng.randint(1, 6)):
            text += rng.choice(bases) + "".join(rng.choice(marks) for _ in range(rng.choice([1, 1, 2, 3, 8, 20])))
        c.add("combining_stack", text)
    for s in X.SENTENCES[::3]:
        nfd = unicodedata.normalize("NFD", s)
        if nfd != s:
            c.add("combining_nfd", nfd)
    special_cases = ["ﬁ", "ﬀ", "ẞ", "İ", "ı", "ǅ", "ǈ", "ǋ", "ΐ", "ΰ", "ŉ", "ǰ", "ẖ", "ẗ", "ẘ",
                     "Ω", "K", "Å", "ſ", "µ", "ﹰ", "ﷺ", "ﷻ", "㍻", "㋿", "﷽", "ℌ", "℻", "№",
                     "Ⅻ", "ⓐ", "🄰", "𝐀", "ﾟ", "ｶﾞ", "가", "각", "\u1100\u1161\u11a8"]
    for s in special_cases:
        c.add("normalization", s)
        c.add("normalization", s * 3)
        c.add("normalization", "x" + s + "y")
        for form in ("NFD", "NFKC", "NFKD"):
            c.add("normalization", unicodedata.normalize(form, "x" + s + "y"))


def paragraphs(c, rng):
    pieces = X.SENTENCES + PROSE + CATEGORIES["latin"] + CATEGORIES["cjk"] + CATEGORIES["arabic"]
    for _ in range(300):
        target = rng.randint(400, 1600)
        text = ""
        while len(text) < target:
            r = rng.random()
            if r < 0.75:
                piece = rng.choice(pieces)
            elif r < 0.85:
                piece = rng.choice(X.CODE)
            elif r < 0.93:
                piece = "".join(rng.choice(X.PLAIN_EMOJI) for _ in range(rng.randint(1, 3)))
            else:
                piece = str(rng.randint(0, 10**rng.randint(1, 12)))
            sep = rng.choice([" ", " ", " ", "\n", "\n\n", "  ", "\t", "\r\n", ""])
            text += (sep if text else "") + piece
        c.add("paragraph", text)


def fill(c, rng, textual, pool, target):
    seps = [" ", "", "\n", "\t", ". ", "  ", ", ", "\r\n", " | ", "\n\n"]
    every = [s for _, s in c.items]
    while len(c.items) < target - 300:
        parts = [rng.choice(every if rng.random() < 0.7 else [s for _, s in textual])
                 for _ in range(rng.randint(2, 3))]
        c.add("join2", rng.choice(seps).join(p[:300] for p in parts))
    big_pool = sorted(set(pool) | set(X.PLAIN_EMOJI) | set("".join(X.SENTENCES)))
    while len(c.items) < target:
        c.add("soup2", "".join(rng.choice(big_pool) for _ in range(rng.randint(1, 60))))


def add_all(c, rng, textual, pool, target):
    sentences(c, rng)
    script_words(c, rng)
    code(c, rng)
    emoji(c, rng)
    whitespace(c, rng)
    digits(c, rng)
    specials(c, rng)
    controls(c, rng)
    combining(c, rng)
    paragraphs(c, rng)
    fill(c, rng, textual, pool, target)
