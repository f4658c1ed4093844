#!/usr/bin/env bash
# Session 62, the call right after run351.sh on the same warm H200 (the
# command was given inline; this file holds it as it ran): run351's
# llama.cpp build resumed (it had stopped at its 240 s cap) and finished in
# 20 s, llama-bench on run351's five files, then memra's bench on them at
# 64 and 1k with -peer on those reports (docs/results/h200-run352.*, the
# llama-bench reports in docs/results/h200-run352-llama/). carry
# ["bin","peer"].
source scripts/gpu/lib.sh; start_run; if llama_cuda 165; then llama_bench $M/0.8b-q8_0.gguf $M/0.8b-q4_k_m.gguf $M/9b-q4_k_m.gguf $M/9b-q8_0.gguf $M/0.8b-bf16.gguf; peer_bench 50 0.8b-q8_0 0.8b-q4_k_m 9b-q4_k_m 9b-q8_0 0.8b-bf16; fi; tail -3 /tmp/lcpp/ninja.log; el done
