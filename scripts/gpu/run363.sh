#!/usr/bin/env bash
# Session 65, last call: main after steps 115-116 (the plain Q4_K kernel's
# bound; the ring's knobs gone, its fatbin bytes as before them): every
# engine/gpu GPU test, and gates on the 9B Q4_K and Q4_K_M (graph ==
# eager, 64 steps) and the 0.8B Q4_K over FP8 KV. carry ["bin"], binaries
# from `bash scripts/gpu/bins.sh main=main:memra,gate,engine_gpu.test`. ~5 min.
set -u
source scripts/gpu/lib.sh
start_run
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
synth main "9b" "q4_k q4_k_m"
s1=$SYNTH
synth main "0.8b" "q4_k"
SYNTH="$s1 $SYNTH"
gpu_tests main
wait_synth
el "gates"
gate main "$M/9b-q4_k.gguf" 300 64 0
gate main "$M/9b-q4_k_m.gguf" 64 64 0
gate main "$M/0.8b-q4_k.gguf" 300 128 1
el done
# As it ran, gpu_tests' 230 s ran out in TestGPUKernelMatvec's wake (160.7 s
# beside the three synth jobs on an H100). The tests it had not reached ran
# in a second call on the same warm machine, with nothing beside them:
#   source scripts/gpu/lib.sh; start_run; cd engine/gpu && timeout 270 "$R/bin/main/engine_gpu.test" \
#     -test.run 'GPUEarlyLoads|GPUKernel(Argmax|Attention|AttnCombine|AttnPrep|Counters|Elementwise|GDNConv|GDNDelta|KVStore|MatvecBatch|MatvecLean|MatvecMix|RepeatPenalty|RoPE|SampleDraw|TopK)$|GPUMixedLaunch|GPUPrefillMatches|GPUProfileStep' \
#     -test.v -test.timeout 265s > "$OUT/gputest2.txt"
# (docs/results/h100-run363-gputest2.txt: all 21 PASS).
