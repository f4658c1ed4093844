#!/usr/bin/env bash
# Session 78, on any GPU (`bash scripts/gpu/run434.sh`): run433 as
# prepared in session 77 (step 131's narrowed form: main + the lanes' own
# token order only in the 16-bit stream's 8-row kernels and the q8_0 rings
# over staged copies, patches/batch/narrow.patch; its checks, two gates,
# then prime ms at P = 512, the replayed chunk and the q8_0 batch kernels
# at n32 of pre131, main and narrow in turn, twice), then main's prefill
# profile at P = 512 (bench -profile 4: the first four 32-token chunks,
# kernel by kernel) of the 0.8B bf16 and q8_0 and the 9B q8_0, to say
# where a chunk's time goes after step 131. ~4 minutes.
# carry ["bin"]; binaries from
#   BINS_ARCHS=90 bash scripts/gpu/bins.sh main=main:memra,bench,gate,engine_gpu.test \
#     pre127=16afdf8:bench pre131=37c6d88:bench,engine_gpu.test \
#     narrow=main+scripts/gpu/patches/batch/narrow.patch:bench,gate,engine_gpu.test
# (run428's, run429's and run435's too).
set -u
bash scripts/gpu/run433.sh
source scripts/gpu/lib.sh
T0=$(date +%s); M=/tmp/models; R=$PWD
exec > >(tee -a "$OUT/log.txt") 2>&1
mkdir -p /tmp/prof
for m in 0.8b-bf16 0.8b-q8_0 9b-q8_0; do
  el "prefill profile $m (main)"
  timeout 120 ./bin/main/bench -model "$M/$m.gguf" -ctx 64 -reps 1 -tokens 16 -prompt 512 -profile 4 -sampled=false \
    -out /tmp/prof/$m > /tmp/prof/$m.txt 2> /tmp/prof/$m.err
  echo "rc $?"
  grep -E 'prefill profile|prime' /tmp/prof/$m.err
done
tar czf "$OUT/prof.tgz" -C /tmp prof
el done
