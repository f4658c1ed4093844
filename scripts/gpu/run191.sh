#!/usr/bin/env bash
# Session 29, step 84 after review: barwide with the generation form on one
# line (as step 83 had it) beside the others, each SM's blocks counted, and
# an untimed trial a case checking no block passes early. bin/barwide and
# bin/barwide.cubin, built here (nvcc 11.8). carry ["bin"]. ~1 minute.
set -u
source scripts/gpu/lib.sh
start_run
timeout 300 ./bin/barwide -cubin bin/barwide.cubin -per-sm 1,2,3,4 -groups 4,8,16
el done
