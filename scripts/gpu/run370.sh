#!/usr/bin/env bash
# Session 67: the q8_0 ring kernels with n == 8 known at compile time
# (scripts/gpu/patches/mvb/full.patch, bin/full) against main: the batch
# kernels' tests on full, then BenchmarkGPUMatvecBatch's q8_0 shapes for 8
# tokens, alternated twice. carry ["bin"]; binaries from
#   BINS_ARCHS=90 bash scripts/gpu/bins.sh main=596260c:engine_gpu.test \
#     full=596260c+scripts/gpu/patches/mvb/full.patch:engine_gpu.test
# ~2 min on an H100.
set -u
source scripts/gpu/lib.sh
start_run
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
el "tests (full)"
(cd engine/gpu && timeout 200 "$R/bin/full/engine_gpu.test" -test.run 'TestGPUKernelMatvecBatch|TestGPUPrefillMatchesTokenFeed' -test.v 2>&1 | grep -E "^(--- |ok|FAIL|PASS)" )
for b in main full main full; do
  el "BenchmarkGPUMatvecBatch q8_0 n8 ($b)"
  (cd engine/gpu && timeout 120 "$R/bin/$b/engine_gpu.test" -test.run '^$' -test.bench 'GPUMatvecBatch/Q8_0/.*/n8/' -test.benchtime 200x 2>&1 | grep -E "^Bench" | sed "s/^/$b /")
done
el done
