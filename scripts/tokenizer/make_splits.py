#!/usr/bin/env python3
"""Writes engine/testdata/tokenizer/splits.json: pre-tokenizer goldens.

The pieces come from the Python `regex` module (which, like Oniguruma in
Hugging Face tokenizers, has \\p{..} classes, lookahead and backtracking)
running the patterns of Qwen's tokenizer.json: qwen2 (Qwen2/Qwen3) and
qwen35 (Qwen3.5, \\p{M} joined to letters). memra's scanners are written by
hand for these patterns; this is an implementation they share nothing with.

Deterministic (fixed seed, no network). Run from the repo root:
    python3 scripts/tokenizer/make_splits.py > engine/testdata/tokenizer/splits.json

U+017F (long s) is left out on purpose: (?i:'s) matches "'\u017f" by case
folding, while llama.cpp, which memra follows, spells the class as [sS].
"""
import json
import random
import sys

import regex

PATTERNS = {
    "qwen2": r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+",
    "qwen35": r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+",
}

# Units the random strings are made of: contractions in both cases, every
# kind of white space the patterns treat apart (\r, \n, other \s), digits of
# several scripts, punctuation and symbols, emoji with modifiers and ZWJ,
# combining marks (Mn, Mc) alone and after letters, CJK, Devanagari, an
# unassigned and a private-use code point, format characters.
UNITS = list("aZ'sStTrReEvVmMlLdD .,!?-_()\"$") + [
    "  ", "\t", "\n", "\r", "\r\n", "\u00a0", "\u3000", "\u2028", "\u0085", "\x0b", "\x0c",
    "1", "9", "\u0663", "\u00b2", "\u00bd", "\u2167", "\u20ac",
    "\U0001F600", "\U0001F44D\U0001F3FD", "\U0001F468\u200d\U0001F469\u200d\U0001F467", "\u200d", "\u200b", "\ufeff",
    "\u0301", "\u0308", "\u093f", "\u094d", "e\u0301", "\u00e9", "\u0928", "\u4f60", "\u597d", "\uff0c", "\u3002",
    "\u00e4", "\u00df", "\u212a", "\u0378", "\ue000", "\ufffd", "\uff53", "\u24c8", "\u01c5", "\u02b0", "\u03a9",
    "\u1160", "\u3164", "\u2800", "\u180e", "\u061c", "\u00ad",
]

HAND = [
    "Hello, world!", "I've 12 don't", "WE'VE 'LL", "x\n\n  y", "foo.\r\n\r\nbar", " ...x",
    "\u0928\u092e\u0938\u094d\u0924\u0947 \u0926\u0941\u0928\u093f\u092f\u093e", "e\u0301s", "\u0301 x", ".\u0301",
    "\U0001F468\u200d\U0001F469\u200d\U0001F467 family", "a   \n   b", "3.14159", "\u00a0x", "'", "  \t",
]


def main():
    for name, pat in PATTERNS.items():
        PATTERNS[name] = regex.compile(pat)
    rng = random.Random(20260501)
    texts = list(HAND)
    for _ in range(1000):
        texts.append("".join(rng.choice(UNITS) for _ in range(rng.randint(1, 12))))
    cases = [{"text": t, **{n: p.findall(t) for n, p in PATTERNS.items()}} for t in texts]
    out = {"generator": f"python {sys.version.split()[0]}, regex {regex.__version__}",
           "cases": cases}
    json.dump(out, sys.stdout, ensure_ascii=True, separators=(",", ":"))
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
