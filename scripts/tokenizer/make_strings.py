#!/usr/bin/env python3
"""Writes engine/testdata/tokenizer/strings.json: the golden test inputs.

Deterministic (fixed seed, no network). Run from the repo root:
    python3 scripts/tokenizer/make_strings.py > engine/testdata/tokenizer/strings.json
Each case is {"kind": ..., "text": ...}; kinds cover prose, code, CJK, emoji
(ZWJ sequences), Arabic/Hindi/Thai combining marks, digit and whitespace runs,
CRLF, contractions, chat markup (special tokens), NFD text and edge cases.
"""
import json
import random
import unicodedata

rng = random.Random(20240601)
cases = []


def add(kind, text):
    cases.append({"kind": kind, "text": text})


prose = [
    "Hello world",
    "Hello, my dog is cute",
    "The quick brown fox jumps over the lazy dog.",
    "It was the best of times, it was the worst of times, it was the age of wisdom.",
    "In 1492, Columbus sailed the ocean blue.",
    "Mr. O'Neil's café served crème brûlée at 7:30 p.m.",
    "A sentence ending with spaces   ",
    "   leading spaces",
    "Tabs\tand\tmore\ttabs",
    "e-mail: someone@example.com, web: https://example.org/path?q=1&r=2#frag",
    "UPPER CASE WORDS AND lower case words And Mixed Case",
    "naïve coöperation façade jalapeño résumé",
    "Ünïcödé wörds in Deutsch: Straße, Größe, Fußgänger",
    "Español: ¿Dónde está la biblioteca? ¡Allí!",
    "Français : « guillemets » et l’apostrophe typographique",
    "Русский текст: съешь же ещё этих мягких французских булок",
    "Ελληνικά: Ξεσκεπάζω την ψυχοφθόρα βδελυγμία",
    "Türkçe: İstanbul'da ılık bir gün",
    "Polski: Zażółć gęślą jaźń",
    "Tiếng Việt: Tôi yêu tiếng nước tôi",
    "a",
    "I",
    ".",
    "?!",
    "...",
    "—",
    "Hello\u00a0world (no-break space)",
    "wide\u3000ideographic\u3000space",
    "line\u2028separator and\u2029paragraph",
    "zero\u200bwidth\u200cnon\u200djoiner",
    "soft\u00adhyphen",
    "ellipsis… and dashes – — ‒",
]
for s in prose:
    add("prose", s)

contractions = [
    "I'm sure you're right, we've seen it, they'll come, he'd go, it's fine, don't.",
    "I'M SURE YOU'RE RIGHT, WE'VE SEEN IT, THEY'LL COME, HE'D GO, IT'S FINE, DON'T.",
    "We'Ve a'lL 'RE 'M 'D 'S 'T 'LL 'VE",
    "'s 't 're 've 'm 'll 'd",
    "'sup 'twas 'tis 'em",
    "rock 'n' roll",
    "O'Reilly's books",
    "can't won't shan't y'all'd've",
    "it''s double apostrophe",
    " 's leading space",
    "'",
    "''",
    "'x",
    "l'homme d'affaires",
    "I'd've thought so",
    "It’s a curly apostrophe (not a contraction)",
]
for s in contractions:
    add("contractions", s)

code = [
    "def add(a, b):\n    return a + b\n",
    "for (int i = 0; i < n; ++i) {\n\tsum += a[i] * b[i];\n}\n",
    "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tfmt.Println(\"hi\")\n}\n",
    "SELECT id, name FROM users WHERE age >= 18 ORDER BY name DESC;",
    "<div class=\"x\"><span>text</span></div>",
    "if x != nil && y == 0 || z <= -1 { return }",
    "const re = /^[a-z0-9_-]{3,16}$/i;",
    "x = [1, 2, 3]; y = {'a': 1, \"b\": 2}",
    "#include <stdio.h>\nint main(void) { printf(\"%d\\n\", 42); }",
    "    indented four\n        indented eight\n",
    "a->b; c::d; e=>f; g<<=2; h>>>=3; i**j; k//l",
    "$HOME/bin:/usr/local/bin:$PATH",
    "json: {\"key\": [true, false, null, 1.5e-3]}",
    "@decorator\nclass Foo(Bar):\n    pass",
    "lambda x: x**2 + 3*x - 1",
    "// comment\n/* block */\n# hash\n-- sql",
    "fn main() -> Result<(), Box<dyn Error>> { Ok(()) }",
    "```python\nprint('hi')\n```",
    "~~~~~~~~~~ ========== ---------- __________",
    "!!!!!!?????......,,,,,;;;;;::::",
    "\"\"\"docstring\"\"\"",
    "a\\b\\c \\n \\t \\\\",
]
for s in code:
    add("code", s)

cjk = [
    "你好，世界！",
    "我想在apple工作1314151天～",
    "今天天气很好，我们去公园散步吧。",
    "日本語のテキスト：東京は日本の首都です。",
    "ひらがなとカタカナ、漢字が混ざった文章。",
    "한국어 텍스트: 안녕하세요, 세계!",
    "中文English混合text测试123",
    "「引用」『二重』【括弧】〈山〉《书名》",
    "全角ＡＢＣ１２３！？",
    "半角ｶﾀｶﾅ",
    "繁體中文：臺灣的學校",
    "𠀀𠀁𠀂 CJK extension B",
    "龍龘齉",
    "一二三四五六七八九十百千万亿",
    "周一到周五上午9:00—下午6:00",
]
for s in cjk:
    add("cjk", s)

emoji = [
    "🚀 (normal) 😶‍🌫️ (multiple emojis concatenated) ✅ 🦙🦙",
    "👨‍👩‍👧‍👦 family",
    "👩🏽‍💻 woman technologist medium skin",
    "🏳️‍🌈 rainbow flag",
    "❤️‍🔥 heart on fire",
    "🇺🇸🇫🇷🇯🇵 flags",
    "1️⃣ 2️⃣ #️⃣ keycaps",
    "👍🏻👍🏼👍🏽👍🏾👍🏿",
    "smile😀grin😁joy😂",
    "🧑‍🤝‍🧑 people holding hands",
    "☕️ coffee ☀️ sun",
    "😀😃😄😁😆😅🤣😂🙂🙃",
    "emoji at end 🎉",
    "🎉",
]
for s in emoji:
    add("emoji", s)

marks = [
    "العربية: مَرْحَبًا بِكُمْ فِي الْعَالَمِ",
    "السلام عليكم ورحمة الله",
    "عدد ١٢٣٤٥ عربي",
    "हिन्दी: नमस्ते दुनिया, क्या हाल है?",
    "संस्कृतम् वाक्यम्",
    "हिंदी में अंक १२३४",
    "বাংলা ভাষা",
    "ภาษาไทย: สวัสดีครับ ผมชื่ออเล็กซ์",
    "กำลังทำงานอยู่ที่บ้าน",
    "ខ្មែរ: កាន់តែពិសេសអាច",
    "עברית: שָׁלוֹם עוֹלָם",
    "ગુજરાતી લિપિ",
    "தமிழ் மொழி",
    "తెలుగు భాష",
    "ᄒᆞᆫ글 old hangul jamo",
    "Z̤͔ͧ̑̓ä͖̭̈̇lͮ̒ͫǧ̗͚̚o̙̔ͮ̇͐̇ zalgo",
    "a\u0301\u0302\u0303 stacked marks",
    "\u0301 leading combining mark",
    "x \u0308y space then mark",
    "-\u0301a punctuation mark letter",
]
for s in marks:
    add("marks", s)

digits = [
    "3 33 333 3333 33333 333333 3333333 33333333",
    "3.3 3..3 3...3",
    "1234567890",
    "0.000001 and 1e-10 and -42",
    "Phone: +1 (555) 123-4567",
    "2024-06-01T12:34:56Z",
    "π ≈ 3.14159265358979323846",
    "Roman Ⅻ Ⅳ and fractions ½ ¾ ⅞",
    "superscripts x² y³ and subscripts H₂O",
    "circled ① ② ③",
    "full-width １２３",
    "Arabic-Indic ٠١٢٣٤٥٦٧٨٩",
    "Devanagari ०१२३४५६७८९",
    "$1,234,567.89",
    "100%",
    "v1.2.3-rc.4+build.5",
]
for s in digits:
    add("digits", s)

ws = [
    "\n \n\n \n\n\n \t \t\t \t\n  \n   \n    \n     \n",
    " ",
    "  ",
    "   ",
    "\t",
    "\n",
    "\n\n",
    "\r\n",
    "a  b   c    d",
    "a \nb",
    "a\n b",
    "a \t\n \tb",
    "trailing\n\n\n",
    "trailing spaces    ",
    "  \u00a0 mixed unicode spaces \u2003\u2009 end",
    "\u3000\u3000fullwidth indent",
    "\u0085next line char",
    "\x0b\x0cvertical tab and form feed",
    "x\x1cy\x1dz file separators",
    "bell\x07 and nul\x00 and del\x7f",
]
for s in ws:
    add("whitespace", s)

crlf = [
    "line one\r\nline two\r\nline three",
    "\r\n\r\n",
    "a\r\n\r\nb",
    "mixed\r\nand\nand\rend",
    "code:\r\n    x = 1\r\n",
    "punct.\r\n",
    "!!\r\n\r\n",
    " \r\n ",
    "\r",
    "\r\r\r",
]
for s in crlf:
    add("crlf", s)

chat = [
    "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n<|im_start|>user\nHi!<|im_end|>\n<|im_start|>assistant\n",
    "<|im_start|>user\nWhat is 2+2?<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n4<|im_end|>",
    "<|endoftext|>",
    "text<|endoftext|>more text",
    "<think>reasoning here</think>answer",
    "<tool_call>\n{\"name\": \"f\", \"arguments\": {}}\n</tool_call>",
    "<tool_response>\nok\n</tool_response>",
    "<|fim_prefix|>def f():<|fim_suffix|>\n    return 1<|fim_middle|>",
    "<|repo_name|>memra<|file_sep|>main.go",
    "<|vision_start|><|image_pad|><|vision_end|>",
    "<|nope|> is not a token",
    "<|im_start",
    "im_start|>",
    "<|im_start|><|im_start|>",
    "<|im_end|>\n",
    "<think>",
    "</think>",
    "<think></think>",
    "< think >",
    "<|IM_START|>",
    "<<|im_start|>>",
    "x<|im_end|>y<|im_start|>z",
    "<|box_start|>(1,2)<|box_end|>",
    "<|object_ref_start|>cat<|object_ref_end|>",
    "<|quad_start|><|quad_end|>",
    "<|video_pad|><|fim_pad|>",
    "<|endoftext|>\u0301 mark after special",
    "<think>\u0301</think>",
]
for s in chat:
    add("chat", s)

nfd_src = [
    "café", "naïve", "Ångström", "Ñandú", "crème brûlée", "Åre Öland Ærø",
    "ḱṷṓn", "Việt Nam", "한국어", "가나다라", "Ω ω Ϊ", "ﬁ ligature stays", "é é", "Å Å",
    "résumé résumé", "Zoë and Chloë", "über", "ǅemal", "Ǆ ǆ", "ḍ̇ multiple marks",
]
for s in nfd_src:
    add("nfd", unicodedata.normalize("NFD", s))
for s in nfd_src[:8]:
    add("nfkd", unicodedata.normalize("NFKD", s))
add("nfd", "cafe\u0301 vs caf\u00e9")
add("nfd", "A\u030a\u0301 two marks")
add("nfd", "\u1100\u1161\u11a8 jamo")

edge = [
    "",
    "\ufffd replacement char",
    "\ufeffBOM at start",
    "private use \ue000\uf8ff",
    "unassigned \u0378 \u0380",
    "noncharacter \ufdd0 \uffff",
    "astral \U0001d400\U0001d401 math bold",
    "musical 𝄞 symbol",
    "a" * 300,
    "ab" * 200,
    " " * 100 + "x",
    "\n" * 50,
    "-" * 120,
    "9" * 100,
    "你" * 100,
    "🙂" * 40,
    "x" + "\u0301" * 30,
]
for s in edge:
    add("edge", s)

# Mixed random compositions from a pool of fragments (fixed seed).
pool = [w for c in cases for w in c["text"].split(" ") if w] + [
    " ", "  ", "\n", "\r\n", "\t", "'s", "'LL", "123", "4.5", "<|im_end|>", "<think>", "é", "e\u0301",
    "😶‍🌫️", "👨‍👩‍👧", "中文", "テスト", "العربية", "हिन्दी", "ไทย", "!?", "...", "—",
]
n_mixed = 0
while len(cases) < 330 or n_mixed < 80:
    k = rng.randint(2, 12)
    parts = [rng.choice(pool) for _ in range(k)]
    seps = [rng.choice(["", " ", " ", " ", "  ", "\n", "\t", "\r\n", ", "]) for _ in range(k)]
    add("mixed", "".join(p + s for p, s in zip(parts, seps)))
    n_mixed += 1

for i, c in enumerate(cases):
    c["id"] = i
print(json.dumps(cases, ensure_ascii=False, indent=1))
