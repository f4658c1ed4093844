#!/usr/bin/env bash
# Session 58 (prepared without a GPU; not run yet): Q3_K, Q4_0 and Q5_0
# matrices (and IQ4_NL) stored as Q6_K and Q8_0 (gguf.Recode; deviceType),
# which hold their values exactly. TestGPURecodedEqualsWide (a recodeMix
# model's logits at every eager step and its graph tokens == the same model
# with those matrices recoded in the file, bit for bit) and
# TestGPUDecodeMatchesCPU's recoded cases (against the CPU backend, 150
# steps) and TestGPUPrefillMatchesTokenFeed's (a prompt primed in chunks
# leaves token feed's cache, bit for bit); gates on synth's new types; greedy tokens cuda == cpu on the
# 0.8B Q3_K; bench at 1k, each recoded preset beside the file type it runs
# as. Run after run338.sh on main (the same binaries, bin/main).
# Binaries: go tool mage cuda:bins; mkdir -p /tmp/binall/main; cp
# bin/{memra,gate,bench,engine_gpu.test} /tmp/binall/main/; XZ_OPT=-9 tar
# cJf bin/bin.txz -C /tmp/binall . (or scripts/gpu/bins.sh main=main);
# carry ["bin"]. ~7 min: the bench's rows are 0.8B once and 9B twice.
# Prediction: a recoded model runs the kernels and bytes of the wider
# file, so its graph tok/s at 1k is that file's within noise (±1%), and its
# roofline % (counted on its own file's bytes) that file's times a little
# more than 110/210 (Q3_K) and 144/272 (Q4_0): KV, states and norms count
# in both.
set -u
source scripts/gpu/lib.sh
start_run
synth main "0.8b 9b" "q3_k q6_k q4_0 q5_0 q8_0"
el "recoded GPU tests"
(cd engine/gpu && timeout 200 "$R/bin/main/engine_gpu.test" -test.run 'RecodedEqualsWide|DecodeMatchesCPU/qwen35-(recoded|q3_k|q6_k|q8_0|iq4_nl)|PrefillMatchesTokenFeed/recoded' -test.v -test.timeout 190s > "$OUT/gputest-recoded.txt" 2>&1)
grep -E "^(--- |ok|FAIL|PASS)|FAIL|panic|worst relative|identical|recoded" "$OUT/gputest-recoded.txt" | head -20
wait_synth
el "gates"
gate main "$M/0.8b-q3_k.gguf" 300 256 0
gate main "$M/0.8b-q4_0.gguf" 300 256 1
gate main "$M/0.8b-q5_0.gguf" 64 128 0
gate main "$M/9b-q3_k.gguf" 300 64 0
gate main "$M/9b-q4_0.gguf" 64 64 1
el "greedy tokens, 0.8b-q3_k, cuda and cpu"
greedy main "$M/0.8b-q3_k.gguf"
grep -E '^memra: ' "$OUT/tok-cuda.txt" | cut -c1-240
mkdir -p /tmp/br
for pr in 0.8b-1 9b-1 9b-2; do
  p=${pr%-*}
  el "bench $p at 1k ($pr)"
  d=/tmp/br/$pr; mkdir -p $d
  timeout 120 ./bin/main/bench -model "$M/$p-q3_k.gguf,$M/$p-q6_k.gguf,$M/$p-q4_0.gguf,$M/$p-q8_0.gguf" \
    -ctx 1024 -reps 3 -tokens 64 -sampled=false -out $d > $d/stdout.txt 2> $d/stderr.txt
  grep -E '\| graph \|' $d/stdout.txt | cut -d'|' -f2,4,5,6,9
done
grep -hE 'stored and read as' /tmp/br/9b-1/stderr.txt | cut -c1-200
tar czf "$OUT/bench-recoded.tgz" -C /tmp br
el done
