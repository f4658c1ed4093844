#!/usr/bin/env bash
# Session 21: where a 1k step's time goes now (run95/run96 were session 14's):
# bench -omit for every part on the three presets whose goals are not met
# (graph ms/token at 1k; the whole step first and last), and the whole step
# without programmatic dependent launch (MEMRA_PDL=0). bin/main = main after
# steps 63-65; carry ["bin"]. ~4 minutes.
set -u
source scripts/gpu/lib.sh
start_run
synth main "0.8b" "bf16 q8_0"; S0=$SYNTH
synth main "9b" "q8_0"; SYNTH="$S0 $SYNTH"
wait_synth
ALL=$M/0.8b-bf16.gguf,$M/0.8b-q8_0.gguf,$M/9b-q8_0.gguf
el "bench -omit (1k, graph ms/token)"
i=0
for p in none embed gdn-conv gdn-delta gdn-norm attn-prep attn-split attn-combine mixer-mv ffn logits gdn,attn none pdl0; do
  o=""; env=""
  case $p in none) ;; pdl0) env="MEMRA_PDL=0" ;; *) o="-omit $p" ;; esac
  i=$((i+1)); d=/tmp/om/$i-$p; mkdir -p $d
  env $env timeout 120 ./bin/main/bench -model $ALL -ctx 1024 -reps 3 -tokens 64 $o -out $d 2>$d/stderr.txt | grep -E '\| graph \|' | cut -d'|' -f2,4,5,6 | sed "s/^/$p /"
done
el done
