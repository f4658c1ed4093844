#!/usr/bin/env bash
# Session 43, the final binaries (bench writes latest.* only for a whole
# run): a whole 0.8B q8_0 bench run at 64 tokens becomes latest.*, then a
# bench interrupted by ^C while it synthesises 9B q8_0 (set -m, as
# run281b) exits 130, leaves no temporary file and latest.json as the
# whole run left it; the default gate. carry ["bin"]. ~1 min.
set -u
source scripts/gpu/lib.sh
start_run
synth main "0.8b" "q8_0"
wait_synth
./bin/main/gate > /tmp/g.txt 2>&1; echo "gate default: rc $? $(grep -E 'gate (PASS|FAIL)' /tmp/g.txt)"
rm -rf /tmp/mb /tmp/bi; mkdir -p /tmp/mb
./bin/main/bench -model "$M/0.8b-q8_0.gguf" -ctx 64 -reps 1 -tokens 16 -sampled=false -out /tmp/bi 2>&1 | grep -E 'results in'
before=$(sha256sum /tmp/bi/latest.json)
el "bench ^C during synth"
set -m
./bin/main/bench -preset 9b -type q8_0 -ctx 64 -models-dir /tmp/mb -out /tmp/bi > /tmp/bi.out 2> /tmp/bi.err &
BP=$!
for i in $(seq 1 60); do grep -q 'synth *[1-9][0-9]*%' /tmp/bi.err 2>/dev/null && break; sleep 0.5; done
grep 'synth' /tmp/bi.err | tail -1
kill -INT $BP; wait $BP; echo "bench after ^C: rc $?"
tail -2 /tmp/bi.err
echo "left in /tmp/mb: [$(ls /tmp/mb)]"
[ "$(sha256sum /tmp/bi/latest.json)" = "$before" ] && echo "latest.json unchanged by the interrupted run" || echo "latest.json CHANGED"
grep -h '"interrupted"' /tmp/bi/bench-*.json
el done
