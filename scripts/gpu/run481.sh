#!/usr/bin/env bash
# Session 89 (`bash scripts/gpu/run481.sh`, asked for as nvidia-h200; it
# came as an H100; log, with the call typed inline after it that ran the
# uniform maps this script's own choice missed, in
# docs/results/h100-run481-log.txt; docs/perf.md step 145): step
# 145 again, the split made uniform without shrinking the L1. Run479's one
# split for all (carveout 100: 228 KB of shared memory, ~28 KB of L1) lost
# 4-6.5%, which may be the small L1 and not the common split. Here each
# kernel gets its own carveout (MEMRA_CARVEOUT_MAP), chosen so that every
# decode kernel of a model takes the largest split the driver gives any of
# them by default (the 0.8B bf16's: matvec_bf16's 64 KB) with its default
# grid: ncu's launch statistics for carveouts 0-28 on every kernel, the
# map built from them, checked with ncu, then bench's graph rows at 1k with
# and without it, alternating. carry ["bin"]; binaries: `bash
# scripts/gpu/bins.sh c=5595483+scripts/gpu/patches/launch/carveout.patch:memra,bench`.
set -u
source scripts/gpu/lib.sh
start_run
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
synth c "0.8b" "bf16 q8_0"
wait_synth
KRX='^(embed_bf16|embed_q8_0|matvec_bf16|matvec_bf16_wide|matvec_q8_0|matvec_q8_0_wide|gdn_conv|gdn_delta_normed|attn_prep_split_f16_d256|attn_prep_f16|attn_split_vec_f16_d256|attn_combine)$'
mkdir -p /tmp/cfg
# cfg MODEL TAG: "kernel grid split-KB" for each decode kernel of MODEL's
# first steps, with the carveout environment of the caller, into
# /tmp/cfg/MODEL-TAG.txt.
cfg() {
  timeout 60 ncu --section LaunchStats -k "regex:$KRX" -c 30 ./bin/c/memra run -m "$M/$1.gguf" --prompt-tokens 1 -n 2 --greedy --device cuda 2>&1 |
    awk '/^  [a-z_0-9]+ \(/{n=$1; g=$2} /Shared Memory Configuration Size/{print n, g, $NF}' | sort -u > "/tmp/cfg/$1-$2.txt"
}
PS="0 2 4 6 8 10 12 14 18 22 28"
for m in 0.8b-bf16 0.8b-q8_0; do
  el "$m: the driver's splits, then carveouts $PS"
  MEMRA_CARVEOUT= MEMRA_CARVEOUT_MAP= cfg "$m" d
  cat "/tmp/cfg/$m-d.txt"
  for p in $PS; do MEMRA_CARVEOUT=$p cfg "$m" "$p"; done
  target=$(awk '{print $3}' "/tmp/cfg/$m-d.txt" | sort -g | tail -1)
  map=""
  while read -r name grid split; do
    [ "$split" = "$target" ] && continue
    for p in $PS; do
      if grep -qx "$name $grid $target" "/tmp/cfg/$m-$p.txt"; then map="$map,$name=$p"; break; fi
    done
  done < "/tmp/cfg/$m-d.txt"
  map=${map#,}
  echo "$m: target ${target} KB, map: ${map:-none}"
  for p in $PS; do echo "  carveout $p: $(tr '\n' ';' < "/tmp/cfg/$m-$p.txt")"; done
  echo "$map" > "/tmp/cfg/$m-map"
  MEMRA_CARVEOUT_MAP=$map cfg "$m" map
  echo "  with the map: $(tr '\n' ';' < "/tmp/cfg/$m-map.txt")"
done
tar czf "$OUT/cfg.tgz" -C /tmp cfg
mkdir -p /tmp/bn
for r in 1 2; do
  for m in 0.8b-bf16 0.8b-q8_0; do
    for v in d map; do
      map=""; [ "$v" = map ] && map=$(cat "/tmp/cfg/$m-map")
      d=/tmp/bn/$m-$v-$r; mkdir -p "$d"
      printf '%-10s %-4s ' "$m" "$v"
      MEMRA_CARVEOUT_MAP=$map timeout 100 ./bin/c/bench -model "$M/$m.gguf" -ctx 1024 -reps 3 -tokens 64 -out "$d" 2>"$d/stderr.txt" | grep -E '\| graph \|' | cut -d'|' -f6,7,8,9 | tr -d '\n'
      echo
    done
  done
done
tar czf "$OUT/bench-rotation.tgz" -C /tmp bn
el done
