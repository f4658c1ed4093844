#!/usr/bin/env bash
# GPU session 1: driver/kernel/decode tests, the gate, and the Python oracles.
set -u
log=$OUT/log.txt
exec > >(tee -a "$log") 2>&1
echo "== device"; nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem --format=csv; nvcc --version | tail -1
echo "== engine/cuda GPU tests"; timeout 120 ./bin/engine_cuda.test -test.run GPU -test.v 2>&1 | grep -v "^=== RUN" | tail -40
echo "== kernels check.py"; timeout 120 python3 kernels/internal/gpucheck/check.py 2>&1 | tail -40
echo "== engine/gpu GPU tests"; timeout 240 ./bin/engine_gpu.test -test.run 'GPU' -test.v 2>&1 | grep -v "^=== RUN" | tail -80
echo "== gate default"; timeout 120 ./bin/gate default 64 256 bench
echo "== gate default fp8"; MEMRA_KV_FP8=1 timeout 120 ./bin/gate default 1 300
echo "== oracle"; (cd /tmp && timeout 300 python3 $OLDPWD/scripts/oracle/make_fixtures.py --out $OUT > $OUT/oracle.log 2>&1; echo "oracle rc=$?"; tail -30 $OUT/oracle.log)
echo "== tokenizer goldens"; timeout 240 python3 scripts/tokenizer/make_goldens.py --out $OUT > $OUT/goldens.log 2>&1; echo "goldens rc=$?"; tail -20 $OUT/goldens.log
ls -la $OUT
