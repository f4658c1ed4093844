#!/usr/bin/env python3
"""Golden token ids and chat renders for memra's tokenizer, from Hugging Face
`tokenizers` and `jinja2` (no network, no GPU needed).

    python3 scripts/tokenizer/make_goldens.py --out $OUT

Inputs (committed): engine/testdata/tokenizer/{tokenizer.json.gz,
tokenizer_config.json, strings.json, bench.txt}. Outputs: $OUT/goldens.json
(goes to engine/testdata/tokenizer/goldens.json) and $OUT/hf_bench.txt.

Per string, four id lists:
  nfc.special  HF as shipped (NFC normaliser), added tokens parsed
  nfc.plain    NFC, special tokens not parsed
  raw.special  normaliser removed (tok.normalizer = None: llama.cpp's behaviour)
  raw.plain    no normaliser, special tokens not parsed
"plain" = llama.cpp's parse_special=false: control tokens are plain text and
user-defined tokens (<think>, <tool_call> ...) are still matched. HF expresses
it with `encode_special_tokens = True`, which skips tokens flagged special;
llama.cpp's converter also makes control tokens of added tokens that merely
look special (<|fim_prefix|> ...), so those are flagged special here first
(the same rule, does_token_look_special, is applied).
"""
import argparse
import gzip
import json
import os
import sys
import time

os.environ.setdefault("RAYON_NUM_THREADS", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import jinja2  # noqa: E402
import jinja2.ext  # noqa: E402
import tokenizers  # noqa: E402
from jinja2.sandbox import ImmutableSandboxedEnvironment  # noqa: E402
from tokenizers import Tokenizer  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
TD = os.path.join(HERE, "..", "..", "engine", "testdata", "tokenizer")


def looks_special(s):
    return (s in ("<pad>", "<mask>", "<2mass>", "[@BOS@]")
            or (s.startswith("<|") and s.endswith("|>"))
            or (s.startswith("<\uff5c") and s.endswith("\uff5c>"))
            or (s.startswith("<unused") and s.endswith(">")))


def load(tj, normalize, plain):
    d = json.loads(tj)
    if plain:
        for a in d["added_tokens"]:
            if looks_special(a["content"]):
                a["special"] = True
    tok = Tokenizer.from_str(json.dumps(d))
    if not normalize:
        tok.normalizer = None
    tok.encode_special_tokens = plain
    return tok


def render_chat(template, messages, add_generation_prompt, extra):
    # As transformers' render_jinja_template sets up the environment.
    def raise_exception(msg):
        raise jinja2.exceptions.TemplateError(msg)

    def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
        return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)

    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=[jinja2.ext.loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    tmpl = env.from_string(template)
    return tmpl.render(messages=messages, tools=None, documents=None,
                       add_generation_prompt=add_generation_prompt,
                       bos_token=None, eos_token="<|im_end|>", pad_token="<|endoftext|>", **extra)


CONVERSATIONS = [
    ("user_only", [{"role": "user", "content": "Hello!"}], True, None),
    ("system_user_nothink", [{"role": "system", "content": "You are a helpful assistant."},
                             {"role": "user", "content": "What is 2+2?"}], True, False),
    ("system_user_think", [{"role": "system", "content": "You are a helpful assistant."},
                           {"role": "user", "content": "What is 2+2?"}], True, True),
    ("multi_turn_with_think", [
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": "<think>\nThe user greets me.\n</think>\n\nHello! How can I help?"},
        {"role": "user", "content": "Tell me a joke."}], True, None),
    ("multi_turn_no_gen", [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Capital of France?"},
        {"role": "assistant", "content": "Paris."}], False, None),
    ("last_assistant_think", [
        {"role": "user", "content": "Q"},
        {"role": "assistant", "content": "<think>\nhmm\n</think>\n\nA"}], False, None),
    ("reasoning_content", [
        {"role": "user", "content": "Q1"},
        {"role": "assistant", "content": "A1"},
        {"role": "user", "content": "Q2"},
        {"role": "assistant", "content": "A2", "reasoning_content": "thinking about Q2"}], True, False),
    ("tool_turns", [
        {"role": "user", "content": "Weather in Paris?"},
        {"role": "assistant", "content": "Let me check."},
        {"role": "tool", "content": "{\"temp\": 21}"},
        {"role": "tool", "content": "{\"sky\": \"clear\"}"},
        {"role": "user", "content": "<tool_response>\nx\n</tool_response>"}], True, None),
    ("unicode", [{"role": "system", "content": "Réponds en français 🇫🇷"},
                 {"role": "user", "content": "你好\n<|im_end|> inside  text"}], True, False),
]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    tj = gzip.open(os.path.join(TD, "tokenizer.json.gz"), "rt", encoding="utf-8").read()
    cfg = json.load(open(os.path.join(TD, "tokenizer_config.json"), encoding="utf-8"))
    strings = json.load(open(os.path.join(TD, "strings.json"), encoding="utf-8"))

    toks = {(n, p): load(tj, n, p) for n in (True, False) for p in (True, False)}
    cases = []
    for c in strings:
        t = c["text"]
        ids = {k: toks[k].encode(t, add_special_tokens=False).ids for k in toks}
        cases.append({"id": c["id"], "nfc": {"special": ids[(True, False)], "plain": ids[(True, True)]},
                      "raw": {"special": ids[(False, False)], "plain": ids[(False, True)]}})

    chats = []
    for name, msgs, gen, thinking in CONVERSATIONS:
        extra = {} if thinking is None else {"enable_thinking": thinking}
        text = render_chat(cfg["chat_template"], msgs, gen, extra)
        entry = {"name": name, "messages": msgs, "add_generation_prompt": gen,
                 "enable_thinking": thinking, "text": text}
        chats.append(entry)

    out = {"tokenizers_version": tokenizers.__version__, "jinja2_version": jinja2.__version__,
           "cases": cases, "chat": chats}
    with open(os.path.join(args.out, "goldens.json"), "w", encoding="utf-8") as f:
        json.dump(out, f, ensure_ascii=False, separators=(",", ":"))
        f.write("\n")

    # Throughput, one thread, whole text in one encode call; best of 5.
    # newline="": keep CRLF as is, byte for byte the text the Go benchmark reads.
    text = open(os.path.join(TD, "bench.txt"), encoding="utf-8", newline="").read()
    nbytes = len(text.encode("utf-8"))
    lines = [f"tokenizers {tokenizers.__version__}, RAYON_NUM_THREADS={os.environ.get('RAYON_NUM_THREADS')}, "
             f"TOKENIZERS_PARALLELISM={os.environ.get('TOKENIZERS_PARALLELISM')}, text {nbytes} bytes"]
    for label, key in (("HF as shipped (NFC, specials parsed)", (True, False)),
                       ("HF no normaliser (llama.cpp mode)", (False, False))):
        tok = toks[key]
        best, n_ids = 1e9, 0
        for _ in range(5):
            t0 = time.perf_counter()
            n_ids = len(tok.encode(text, add_special_tokens=False).ids)
            best = min(best, time.perf_counter() - t0)
        lines.append(f"{label}: {nbytes / best / 1e6:.2f} MB/s ({best * 1e3:.1f} ms, {n_ids} tokens)")
    try:
        import platform
        cpu = [ln.split(":", 1)[1].strip() for ln in open("/proc/cpuinfo") if ln.startswith("model name")][0]
        lines.append(f"cpu: {cpu}; python {platform.python_version()}")
    except Exception as e:  # noqa: BLE001
        lines.append(f"cpu: unknown ({e})")
    report = "\n".join(lines) + "\n"
    sys.stdout.write(report)
    with open(os.path.join(args.out, "hf_bench.txt"), "w") as f:
        f.write(report)


if __name__ == "__main__":
    main()
