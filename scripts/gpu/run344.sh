#!/usr/bin/env bash
# Ran in session 61 on an H100 (no H200 was lent): docs/results/h100-run344-log.txt,
# perf.md step 112. The patches it names are on main since, main's build being kql's.
# Session 60 (prepared without a GPU): times run343.sh's binaries (bin/main,
# bin/kql: main with scripts/gpu/patches/kq-loops.patch, kq-nobreak.patch
# and, since session 61, mixfuse.patch, which leaves these one-type files'
# launches as they are;
# same bin.txz, same machine right after it, so the models are there).
# main and kql alternated twice: decode at 1k and priming at P = 512.
# Predictions (perf.md steps 107-109): decode bound by instructions as the
# K-quants are (step 78): 9B IQ4_XS ~399 -> ~460-500 tok/s (loop 522 ->
# 398; Q4_K's 289-instruction loop gives 502), IQ4_NL likewise, 9B Q6_K
# ~388 -> ~420-440 (474 -> 418, half the mma); 9B Q4_K and Q5_K decode
# unchanged. Priming at P = 512: Q4_K up to 25% and Q5_K up to 14% faster
# (batch loops 777 -> 584, 877 -> 757), IQ4_XS and Q6_K somewhat (850 ->
# 696, 779 -> 710), less than the loops since the batch matvecs are most but
# not all of priming. A prompt of 4 tokens (one chunk of n = 4, whose second
# token group is empty) on 9B Q4_K and Q5_K: the patch makes that group's
# products where main skipped them, so it may prime such a chunk a little
# more slowly.
set -u
source scripts/gpu/lib.sh
start_run
synth kql "0.8b 9b" "q6_k"
synth9=$SYNTH
synth kql "9b" "iq4_xs iq4_nl q4_k q5_k"
SYNTH="$SYNTH $synth9"
wait_synth
mkdir -p /tmp/bk
for b in main kql main kql; do
  el "bench 1k, prime 512 ($b)"
  d=/tmp/bk/$b-$(date +%s%N); mkdir -p $d
  timeout 110 "./bin/$b/bench" -model "$M/9b-iq4_xs.gguf,$M/9b-iq4_nl.gguf,$M/9b-q6_k.gguf,$M/9b-q4_k.gguf,$M/9b-q5_k.gguf,$M/0.8b-q6_k.gguf" -ctx 1024 -reps 3 -tokens 64 -prompt 512 -sampled=false -out $d > $d/stdout.txt 2> $d/stderr.txt
  grep -E 'prime' $d/stderr.txt; grep -E '\| graph \|' $d/stdout.txt | cut -d'|' -f2,4,5,6,9
done
for b in main kql main kql; do
  el "prime 4 ($b)"
  d=/tmp/bk/p4-$b-$(date +%s%N); mkdir -p $d
  timeout 60 "./bin/$b/bench" -model "$M/9b-q4_k.gguf,$M/9b-q5_k.gguf" -ctx 64 -reps 5 -tokens 16 -prompt 4 -sampled=false -out $d > $d/stdout.txt 2> $d/stderr.txt
  grep -E 'prime' $d/stderr.txt
done
tar czf "$OUT/bench-kql.tgz" -C /tmp bk
el done
