#!/usr/bin/env bash
# quants.sh: gguf's block codecs against ggml's own (TestQuantsMatchGGML,
# through ggmlq.c and node-llama-cpp 3.22.1's libggml-base, lib.sh): ggml
# dequantises the blocks gguf.Quantize writes, and those of its reference
# quantizer, to gguf.Dequantize's values bit for bit; the two quantizers'
# bytes and RMS errors compared. Needs npm, gcc and Go; a few seconds.
set -euo pipefail
work=${WORK:-$(mktemp -d)}
[ -n "${WORK:-}" ] || trap 'rm -rf "$work"' EXIT
source "$(dirname "$0")/lib.sh"
llama_setup
cd "$root/gguf" && MEMRA_GGMLQ=$ggmlq go test -count=1 -run 'TestQuantsMatchGGML' -v . | grep -E 'RMS|^(---|ok|FAIL|PASS)'
