#!/usr/bin/env bash
# cuda-src.sh: packs the llama.cpp source that the GPU machine builds for the
# peer column (scripts/gpu/lib.sh llama_cuda) into peer/lcpp-src.tar.xz
# (~4.4 MB; peer/ is ignored: pass carry ["bin","peer"]). The source is the
# llama.cpp of node-llama-cpp 3.22.1 (npm; its llama/gitRelease.bundle, a
# git bundle of llama.cpp's tree of Sep 28 2026, the one lib.sh's CPU build
# was made from): the GPU machine has no network and the whole tree (209 MB)
# would not fit the device call's 64 MiB, so the models, docs, tests,
# examples, the web UI and the other backends' sources are left out. Needs
# npm and git.
set -euo pipefail
root=$(git rev-parse --show-toplevel)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
npm pack -q node-llama-cpp@3.22.1 > /dev/null
tar xzf node-llama-cpp-3.22.1.tgz package/llama/gitRelease.bundle
git clone -q package/llama/gitRelease.bundle lcpp 2> /dev/null
echo "llama.cpp $(git -C lcpp log -1 --format='%H of %cd')"
mkdir -p "$root/peer"
tar cf - -C lcpp --exclude=.git --exclude=./models --exclude=./docs --exclude=./media \
  --exclude=./examples --exclude=./tests --exclude=./benches --exclude=./gguf-py --exclude=./app \
  --exclude=./tools/ui --exclude=./tools/server \
  --exclude=./ggml/src/ggml-et --exclude=./ggml/src/ggml-metal --exclude=./ggml/src/ggml-hexagon \
  --exclude=./ggml/src/ggml-sycl --exclude=./ggml/src/ggml-vulkan --exclude=./ggml/src/ggml-opencl . |
  xz -T2 -6 > "$root/peer/lcpp-src.tar.xz"
git -C lcpp log -1 --format=%H > "$root/peer/lcpp-commit.txt"
ls -l "$root/peer/lcpp-src.tar.xz"
