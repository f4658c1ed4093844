#!/usr/bin/env bash
# Session 70, the same warm H200 after run384.sh: every engine/gpu GPU test
# of main (the first full run on an H200 since session 62) and two gates on
# models run384 left in /tmp/models. It ran as this one command line in the
# device call; kept here as it ran. carry ["bin"], run383's binaries. ~3.5 min.
source scripts/gpu/lib.sh; start_run; nvidia-smi --query-gpu=name --format=csv,noheader; gpu_tests main; gate main /tmp/models/0.8b-bf16.gguf 300 128 0; gate main /tmp/models/9b-q8_0.gguf 64 64 1; el done
