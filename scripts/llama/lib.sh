# lib.sh: what the llama.cpp cross-checks share (sourced). llama_setup
# unpacks node-llama-cpp 3.22.1's CPU build of llama.cpp (npm, September
# 2026) into $work, builds llq.c and llgen.c against its libllama and
# ggmlq.c against its libggml-base, beside them (ggml loads its CPU backends
# from the executable's folder), as $llq, $llgen and $ggmlq, and memra from
# the checkout; $root is the repository root.
llama_setup() {
  root=$(git rev-parse --show-toplevel)
  mkdir -p "$work"
  cd "$work"
  [ -f node-llama-cpp-linux-x64-3.22.1.tgz ] || npm pack -q @node-llama-cpp/linux-x64@3.22.1 > /dev/null
  tar xzf node-llama-cpp-linux-x64-3.22.1.tgz
  lib=$work/package/bins/linux-x64
  for c in llq llgen; do
    gcc -O1 -Wall -o "$lib/$c" "$root/scripts/llama/$c.c" -L"$lib" -l:libllama.v0.5.0.so -Wl,-rpath,"$lib"
  done
  gcc -O1 -Wall -o "$lib/ggmlq" "$root/scripts/llama/ggmlq.c" -L"$lib" -l:libggml-base.so -Wl,-rpath,"$lib"
  llq=$lib/llq llgen=$lib/llgen ggmlq=$lib/ggmlq
  (cd "$root" && CGO_ENABLED=0 go build -o "$work/memra" ./tools/memra)
}
