#!/usr/bin/env bash
# Ran in session 13 (run86): the three prepared
# branches in one call (branch next/s13-combined merges them). bin/old =
# main, bin/P = next/prologue-loads, bin/N = next/norm-w-early, bin/PN = this
# branch (also bin/PN/mvexp and bin/mvexp.cubin from it for next/q6k-quad's
# Q6_K forms). Every GPU test and 4 gates on PN, greedy tokens, bench at 1k
# and 4k in rotation old P N PN (two rounds) on bf16, q8_0 and Q6_K, then
# mvexp's Q6_K forms (norm fused) against the engine's matvec_q6_k.
# Build (here): for each of old P N PN, in a worktree of its branch:
#   CGO_ENABLED=0 go build -ldflags="-s -w" -o /tmp/binall/$n/ ./tools/bench ./tools/gate ./tools/memra
# and for PN also: (cd engine && CGO_ENABLED=0 go test -ldflags="-s -w" -c -o /tmp/binall/PN/engine_gpu.test ./gpu);
#   CGO_ENABLED=0 go build -ldflags="-s -w" -o /tmp/binall/PN/mvexp ./engine/internal/mvexp;
#   nvcc -O3 -arch=sm_90 -cubin -o /tmp/binall/mvexp.cubin engine/internal/mvexp/mvexp.cu;
# then rm -f bin/* && tar cJf bin/bin.txz -C /tmp/binall . and carry ["bin"].
set -u
source scripts/gpu/lib.sh
start_run
synth PN "0.8b 9b" "bf16 q8_0 q6_k"
gpu_tests PN
wait $SYNTH
el "gates, greedy tokens"
( gate PN $M/0.8b-bf16.gguf 300 2000 0; gate PN $M/0.8b-q6_k.gguf 3000 1000 1 ) > $OUT/gates1.txt 2>&1 & g1=$!
( gate PN $M/9b-q8_0.gguf 64 1000 1; gate PN $M/9b-bf16.gguf 1500 600 0 ) > $OUT/gates2.txt 2>&1 & g2=$!
greedy PN $M/0.8b-q8_0.gguf
wait $g1 $g2
cat $OUT/gates?.txt
bench_rotation $M/0.8b-bf16.gguf,$M/0.8b-q8_0.gguf,$M/0.8b-q6_k.gguf,$M/9b-bf16.gguf,$M/9b-q8_0.gguf,$M/9b-q6_k.gguf 1024,4096 old P N PN old P N PN
el "mvexp -xnorm: Q6_K forms"
timeout 150 ./bin/PN/mvexp -cubin bin/mvexp.cubin -xnorm -variants mmk6 \
  -shapes 24576x4096,12352x4096,4096x12288,4096x4096,248320x4096,7168x1024,1024x3584,248320x1024 | grep -E '==|q6_k|mmk6|copy|skipped'
el done
