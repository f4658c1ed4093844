#!/usr/bin/env bash
# Session 45: the first compute-sanitizer sweep of the engine's kernels
# (memcheck, racecheck, synccheck, initcheck) on whole decodes: the gate
# (eager, device-counter and graph paths) on the default tiny model, 0.8B
# q8_0 and 0.8B Q4_K, the FP8 cache, and a sampled memra run with the
# repetition penalty (top-k, draw, penalty kernels). Main at its end (the
# reviews' fixes since run291, no kernel changed). Each tool's summary is
# printed, its whole output in $OUT/cs-*.txt. carry ["bin"]. At most ~9 min
# (each tool under its own timeout).
set -u
source scripts/gpu/lib.sh
start_run
synth main "0.8b" "q8_0 q4_k"
./bin/main/memra version
CS=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)
echo "compute-sanitizer: ${CS:-none}"; [ -n "$CS" ] && "$CS" --version | tail -1
# cs NAME SECONDS TOOL ARGS... : one sanitized command, its summary line.
cs() {
  local name=$1 secs=$2 tool=$3; shift 3
  el "cs $name ($tool)"
  timeout "$secs" "$CS" --tool "$tool" --error-exitcode 9 --print-limit 20 "$@" > "$OUT/cs-$name.txt" 2>&1
  local rc=$?
  echo "  rc $rc: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/cs-$name.txt" | tail -1) $(grep -E 'gate (PASS|FAIL)' "$OUT/cs-$name.txt" | head -1)"
  grep -E '^========= (Invalid|Uninitialized|Error|Race|Barrier|Warning)' "$OUT/cs-$name.txt" | sort | uniq -c | head -8
}
./bin/main/gate default 8 8 > /dev/null 2>&1 # synthesise the default model outside the sanitizer
cs memcheck-tiny 80 memcheck ./bin/main/gate default 64 64
cs memcheck-tiny-fp8 50 memcheck env MEMRA_KV_FP8=1 ./bin/main/gate default 64 32
cs racecheck-tiny 80 racecheck ./bin/main/gate default 8 16
cs synccheck-tiny 50 synccheck ./bin/main/gate default 8 16
cs initcheck-tiny 50 initcheck ./bin/main/gate default 8 16
cs memcheck-sampled 50 memcheck ./bin/main/memra run -m "$HOME/.cache/memra/default-tiny-bf16-v2.gguf" --prompt-tokens 1,2,3 -n 32 --temp 0.8 --repeat-penalty 1.1 --seed 1 --device cuda --print-tokens
wait_synth
cs memcheck-08b-q8_0 80 memcheck ./bin/main/gate "$M/0.8b-q8_0.gguf" 8 8
cs memcheck-08b-q4_k 80 memcheck ./bin/main/gate "$M/0.8b-q4_k.gguf" 8 8
el done
