#!/usr/bin/env bash
# Session 45: the GPU on the new transformers fixture qwen35-tiny-hv6 (3
# Gated DeltaNet V heads a K head; TestGPUFixtures takes every *-f32.gguf),
# the decode tests, and the gate on it; main at its end. carry ["bin"].
# ~2 min.
set -u
source scripts/gpu/lib.sh
start_run
./bin/main/memra version
el "engine/gpu fixture and decode tests"
(cd engine/gpu && timeout 150 "$R/bin/main/engine_gpu.test" -test.run 'Fixtures|DecodeMatchesCPU|GraphEqualsEager|SessionEqualsEager|KernelGDN' -test.v 2>&1 | grep -E "^(--- |ok|FAIL|PASS)|panic|hv6" | head -30)
el gates
gate main engine/testdata/fixtures/qwen35-tiny-hv6-f32.gguf 24 100 0
gate main engine/testdata/fixtures/qwen35-tiny-hv6-f32.gguf 24 100 1
./bin/main/gate default 64 256 2>/dev/null | grep -E 'gate (PASS|FAIL)'
el "greedy hv6"
greedy main engine/testdata/fixtures/qwen35-tiny-hv6-f32.gguf
el done
