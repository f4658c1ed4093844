#!/bin/sh
# Converts the checkpoints in oracle.tar.gz (from make_fixtures.py) to the
# GGUF fixtures in engine/testdata/fixtures, and copies the reference JSONs.
# Run from the repository root:  scripts/oracle/convert_fixtures.sh oracle.tar.gz
set -eu
tarball=${1:?usage: scripts/oracle/convert_fixtures.sh path/to/oracle.tar.gz}
dst=engine/testdata/fixtures
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

tar -xzf "$tarball" -C "$work"
CGO_ENABLED=0 go build -o "$work/memra" ./tools/memra
mkdir -p "$dst"

# Every fixture in the tarball (make_fixtures.py --only makes a subset).
for j in "$work"/oracle/*.json; do
	name=$(basename "$j" .json)
	cp "$j" "$dst/$name.json"
	"$work/memra" convert "$work/oracle/$name" --name "$name" --type f32 -o "$dst/$name-f32.gguf"
done
if [ -d "$work/oracle/qwen35-tiny" ]; then
	"$work/memra" convert "$work/oracle/qwen35-tiny" --name qwen35-tiny --type bf16 -o "$dst/qwen35-tiny-bf16.gguf"
	"$work/memra" convert "$work/oracle/qwen35-tiny" --name qwen35-tiny --type q8_0 -o "$dst/qwen35-tiny-q8_0.gguf"
fi

ls -l "$dst"
du -sh "$dst"
