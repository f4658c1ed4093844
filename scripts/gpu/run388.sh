#!/usr/bin/env bash
# Session 71, on the H100 that ran run387.sh, kept warm: every engine/gpu
# GPU test of main after step 122 (6d8e5fa). It ran as this one command
# line in the device call; kept here as it ran. carry ["bin"], run387's
# binaries.
source scripts/gpu/lib.sh; start_run; nvidia-smi --query-gpu=name --format=csv,noheader; gpu_tests main; el done
