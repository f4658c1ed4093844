#!/usr/bin/env bash
# Session 46: the longest gates yet. Every earlier gate generated at most
# 2,000 tokens (17-32 buckets); these run graph == eager across hundreds of
# t_kv buckets: 0.8B q8_0 for 32,000 tokens over the f16 cache (501
# buckets), 0.8B q8_0 for 16,000 over FP8 and 9B Q4_K for 12,000 over FP8,
# both past the split cap where FP8 attention moves to the tensor cores
# (step 68). The binaries of main as built for the run (bin/main/memra version).
# carry ["bin"]. At most ~9 min.
set -u
source scripts/gpu/lib.sh
start_run
synth main "0.8b" "q8_0"
s1=$SYNTH
synth main "9b" "q4_k"
s2=$SYNTH
longgate() { # name secs model P N fp8
  el "gate $1: $(basename "$3" .gguf) P=$4 N=$5 fp8=$6"
  MEMRA_KV_FP8=$6 timeout "$2" ./bin/main/gate "$3" "$4" "$5" > "$OUT/gate-$1.txt" 2>&1
  echo "  rc $?: $(grep -E 'gate (PASS|FAIL)|MISMATCH|captures:' "$OUT/gate-$1.txt" | head -3 | tr '\n' ' ')"
  echo "  buckets: $(grep -o '(true, [0-9]*)\|(false, [0-9]*)' "$OUT/gate-$1.txt" | sort -u | wc -l) distinct, first $(grep -o '([a-z]*, [0-9]*)' "$OUT/gate-$1.txt" | head -1), last $(grep -o '([a-z]*, [0-9]*)' "$OUT/gate-$1.txt" | tail -1)"
}
[ -z "${s1// /}" ] || wait $s1
longgate 08b-f16-32k 210 "$M/0.8b-q8_0.gguf" 64 32000 0
longgate 08b-fp8-16k 130 "$M/0.8b-q8_0.gguf" 64 16000 1
[ -z "${s2// /}" ] || wait $s2
longgate 9b-fp8-12k 170 "$M/9b-q4_k.gguf" 64 12000 1
./bin/main/memra version
el done
