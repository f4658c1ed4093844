#!/usr/bin/env bash
# Session 41, main at the session's end, right after run271 on the same
# machine: the 27B presets with main's own binary. 27B bf16 (54 GB) is
# written to /dev/shm (the disk's 64 GB hold the Q5_K and Q6_K files being
# written beside it): its gate and bench at 1k and 32k (session 40 measured
# only 1k). Then 27B Q5_K and Q6_K, whose 5,120-row matrices take the wide
# kernels by main's rule since step 96 (run270 ran them through the
# environment bound of next/wide-5120): gates and bench at 1k.
# carry ["bin"]. ~8-9 min.
set -u
source scripts/gpu/lib.sh
start_run
rm -f "$M"/*.gguf /dev/shm/*.gguf
synth main "27b" "q5_k q6_k"
el "27b bf16 into /dev/shm: $(df -BG /dev/shm | tail -1)"
./bin/main/memra synth --arch qwen35 --preset 27b --type bf16 -o /dev/shm/27b-bf16.gguf > /dev/null 2>&1
el "27b bf16 written: $(ls -l /dev/shm/27b-bf16.gguf 2>&1)"
gate main /dev/shm/27b-bf16.gguf 64 64 0
el "bench 27b bf16 at 1k and 32k"
timeout 200 ./bin/main/bench -model /dev/shm/27b-bf16.gguf -ctx 1024,32768 -reps 3 -tokens 32 -out /tmp/b16 2>/tmp/b16-stderr.txt | grep -E '\| (graph|sampled|eager) \||copy bandwidth'
cp /tmp/b16-stderr.txt /tmp/b16/ 2>/dev/null
tar czf "$OUT/b16.tgz" -C /tmp b16
rm -f /dev/shm/27b-bf16.gguf
wait_synth
el "gates 27b q5_k, q6_k"
gate main "$M/27b-q5_k.gguf" 64 64 0
gate main "$M/27b-q6_k.gguf" 64 64 1
el "bench 27b q5_k, q6_k at 1k"
timeout 120 ./bin/main/bench -model "$M/27b-q5_k.gguf,$M/27b-q6_k.gguf" -ctx 1024 -reps 3 -tokens 64 -out /tmp/kq 2>/tmp/kq-stderr.txt | grep -E '\| (graph|sampled|eager) \||copy bandwidth'
cp /tmp/kq-stderr.txt /tmp/kq/ 2>/dev/null
tar czf "$OUT/kq.tgz" -C /tmp kq
el done
