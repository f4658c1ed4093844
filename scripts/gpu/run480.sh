#!/usr/bin/env bash
# Session 89 (`bash scripts/gpu/run480.sh`, asked for as nvidia-h200; it
# came as an H100 after six failed starts; log docs/results/h100-run480-log.txt;
# docs/perf.md step 146): what
# each part of a 1k step costs inside the graph now (step 42's and step
# 67's method, `bench -omit PARTS`: the whole step less the step without
# the part, the whole step measured first and last), on main after steps
# 70-144, for the 0.8B bf16, 0.8B q8_0 and 9B q8_0; and the step without
# PDL (MEMRA_PDL=0). On sm_90 gdn-delta and gdn-norm are one launch, as are
# attn-prep and attn-split at 1k on the 0.8B (a split block serves one q
# head there), so each pair is left out together. carry ["bin"]; binaries:
# `bash scripts/gpu/bins.sh c=d0fb275+scripts/gpu/patches/launch/carveout.patch:memra,bench`
# (run479's: with MEMRA_CARVEOUT unset its code is main's).
set -u
source scripts/gpu/lib.sh
start_run
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
synth c "0.8b" "bf16 q8_0"; s1=$SYNTH
synth c "9b" "q8_0"; SYNTH="$s1 $SYNTH"
wait_synth
mkdir -p /tmp/om
# om MODEL LABEL [ARGS...]: one bench graph row of MODEL at 1k with ARGS
# (and the environment OMENV).
om() {
  local m=$1 l=$2; shift 2
  local d=/tmp/om/$m-$l; mkdir -p "$d"
  printf '%-10s %-22s' "$m" "$l"
  timeout 100 env ${OMENV:-} ./bin/c/bench -model "$M/$m.gguf" -ctx 1024 -reps 3 -tokens 64 "$@" -out "$d" 2>"$d/stderr.txt" | grep -E '\| graph \|' | cut -d"|" -f6,7,8 | tr -d '\n'
  echo
}
for m in 0.8b-bf16 0.8b-q8_0 9b-q8_0; do
  el "$m (ms/token | min-max | spread %)"
  om "$m" whole
  for p in embed gdn-conv gdn-delta,gdn-norm gdn attn-prep,attn-split attn-combine attn mixer-mv ffn logits; do
    om "$m" "$p" -omit "$p"
  done
  OMENV=MEMRA_PDL=0 om "$m" nopdl
  om "$m" whole2
done
tar czf "$OUT/omit.tgz" -C /tmp om
el done
