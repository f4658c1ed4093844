#!/usr/bin/env bash
# Session 29, step 84: engine/internal/barwide, a grid barrier alone at 1-4
# blocks an SM in three forms (flat counter, the generation form of step
# 83's ffn kernels, two-level in groups of 4, 8, 16). bin/barwide and
# bin/barwide.cubin, built here (nvcc 11.8). carry ["bin"]. ~1 minute.
set -u
source scripts/gpu/lib.sh
start_run
timeout 300 ./bin/barwide -cubin bin/barwide.cubin -per-sm 1,2,3,4 -groups 4,8,16
el done
