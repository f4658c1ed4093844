#!/usr/bin/env bash
# Session 47: synth's pipeline (cec9bc9: the next chunks generated while the
# caller writes, across tensors) on 16 cores. Its files must be the bytes
# this 2-core machine wrote (run299-host.sha256: tiny at all 7 types, 0.8B
# q4_k, bf16 and q8_0) at GOMAXPROCS 16 and 3, and the previous,
# batch-at-a-time synth's (bin/old, 491757f) at 16; the wall times of both
# say what the pipeline gains on 16 cores. Then the default gate, a gate and
# greedy cuda == cpu on the 0.8B Q4_K the new synth wrote, and every
# engine/gpu GPU test. carry ["bin"]. At most ~7 min.
set -u
source scripts/gpu/lib.sh
start_run
# syn BIN DIR PRESET TYPE PROCS: one synth, its wall time in ms.
syn() {
  local s; s=$(date +%s%N)
  GOMAXPROCS=$5 "./bin/$1/memra" synth --arch qwen35 --preset "$3" --type "$4" -o "$2/$3-$4.gguf" > "$2/$3-$4.log" 2>&1 || echo "  synth $1 $3 $4 FAILED: $(tail -1 "$2/$3-$4.log")"
  echo "  $1 $3 $4 GOMAXPROCS=$5: $(( ($(date +%s%N) - s) / 1000000 )) ms"
}
nproc
for spec in "main $M 16" "old /tmp/s/old16 16" "main /tmp/s/new3 3"; do
  set -- $spec
  mkdir -p "$2"
  el "synth bin/$1 into $2 at GOMAXPROCS=$3"
  for t in f32 f16 bf16 q8_0 q4_k q5_k q6_k; do syn "$1" "$2" tiny "$t" "$3" > /dev/null; done
  for t in q4_k bf16 q8_0; do syn "$1" "$2" 0.8b "$t" "$3"; done
  (cd "$2" && sha256sum -c "$R/scripts/gpu/run299-host.sha256" 2>&1 | sed 's/^/  /')
  [ "$2" = "$M" ] || rm -f "$2"/*.gguf
done
el "default gate"
timeout 150 ./bin/main/gate > "$OUT/gate-default.txt" 2>&1
echo "  rc $?: $(grep -E 'gate (PASS|FAIL)|MISMATCH|captures:' "$OUT/gate-default.txt" | head -3 | tr '\n' ' ')"
el "gate and greedy on the new synth's 0.8B Q4_K"
gate main "$M/0.8b-q4_k.gguf" 64 256 0
greedy main "$M/0.8b-q4_k.gguf"
gpu_tests main
./bin/main/memra version
el done
