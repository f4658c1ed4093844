#!/usr/bin/env bash
# Session 43, the final binaries: memra run --json on the GPU (greedy: its
# tokens against the CPU's --json; sampled: the seed it reports repeats the
# run on the device), a bench whose every row is measured becoming latest.*,
# and the default gate. carry ["bin"]. ~1 min.
set -u
source scripts/gpu/lib.sh
start_run
synth main "0.8b" "q8_0"
wait_synth
./bin/main/gate > /tmp/g.txt 2>&1; echo "gate default: rc $? $(grep -E 'gate (PASS|FAIL)' /tmp/g.txt)"
for d in cuda cpu; do
  ./bin/main/memra run -m "$M/0.8b-q8_0.gguf" --prompt-tokens 1,2,3 -n 24 --greedy --json --device $d > /tmp/j-$d.json 2> /tmp/j-$d.err
  echo "$d rc $?: $(cut -c1-200 /tmp/j-$d.json)"
done
tok() { grep -o '"tokens":\[[0-9,]*\]' "$1"; }
[ -n "$(tok /tmp/j-cuda.json)" ] && [ "$(tok /tmp/j-cuda.json)" = "$(tok /tmp/j-cpu.json)" ] && echo "greedy --json tokens cuda == cpu" || echo "greedy --json tokens DIFFER"
./bin/main/memra run -m "$M/0.8b-q8_0.gguf" --prompt-tokens 1,2,3 -n 24 --json --device cuda > /tmp/s1.json 2>/dev/null
seed=$(grep -o '"seed":[0-9]*' /tmp/s1.json | cut -d: -f2)
./bin/main/memra run -m "$M/0.8b-q8_0.gguf" --prompt-tokens 1,2,3 -n 24 --json --device cuda --seed "$seed" > /tmp/s2.json 2>/dev/null
echo "sampled seed $seed: $(tok /tmp/s1.json | cut -c1-80)"
[ -n "$(tok /tmp/s1.json)" ] && [ "$(tok /tmp/s1.json)" = "$(tok /tmp/s2.json)" ] && echo "its seed repeats the run on the GPU" || echo "the seed does NOT repeat the run"
rm -rf /tmp/bi
./bin/main/bench -model "$M/0.8b-q8_0.gguf" -ctx 64 -reps 1 -tokens 16 -sampled=false -out /tmp/bi 2>&1 | grep -E 'results in'
ls /tmp/bi
el done
