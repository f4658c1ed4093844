# lib.sh: what the GPU run scripts share (sourced; scripts from run86 on, and
# the prepared run83-run85). The earlier scripts spell the same steps out
# themselves and stay as they ran. Every function logs through the script's
# tee (start_run); none waits on a job it did not start (a bare `wait` would
# wait on the tee and hang: run9, run65).

# start_run: log everything to $OUT/log.txt too, unpack bin/bin.txz, and
# define the models folder M and the repository root R.
start_run() {
  exec > >(tee -a "$OUT/log.txt") 2>&1
  T0=$(date +%s)
  tar xJf bin/bin.txz -C bin
  M=/tmp/models; mkdir -p "$M"
  R=$PWD
}

# el MSG: a line stamped with the seconds since start_run.
el() { echo "[t+$(( $(date +%s) - T0 ))s] $*"; }

# synth BIN "PRESETS" "TYPES": start memra synth for every preset and type
# (models M/PRESET-TYPE.gguf) in the background; their pids go to SYNTH.
synth() {
  SYNTH=""
  for p in $2; do for t in $3; do
    [ -s "$M/$p-$t.gguf" ] && continue
    "./bin/$1/memra" synth --arch qwen35 --preset "$p" --type "$t" -o "$M/$p-$t.gguf" > "$M/$p-$t.log" 2>&1 & SYNTH="$SYNTH $!"
  done; done
}

# gpu_tests BIN: every engine/gpu GPU test of bin/BIN/engine_gpu.test, the
# summary lines printed, the whole output in $OUT/gputest.txt.
gpu_tests() {
  el "engine/gpu tests ($1)"
  (cd engine/gpu && timeout 240 "$R/bin/$1/engine_gpu.test" -test.run 'GPU|Matvec|RowsView|SplitHeads' -test.v -test.timeout 230s > "$OUT/gputest.txt" 2>&1)
  grep -E "^(--- |ok|FAIL|PASS)|FAIL|panic" "$OUT/gputest.txt" | grep -v "^    --- PASS" | head -40
}

# gate BIN MODEL P N FP8: one Phase-3 gate line.
gate() {
  echo "gate $(basename "$2" .gguf) P=$3 N=$4 fp8=$5: $(MEMRA_KV_FP8=$5 timeout 150 "./bin/$1/gate" "$2" "$3" "$4" 2>/dev/null | grep -E 'gate (PASS|FAIL)|MISMATCH' | head -3 | tr '\n' ' ')"
}

# greedy BIN MODEL: 24 greedy tokens on cuda and on cpu, compared.
greedy() {
  for d in cuda cpu; do
    timeout 200 "./bin/$1/memra" run -m "$2" --prompt-tokens 1,2,3 -n 24 -greedy -print-tokens -device $d > "$OUT/tok-$d.txt" 2>&1
    echo "$d: $(grep -E '^[0-9 ,]+$' "$OUT/tok-$d.txt" | head -1)"
  done
  if ! grep -qE '^[0-9 ,]+$' "$OUT/tok-cuda.txt"; then echo "greedy tokens: none printed (see tok-cuda.txt)"; return; fi
  cmp -s <(grep -E '^[0-9 ,]+$' "$OUT/tok-cuda.txt") <(grep -E '^[0-9 ,]+$' "$OUT/tok-cpu.txt") && echo "greedy tokens cuda == cpu" || echo "greedy tokens DIFFER (see tok-*.txt)"
}

# bench_rotation MODELS CTXS BIN...: the bench's graph rows for each binary
# in turn (old new old new: alternate on one machine), results under /tmp/bn.
bench_rotation() {
  local models=$1 ctxs=$2; shift 2
  mkdir -p /tmp/bn
  for b in "$@"; do
    el "bench $ctxs ($b)"
    local d=/tmp/bn/$b-$(date +%s%N); mkdir -p "$d"
    timeout 150 "./bin/$b/bench" -model "$models" -ctx "$ctxs" -reps 3 -tokens 64 -out "$d" 2>"$d/stderr.txt" | grep -E '\| graph \|' | cut -d'|' -f2,4,5,6,9,13
  done
}
