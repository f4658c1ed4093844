#!/usr/bin/env bash
# Prepared in session 67 (no GPU was lent after run371), for the next
# session with one: main after step 119 (bin/main, the kernels run371
# measured): the batch and prefill GPU tests and gates; then three variants
# against it, alternated twice (BenchmarkGPUMatvecBatch bf16, f16, q8_0 for
# 8 tokens; prime ms at P=512 on 0.8B bf16, 9B bf16, 9B q8_0):
#   once: 1374fbf, the reduce array declared once in memra_mvb (its wide
#     kernels' registers allocated otherwise; docs/perf.md step 119);
#   r8:   main + scripts/gpu/patches/mvb-r8.patch, the wide 16-bit batch
#     kernels with 8 rows a warp, one block an SM, so that each x load feeds
#     twice the rows (the 12,288-column down projections read x from the L2
#     for every unit; every other batch kernel's code unchanged), with its
#     batch test;
#   r8all: r8 + scripts/gpu/patches/mvb-r8plain.patch, the plain 16-bit
#     kernels so too (the 0.8B's 1,024-column launches are a trip a unit, so
#     half the units is half the reduce-scatters a row), with its batch test;
# last, ncu of main's batch kernels at 4,096 and 12,288 columns (what
# bounds them after step 119). carry ["bin"]; binaries from
#   BINS_ARCHS=90 bash scripts/gpu/bins.sh main=main:memra,gate,bench,engine_gpu.test \
#     once=1374fbf:bench,engine_gpu.test r8=main+scripts/gpu/patches/mvb-r8.patch:bench,engine_gpu.test \
#     r8all=main+scripts/gpu/patches/mvb-r8.patch+scripts/gpu/patches/mvb-r8plain.patch:bench,engine_gpu.test
# ~8 min on an H100.
set -u
source scripts/gpu/lib.sh
start_run
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
synth main "0.8b 9b" "bf16 q8_0"
for b in main r8 r8all; do run_tests $b 'Batch|Prefill|Chunk'; done
mvb_bench '(BF16|F16|Q8_0)/.*/n8/' main once r8 r8all main once r8 r8all
wait_synth
prime_ab "$M/0.8b-bf16.gguf,$M/9b-bf16.gguf,$M/9b-q8_0.gguf" main once r8 r8all main once r8 r8all
el "gates (main)"
gate main "$M/9b-bf16.gguf" 300 32 0
gate main "$M/9b-q8_0.gguf" 300 32 1
gate main "$M/0.8b-q8_0.gguf" 300 128 0
gate main "$M/0.8b-bf16.gguf" 300 128 1
ncu_batch main Q8_0/24576x4096/n8/staged matvec_batch_q8_0 q8s
ncu_batch main Q8_0/4096x12288/n8/laid matvec_batch_q8_0 q8l
ncu_batch main BF16/4096x12288/n8/global matvec_batch_bf16 bfw
ncu_batch main BF16/24576x4096/n8/global matvec_batch_bf16 bf
tar czf "$OUT/ncu.tgz" -C /tmp ncu
el done
