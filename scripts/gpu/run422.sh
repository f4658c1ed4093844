#!/usr/bin/env bash
# Session 75, step 128: gdn_conv_chunk parallel over a chunk's tokens
# (a warp a run of tokens, 32 channels a block) and gdn_delta_chunk
# preparing token t + 1's q, k and gate while token t's state chain runs.
# The chunk kernels' tests and the prefill/graph tests of new, two gates,
# prime ms at P = 512 of main against new alternated twice, and new's
# chunk of 32 kernel by kernel (run421 is main's), on any GPU.
# carry ["bin"]; binaries from
#   bash scripts/gpu/bins.sh main=main:bench new=s75:memra,gate,bench,engine_gpu.test
# (s75: 1259fb6, its fatbin sm_90 only)
# (s75 was the session's branch, deleted once it landed: its final state is
# main's f203201, whose kernels differ from 4962ee8's only in comments and a
# static_assert, the same sm_90 SASS; 0e01678 held step 128 alone, before
# step 129 and the review mends; 1259fb6 the first delta-rule form that
# step 128 describes.)
set -u
source scripts/gpu/lib.sh
start_run
nvidia-smi --query-gpu=name --format=csv,noheader
run_tests new 'KernelGDN|PrefillMatchesTokenFeed|PrefillReplay|GraphEqualsEager|SessionFeed'
synth new "0.8b" "bf16 q8_0 q4_k"
S0=$SYNTH
synth new "9b" "q8_0"
SYNTH="$S0 $SYNTH"
wait_synth
el gates
gate new "$M/0.8b-bf16.gguf" 300 64 0
gate new "$M/9b-q8_0.gguf" 300 32 0
prime_ab "$M/0.8b-bf16.gguf,$M/0.8b-q8_0.gguf,$M/0.8b-q4_k.gguf,$M/9b-q8_0.gguf" main new main new
el "bench -profile 4 at P = 512 (new)"
mkdir -p /tmp/prof
timeout 200 ./bin/new/bench -model "$M/0.8b-bf16.gguf,$M/9b-q8_0.gguf" -ctx 1024 -reps 3 -tokens 64 -prompt 512 -profile 4 -sampled=false -out /tmp/prof > "$OUT/prof.md" 2> /tmp/prof/stderr.txt
echo "rc $?"
awk '/per prefill chunk/{p=1; n=0} p&&/^(\||##)/{print; if (++n>10) p=0}' "$OUT/prof.md"
el done
