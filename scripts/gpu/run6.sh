#!/usr/bin/env bash
# GPU session 6a: matvec variants side by side (bin/mvexp, experiment harness
# built from an ignored dir), GPU tests with the AVX2 CPU kernels, memra run
# on cuda vs cpu.
set -u
exec > >(tee -a $OUT/log.txt) 2>&1
M=/tmp/models; mkdir -p $M
T0=$(date +%s); el() { echo "[t+$(( $(date +%s) - T0 ))s] $*"; }
R=$PWD
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,driver_version --format=csv,noheader
el "mvexp"; timeout 200 ./bin/mvexp -cubin bin/mvexp.cubin
el "synth"; ./bin/memra synth --arch qwen35 --preset 0.8b --type bf16 -o $M/0.8b-bf16.gguf >/dev/null 2>&1
el "memra run cuda vs cpu"
./bin/memra run -m $M/0.8b-bf16.gguf --prompt-tokens 1,2,3 -n 32 --greedy --print-tokens --device cuda > /tmp/cuda.txt 2>/tmp/cuda.err; echo "rc=$?"; cat /tmp/cuda.txt; tail -3 /tmp/cuda.err
./bin/memra run -m $M/0.8b-bf16.gguf --prompt-tokens 1,2,3 -n 32 --greedy --print-tokens --device cpu > /tmp/cpu.txt 2>/tmp/cpu.err; echo "rc=$?"; cat /tmp/cpu.txt; tail -3 /tmp/cpu.err
cmp /tmp/cuda.txt /tmp/cpu.txt && echo "memra run: cuda and cpu token streams identical"
el "engine/cuda tests"; (cd engine/cuda && timeout 60 $R/bin/engine_cuda.test -test.run 'GPU' -test.v 2>&1 | grep -E "^(--- |ok|FAIL|PASS)|panic" | head -30)
el "engine/gpu tests"; (cd engine/gpu && MEMRA_TEST_MODEL=$M/0.8b-bf16.gguf timeout 240 $R/bin/engine_gpu.test -test.run 'GPU' -test.v 2>&1 | grep -E "^(--- |ok|FAIL|PASS)|FAIL|panic|worst|identical|unchanged" | grep -v "^    --- PASS" | head -60)
el done
