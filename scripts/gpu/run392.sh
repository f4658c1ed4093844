#!/usr/bin/env bash
# Session 72: bench -profile's new prefill chunk profile (4e9b18c,
# gpu.Model.ProfilePrefill) on main, its GPU tests, and what step 122 left
# open: which launch of a 9B q8_0 prefill chunk q8-cs
# (scripts/gpu/patches/prefill/q8-cs.patch, bin/cs) makes slower. Profiles
# main and cs on the 9B q8_0 (and main on the 9B Q4_K), 8 chunks of 8
# tokens, then prime ms at P=512 alternated twice. carry ["bin"];
# binaries from
#   BINS_ARCHS=90 bash scripts/gpu/bins.sh main=main:memra,bench,engine_gpu.test \
#     cs=main+scripts/gpu/patches/prefill/q8-cs.patch:bench
# ~4 min on an H100.
set -u
source scripts/gpu/lib.sh
start_run
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
synth main "9b" "q8_0 q4_k"
run_tests main 'TestGPUProfile'
wait_synth
prof() { # prof BIN MODELS NAME
  el "bench -profile 8 ($1: $2)"
  mkdir -p "/tmp/$3"
  timeout 240 "./bin/$1/bench" -model "$2" -ctx 64 -reps 3 -tokens 16 -prompt 512 -profile 8 -sampled=false -out "/tmp/$3" > "$OUT/$3.md" 2> "/tmp/$3/stderr.txt"
  echo "rc $?"
  grep -E 'prime|prefill profile' "/tmp/$3/stderr.txt"
  awk '/per prefill chunk/{p=1} p&&/^\|/{print; if (++n>14) exit}' "$OUT/$3.md"
}
prof main "$M/9b-q8_0.gguf,$M/9b-q4_k.gguf" prof-main
prof cs "$M/9b-q8_0.gguf" prof-cs
prime_ab "$M/9b-q8_0.gguf" main cs main cs
el done
