#!/usr/bin/env bash
# Ran in session 93 (log docs/results/h100-run487-log.txt; perf.md step 152).
# Session 92. Step 151 put the prefill's ring kernels (matvec_batch_kq.cu)
# back at a block's last unit, untimed (its code is run484's o's, by
# sassdiff: run484 had the 9B K-quants priming 2.8-5.4% faster so); and
# run486 found the Q6_K decode kernels' trigger a trade between the files:
# at a block's last unit the 0.8B Q6_K +4.5%, the 9B -2.8%. The 0.8B's Q6_K
# rows have 1,024-3,584 columns, the 9B's 4,096 and 12,288. o = 938a714
# (before step 151), m = main after it (REV below), d = m +
# q6-cols.patch (the Q6_K decode kernels early for rows of 4,096 columns or
# more, else at the last unit). o m d in turn twice at 1k on the 0.8B and
# 9B Q6_K, the 9B Q4_K and Q5_K, and the 0.8B Q5_K, whose priming step 151
# gave up 1.2%: the Q6_K files' decode d against m, every file's priming m
# against o (each pass's JSON, by bench -compare); tokens, gates. Then `run487.sh tests`, typed at once on the
# warm machine: every engine/gpu GPU test of d, so that a gain lands
# without another call (the fatbin rebuilt for every architecture and
# sassdiffed against d's measured sm_90 code). ~250 s and ~350 s. carry
# ["bin"]; binaries, REV being main's commit with this script: `BINS_ARCHS=90
# bash scripts/gpu/bins.sh o=938a714:memra,bench m=REV:memra,bench,gate
# d=REV+scripts/gpu/patches/launch/q6-cols.patch:memra,bench,gate,engine_gpu.test`.
set -u
source scripts/gpu/lib.sh
start_run
if [ "${1:-}" = tests ]; then
  gpu_tests d
  el done
  exit 0
fi
gpu=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)
echo "$gpu"
synth m "0.8b 9b" "q6_k"
first=$SYNTH
synth m "9b" "q4_k q5_k"
second=$SYNTH
synth m "0.8b" "q5_k"
SYNTH="$first $second $SYNTH"
wait_synth
bench_rotation "$M/0.8b-q6_k.gguf,$M/9b-q6_k.gguf,$M/9b-q4_k.gguf,$M/9b-q5_k.gguf,$M/0.8b-q5_k.gguf" 1024 o m d o m d
el priming
os=($(ls -dtr /tmp/bn/o-* | tail -2)) ms=($(ls -dtr /tmp/bn/m-* | tail -2)) ds=($(ls -dtr /tmp/bn/d-* | tail -2))
for i in 0 1; do
  echo "pass $((i + 1)): m against o"
  ./bin/m/bench -compare "${os[$i]}/latest.json" "${ms[$i]}/latest.json" 2>&1 | grep -A8 '^| model | kv | P old'
  echo "pass $((i + 1)): d against m"
  ./bin/m/bench -compare "${ms[$i]}/latest.json" "${ds[$i]}/latest.json" 2>&1 | grep -A8 '^| model | kv | P old'
done
el tokens
tokens_cmp m d "0.8b-q6_k 9b-q6_k"
tokens_cmp o m "9b-q4_k"
el gates
gate m "$M/9b-q4_k.gguf" 64 128 0
gate d "$M/0.8b-q6_k.gguf" 64 256 0
gate d "$M/9b-q6_k.gguf" 64 128 0
el done
