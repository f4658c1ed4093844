#!/usr/bin/env bash
# Session 53, step 100's third part: the attention's split once per run of
# a chunk's tokens that share a bucket (attn_split_chunk_*: the vector
# splits; the scalar and tensor-core ones stay a launch a token). The chunk,
# attention and prefill tests; gates; prime time at P=512 alternated a755
# (the reduce-scatter, a755940) main a755 main with decode at 1k alongside;
# an ncu pass over memra run priming 16 tokens on 0.8B bf16 and q8_0 (GPU
# time by kernel name); memra run on a 300-token prompt; every engine/gpu
# GPU test. carry ["bin"]. ~7 min.
set -u
source scripts/gpu/lib.sh
start_run
synth main "0.8b 9b" "bf16 q8_0"
el "chunk, attention and prefill tests"
(cd engine/gpu && timeout 200 "$R/bin/main/engine_gpu.test" -test.run 'Chunk|KernelAttention|AttnCombine|PrefillMatchesTokenFeed|SessionFeed|GraphEqualsEager|DecodeMatchesCPU' -test.v -test.timeout 190s > "$OUT/gputest-prefill.txt" 2>&1)
grep -E "^(--- |ok|FAIL|PASS)|panic" "$OUT/gputest-prefill.txt" | grep -v "^    --- PASS" | head -20
grep -cE -- '--- PASS: TestGPUKernelAttnSplitChunk/' "$OUT/gputest-prefill.txt"
el "default gate"
timeout 100 ./bin/main/gate > "$OUT/gate-default.txt" 2>&1
echo "  rc $?: $(grep -E 'gate (PASS|FAIL)|MISMATCH' "$OUT/gate-default.txt" | head -3 | tr '\n' ' ')"
wait_synth
el "gates"
gate main "$M/0.8b-bf16.gguf" 300 256 0
gate main "$M/0.8b-q8_0.gguf" 300 256 1
gate main "$M/9b-q8_0.gguf" 200 128 0
gate main "$M/9b-bf16.gguf" 77 64 1
el "bench prime P=512: a755 main a755 main"
ms="$M/0.8b-bf16.gguf,$M/0.8b-q8_0.gguf,$M/9b-bf16.gguf,$M/9b-q8_0.gguf"
i=0
for b in a755 main a755 main; do
  i=$((i+1)); d=/tmp/bp/$i-$b; rm -rf $d; mkdir -p $d
  timeout 120 ./bin/$b/bench -model "$ms" -ctx 1024 -reps 3 -tokens 64 -prompt 512 -sampled=false -out $d > $d/stdout.txt 2> $d/stderr.txt
  echo "rc $? ($b)"
  grep -E 'prime' $d/stderr.txt
  grep -E '\| graph \|' $d/stdout.txt | cut -d'|' -f2,4,5,6,9
done
tar czf "$OUT/bench-prime.tgz" -C /tmp bp
for m in 0.8b-bf16 0.8b-q8_0; do
  el "ncu: memra run priming 16 tokens, $m (kernel times summed by name)"
  timeout 120 ncu --clock-control none --metrics gpu__time_duration.sum --csv ./bin/main/memra run -m "$M/$m.gguf" --prompt-tokens "$(seq -s, 100 115)" -n 1 --greedy --device cuda > /tmp/ncu-$m.csv 2>/dev/null
  cp /tmp/ncu-$m.csv "$OUT/"
  python3 - /tmp/ncu-$m.csv <<'PY'
import csv, collections, sys
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 10]
h = rows[0]; ki, vi, ui = h.index('Kernel Name'), h.index('Metric Value'), h.index('Metric Unit')
agg = collections.defaultdict(lambda: [0, 0.0])
for r in rows[1:]:
    v = float(r[vi].replace(',', '')) * {'nsecond': 1e-3, 'usecond': 1.0, 'msecond': 1e3}.get(r[ui], 1e-3)
    agg[r[ki]][0] += 1; agg[r[ki]][1] += v
for k, (n, v) in sorted(agg.items(), key=lambda x: -x[1][1]):
    print(f"  {k[:34]:34s} {n:4d} launches {v:9.1f} us {v/n:7.2f} us each")
PY
done
el "memra run on cuda, a 300-token prompt"
timeout 60 ./bin/main/memra run -m "$M/0.8b-bf16.gguf" --prompt-tokens "$(seq -s, 100 399)" -n 32 --greedy --device cuda --json 2>&1 | tr ',' '\n' | grep -E 'tok_per_s' | head -3 | tr '\n' ' '; echo
gpu_tests main
grep -cE '^--- FAIL|^FAIL|panic' "$OUT/gputest.txt"
el done
