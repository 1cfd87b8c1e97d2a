"""Hand-written seed material for the tokenizer corpus (see make_corpus.py).

Each list is one category; make_corpus.py combines and varies them deterministically.
Keep every entry valid Unicode (no lone surrogates): the corpus is UTF-8 only.
"""

LATIN = [
    "The quick brown fox jumps over the lazy dog.",
    "Hello, world!",
    "hello world",
    "HELLO WORLD",
    "I'm sure they'll say it's fine, but we've seen what's happened.",
    "Don't, won't, can't, shouldn't've.",
    "Mr. Smith went to Washington D.C. on Jan. 5th, 2024.",
    "e-mail: someone@example.com, web: https://example.org/path?q=1&r=two#frag",
    "Crème brûlée, façade, naïve, coöperate, résumé, jalapeño.",
    "Größenwahn und Straßenbahn: Übermäßige Äpfel, Öl und Ähren.",
    "Ça va? Où est la bibliothèque? L'été dernier, j'ai lu « Les Misérables ».",
    "¿Dónde está el baño? ¡Qué día más bonito! El niño comió piñata.",
    "Ação, coração, não, São Paulo, informação, pão de queijo.",
    "Zażółć gęślą jaźń. Łódź, Kraków, Gdańsk.",
    "Příliš žluťoučký kůň úpěl ďábelské ódy.",
    "Árvíztűrő tükörfúrógép.",
    "Şişli'de çağdaş bir öğrenci ışık gördü.",
    "Vật lý học, Tiếng Việt, Hà Nội, Đà Nẵng, người.",
    "Smørrebrød, blåbærsyltetøy, Ærø, Øresund.",
    "Æsir, Þórr, Óðinn, skáld — íslenska.",
    "Ein kleiner Test: ß vs. ẞ, ij vs. ĳ, ﬁ ligature, ǅ digraph.",
    "antidisestablishmentarianism pneumonoultramicroscopicsilicovolcanoconiosis",
    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
    "abababababababababababababababab",
    "camelCaseIdentifier snake_case_identifier SCREAMING_CASE kebab-case",
    "a b c d e f g h i j k l m n o p q r s t u v w x y z",
    "O'Neill's café—the one on 5th Ave.—closes at 11 p.m.",
]

CYRILLIC = [
    "Съешь же ещё этих мягких французских булок, да выпей чаю.",
    "Привет, мир! Как дела?",
    "Москва — столица России.",
    "Ґанок, їжак, єнот: українська абетка.",
    "Љубав, њива, џеп, ђак, ћуп — српски.",
    "Бърза кафява лисица прескача мързеливото куче.",
]

GREEK = [
    "Ξεσκεπάζω την ψυχοφθόρα βδελυγμία.",
    "Γειά σου Κόσμε! Τι κάνεις;",
    "ἐν ἀρχῇ ἦν ὁ λόγος, καὶ ὁ λόγος ἦν πρὸς τὸν θεόν",
    "α β γ δ ε ζ η θ ι κ λ μ ν ξ ο π ρ σ ς τ υ φ χ ψ ω",
]

ARABIC = [
    "مرحبا بالعالم",
    "اللغة العربية جميلة جداً.",
    "السَّلَامُ عَلَيْكُمْ وَرَحْمَةُ اللهِ",
    "العدد ١٢٣٤٥٦٧٨٩٠ والعدد 1234567890",
    "سلام دنیا، حال شما چطور است؟",
    "یہ اردو زبان ہے۔",
]

HEBREW = [
    "שלום עולם",
    "עברית היא שפה שמית.",
    "בְּרֵאשִׁית בָּרָא אֱלֹהִים",
    "He said שלום and left.",
]

INDIC = [
    "नमस्ते दुनिया",
    "हिन्दी भारत की एक भाषा है।",
    "क्षत्रिय, ज्ञान, श्रीमान, द्वार",
    "সবাইকে নমস্কার",
    "வணக்கம் உலகம்",
    "నమస్కారం ప్రపంచం",
    "ਸਤਿ ਸ੍ਰੀ ਅਕਾਲ",
    "ગુજરાતી ભાષા",
]

THAI_SEA = [
    "สวัสดีชาวโลก",
    "ภาษาไทยไม่มีการเว้นวรรคระหว่างคำ",
    "ສະບາຍດີ",
    "မင်္ဂလာပါ",
    "សួស្តី​ពិភពលោក",
]

CJK = [
    "你好，世界！",
    "我爱自然语言处理。",
    "中华人民共和国成立于一九四九年。",
    "繁體中文與簡體中文並不相同。",
    "こんにちは世界",
    "日本語の文章には、ひらがな・カタカナ・漢字が混在します。",
    "東京スカイツリーは高さ634メートルです。",
    "ｶﾀｶﾅ ﾊﾝｶｸ and ＦＵＬＬＷＩＤＴＨ ＡＢＣ １２３",
    "𠀀𠀁𠀂 𪚥 𰻞 (CJK extension planes)",
    "「引用」『二重引用』【括弧】〈山括弧〉",
]

KOREAN = [
    "안녕하세요, 세계!",
    "한국어는 한글로 씁니다.",
    "대한민국의 수도는 서울입니다.",
    "ㄱㄴㄷㄹ ㅏㅑㅓㅕ",
]

OTHER_SCRIPTS = [
    "ሰላም ለዓለም",
    "Բարեւ աշխարհ",
    "გამარჯობა მსოფლიო",
    "ᐊᐃᓐᓇᐅᑦ",
    "ᚠᚢᚦᚨᚱᚲ",
    "𝔘𝔫𝔦𝔠𝔬𝔡𝔢 𝕞𝕒𝕥𝕙 𝒮𝒸𝓇𝒾𝓅𝓉",
    "∀x ∈ ℝ: x² ≥ 0; ∑ᵢ aᵢ ≤ ∫₀^∞ f(t) dt ≈ π ≠ ∞",
    "½ ⅓ ¼ ⅛ ① ② ③ Ⅻ ℃ ℉ № ™ © ®",
    "→ ← ↑ ↓ ⇒ ⇔ ✓ ✗ ★ ☆ ♠ ♥ ♦ ♣",
]

CODE = [
    "def fibonacci(n):\n    if n < 2:\n        return n\n    return fibonacci(n - 1) + fibonacci(n - 2)\n",
    "import numpy as np\n\nx = np.zeros((3, 4), dtype=np.float32)\nprint(x.shape)\n",
    "class Foo(Base):\n    \"\"\"Docstring.\"\"\"\n\n    def __init__(self, *args, **kwargs):\n        super().__init__(*args, **kwargs)\n",
    "#include <stdio.h>\n\nint main(int argc, char **argv) {\n\tprintf(\"%d\\n\", argc);\n\treturn 0;\n}\n",
    "template <typename T>\nstd::vector<T> f(const std::vector<T>& v) { return {v.rbegin(), v.rend()}; }\n",
    "fn main() {\n    let v: Vec<i32> = (0..10).map(|x| x * x).collect();\n    println!(\"{:?}\", v);\n}\n",
    "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tfmt.Println(\"hi\")\n}\n",
    "const add = (a, b) => a + b;\nconsole.log(`sum: ${add(1, 2)}`);\n",
    "function f() { return x !== undefined && y === null || z >= 0; }",
    "SELECT id, name FROM users WHERE age >= 18 AND name LIKE '%son' ORDER BY id DESC;",
    "<!DOCTYPE html>\n<html><head><title>T</title></head><body><p class=\"x\">Hi &amp; bye</p></body></html>\n",
    "{\"key\": \"value\", \"list\": [1, 2.5, -3e10, true, null], \"nested\": {\"a\": {}}}",
    "#!/bin/bash\nset -euo pipefail\nfor f in *.txt; do echo \"$f\" | tr a-z A-Z; done\n",
    "x = [i**2 for i in range(100) if i % 3 == 0]  # list comprehension",
    "if (a &&b||!c) { x+=1; y-=2; z*=3; w/=4; v%=5; u<<=1; t>>=2; }",
    "    indented line\n        more indented\n\t\ttabbed\n",
    "\\begin{equation}\n  E = mc^2 \\quad \\frac{a}{b} \\sum_{i=0}^{n} x_i\n\\end{equation}",
    "# Title\n\n- item one\n- item two\n\n```python\nprint('x')\n```\n",
    "a.b.c.d->e->f::g::h<int>(i)[j]{k}",
    "0x7FFF_FFFF 0b1010 0o755 1e-9 3.14159f 42u 1_000_000",
    "public static void main(String[] args) { System.out.println(\"Hello\"); }",
    "local t = {1, 2, 3}\nfor i, v in ipairs(t) do print(i, v) end\n",
]

EMOJI = [
    "😀😃😄😁😆😅😂🤣",
    "I love it ❤️ so much!",
    "👍🏻👍🏼👍🏽👍🏾👍🏿",
    "👨‍👩‍👧‍👦 family, 👩‍💻 technologist, 🏳️‍🌈 rainbow flag, 🧑🏽‍🚀 astronaut",
    "🇫🇷🇩🇪🇯🇵🇺🇸🇧🇷 flags",
    "🏴󠁧󠁢󠁳󠁣󠁴󠁿 Scotland (tag sequence)",
    "#️⃣ 1️⃣ 2️⃣ keycaps",
    "☺ ☺️ ✈ ✈️ text vs emoji presentation",
    "🦙🐍🦀🐹🐘",
    "emoji🙂inside🙂words",
]

NUMBERS = [
    "0",
    "7",
    "42",
    "123",
    "1234",
    "12345",
    "1234567890",
    "3.14159265358979323846264338327950288419716939937510",
    "The year 2024 had 366 days; 1,000,000 people; $1,234.56; 99.9%.",
    "2024-01-15T13:45:30.123Z",
    "+1 (555) 123-4567",
    "192.168.0.1 and ::1 and fe80::1ff:fe23:4567:890a",
    "v1.2.3-rc.4+build.567",
    "000000000000000000000000000000",
    "98765432109876543210987654321098765432109876543210",
    "1 2 3 4 5 6 7 8 9 10 11 12 13 14 15",
    "-0.0001 +0.5 1e+308 -1E-308",
]

PUNCT = [
    "!!!???...",
    "...",
    "…",
    "?!?!?!?!",
    "-----",
    "=====",
    "*****",
    "#####",
    "~~~~~",
    "______",
    "//////",
    "\\\\\\\\",
    "(((())))",
    "[[[]]]{{{}}}",
    "<<<>>>",
    "\"'`\"'`",
    "@#$%^&*()_+-=[]{}|;':\",./<>?",
    "— – ‐ ‑ ‒ −",
    "“smart quotes” ‘single’ „German“ «French» ‹angle›",
    "。、！？：；",
    "¡¿‽⁇⁈",
]

SPECIAL_LOOKALIKES = [
    "<|im_start|>",
    "<|im_end|>",
    "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n",
    "<|endoftext|>",
    "<start_of_turn>",
    "<end_of_turn>",
    "<start_of_turn>user\nhello<end_of_turn>\n<start_of_turn>model\n",
    "<bos>",
    "<eos>",
    "<pad>",
    "<unk>",
    "<s>",
    "</s>",
    "<s>[INST] hi [/INST]</s>",
    "<mask>",
    "<|begin_of_text|><|start_header_id|>user<|end_header_id|>",
    "<|eot_id|>",
    "<start_of_image>",
    "[CLS] [SEP] [MASK]",
    "<|im_start",
    "im_start|>",
    "< |im_start| >",
    "<<|im_start|>>",
    "<bos><bos>",
    "<|fake_token|>",
    "<think></think>",
]

WHITESPACE = [
    " ",
    "  ",
    "   ",
    "    ",
    "\t",
    "\t\t",
    "\n",
    "\n\n",
    "\n\n\n",
    "\r\n",
    "\r\n\r\n",
    "\r",
    " \n ",
    "\t \n \t",
    "\u00a0",  # no-break space
    "\u2003",  # em space
    "\u3000",  # ideographic space
    "\u200b",  # zero width space
    "\u200c\u200d",  # ZWNJ ZWJ
    "\ufeff",  # BOM as a character
    "\u2028\u2029",  # line / paragraph separator
    "\u000b\u000c",  # vertical tab, form feed
]

CONTROL = [
    "\x00",
    "a\x00b",
    "\x01\x02\x03",
    "bell\x07",
    "esc\x1b[31mred\x1b[0m",
    "\x7f",
    "\x08backspace",
    "\x1f\x1e\x1d",
    "\u0080\u0085\u009f",
    "\u202etxet desrever\u202c",
    "\u200eleft-to-right mark\u200f",
    "\ue000\uf8ff private use",
    "\U0010fffd plane 16",
    "\ufffd replacement char",
    "\ufffe\uffff noncharacters",
]

# (NFC text, its NFD form is produced by make_corpus.py with unicodedata)
COMBINING = [
    "é è ê ë",
    "Å Ω Ķ ṩ",
    "한국어",
    "ố ự ẫ",
    "e\u0301 vs \u00e9",
    "a\u0300\u0301\u0302\u0303\u0304",
    "Z\u0351\u0357\u035b\u0300a\u0301l\u0352g\u0313o\u0314",  # zalgo
    "\u0915\u094d\u0937",  # conjunct via virama
    "n\u0303",
    "\u1100\u1161\u11a8",  # conjoining jamo
    "ﬀ ﬃ ﬆ",
    "Ⅳ ⑴ ㈱ ㍿",
]

PROSE = [
    ("It was the best of times, it was the worst of times, it was the age of wisdom, it "
     "was the age of foolishness, it was the epoch of belief, it was the epoch of "
     "incredulity."),
    ("Machine learning models are trained on large datasets. The process involves "
     "optimizing a loss function with gradient descent; each step updates the weights."),
    ("Dans une ville lointaine vivait un vieil horloger. Chaque matin, il ouvrait sa "
     "boutique à sept heures précises et réparait les montres des voisins."),
    ("Die Quantenmechanik beschreibt das Verhalten von Teilchen auf atomarer Ebene. "
     "Heisenbergs Unschärferelation ist eines ihrer bekanntesten Ergebnisse."),
    ("Война и мир — роман-эпопея Льва Николаевича Толстого, описывающий русское "
     "общество в эпоху войн против Наполеона."),
    "春眠不觉晓，处处闻啼鸟。夜来风雨声，花落知多少。",
    "古池や蛙飛び込む水の音",
    ("Q: What is 2 + 2?\nA: 4.\n\nQ: What is the capital of Japan?\nA: Tokyo.\n"),
    "User: Hi there!\nAssistant: Hello! How can I help you today?\n",
]

CATEGORIES = {
    "latin": LATIN,
    "cyrillic": CYRILLIC,
    "greek": GREEK,
    "arabic": ARABIC,
    "hebrew": HEBREW,
    "indic": INDIC,
    "thai_sea": THAI_SEA,
    "cjk": CJK,
    "korean": KOREAN,
    "other_scripts": OTHER_SCRIPTS,
    "code": CODE,
    "emoji": EMOJI,
    "numbers": NUMBERS,
    "punct": PUNCT,
    "special_lookalikes": SPECIAL_LOOKALIKES,
    "whitespace": WHITESPACE,
    "control": CONTROL,
    "combining": COMBINING,
    "prose": PROSE,
}
