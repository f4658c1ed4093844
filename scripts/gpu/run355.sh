#!/usr/bin/env bash
# Session 63, the call after run354.sh on the same warm H100 (run354 stopped
# at once: not an H200; this command was given inline, this file holds it as
# it ran): session 63's final binaries (c754bfa, after the review's
# mixSplit change) on the 0.8B and 9B Q4_K_M: gates with the mixed launch,
# graph decode at 64 and 1k with MEMRA_MIX=0 and =1, bench -compare.
# carry ["bin"].
source scripts/gpu/lib.sh; start_run; git log --oneline -1 2>/dev/null; synth main "0.8b 9b" "q4_k_m"; wait_synth; gate main "$M/0.8b-q4_k_m.gguf" 300 128 0; gate main "$M/9b-q4_k_m.gguf" 300 64 1; ms="$M/0.8b-q4_k_m.gguf,$M/9b-q4_k_m.gguf"; mkdir -p /tmp/bn; for mix in 0 1; do el "bench MEMRA_MIX=$mix"; d=/tmp/bn/mix$mix; mkdir -p $d; MEMRA_MIX=$mix timeout 60 ./bin/main/bench -model "$ms" -ctx 64,1024 -reps 3 -tokens 64 -sampled=false -out $d 2>$d/stderr.txt | grep -E '\| graph \|' | cut -d'|' -f2,4,5,6,9,13; done; ./bin/main/bench -compare /tmp/bn/mix0/bench-*.json /tmp/bn/mix1/bench-*.json 2>&1 | grep -E '\| graph \||geomean new/old \(graph'; tar czf $OUT/bench-mix.tgz -C /tmp bn; el done
