#!/usr/bin/env bash
# Prepared in session 66 for an H200 (none was lent in sessions 61-66),
# run in session 67: run354.sh's run (the mixed launch on the Q4_K_M
# presets, gates, docs/perf.md's full table and bench -compare against
# run303), then steps 117-119 on the H200: prime ms at P=512 on the bf16
# and q8_0 presets, main (8391a6b or later) against de47370 (before them),
# alternated twice (-ctx 64 -tokens 16: the decode rows are the table's).
# Session 67 edited it so and asked for an H200 twice; neither start came.
# carry ["bin"]; binaries from
#   bash scripts/gpu/bins.sh main=main:memra,gate,bench old=de47370:bench
# ~8 min; on any other card it stops at once.
set -u
nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200 || { echo "not an H200: nothing run"; exit 0; }
bash scripts/gpu/run354.sh
source scripts/gpu/lib.sh
T0=$(date +%s)
M=/tmp/models R=$PWD
exec > >(tee -a "$OUT/log.txt") 2>&1
prime_ab "$M/0.8b-bf16.gguf,$M/0.8b-q8_0.gguf,$M/9b-bf16.gguf,$M/9b-q8_0.gguf" old main old main
el done
