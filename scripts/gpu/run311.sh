#!/usr/bin/env bash
# Session 52, the batch kernels' rate (3e5ff21 plus BenchmarkGPUMatvecBatch,
# uncommitted then): BenchmarkGPUMatvec and BenchmarkGPUMatvecBatch on the
# bf16 and q8_0 shapes, 50 launches each. Ran inline as the run tool's
# command (this file repeats it). carry ["bin"]. ~20 s.
tar xJf bin/bin.txz -C bin && cd engine/gpu && timeout 300 ../../bin/main/engine_gpu.test -test.run '^$' -test.bench 'GPUMatvec(Batch)?/(BF16|Q8_0)/' -test.benchtime 50x 2>&1 | grep -E "Benchmark|FAIL|panic" | awk '{print $1, $3, $4, $5, $6}'
