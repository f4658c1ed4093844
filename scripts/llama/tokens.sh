#!/usr/bin/env bash
# tokens.sh [PRESET [TYPE [N]]]: N greedy tokens (default 16) of memra's CPU
# backend and of llama.cpp's (node-llama-cpp 3.22.1, lib.sh) on one `memra
# synth` file (default the 0.8B preset in f32), after the prompt 1,2,3, and
# whether they are the same. Use f32: llama.cpp's CPU products quantise the
# activations for quantised weights (and round them to bf16 for bf16), and
# the synth presets' random weights turn such a perturbation of ~0.3% into
# logits ~20% apart (memra's own q8_0 and f32 files of one seed differ by
# 0.82 in the 0.8B's first logits), so only f32 compares the two engines'
# arithmetic. llgen's stderr gives each step's top-two gap, for telling a
# real difference from a near-tie. Needs npm, gcc and Go.
set -euo pipefail
preset=${1:-0.8b} typ=${2:-f32} n=${3:-16}
work=${WORK:-$(mktemp -d)}
[ -n "${WORK:-}" ] || trap 'rm -rf "$work"' EXIT
source "$(dirname "$0")/lib.sh"
llama_setup
m=$preset-$typ.gguf
./memra synth --preset "$preset" --type "$typ" -o "$m" > /dev/null
"$llgen" "$m" "$n" 1,2,3 > llama.txt 2> llama-gaps.txt
./memra run -m "$m" --device cpu --prompt-tokens 1,2,3 -n "$n" --greedy --print-tokens 2> /dev/null | head -1 > memra.txt
echo "llama.cpp: $(cat llama.txt)"
echo "memra:     $(cat memra.txt)"
echo "smallest top-two gap (llama.cpp): $(sed 's/.*gap to the next //' llama-gaps.txt | sort -g | head -1)"
if cmp -s llama.txt memra.txt; then echo "$preset $typ: $n greedy tokens the same"; else echo "$preset $typ: greedy tokens DIFFER"; exit 1; fi
