#!/usr/bin/env python3
"""Writes engine/testdata/tokenizer/bench.txt: ~1.2 MB of mixed text for the
encode-throughput benchmark (Go: BenchmarkEncode; HF: make_goldens.py).

Deterministic (fixed seed). Mix by bytes, roughly: English-like prose from a
Zipf-distributed 30k pseudo-word lexicon (many distinct words, so word caches
do not flatter), code, CJK, Cyrillic/Greek, Arabic/Hindi with marks, digits,
emoji, whitespace runs and CRLF.
    python3 scripts/tokenizer/make_bench_text.py > engine/testdata/tokenizer/bench.txt
"""
import random
import sys

rng = random.Random(7)
cons = "b c d f g h j k l m n p r s t v w z br cr dr fl gr pl st th sh ch qu".split()
vows = "a e i o u y ai ea ee oo ou ie".split()


def pseudo_word():
    return "".join(rng.choice(cons) + rng.choice(vows) for _ in range(rng.choice([1, 1, 2, 2, 2, 3, 3, 4]))) + rng.choice(["", "", "", "s", "ed", "ing", "n", "t"])


lexicon = list(dict.fromkeys(pseudo_word() for _ in range(40000)))[:30000]
weights = [1.0 / (i + 1) for i in range(len(lexicon))]
common = "the of and to in is that it for on with as was by be this are from or at an".split()


def word():
    if rng.random() < 0.3:
        return rng.choice(common)
    return rng.choices(lexicon, weights)[0]


def sentence():
    ws = [word() for _ in range(rng.randint(4, 22))]
    if rng.random() < 0.2:
        ws[rng.randrange(len(ws))] += rng.choice(["'s", "'t", "'re", "'ll"])
    if rng.random() < 0.3:
        ws[rng.randrange(len(ws))] = ws[0].capitalize()
    s = " ".join(ws)
    return s[0].upper() + s[1:] + rng.choice([".", ".", ".", "?", "!", ",", ";", ":"])


def prose():
    return " ".join(sentence() for _ in range(rng.randint(2, 8))) + rng.choice(["\n", "\n\n", " "])


def code():
    name = word() + "_" + word()
    body = []
    for _ in range(rng.randint(2, 8)):
        ind = "    " * rng.randint(1, 3)
        body.append(f"{ind}{word()} = {word()}({word()}, {rng.randint(0, 9999)}) + {name}[{rng.randint(0, 99)}]")
    nl = rng.choice(["\n", "\n", "\r\n"])
    return f"def {name}({word()}, {word()}=None):{nl}" + nl.join(body) + f"{nl}    return {{'{word()}': [{rng.random():.4f}]}}{nl}{nl}"


def cjk():
    out = []
    for _ in range(rng.randint(3, 12)):
        out.append("".join(chr(rng.randint(0x4E00, 0x7FFF)) for _ in range(rng.randint(2, 14))))
        out.append(rng.choice(["，", "。", "、", "！", "？", "：", " "]))
    return "".join(out) + "\n"


def cyr():
    a = "абвгдежзийклмнопрстуфхцчшщыьэюя"
    g = "αβγδεζηθικλμνξοπρστυφχψω"
    alpha = rng.choice([a, a, g])
    return " ".join("".join(rng.choice(alpha) for _ in range(rng.randint(2, 10))) for _ in range(rng.randint(5, 20))) + ". "


def marks():
    ar = ["مَرْحَبًا", "بِكُمْ", "الْعَالَمِ", "السلام", "عليكم", "كتاب"]
    hi = ["नमस्ते", "दुनिया", "क्या", "हाल", "है", "संस्कृतम्", "हिंदी"]
    return " ".join(rng.choice(rng.choice([ar, hi])) for _ in range(rng.randint(4, 15))) + "। "


def digits():
    return " ".join(str(rng.randint(0, 10 ** rng.randint(1, 9))) for _ in range(rng.randint(3, 10))) + rng.choice([" ", "\n", " % ", " $"])


def misc():
    em = ["🚀", "😶‍🌫️", "👨‍👩‍👧‍👦", "✅", "🦙", "🎉", "👍🏽", "🇺🇸"]
    return rng.choice([
        " ".join(rng.choice(em) for _ in range(rng.randint(1, 6))) + " ",
        " " * rng.randint(2, 20) + "\n",
        "\t" * rng.randint(1, 4),
        "\r\n" * rng.randint(1, 3),
        rng.choice(["---", "===", "***", "...", "!!!", "?!", "<>", "{}", "[]"]) * rng.randint(1, 8) + "\n",
    ])


parts = [(prose, 55), (code, 15), (cjk, 10), (cyr, 5), (marks, 5), (digits, 5), (misc, 5)]
gens, ws = zip(*parts)
out, n = [], 0
while n < 1_200_000:
    s = rng.choices(gens, ws)[0]()
    out.append(s)
    n += len(s.encode())
sys.stdout.write("".join(out))
