#!/usr/bin/env bash
# Session 85 (the device call ran these lines as one command, asked for as
# nvidia-h200, on an H100): 9f94d11's mend of TestGPUOmitParts (run463), with
# the tests around step 140 again. carry ["bin"]; binaries: `bash
# scripts/gpu/bins.sh m=main:engine_gpu.test` at 9f94d11. Output, in full:
#   --- PASS: TestGPUGraphEqualsEager (1.10s)
#   --- PASS: TestGPUOmitParts (0.76s)
#   --- PASS: TestGPUKernelGDNDeltaChunk (0.24s)
#   --- PASS: TestGPUKernelGDNDelta (0.12s)
#   --- PASS: TestGPUKernelGDNDeltaNormed (0.07s)
#   --- PASS: TestGPUEarlyLoadsFollowNoWriter (0.26s)
#   PASS
#   NVIDIA H100 80GB HBM3
tar xJf bin/bin.txz -C bin && cd engine/gpu && timeout 200 ../../bin/m/engine_gpu.test -test.run 'OmitParts|GDNDelta|EarlyLoads|GraphEqualsEager' -test.v -test.timeout 190s 2>&1 | grep -E "^(--- |ok|FAIL|PASS)|omit|panic" | head -30; nvidia-smi --query-gpu=name --format=csv,noheader
