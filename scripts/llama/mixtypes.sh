#!/usr/bin/env bash
# mixtypes.sh: what llama.cpp's quantizer makes of memra's synth presets in
# each K mix, recorded as engine/convert/testdata/llama-mixtypes/PRESET-MIX.txt
# (a line "tensor type" for every tensor it does not keep F32), which
# TestMixTypesMatchLlama holds convert.TensorType to. llama.cpp is
# node-llama-cpp 3.22.1's CPU build (npm, September 2026; its libllama's
# llama_model_quantize, called by llq.c); the input is `memra synth --type
# bf16`. Needs npm, gcc and Go; ~25 min on 2 cores, ~20 GB of disk in
# $WORK (default: a temporary folder, removed at the end). lib.sh sets up
# llama.cpp.
#   bash scripts/llama/mixtypes.sh [PRESETS (default "0.8b 9b")]
set -euo pipefail
presets=${1:-0.8b 9b}
work=${WORK:-$(mktemp -d)}
[ -n "${WORK:-}" ] || trap 'rm -rf "$work"' EXIT
source "$(dirname "$0")/lib.sh"
llama_setup
out=$root/engine/convert/testdata/llama-mixtypes
mkdir -p "$out"
for p in $presets; do
  ./memra synth --preset "$p" --type bf16 --vocab none -o "$p-bf16.gguf"
  for mix in 12:q3_k_m 13:q3_k_l 15:q4_k_m 17:q5_k_m; do
    "$llq" "$p-bf16.gguf" "$p-${mix#*:}.gguf" "${mix%%:*}" > "$p-${mix#*:}.log" 2>&1
    # memra info's tensor table: NAME TYPE SHAPE...; the quantised ones.
    ./memra info "$p-${mix#*:}.gguf" | awk '/^tensors \(/ {t = 1; next} /^totals:/ {t = 0} t && NF >= 5 && $1 != "NAME" && $2 != "F32" {print $1, $2}' |
      sort > "$out/$p-${mix#*:}.txt"
    echo "$p ${mix#*:}: $(wc -l < "$out/$p-${mix#*:}.txt") tensors, $(grep 'quant size' "$p-${mix#*:}.log" | sed 's/.*quant size *= *//')"
    rm "$p-${mix#*:}.gguf"
  done
  rm "$p-bf16.gguf"
done
