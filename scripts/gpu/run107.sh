#!/usr/bin/env bash
# Session 15, fourth call: the device top-k for sampling (topk.cu,
# Session.DecodeTop, sample.SampleTop) on the H200, and the table of the
# session's final tree. bin/new = main (de37b46 and later: the merges, the
# host top-k, gdn_delta's phases, the device top-k); bin/base = main at the
# session's start (bd2344e). The GPU tests the change touches, gates,
# sampled generation with the CLI's defaults base / new alternating on 0.8B
# and 9B bf16 (same seed: same tokens), then the full table, tarred (a call
# brings back few files).
# Build (here): CGO_ENABLED=0 go build -ldflags="-s -w" -o /tmp/binall/new/ ./tools/gate ./tools/memra ./tools/bench,
# (cd engine && CGO_ENABLED=0 go test -ldflags="-s -w" -c -o /tmp/binall/new/engine_gpu.test ./gpu),
# memra of bd2344e into /tmp/binall/base/ (worktree),
# then rm -f bin/* && tar cJf bin/bin.txz -C /tmp/binall . and carry ["bin"].
set -u
source scripts/gpu/lib.sh
start_run
synth new "0.8b 9b" "bf16 q8_0 q4_k q5_k q6_k"
el "engine/gpu tests (new, the parts the change touches)"
(cd engine/gpu && timeout 200 "$R/bin/new/engine_gpu.test" -test.run 'TopK|Session|GraphEqualsEager|GraphStopRunsAhead|OmitParts|GraphMemoryStable|KernelArgmax|KernelCounters|KernelGDN' -test.v -test.timeout 190s > "$OUT/gputest.txt" 2>&1)
grep -E "^(--- |ok|FAIL|PASS)|FAIL|panic" "$OUT/gputest.txt" | head -40
wait $SYNTH
el "gates"
gate new $M/0.8b-q8_0.gguf 300 1000 1
gate new $M/9b-bf16.gguf 64 300 0
el "sampled generation (CLI defaults, seed 7), base / new alternating"
for m in 0.8b-bf16 0.8b-q8_0 9b-bf16 9b-q8_0; do
  for b in base new base new; do
    timeout 120 ./bin/$b/memra run -m $M/$m.gguf --prompt-tokens 1,2,3,4,5,6,7,8 -n 256 --seed 7 -print-tokens -device cuda \
      > /tmp/samp-$m-$b.txt 2> /tmp/samp-$m-$b.err
    echo "$m $b: $(grep -E 'generated' /tmp/samp-$m-$b.err | tail -1)"
  done
  cmp -s /tmp/samp-$m-base.txt /tmp/samp-$m-new.txt && echo "$m: sampled tokens base == new" || echo "$m: sampled tokens DIFFER"
done
el "bench (full table, new)"
mkdir -p /tmp/table
timeout 240 ./bin/new/bench -model $M/0.8b-bf16.gguf,$M/0.8b-q8_0.gguf,$M/0.8b-q4_k.gguf,$M/0.8b-q5_k.gguf,$M/0.8b-q6_k.gguf,$M/9b-bf16.gguf,$M/9b-q8_0.gguf,$M/9b-q4_k.gguf,$M/9b-q5_k.gguf,$M/9b-q6_k.gguf \
  -ctx 64,1024,4096,16384,32768 -reps 3 -tokens 64 -out /tmp/table > /tmp/table/stdout.txt 2> /tmp/table/stderr.txt
grep -E '\| graph \|' /tmp/table/stdout.txt | cut -d'|' -f2,4,5,6,9,13
tar czf $OUT/table.tgz -C /tmp table
el done
