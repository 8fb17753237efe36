#!/bin/sh
# Regenerate the committed gensnap fixtures (deterministic: same bytes every run).
# Usage: tests/data/gen/regen.sh [OUTDIR]   (default: this directory)
# OUTDIR also receives demo.pickle (copied to tests/data/demo.pickle by hand
# when regenerating in place).
set -e
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$here}
py=${PYTHON3:-python3}
gen="$py $here/../../../contrib/gensnap.py"
mkdir -p "$out"
g() { name=$1; shift; $gen "$@" -o "$out/$name.pickle" --truth "$out/$name.truth.json"; }
g leak        --scenario leak
g frag        --scenario frag
g oom         --scenario oom
g multi       --scenario multi
g expandable  --scenario expandable
g graphs      --scenario graphs
g pools       --scenario pools
g wrapped     --scenario wrapped
g legacy-1.13 --scenario legacy --format 1.13
g legacy-2.0  --scenario legacy --format 2.0
g npu         --scenario npu
g leak-cpp    --scenario leak --stacks cpp --events 1500
g tiny-p2     --scenario leak --events 300 --protocol 2
g tiny-p3     --scenario leak --events 300 --protocol 3
g tiny-p4     --scenario leak --events 300 --protocol 4
g tiny-p5     --scenario leak --events 300 --protocol 5
g training    --scenario training --layers 2 --hidden 256
g training-leak --scenario training --layers 2 --hidden 256 --steps 4 --leak
$gen --scenario leak --events 3000 -o "$out/demo.pickle"
