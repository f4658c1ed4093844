#!/usr/bin/env python3
"""GPU self-check of kernels/memra.fatbin against float64 torch references.

Run on the GPU machine from the repo root:  python3 kernels/internal/gpucheck/check.py
Loads the fatbin through the driver API (ctypes, libcuda.so.1) into torch's
primary context, launches each kernel with the launch geometry of
kernels/spec_table.go (repeated here by hand), and compares. Prints one line
per check and exits 1 on any failure. Tolerances: f32 accumulation of n
products of O(1) values -> ~1e-5 relative; f16 KV rounding -> 1e-3; fp8
(3 mantissa bits) -> 1/16 relative per element, ~3e-2 on attention outputs.
"""
import ctypes, math, sys, os
import torch

torch.manual_seed(0)
dev = torch.device("cuda")
torch.zeros(1, device=dev)  # create torch's primary context
cu = ctypes.CDLL("libcuda.so.1")
here = os.path.dirname(os.path.abspath(__file__))
fat = open(os.path.join(here, "..", "..", "memra.fatbin"), "rb").read()
mod = ctypes.c_void_p()
buf = ctypes.create_string_buffer(fat, len(fat))
r = cu.cuModuleLoadData(ctypes.byref(mod), buf)
assert r == 0, f"cuModuleLoadData: {r}"
fails = []

def launch(name, grid, block, args, shared=0):
    f = ctypes.c_void_p()
    r = cu.cuModuleGetFunction(ctypes.byref(f), mod, name.encode())
    assert r == 0, f"cuModuleGetFunction {name}: {r}"
    if shared > 48 * 1024:
        cu.cuFuncSetAttribute(f, 8, shared)  # MAX_DYNAMIC_SHARED_SIZE_BYTES
    held = []
    for a in args:
        if isinstance(a, torch.Tensor):
            held.append(ctypes.c_void_p(a.data_ptr()))
        elif a is None:
            held.append(ctypes.c_void_p(0))
        elif isinstance(a, float):
            held.append(ctypes.c_float(a))
        elif isinstance(a, tuple) and a[0] == "ptr":  # raw address
            held.append(ctypes.c_void_p(a[1]))
        else:
            held.append(ctypes.c_int(int(a)))
    arr = (ctypes.c_void_p * len(held))(*[ctypes.addressof(h) for h in held])
    g = list(grid) + [1] * (3 - len(grid))
    r = cu.cuLaunchKernel(f, g[0], g[1], g[2], block, 1, 1, shared, None, arr, None)
    assert r == 0, f"cuLaunchKernel {name}: {r}"
    torch.cuda.synchronize()

def check(what, got, want, rtol, atol=0.0):
    got = got.double().cpu(); want = want.double().cpu()
    err = (got - want).abs()
    lim = atol + rtol * want.abs().max().item()
    bad = (err > lim).sum().item() + torch.isnan(got).sum().item()
    print(f"{'ok  ' if bad == 0 else 'FAIL'} {what:44s} max|err| {err.max().item():.3e}  limit {lim:.3e}")
    if bad:
        fails.append(what)

def same(what, a, b):
    ok = torch.equal(a, b)
    print(f"{'ok  ' if ok else 'FAIL'} {what:44s} bit-identical")
    if not ok:
        fails.append(what)

def f16bits(t): return t.to(torch.float16).view(torch.int16)
def bf16bits(t): return t.to(torch.bfloat16).view(torch.int16)

def q8_0(w):  # w [rows][cols] f32 -> (bytes tensor, dequantised f32)
    rows, cols = w.shape
    b = w.reshape(rows, cols // 32, 32)
    d = (b.abs().amax(-1) / 127).to(torch.float16)
    q = torch.round(b / d.float().clamp_min(1e-30).unsqueeze(-1)).clamp(-127, 127).to(torch.int8)
    raw = torch.cat([d.view(torch.uint8).reshape(rows, cols // 32, 2), q.view(torch.uint8)], -1)
    return raw.reshape(-1).contiguous(), (d.float().unsqueeze(-1) * q.float()).reshape(rows, cols)

# ---- matvec -----------------------------------------------------------------
for rows, cols in [(1000, 4096), (37, 1000), (64, 768), (1, 4100)]:
    W = torch.randn(rows, cols, device=dev)
    x = torch.randn(cols, device=dev)
    y0 = torch.randn(rows, device=dev)
    for t in ["f32", "f16", "bf16", "q8_0"]:
        if t == "q8_0" and cols % 32: continue
        if t == "f32": Wd, Wr = W, W
        elif t == "f16": Wd, Wr = f16bits(W), W.half().float()
        elif t == "bf16": Wd, Wr = bf16bits(W), W.bfloat16().float()
        else: Wd, Wr = q8_0(W)
        want = Wr.double() @ x.double()
        y = torch.empty(rows, device=dev)
        launch("matvec_" + t, [(rows + 7) // 8], 256, [y, Wd, x, rows, cols, 0])
        check(f"matvec_{t} {rows}x{cols}", y, want, 1e-5 * math.sqrt(cols) / 8, 1e-4)
        y2 = y0.clone()
        launch("matvec_" + t, [(rows + 7) // 8], 256, [y2, Wd, x, rows, cols, 1])
        check(f"matvec_{t} accumulate", y2, y0.double() + want, 1e-5 * math.sqrt(cols) / 8, 1e-4)
        y3 = torch.empty(rows, device=dev)
        launch("matvec_" + t, [(rows + 7) // 8], 256, [y3, Wd, x, rows, cols, 0])
        same(f"matvec_{t} rerun", y, y3)

# ---- embed ------------------------------------------------------------------
n_vocab, n_embd = 300, 256
T = torch.randn(n_vocab, n_embd, device=dev)
ctr = torch.tensor([123, 0, 0, 0], dtype=torch.int32, device=dev)
for t, Td, Tr in [("f32", T, T), ("f16", f16bits(T), T.half().float()), ("bf16", bf16bits(T), T.bfloat16().float()),
                  ("q8_0",) + q8_0(T)]:
    x = torch.empty(n_embd, device=dev)
    launch("embed_" + t, [(n_embd + 255) // 256], 256, [x, Td, n_embd, n_vocab, 57, None])
    check(f"embed_{t} host token", x, Tr[57], 0)
    launch("embed_" + t, [(n_embd + 255) // 256], 256, [x, Td, n_embd, n_vocab, 0, ctr])
    check(f"embed_{t} device token", x, Tr[123], 0)

# ---- rmsnorm ----------------------------------------------------------------
def rms_ref(x, w, eps): x = x.double(); return x / torch.sqrt((x * x).mean(-1, keepdim=True) + eps) * w.double()
x = torch.randn(16, 2 * 256, device=dev); w = torch.randn(256, device=dev)
out = torch.empty(16, 256, device=dev)
launch("rmsnorm", [16], 256, [out, x, w, 16, 256, 512, 256, 1e-6])
check("rmsnorm strided q|gate", out, rms_ref(x[:, :256], w, 1e-6), 1e-6)
x1 = torch.randn(1, 4096, device=dev); w1 = torch.randn(4096, device=dev); want = rms_ref(x1, w1, 1e-6)
launch("rmsnorm", [1], 256, [x1, x1, w1, 1, 4096, 4096, 4096, 1e-6])
check("rmsnorm in place", x1, want, 1e-6)
z = torch.randn(32, 128, device=dev); xo = torch.randn(32, 128, device=dev); wn = torch.randn(128, device=dev)
og = torch.empty(32, 128, device=dev)
launch("rmsnorm_gated", [32], 256, [og, xo, wn, z, 32, 128, 1e-6])
check("rmsnorm_gated", og, rms_ref(xo, wn, 1e-6) * torch.nn.functional.silu(z.double()), 1e-6)

# ---- rope -------------------------------------------------------------------
heads, hd, n_rot, base = 16, 256, 64, 1e7
for pos in [0, 5, 4097, 200000]:
    q = torch.randn(heads, hd, device=dev); q0 = q.double().cpu().clone()
    launch("rope_neox", [heads], 64, [q, heads, hd, n_rot, pos, None, base])
    half = n_rot // 2
    i = torch.arange(half, dtype=torch.float64)
    th = pos * base ** (-2 * i / n_rot)
    c, s = torch.cos(th), torch.sin(th)
    ref = q0.clone()
    ref[:, :half] = q0[:, :half] * c - q0[:, half:n_rot] * s
    ref[:, half:n_rot] = q0[:, :half] * s + q0[:, half:n_rot] * c
    check(f"rope_neox pos {pos}", q, ref, 1e-6)
dpos = torch.tensor([0, 77, 0, 0], dtype=torch.int32, device=dev)
qa = torch.randn(heads, hd, device=dev); qb = qa.clone()
launch("rope_neox", [heads], 64, [qa, heads, hd, n_rot, 77, None, base])
launch("rope_neox", [heads], 64, [qb, heads, hd, n_rot, 0, ("ptr", dpos.data_ptr() + 4), base])
same("rope_neox host pos == device pos", qa, qb)

# ---- kv_store + attention ---------------------------------------------------
def e4m3_round(x):  # torch's float8 (RNE, then saturate like satfinite for |x| <= 448)
    return x.clamp(-448, 448).to(torch.float8_e4m3fn).float()

for hd in [64, 128, 256]:
    n_head, n_kv, cap = 24 if hd == 256 else 16, 4, 700
    group = n_head // n_kv
    T_kv = 600
    K = torch.randn(n_kv, cap, hd, device=dev); V = torch.randn(n_kv, cap, hd, device=dev)
    q = torch.randn(n_head, hd, device=dev)
    gate = torch.randn(n_head, 2 * hd, device=dev)
    for fp8 in [False, True]:
        if fp8:
            kc = torch.zeros(n_kv, cap, hd, dtype=torch.uint8, device=dev); vc = kc.clone()
            ks = torch.zeros(n_kv, cap, device=dev); vs = ks.clone()
        else:
            kc = torch.zeros(n_kv, cap, hd, dtype=torch.int16, device=dev); vc = kc.clone()
        for p in range(T_kv):
            kk = K[:, p].contiguous(); vv = V[:, p].contiguous()
            if fp8:
                launch("kv_store_fp8", [n_kv], 128, [kc, vc, ks, vs, kk, vv, n_kv, hd, cap, p, None])
            else:
                launch("kv_store_f16", [n_kv], 128, [kc, vc, kk, vv, n_kv, hd, cap, p, None])
        if fp8:
            ka = K[:, :T_kv].abs().amax(-1, keepdim=True); va = V[:, :T_kv].abs().amax(-1, keepdim=True)
            Kr = e4m3_round(K[:, :T_kv] * (448 / ka)) * (ka / 448); Vr = e4m3_round(V[:, :T_kv] * (448 / va)) * (va / 448)
            Kg = kc[:, :T_kv].view(torch.float8_e4m3fn).float() * ks[:, :T_kv, None]
            check(f"kv_store_fp8 d{hd} vs torch e4m3", Kg, Kr, 0, 1e-6 * ka.max().item())
        else:
            Kr = K[:, :T_kv].half().float(); Vr = V[:, :T_kv].half().float()
            check(f"kv_store_f16 d{hd}", kc[:, :T_kv].view(torch.float16).float(), Kr, 0)
        kvh = torch.arange(n_head, device=dev) // group
        s = (q.double().unsqueeze(1) * Kr[kvh].double()).sum(-1) / math.sqrt(hd)
        ref = torch.einsum("ht,htd->hd", torch.softmax(s, -1), Vr[kvh].double())
        refg = ref * torch.sigmoid(gate[:, hd:].double())
        for vec in [False, True]:
            name = f"attn_split_{'vec_' if vec else ''}{'fp8' if fp8 else 'f16'}_d{hd}"
            G = min(8, 64 // (hd // min(32, hd // (1 if not vec else (16 if fp8 else 8)))))
            outs = []
            for n_splits in [1, 10, 64]:
                pm = torch.empty(n_head * n_splits * 2, device=dev); pa = torch.empty(n_head * n_splits * hd, device=dev)
                args = [pm, pa, q, kc, vc] + ([ks, vs] if fp8 else []) + [n_head, n_kv, cap, n_splits, T_kv, None, 1 / math.sqrt(hd)]
                launch(name, [n_kv, n_splits, (group + G - 1) // G], 128, args)
                out = torch.empty(n_head, hd, device=dev)
                launch("attn_combine", [n_head], 128, [out, pm, pa, ("ptr", gate.data_ptr() + hd * 4), n_head, hd, n_splits, 2 * hd], shared=n_splits * 4)
                check(f"{name} splits {n_splits} (+gate)", out, refg, 2e-5 if not fp8 else 1e-4)
                outs.append(out)
            # device t_kv gives the same bits
            dt = torch.tensor([0, 0, T_kv, 0], dtype=torch.int32, device=dev)
            pm2 = torch.empty_like(pm); pa2 = torch.empty_like(pa)
            args = [pm2, pa2, q, kc, vc] + ([ks, vs] if fp8 else []) + [n_head, n_kv, cap, 64, 0, ("ptr", dt.data_ptr() + 8), 1 / math.sqrt(hd)]
            launch(name, [n_kv, 64, (group + G - 1) // G], 128, args)
            same(f"{name} device t_kv == host t_kv", torch.cat([pm, pa]), torch.cat([pm2, pa2]))

# ---- Gated DeltaNet ---------------------------------------------------------
H_k, H_v, S, kern = 4, 8, 128, 4
C = 2 * H_k * S + H_v * S
xin = torch.randn(C, device=dev); wconv = torch.randn(C, kern, device=dev) * 0.5
st = torch.randn(C, kern - 1, device=dev); st0 = st.double().cpu().clone()
y = torch.empty(C, device=dev)
launch("gdn_conv", [(C + 255) // 256], 256, [y, st, xin, wconv, C, kern])
win = torch.cat([st0, xin.double().cpu()[:, None]], 1)
check("gdn_conv y", y, torch.nn.functional.silu((win * wconv.double().cpu()).sum(1)), 1e-6)
check("gdn_conv state", st, win[:, 1:], 0)
qg, kg, vg = y[:H_k * S], y[H_k * S:2 * H_k * S], y[2 * H_k * S:]
b = torch.randn(H_v, device=dev); a = torch.randn(H_v, device=dev)
ssm_a = -torch.rand(H_v, device=dev) * 2; dtb = torch.randn(H_v, device=dev)
state = torch.randn(H_v, S, S, device=dev) * 0.1; M0 = state.double().cpu().clone()
o = torch.empty(H_v, S, device=dev)
launch("gdn_delta", [H_v, S // 16], 128, [state, o, qg, kg, vg, b, a, ssm_a, dtb, H_k, H_v, 0, 1e-6])
qd, kd, vd = [t.double().cpu() for t in (qg, kg, vg)]
Mr = M0.clone(); orf = torch.zeros(H_v, S, dtype=torch.float64)
for h in range(H_v):
    hk = h % H_k
    qq = qd[hk * S:(hk + 1) * S]; kk = kd[hk * S:(hk + 1) * S]
    qq = qq / max(qq.norm().item(), 1e-6) / math.sqrt(S); kk = kk / max(kk.norm().item(), 1e-6)
    beta = torch.sigmoid(b.double().cpu()[h]); g = ssm_a.double().cpu()[h] * torch.nn.functional.softplus(a.double().cpu()[h] + dtb.double().cpu()[h])
    M = Mr[h] * torch.exp(g)
    d = beta * (vd[h * S:(h + 1) * S] - M @ kk)
    M = M + d[:, None] * kk[None, :]
    Mr[h] = M; orf[h] = M @ qq
check("gdn_delta state", state, Mr, 1e-5)
check("gdn_delta o", o, orf, 1e-5)

# ---- elementwise, argmax, counters -------------------------------------------
n = 5000
g_ = torch.randn(n, device=dev); u_ = torch.randn(n, device=dev); out = torch.empty(n, device=dev)
launch("swiglu", [(n + 255) // 256], 256, [out, g_, u_, n])
check("swiglu", out, torch.nn.functional.silu(g_.double()) * u_.double(), 1e-6)
for nv in [248320, 8192, 100]:
    logits = torch.randn(nv, device=dev)
    logits[nv // 3] = 10.0; logits[nv // 2] = 10.0  # tie: lower index wins
    parts = (nv + 8191) // 8192
    pv = torch.empty(parts, device=dev); pi = torch.empty(parts, dtype=torch.int32, device=dev)
    outi = torch.empty(1, dtype=torch.int32, device=dev); c = torch.zeros(4, dtype=torch.int32, device=dev)
    launch("argmax_partial", [parts], 256, [pv, pi, logits, nv])
    launch("argmax_final", [1], 256, [outi, c, pv, pi, nv])
    ok = outi.item() == nv // 3 and c[0].item() == nv // 3
    print(f"{'ok  ' if ok else 'FAIL'} argmax n={nv:<38d} got {outi.item()} (token counter {c[0].item()}), want {nv // 3}")
    if not ok: fails.append(f"argmax {nv}")
c = torch.zeros(4, dtype=torch.int32, device=dev)
launch("counters_set", [1], 32, [c, 11, 63, 64]); launch("counters_advance", [1], 32, [c])
ok = c.tolist() == [11, 64, 65, 1]
print(f"{'ok  ' if ok else 'FAIL'} counters set+advance {c.tolist()}")
if not ok: fails.append("counters")

print("ALL OK" if not fails else f"{len(fails)} FAILED: {fails}")
sys.exit(1 if fails else 0)
