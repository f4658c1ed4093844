#!/usr/bin/env python3
"""Build tiny random Qwen3.5 / Qwen3 checkpoints and their reference outputs.

The outputs are the oracle for memra's CPU and GPU backends: each fixture is a
Hugging Face checkpoint (config.json, model.safetensors, tokenizer.json,
tokenizer_config.json) plus a JSON file with a 24-token prompt, the 40 greedy
tokens that follow it and the float32 logits of every step.

Runs offline on a machine with torch + transformers (>= 5) + tokenizers; needs
no network and no Go. Usage:

    python3 scripts/oracle/make_fixtures.py --out "$OUT"

writes "$OUT/oracle.tar.gz" (checkpoints + JSONs, a few MB). See README.md for
converting the checkpoints to GGUF afterwards.
"""

import argparse
import io
import json
import math
import os
import platform
import shutil
import sys
import tarfile
import traceback

PROMPT_LEN = 24
GEN_STEPS = 40
MIN_DISTINCT = 10  # a fixture whose greedy stream repeats one token tests nothing
VOCAB = 512  # config vocab_size; the tokenizer has fewer entries, the rest are padding
TOKENIZER_BASE = 500  # byte-level BPE entries before the 3 special tokens

SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]

# Qwen2-style pre-tokenizer split (the tokenizer helper's concern is only that
# it is byte-level BPE; the exact regex does not affect the model outputs).
SPLIT_REGEX = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"
    r"|\s*[\r\n]+|\s+(?!\S)|\s+"
)

CHAT_TEMPLATE = (
    "{%- for message in messages %}"
    "{{- '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n' }}"
    "{%- endfor %}"
    "{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{%- endif %}"
)

# Training text for the tokenizer (embedded: the GPU machine has no network).
CORPUS = """
The quick brown fox jumps over the lazy dog. A small model is trained on a small
text so that its vocabulary fits in five hundred entries. Recurrent layers keep a
state that is updated by a gated delta rule; attention layers keep keys and values
for every token they have seen. Numbers such as 12, 345 and 6789 are split into
single digits. Tokenizers map text to integers and back again, byte by byte when
nothing better is known. Hybrid models mix linear attention with full attention,
and a decoder produces one token at a time: it reads the prompt, then greedily
picks the most likely next token, feeds it back, and repeats. The engine must
match the reference within a small tolerance at every step, for every layer type,
for tied and untied embeddings, in float32, bfloat16 and eight-bit blocks.
Convolution windows hold the last three inputs of every channel. Keys and queries
are normalised to unit length before the state update; values are not. The output
gate multiplies the normalised result by a sigmoid of another projection. Rotary
position embeddings rotate only the first quarter of each attention head.
def main():
    for i in range(10):
        print("hello, world", i * 2 + 1)
    return {"key": [1, 2, 3], "value": None}
Le renard brun saute par-dessus le chien paresseux. Der schnelle braune Fuchs
springt über den faulen Hund. El zorro marrón salta sobre el perro perezoso.
"""

PROMPT_TEXT = (
    "The engine reads the prompt, then greedily picks the most likely next token "
    "and feeds it back to the recurrent and attention layers of the model."
)


def log(*a):
    print(*a, flush=True)


def die(msg):
    print("make_fixtures.py: ERROR: " + msg, file=sys.stderr, flush=True)
    sys.exit(1)


# --------------------------------------------------------------------------
# tokenizer


def build_tokenizer():
    from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers, processors, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Split(Regex(SPLIT_REGEX), behavior="isolated", invert=False),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ]
    )
    tok.decoder = decoders.ByteLevel()
    tok.post_processor = processors.ByteLevel(trim_offsets=False)
    trainer = trainers.BpeTrainer(
        vocab_size=TOKENIZER_BASE,
        min_frequency=1,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        special_tokens=[],
        show_progress=False,
    )
    tok.train_from_iterator([CORPUS] * 4, trainer=trainer)
    base = tok.get_vocab_size()
    if base > TOKENIZER_BASE or base < 300:
        die(f"trained tokenizer has {base} entries; want 300..{TOKENIZER_BASE}")
    tok.add_special_tokens(SPECIALS)  # ids base, base+1, base+2 (like Qwen: specials last)
    total = tok.get_vocab_size()
    if total > VOCAB:
        die(f"tokenizer has {total} entries, more than vocab_size {VOCAB}")
    ids = {s: tok.token_to_id(s) for s in SPECIALS}
    log(f"tokenizer: {base} BPE entries + specials {ids}; padded to {VOCAB} in the model")
    return tok, ids


def tokenizer_config(ids):
    added = {}
    for s in SPECIALS:
        added[str(ids[s])] = {
            "content": s,
            "lstrip": False,
            "normalized": False,
            "rstrip": False,
            "single_word": False,
            "special": True,
        }
    return {
        "add_bos_token": False,
        "add_prefix_space": False,
        "added_tokens_decoder": added,
        "bos_token": None,
        "chat_template": CHAT_TEMPLATE,
        "clean_up_tokenization_spaces": False,
        "eos_token": "<|im_end|>",
        "errors": "replace",
        "model_max_length": 4096,
        "pad_token": "<|endoftext|>",
        "split_special_tokens": False,
        "tokenizer_class": "Qwen2Tokenizer",
        "unk_token": None,
    }


# --------------------------------------------------------------------------
# models


def import_transformers():
    import torch
    import transformers

    def get(name, module):
        obj = getattr(transformers, name, None)
        if obj is None:
            mod = __import__(f"transformers.models.{module}", fromlist=[name])
            obj = getattr(mod, name, None)
        if obj is None:
            die(f"transformers {transformers.__version__} has no {name}")
        return obj

    return torch, transformers, get


def qwen35_config(get, ids, tied, v_heads):
    cfg_cls = get("Qwen3_5TextConfig", "qwen3_5")
    kw = dict(
        vocab_size=VOCAB,
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=4,
        num_attention_heads=2,
        num_key_value_heads=1,
        head_dim=256,
        linear_num_key_heads=2,
        linear_num_value_heads=v_heads,
        linear_key_head_dim=128,
        linear_value_head_dim=128,
        linear_conv_kernel_dim=4,
        layer_types=["linear_attention", "full_attention", "linear_attention", "full_attention"],
        rms_norm_eps=1e-6,
        tie_word_embeddings=tied,
        max_position_embeddings=4096,
        rope_parameters={
            "rope_type": "default",
            "rope_theta": 10000000.0,
            "partial_rotary_factor": 0.25,
            "mrope_section": [11, 11, 10],
            "mrope_interleaved": True,
        },
        hidden_act="silu",
        attention_bias=False,
        pad_token_id=ids["<|endoftext|>"],
        eos_token_id=ids["<|im_end|>"],
        bos_token_id=None,
    )
    cfg = cfg_cls(**kw)
    cfg.architectures = ["Qwen3_5ForCausalLM"]
    return cfg, get("Qwen3_5ForCausalLM", "qwen3_5")


def qwen3_config(get, ids):
    cfg_cls = get("Qwen3Config", "qwen3")
    kw = dict(
        vocab_size=VOCAB,
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=4,
        num_attention_heads=4,
        num_key_value_heads=2,
        head_dim=128,
        rms_norm_eps=1e-6,
        tie_word_embeddings=False,
        max_position_embeddings=4096,
        rope_parameters={"rope_type": "default", "rope_theta": 1000000.0},
        hidden_act="silu",
        attention_bias=False,
        pad_token_id=ids["<|endoftext|>"],
        eos_token_id=ids["<|im_end|>"],
        bos_token_id=None,
    )
    cfg = cfg_cls(**kw)
    cfg.architectures = ["Qwen3ForCausalLM"]
    return cfg, get("Qwen3ForCausalLM", "qwen3")


def randomize(torch, model, arch, seed, weight_scale):
    """Overwrite every parameter with seeded random values.

    Matrices get N(0, (weight_scale / sqrt(fan_in))^2) so activations stay
    O(1) and the greedy stream depends on the input (transformers' std 0.02
    makes tiny models repeat one token). Qwen3.5 RMSNorm weights are offsets
    from 1 (the layer multiplies by 1 + w); the GDN output norm and all Qwen3
    norms multiply by w directly.
    """
    g = torch.Generator().manual_seed(seed)
    names = sorted(n for n, _ in model.named_parameters())
    params = dict(model.named_parameters())
    with torch.no_grad():
        for name in names:
            p = params[name]
            shape = tuple(p.shape)

            def normal(std):
                return torch.randn(shape, generator=g, dtype=torch.float32) * std

            def uniform(lo, hi):
                return torch.rand(shape, generator=g, dtype=torch.float32) * (hi - lo) + lo

            if name.endswith("A_log"):
                v = torch.log(uniform(0.05, 2.0))
            elif name.endswith("dt_bias"):
                v = normal(1.0)
            elif name.endswith("conv1d.weight"):
                v = normal(weight_scale / math.sqrt(shape[-1]))
            elif name.endswith("linear_attn.norm.weight"):
                v = uniform(0.5, 1.5)
            elif "norm" in name and p.dim() == 1:
                v = normal(0.3) if arch == "qwen35" else uniform(0.5, 1.5)
            elif name.endswith("embed_tokens.weight"):
                v = normal(1.0)
            elif p.dim() == 2:
                v = normal(weight_scale / math.sqrt(shape[1]))
            elif p.dim() == 1:
                v = normal(0.1)
            else:
                die(f"no init rule for parameter {name} {shape}")
            p.copy_(v)
    return names


def greedy(torch, model, prompt, steps):
    """Prompt then greedy decode with the KV / recurrent cache: logits[0] after
    the prompt, logits[i] after feeding tokens[i-1]."""
    logits, tokens = [], []
    with torch.no_grad():
        ids = torch.tensor([prompt], dtype=torch.long)
        out = model(input_ids=ids, use_cache=True)
        cache = out.past_key_values
        step = out.logits[0, -1].float()
        for i in range(steps):
            logits.append(step.clone())
            t = int(torch.argmax(step))
            tokens.append(t)
            if i == steps - 1:
                break
            out = model(input_ids=torch.tensor([[t]], dtype=torch.long), past_key_values=cache, use_cache=True)
            cache = out.past_key_values
            step = out.logits[0, -1].float()
    return tokens, logits


def greedy_uncached(torch, model, prompt, steps):
    """Fallback when the cached path fails: one full forward per step."""
    logits, tokens = [], []
    with torch.no_grad():
        seq = list(prompt)
        for _ in range(steps):
            out = model(input_ids=torch.tensor([seq], dtype=torch.long), use_cache=False)
            step = out.logits[0, -1].float()
            logits.append(step.clone())
            t = int(torch.argmax(step))
            tokens.append(t)
            seq.append(t)
    return tokens, logits


def decode(torch, model, prompt, steps):
    try:
        return greedy(torch, model, prompt, steps) + ("cached",)
    except Exception:
        traceback.print_exc()
        log("WARNING: cached decode failed (traceback above); using uncached full forwards")
        return greedy_uncached(torch, model, prompt, steps) + ("uncached",)


def full_forward_check(torch, model, prompt, tokens, logits):
    """Recompute every step with one uncached forward over the whole sequence
    (the chunked GDN path) and return the worst relative difference: a check
    that the cached decode path transformers took is self-consistent."""
    seq = prompt + tokens[:-1]
    with torch.no_grad():
        out = model(input_ids=torch.tensor([seq], dtype=torch.long), use_cache=False)
    full = out.logits[0].float()
    worst = 0.0
    for i, ref in enumerate(logits):
        row = full[len(prompt) - 1 + i]
        worst = max(worst, float((row - ref).abs().max() / ref.abs().max()))
    return worst


def fmt(x):
    # ~7 significant digits: float32 has 24 bits (about 7.2 decimal digits),
    # so this keeps the JSON small while staying far below a 1e-4 tolerance.
    return float(f"{x:.7g}")


def make_fixture(torch, transformers, get, name, arch, tied, seed, v_heads, tok, ids, prompt, workdir):
    log(f"\n=== {name}: arch {arch}, tied {tied}, seed {seed}, GDN V heads {v_heads}")
    if arch == "qwen35":
        cfg, model_cls = qwen35_config(get, ids, tied, v_heads)
    else:
        cfg, model_cls = qwen3_config(get, ids)
    cfg._attn_implementation = "eager"
    log("config:", json.dumps(cfg.to_dict(), sort_keys=True, default=str))

    chosen = None
    for weight_scale in (1.0, 1.5, 2.0, 3.0, 0.7):
        torch.manual_seed(seed)
        model = model_cls(cfg).float().eval()
        names = randomize(torch, model, arch, seed, weight_scale)
        tokens, logits, mode = decode(torch, model, prompt, GEN_STEPS)
        distinct = len(set(tokens))
        finite = all(bool(torch.isfinite(l).all()) for l in logits)
        log(f"weight_scale {weight_scale}: {distinct} distinct tokens, finite {finite}: {tokens}")
        if finite and distinct >= MIN_DISTINCT:
            chosen = weight_scale
            break
    if chosen is None:
        die(f"{name}: no weight scale gave a varied greedy stream (>= {MIN_DISTINCT} distinct tokens)")

    log("parameters:")
    params = dict(model.named_parameters())
    for n in names:
        log(f"  {n} {tuple(params[n].shape)}")
    if arch == "qwen35":
        want = {"A_log", "dt_bias", "conv1d.weight", "in_proj_qkv.weight", "in_proj_z.weight",
                "in_proj_a.weight", "in_proj_b.weight", "out_proj.weight", "q_norm.weight", "k_norm.weight"}
        have = {n.split("linear_attn.")[-1].split("self_attn.")[-1] for n in names}
        if not want <= have:
            die(f"{name}: parameter names changed; missing {sorted(want - have)}")

    worst = full_forward_check(torch, model, prompt, tokens, logits)
    log(f"cached vs uncached forward: max rel diff {worst:.3g}")
    if worst > 1e-3:
        die(f"{name}: cached decode disagrees with the full forward (rel diff {worst})")

    ckpt = os.path.join(workdir, name)
    model.save_pretrained(ckpt)  # safetensors (the default since transformers 4.35)
    tok.save(os.path.join(ckpt, "tokenizer.json"))
    with open(os.path.join(ckpt, "tokenizer_config.json"), "w") as f:
        json.dump(tokenizer_config(ids), f, indent=2)
    # transformers derives layer_types from full_attention_interval and saves
    # only layer_types; llama.cpp's converter reads the interval (default 4),
    # so record it for converters that need it.
    if arch == "qwen35":
        cpath = os.path.join(ckpt, "config.json")
        with open(cpath) as f:
            c = json.load(f)
        c["full_attention_interval"] = 2
        with open(cpath, "w") as f:
            json.dump(c, f, indent=2, sort_keys=True)
    files = sorted(os.listdir(ckpt))
    log(f"saved {ckpt}: {files}")
    if "model.safetensors" not in files:
        die(f"{name}: save_pretrained wrote no model.safetensors ({files})")

    fixture = {
        "name": name,
        "arch": arch,
        "prompt": prompt,
        "tokens": tokens,
        "logits": [[fmt(x) for x in l.tolist()] for l in logits],
        "seed": seed,
        "tied": tied,
        "linear_num_value_heads": v_heads,
        "weight_scale": chosen,
        "transformers": transformers.__version__,
        "torch": torch.__version__,
        "python": platform.python_version(),
        "device": "cpu",
        "dtype": "float32",
        "decode": mode,
        "cached_vs_full_rel_diff": worst,
    }
    jpath = os.path.join(workdir, name + ".json")
    with open(jpath, "w") as f:
        json.dump(fixture, f, separators=(",", ":"))
        f.write("\n")
    log(f"wrote {jpath} ({os.path.getsize(jpath)} bytes)")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True, help="directory for oracle.tar.gz")
    ap.add_argument("--keep", action="store_true", help="also keep the unpacked files in OUT/oracle")
    ap.add_argument("--only", default="", help="comma-separated fixture names to make (default: all)")
    args = ap.parse_args()

    torch, transformers, get = import_transformers()
    import tokenizers

    log(f"python {platform.python_version()}, torch {torch.__version__}, "
        f"transformers {transformers.__version__}, tokenizers {tokenizers.__version__}")
    torch.set_num_threads(1)  # reproducible CPU reductions
    try:
        torch.use_deterministic_algorithms(True, warn_only=True)
    except Exception as e:  # older torch
        log("use_deterministic_algorithms:", e)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False

    tok, ids = build_tokenizer()
    enc = tok.encode(PROMPT_TEXT).ids
    if len(enc) < PROMPT_LEN:
        die(f"prompt text encodes to {len(enc)} tokens, need {PROMPT_LEN}")
    prompt = enc[:PROMPT_LEN]
    log(f"prompt ids: {prompt}")
    log(f"prompt text: {tok.decode(prompt)!r}")

    workdir = os.path.join(args.out, "oracle")
    if os.path.exists(workdir):
        shutil.rmtree(workdir)
    os.makedirs(workdir)

    # name, arch, tied, seed, GDN V heads (over 2 K heads). hv6's 3 V heads
    # per K head tell the grouped head order from the interleaved one where
    # 2 per K head do not in every place the converter and the engine pair them.
    fixtures = [
        ("qwen35-tiny", "qwen35", False, 3501, 4),
        ("qwen35-tiny-tied", "qwen35", True, 3502, 4),
        ("qwen3-tiny", "qwen3", False, 3001, None),
        ("qwen35-tiny-hv6", "qwen35", False, 3503, 6),
    ]
    if args.only:
        only = set(args.only.split(","))
        unknown = only - {f[0] for f in fixtures}
        if unknown:
            die(f"--only: no fixture named {sorted(unknown)}")
        fixtures = [f for f in fixtures if f[0] in only]
    for name, arch, tied, seed, v_heads in fixtures:
        try:
            make_fixture(torch, transformers, get, name, arch, tied, seed, v_heads, tok, ids, prompt, workdir)
        except SystemExit:
            raise
        except Exception:
            traceback.print_exc()
            die(f"{name}: failed (see the traceback above)")

    tar_path = os.path.join(args.out, "oracle.tar.gz")
    with tarfile.open(tar_path, "w:gz") as tf:
        for entry in sorted(os.listdir(workdir)):
            tf.add(os.path.join(workdir, entry), arcname=os.path.join("oracle", entry))
    log(f"\nwrote {tar_path} ({os.path.getsize(tar_path)} bytes)")
    if not args.keep:
        shutil.rmtree(workdir)


if __name__ == "__main__":
    main()
