#!/usr/bin/env bash
# Session 71, on the H100 that ran run373.sh and run374.sh, kept warm (its
# models in /tmp/models): the 0.8B's priming at P=512 again, main, gdnp and
# kqf alternated three times, since run373's 0.8B rounds were noisy. It ran
# as this one command line in the device call; kept here as it ran.
# carry ["bin"], run373's binaries.
source scripts/gpu/lib.sh; start_run; nvidia-smi --query-gpu=name --format=csv,noheader; prime_ab "$M/0.8b-bf16.gguf,$M/0.8b-q8_0.gguf,$M/0.8b-q4_k.gguf,$M/0.8b-q5_k.gguf,$M/0.8b-q4_k_m.gguf" main gdnp kqf main gdnp kqf main gdnp kqf; el done
