#!/usr/bin/env bash
# run281's last part again: its ^C went to a background job started with
# SIGINT ignored (a script without job control starts them so), which bench
# keeps ignored as it would under nohup, and the synth and bench ran on
# (rc 0). With set -m the job gets ^C's default: bench interrupted while it
# synthesises a 9B preset should exit 130 with no temporary file left and
# the report so far written. carry ["bin"] (run281's binaries). ~30 s.
set -u
source scripts/gpu/lib.sh
start_run
el "bench ^C during synth"
# set -m: a background job of a script without job control starts with
# SIGINT ignored, and bench (sigctx) keeps a signal ignored at start, as
# under nohup: run281's first form sent its ^C to such a job, which ran on.
set -m
rm -rf /tmp/mb /tmp/bi; mkdir -p /tmp/mb
./bin/main/bench -preset 9b -type q8_0 -ctx 64 -models-dir /tmp/mb -out /tmp/bi > /tmp/bi.out 2> /tmp/bi.err &
BP=$!
for i in $(seq 1 60); do grep -q 'synth *[1-9][0-9]*%' /tmp/bi.err 2>/dev/null && break; sleep 0.5; done
grep 'synth' /tmp/bi.err | tail -2
ls /tmp/mb
kill -INT $BP; wait $BP; echo "bench after ^C: rc $?"
tail -3 /tmp/bi.err
echo "left in /tmp/mb: [$(ls /tmp/mb)]"
ls /tmp/bi
el done
