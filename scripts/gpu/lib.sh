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
# BIN must hold memra (bins.sh NAME=REV:memra,...): run476 named one that
# did not, and every later step found no models.
synth() {
  SYNTH=""
  [ -x "./bin/$1/memra" ] || { el "synth: no bin/$1/memra: no models made (bins.sh $1=REV:memra,...)"; return 1; }
  for p in $2; do for t in $3; do
    [ -s "$M/$p-$t.gguf" ] && continue
    "./bin/$1/memra" synth --arch qwen35 --preset "$p" --type "$t" -o "$M/$p-$t.gguf" > "$M/$p-$t.log" 2>&1 & SYNTH="$SYNTH $!"
  done; done
}

# wait_synth: wait for synth's jobs. When every model is already there (a
# warm machine keeps /tmp between calls) SYNTH is empty, and `wait $SYNTH`
# would be the bare wait that hangs on the tee (run131 lost its 10 minutes
# to it).
wait_synth() { [ -z "${SYNTH// /}" ] || wait $SYNTH; }

# gpu_tests BIN: every engine/gpu GPU test of bin/BIN/engine_gpu.test, the
# summary lines printed, the whole output in $OUT/gputest.txt. On an H100
# with synth jobs beside it the suite outran its 230 s (run363): call it
# before synth, or after wait_synth. It has 320 s since step 127 added
# batch and prefill cases of longer chunks, 420 s since step 132's screen
# cases (the suite took 310 s on an H100 in run437, with more of them).
gpu_tests() {
  el "engine/gpu tests ($1)"
  (cd engine/gpu && timeout 430 "$R/bin/$1/engine_gpu.test" -test.run 'GPU|Matvec|RowsView|SplitHeads' -test.v -test.timeout 420s > "$OUT/gputest.txt" 2>&1)
  grep -E "^(--- |ok|FAIL|PASS)|FAIL|panic" "$OUT/gputest.txt" | grep -v "^    --- PASS" | head -80
}

# kq_tests BIN [TYPES]: the engine/gpu tests a K-quant matvec change touches
# (the kernel cases of TYPES, a regexp, default Q[456]_K; shared-memory
# limits, decode against the CPU, graph against eager), the summary lines
# printed, the whole output in $OUT/gputest-BIN.txt (scripts from run173
# on; run167-run170 spell it out).
kq_tests() {
  el "K-quant matvec and decode GPU tests ($1)"
  (cd engine/gpu && timeout 150 "$R/bin/$1/engine_gpu.test" -test.run "KernelMatvec/${2:-Q[456]_K}|MatvecShared|DecodeMatchesCPU|GraphEqualsEager" -test.v -test.timeout 140s > "$OUT/gputest-$1.txt" 2>&1)
  grep -E "^(--- |ok|FAIL|PASS)|panic" "$OUT/gputest-$1.txt" | grep -v "^    --- PASS" | head -20
}

# attn_tests BIN: the engine/gpu tests an attention change touches (kernels,
# decode against the CPU, graph and session against eager, the bucket rules),
# their summary lines printed (scripts from run140 on; run131-run137 spell it out).
attn_tests() {
  el "attention and decode GPU tests ($1)"
  (cd engine/gpu && timeout 200 "$R/bin/$1/engine_gpu.test" -test.run 'KernelAttention|AttnCombine|DecodeMatchesCPU|GraphEqualsEager|SessionEqualsEager|EarlyLoads|Bucket|SplitHeads' -test.v -test.timeout 190s 2>&1 | grep -E "^(--- |ok|FAIL|PASS)|panic" | grep -v "^    ")
}

# gate BIN MODEL P N FP8: one Phase-3 gate line.
gate() {
  [ -s "$2" ] || { echo "gate $(basename "$2" .gguf): no model file $2"; return 1; }
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
# in turn (old new old new: alternate on one machine), results under /tmp/bn,
# tarred into $OUT/bench-rotation.tgz (every run's JSON, for bench -compare).
bench_rotation() {
  local models=$1 ctxs=$2; shift 2
  mkdir -p /tmp/bn
  for b in "$@"; do
    el "bench $ctxs ($b)"
    local d=/tmp/bn/$b-$(date +%s%N); mkdir -p "$d"
    timeout 150 "./bin/$b/bench" -model "$models" -ctx "$ctxs" -reps 3 -tokens 64 -out "$d" 2>"$d/stderr.txt" | grep -E '\| graph \|' | cut -d'|' -f2,4,5,6,9,13
  done
  tar czf "$OUT/bench-rotation.tgz" -C /tmp bn
}

# chain BIN REGEX: BenchmarkGPUGraphChain's graph cases matching REGEX (the
# part after GraphChain/, four levels: 'Q8_0/.*/.*/graph'), µs a node.
chain() {
  el "graph chain ($1)"
  (cd engine/gpu && timeout 120 "$R/bin/$1/engine_gpu.test" -test.run '^$' -test.benchtime 20x \
    -test.bench "GraphChain/$2" 2>&1 | grep -E 'Benchmark|FAIL|panic' | sed -E "s/^/$1 /; s/\s+20\s+[0-9]+ ns\/op//")
}

# tokens_cmp A B "MODELS": 64 greedy tokens of each model (M/NAME.gguf) from
# bin/A and bin/B on cuda, compared (the outputs, tok-NAME-BIN.txt, tarred
# into $OUT/tokens.tgz: a call brings back at most 8 files).
tokens_cmp() {
  local d=/tmp/tok
  mkdir -p "$d"
  for m in $3; do
    for b in $1 $2; do
      timeout 60 "./bin/$b/memra" run -m "$M/$m.gguf" --prompt-tokens 1,2,3 -n 64 -greedy -print-tokens -device cuda > "$d/tok-$m-$b.txt" 2>&1
    done
    if ! grep -qE '^[0-9 ,]+$' "$d/tok-$m-$2.txt"; then echo "$m: no tokens printed ($2)"; continue; fi
    cmp -s <(grep -E '^[0-9 ,]+$' "$d/tok-$m-$1.txt") <(grep -E '^[0-9 ,]+$' "$d/tok-$m-$2.txt") && echo "$m: 64 greedy tokens $1 == $2" || echo "$m: greedy tokens $1 != $2"
  done
  tar czf "$OUT/tokens.tgz" -C /tmp tok
}

# full_table BIN [ARGS...]: docs/perf.md's table command (run114's) on the
# ten synth models (synth them first), with ARGS added (-kv fp8), its graph
# and sampled rows printed, the results folder tarred into $OUT/table.tgz.
full_table() {
  local b=$1; shift
  el "bench (full table$([ $# -gt 0 ] && echo " $*"))"
  mkdir -p /tmp/table
  local ms="" p t
  for p in 0.8b 9b; do for t in bf16 q8_0 q4_k q5_k q6_k; do ms="$ms,$M/$p-$t.gguf"; done; done
  timeout 330 "./bin/$b/bench" -model "${ms#,}" -ctx 64,1024,4096,16384,32768 -reps 3 -tokens 64 "$@" -out /tmp/table \
    > /tmp/table/stdout.txt 2> /tmp/table/stderr.txt
  grep -E '\| (graph|sampled) \|' /tmp/table/stdout.txt | cut -d'|' -f2,4,5,6,9,13
  tar czf "$OUT/table.tgz" -C /tmp table
}

# profile_at BIN "MODELS": bench -profile 8 at 1k on the models (M/NAME.gguf
# for each NAME, e.g. "0.8b-bf16 9b-q8_0"; synth them first) into /tmp/prof,
# its decode rows printed, the folder tarred into $OUT/prof.tgz.
profile_at() {
  el "profile ($1: $2)"
  mkdir -p /tmp/prof
  local ms="" n
  for n in $2; do ms="$ms,$M/$n.gguf"; done
  timeout 300 "./bin/$1/bench" -model "${ms#,}" -ctx 1024 -reps 3 -tokens 64 -profile 8 -out /tmp/prof \
    > /tmp/prof/stdout.txt 2> /tmp/prof/stderr.txt
  echo "bench rc $?"
  grep -E '\| (graph|sampled|eager) \|' /tmp/prof/stdout.txt | cut -d'|' -f2,4,5,6,9,13
  tar czf "$OUT/prof.tgz" -C /tmp prof
}

# profile08 BIN: profile_at on the 0.8B bf16 and q8_0 (~1 minute; run457's
# and run458's).
profile08() { profile_at "$1" "0.8b-bf16 0.8b-q8_0"; }

# ncu_ring K...: ncu on the second launch of each pring form K (pchain
# -nine 2 -ncu K/x8, which launches that form alone; bin/pchain.cubin
# built first): time, DRAM bytes and share of peak, L2 hits, issue and
# the stalls per issued instruction, printed; the whole report into
# $OUT/ncu-K.txt (scripts from run240 on; runs 230-238 spell it out).
ncu_ring() {
  local met='regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio,smsp__inst_executed.sum,smsp__warps_active.avg.per_cycle_active,smsp__issue_active.avg.per_cycle_active,gpu__time_duration.sum,dram__bytes_read.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_bytes.sum,lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum,lts__t_sectors_srcunit_tex_op_read.sum'
  local k
  for k in "$@"; do
    el "ncu $k"
    timeout 120 ncu --clock-control none --launch-skip 2 --launch-count 1 -k regex:"^$k\$" --metrics "$met" \
      ./bin/main/pchain -cubin bin/pchain.cubin -phases 64 -nine 2 -ncu "$k/x8" > /tmp/n.txt 2>&1
    grep -E "^  $k|stalled|inst_executed|issue_active|warps_active|duration|dram__|lts__|rror" /tmp/n.txt | awk '$NF != "0" && $NF != "0.00"' | sed 's/smsp__average_warps_issue_stalled_//; s/_per_issue_active.ratio//'
    cp /tmp/n.txt "$OUT/ncu-$k.txt"
  done
}

# llama_cuda SECS: llama.cpp's CUDA build for sm_90 (nvcc of the GPU
# machine), llama-bench and what it links only, from peer/lcpp-src.tar.xz
# (scripts/llama/cuda-src.sh; carry ["bin","peer"]) in /tmp/lcpp, which a
# warm machine keeps: a later call resumes a build that ran out of its SECS
# seconds. Flash attention and CUDA graphs are llama.cpp's defaults; NCCL
# and OpenSSL are left out (one GPU, no downloads). Returns 0 once
# llama-bench exists.
llama_cuda() {
  local d=/tmp/lcpp
  el "llama.cpp CUDA build ($(cat peer/lcpp-commit.txt 2>/dev/null), up to $1 s)"
  if [ ! -f $d/src/CMakeLists.txt ]; then mkdir -p $d/src && tar xJf peer/lcpp-src.tar.xz -C $d/src; fi
  if [ ! -f $d/build/build.ninja ]; then
    cmake -S $d/src -B $d/build -G Ninja -DCMAKE_BUILD_TYPE=Release -DGGML_CUDA=ON \
      -DCMAKE_CUDA_ARCHITECTURES=90-real -DGGML_CUDA_NCCL=OFF -DLLAMA_OPENSSL=OFF \
      -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_SERVER=OFF \
      -DLLAMA_BUILD_APP=OFF > $d/cmake.log 2>&1 || { tail -30 $d/cmake.log; cp $d/cmake.log "$OUT/"; return 1; }
  fi
  timeout "$1" ninja -C $d/build -j16 llama-bench > $d/ninja.log 2>&1
  grep -E 'error|FAILED' $d/ninja.log | head -20
  tail -1 $d/ninja.log
  [ -x $d/build/bin/llama-bench ] && el "llama-bench built" || { el "llama-bench not built yet"; return 1; }
}

# llama_bench MODEL...: llama-bench (llama_cuda's build) on each model: every
# layer on the GPU, 128 tokens generated at depth 0 and at depth 1024 (the
# bench's 64 and 1k contexts), 3 repetitions; tok/s printed, the JSON and
# stderr of each into /tmp/lb, tarred into $OUT/llama-bench.tgz.
llama_bench() {
  mkdir -p /tmp/lb
  local m n
  for m in "$@"; do
    n=$(basename "$m" .gguf)
    el "llama-bench $n"
    timeout 90 /tmp/lcpp/build/bin/llama-bench -m "$m" -ngl 99 -fa 1 -p 0 -n 128 -d 0,1024 -r 3 -o json \
      > "/tmp/lb/$n.json" 2> "/tmp/lb/$n.err" || tail -5 "/tmp/lb/$n.err"
    python3 -c 'import json,sys
for r in json.load(open(sys.argv[1])):
    print("%s | depth %d | tg%d | %.1f ± %.1f tok/s | %s" % (sys.argv[2], r["n_depth"], r["n_gen"], r["avg_ts"], r["stddev_ts"], r.get("gpu_info","")))' "/tmp/lb/$n.json" "$n" 2>&1 | tail -4
  done
  tar czf "$OUT/llama-bench.tgz" -C /tmp lb
}

# peer_bench SECS NAME...: memra's bench on M/NAME.gguf at contexts 64 and
# 1k, with -peer on llama_bench's reports when there are any (graph decode
# against llama-bench's depth 0 and 1024 on the same files and machine), at
# most SECS seconds; the graph rows and the peer table printed, the results
# tarred into $OUT/bench-peer.tgz.
peer_bench() {
  local secs=$1 ms="" m peer
  shift
  for m in "$@"; do ms="$ms,$M/$m.gguf"; done
  peer=$(ls /tmp/lb/*.json 2>/dev/null | paste -sd, -)
  mkdir -p /tmp/pb
  el "bench 64, 1k (-peer ${peer:-none})"
  timeout "$secs" ./bin/main/bench -model "${ms#,}" -ctx 64,1024 -reps 3 -tokens 64 ${peer:+-peer "$peer"} -out /tmp/pb \
    > /tmp/pb/stdout.txt 2> /tmp/pb/stderr.txt
  grep -E 'copy bandwidth' /tmp/pb/stderr.txt
  grep -E '\| graph \|' /tmp/pb/stdout.txt | cut -d'|' -f2,4,5,6,9,13
  sed -n '/## Against llama.cpp/,$p' /tmp/pb/stdout.txt
  tar czf "$OUT/bench-peer.tgz" -C /tmp pb
}

# mix_ab MODELS ROUNDS: graph decode at 64 and 1k of MODELS (comma-separated
# paths) with MEMRA_MIX=0 and =1 in turn (off on, ROUNDS times), bench
# -compare off -> on for each round, the reports tarred into
# $OUT/bench-mix.tgz (step 113; run353 spells it out).
mix_ab() {
  local ms=$1 rounds=$2 r mix d
  mkdir -p /tmp/bn
  for r in $(seq "$rounds"); do for mix in 0 1; do
    el "bench MEMRA_MIX=$mix (round $r)"
    d=/tmp/bn/mix$mix-$r; mkdir -p "$d"
    MEMRA_MIX=$mix timeout 100 ./bin/main/bench -model "$ms" -ctx 64,1024 -reps 3 -tokens 64 -sampled=false -out "$d" 2>"$d/stderr.txt" | grep -E '\| graph \|' | cut -d'|' -f2,4,5,6,9,13
  done; done
  for r in $(seq "$rounds"); do
    ./bin/main/bench -compare /tmp/bn/mix0-"$r"/bench-*.json /tmp/bn/mix1-"$r"/bench-*.json 2>&1 | grep -E '\| graph \||geomean new/old \(graph' | cut -d'|' -f2,4,5,6,7,8
  done
  tar czf "$OUT/bench-mix.tgz" -C /tmp bn
}

# ab_graph MODELS ROUNDS A B [C...]: graph decode at $AB_CTX (default 64 and
# 1k) of MODELS (comma-separated paths) with bin/A, bin/B, ... in turn,
# ROUNDS times, bench -compare A -> each other for each round, the reports
# tarred into $OUT/bench-ab.tgz (run357 spells it out).
ab_graph() {
  local ms=$1 rounds=$2 a=$3 r x d
  shift 3
  mkdir -p /tmp/bn
  for r in $(seq "$rounds"); do for x in "$a" "$@"; do
    el "bench $x (round $r)"
    d=/tmp/bn/$x-$r; mkdir -p "$d"
    timeout 100 "./bin/$x/bench" -model "$ms" -ctx "${AB_CTX:-64,1024}" -reps 3 -tokens 64 -sampled=false -out "$d" 2>"$d/stderr.txt" | grep -E '\| graph \|' | cut -d'|' -f2,4,5,6,9,13
  done; done
  for r in $(seq "$rounds"); do for x in "$@"; do
    el "compare $a -> $x (round $r)"
    ./bin/"$x"/bench -compare /tmp/bn/"$a-$r"/bench-*.json /tmp/bn/"$x-$r"/bench-*.json 2>&1 | grep -E '\| graph \||geomean new/old \(graph' | cut -d'|' -f2,4,5,6,7,8
  done; done
  tar czf "$OUT/bench-ab.tgz" -C /tmp bn
}

# k4bits A B: the digests of every Q4_K and Q5_K matvec variant's output
# (scripts/gpu/patches/k4bits.patch's test, in both binaries) from bin/A
# and bin/B, compared: equal digests, equal sums (run357 spells it out);
# both lists into $OUT.
k4bits() {
  local x
  for x in "$1" "$2"; do
    el "k4bits digests ($x)"
    (cd engine/gpu && timeout 60 "$R/bin/$x/engine_gpu.test" -test.run 'GPUK4Bits' -test.v 2>&1 | grep -o 'k4bits .*' > "$OUT/k4-$x.txt")
  done
  if [ -s "$OUT/k4-$2.txt" ] && cmp -s "$OUT/k4-$1.txt" "$OUT/k4-$2.txt"; then
    echo "k4bits: all $(wc -l < "$OUT/k4-$2.txt") digests $1 == $2"
  else
    echo "k4bits: digests DIFFER (or none)"; diff "$OUT/k4-$1.txt" "$OUT/k4-$2.txt" | head -10
  fi
}

# ncu_src BIN CASE NAME: ncu on one launch of the graph chain's CASE
# (GraphChain/CASE/graph, e.g. Q4_K/4096x4096/xnorm=false; the kernel
# replayed alone, caches flushed): time, DRAM share, occupancy, issue and
# the warp stalls printed, and the stall samples by SASS line (where this
# ncu prints the source page) into /tmp/ncu/NAME-src.csv; the reports under
# /tmp/ncu for the caller to tar.
ncu_src() {
  local d=/tmp/ncu
  mkdir -p "$d"
  el "ncu $2 ($1)"
  (cd engine/gpu && timeout 120 ncu --clock-control none --launch-skip 8 --launch-count 1 -k regex:matvec \
    --section SpeedOfLight --section Occupancy --section LaunchStats --section SchedulerStats --section WarpStateStats \
    --section SourceCounters --section MemoryWorkloadAnalysis -f -o "$d/$3" \
    "$R/bin/$1/engine_gpu.test" -test.run '^$' -test.bench "GraphChain/$2/graph" -test.benchtime 1x) > "$d/$3-run.txt" 2>&1
  ncu -i "$d/$3.ncu-rep" --print-details all > "$d/$3.txt" 2>&1
  grep -E "^  [a-z_]+|Duration|DRAM Throughput|Memory Throughput|Registers Per|Achieved Occupancy|Theoretical Occupancy|Block Limit|Issued Warp|No Eligible|Active Warps Per|Eligible Warps|Warp Cycles Per Issued|Stall" "$d/$3.txt" | head -40
  ncu -i "$d/$3.ncu-rep" --page source --csv --print-source sass > "$d/$3-src.csv" 2>&1 || echo "(no source page from this ncu)"
}

# prime_ab MODELS B...: prime ms at P=512 of MODELS (comma-separated paths)
# with bin/B for each B in turn (list a binary again for another round),
# -ctx 64 -tokens 16 so that the run is the priming's; the reports under
# /tmp/bp, tarred into $OUT/bench-prime.tgz (run371 spells it out).
prime_ab() {
  local ms=$1 i=0 b d
  shift
  for b in "$@"; do
    i=$((i+1)); d=/tmp/bp/$i-$b; rm -rf "$d"; mkdir -p "$d"
    el "bench prime P=512 ($b)"
    timeout 150 "./bin/$b/bench" -model "$ms" -ctx 64 -reps 3 -tokens 16 -prompt 512 -sampled=false -out "$d" > "$d/stdout.txt" 2> "$d/stderr.txt"
    echo "rc $?"
    grep -E 'prime' "$d/stderr.txt"
  done
  tar czf "$OUT/bench-prime.tgz" -C /tmp bp
}

# chunk_ab MODEL B...: BenchmarkGPUPrefillChunk/replay/n32 (a 32-token
# chunk replayed as a graph) on MODEL (a path) with bin/B for each B in
# turn (list a binary again for another round), each line led by the
# model's name and B (run430 and run432 spell it out).
chunk_ab() {
  local m=$1 b
  shift
  for b in "$@"; do
    (cd engine/gpu && MEMRA_BENCH_MODEL="$m" timeout 60 "$R/bin/$b/engine_gpu.test" -test.run '^$' \
      -test.bench 'GPUPrefillChunk/replay/n32$' -test.benchtime 20x 2>&1 | grep -E '^Bench|FAIL|panic' | sed "s/^/$(basename "$m" .gguf) $b /")
  done
}

# mvb_bench PATTERN B...: BenchmarkGPUMatvecBatch/PATTERN (e.g.
# '(BF16|Q8_0)/.*/n8/') of bin/B for each B in turn, 200 launches a case,
# each line led by B (run371 spells it out).
mvb_bench() {
  local p=$1 b
  shift
  for b in "$@"; do
    el "BenchmarkGPUMatvecBatch $p ($b)"
    (cd engine/gpu && timeout 120 "$R/bin/$b/engine_gpu.test" -test.run '^$' -test.bench "GPUMatvecBatch/$p" -test.benchtime 200x 2>&1 | grep -E "^Bench" | sed "s/^/$b /")
  done
}

# run_tests B REGEXP: the engine/gpu tests of bin/B that REGEXP names, their
# summary lines printed.
run_tests() {
  el "tests $2 ($1)"
  (cd engine/gpu && timeout 200 "$R/bin/$1/engine_gpu.test" -test.run "$2" -test.v 2>&1 | grep -E "^(--- |ok|FAIL|PASS)|panic")
}

# ncu_batch B CASE KERNEL NAME: ncu on one launch of bin/B's
# BenchmarkGPUMatvecBatch/CASE (e.g. Q8_0/24576x4096/n8/staged; KERNEL a
# regexp of its kernel's name; caches flushed): time, throughputs, issue
# and registers printed; the report, its details and its raw page (the
# stalls per issued instruction, the instruction counts) under /tmp/ncu as
# NAME* for the caller to tar (run369 spells it out).
ncu_batch() {
  local d=/tmp/ncu
  mkdir -p "$d"
  el "ncu $2 ($1)"
  (cd engine/gpu && timeout 100 ncu --clock-control none --launch-skip 3 --launch-count 1 -k "regex:$3" \
    --section SpeedOfLight --section Occupancy --section SchedulerStats --section WarpStateStats --section MemoryWorkloadAnalysis \
    --section MemoryWorkloadAnalysis_Tables --section ComputeWorkloadAnalysis \
    -f -o "$d/$4" "$R/bin/$1/engine_gpu.test" -test.run '^$' -test.bench "GPUMatvecBatch/$2\$" -test.benchtime 1x) > "$d/$4-run.txt" 2>&1
  ncu -i "$d/$4.ncu-rep" --print-details all > "$d/$4.txt" 2>&1
  ncu -i "$d/$4.ncu-rep" --page raw --csv > "$d/$4-raw.csv" 2>&1
  grep -E "^  [a-z_]+ \(|Duration|DRAM Throughput  |L2 Cache Throughput|L1/TEX Cache Throughput|Issued Warp Per|Warp Cycles Per Issued|Registers Per" "$d/$4.txt" | head -12
}

# types_table BIN OLD.json "TYPES": bin/BIN's bench at 64 and 1k on the
# 0.8B and 9B presets of TYPES (synth them first), its rows printed, bench
# -compare against OLD.json, the results folder tarred into $OUT/types.tgz
# (run387's H200 part, which did not run, and run390).
types_table() {
  local ms="" p t
  for p in 0.8b 9b; do for t in $3; do ms="$ms,$M/$p-$t.gguf"; done; done
  el "bench 64,1k ($1)"
  mkdir -p /tmp/types
  timeout 200 "./bin/$1/bench" -model "${ms#,}" -ctx 64,1024 -reps 3 -tokens 64 -out /tmp/types > /tmp/types/stdout.txt 2> /tmp/types/stderr.txt
  echo "rc $?"
  grep -E '\| (graph|sampled|eager) \|' /tmp/types/stdout.txt | cut -d'|' -f2,4,5,6,9,13
  el "compare with $2"
  "./bin/$1/bench" -compare "$2" "$(ls -t /tmp/types/bench-*.json | head -1)" 2>&1 | tail -30
  tar czf "$OUT/types.tgz" -C /tmp types
}
