#!/usr/bin/env bash
# Session 42: the same kernel sources built by the GPU machine's nvcc 13
# against the committed fatbin (nvcc 11.8), in one run. bench -fatbin (new)
# loads the nvcc 13 build; one binary (bin/main, main + -fatbin) runs both,
# alternating: embedded, nvcc 13, embedded, nvcc 13, on the ten 0.8B and 9B
# presets at 1k and 32k. The nvcc 13 fatbin and its manifest (ptxas's
# registers and spills per kernel) come back in $OUT. carry ["bin"]. ~7 min.
set -u
source scripts/gpu/lib.sh
start_run
synth main "0.8b 9b" "bf16 q8_0 q4_k q5_k q6_k"
el "nvcc 13 build of kernels/ (the builder, then nvcc alone if the builder fails)"
nvcc --version | tail -2
rm -rf /tmp/k13; cp -r kernels /tmp/k13
F=""
if ./bin/main/kbuild -dir /tmp/k13 -nvcc "$(command -v nvcc)" > "$OUT/kbuild13.txt" 2>&1; then
  F=/tmp/k13/memra.fatbin
  cp /tmp/k13/manifest.json "$OUT/manifest13.json"
else
  echo "builder failed:"; tail -5 "$OUT/kbuild13.txt"
  (cd /tmp/k13 && nvcc -fatbin -O3 -Xfatbin -compress-all -gencode arch=compute_90,code=sm_90 -o nv13.fatbin memra.cu) > "$OUT/nvcc13.txt" 2>&1 && F=/tmp/k13/nv13.fatbin
fi
el "nvcc 13 fatbin: ${F:-none} ($(stat -c %s "$F" 2>/dev/null) bytes)"
[ -n "$F" ] && cp "$F" "$OUT/nv13.fatbin"
grep -c 'warning' "$OUT/kbuild13.txt"
wait_synth
ALL=""; for p in 0.8b 9b; do for t in bf16 q8_0 q4_k q5_k q6_k; do ALL="$ALL,$M/$p-$t.gguf"; done; done; ALL=${ALL#,}
mkdir -p /tmp/bn
for r in 1 2; do for v in cc118 cc13; do
  [ $v = cc13 ] && [ -z "$F" ] && continue
  el "bench 1024,32768 ($v, round $r)"
  d=/tmp/bn/$v-$r; mkdir -p $d
  x=""; [ $v = cc13 ] && x="-fatbin $F"
  timeout 150 ./bin/main/bench -model "$ALL" -ctx 1024,32768 -reps 3 -tokens 64 -sampled=false $x -out $d 2>$d/stderr.txt | grep -E '\| graph \|' | cut -d'|' -f2,4,5,6,9,13
done; done
for r in 1 2; do
  el "compare round $r: nvcc 13 / nvcc 11.8"
  ./bin/main/bench -compare /tmp/bn/cc118-$r/latest.json /tmp/bn/cc13-$r/latest.json | grep -E 'geomean|\| graph \|' | cut -d'|' -f2,4,5,8
done
tar czf "$OUT/bench-rotation.tgz" -C /tmp bn
el done
