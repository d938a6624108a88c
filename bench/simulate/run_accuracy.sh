#!/usr/bin/env bash
# Accuracy of `dynaburst load --simulate`: each input simulated, then loaded
# for real (wall clock) into `dynaburst serve` (capacity model on, a 10 ms
# round trip added to every answer, the simulation's default), into a
# table created by the load. Prints one Markdown row per case.
#
#   python3 bench/simulate/make_inputs.py /tmp/simacc
#   DYNABURST_BIN=target/release/dynaburst bench/simulate/run_accuracy.sh /tmp/simacc
set -euo pipefail
dir=${1:?input directory (make_inputs.py writes it)}
bin=${DYNABURST_BIN:-target/release/dynaburst}
port=${PORT:-8765}
url=http://127.0.0.1:$port
"$bin" serve --port "$port" --rtt 10 --seed 1 >"$dir/serve.log" 2>&1 &
server=$!
trap 'kill $server' EXIT
sleep 1
export AWS_ACCESS_KEY_ID=x AWS_SECRET_ACCESS_KEY=x AWS_REGION=us-east-1
echo "| case | billing | load flags | items | predicted s | measured s | error | predicted items/s | measured items/s | error |"
echo "|---|---|---|---:|---:|---:|---:|---:|---:|---:|"
run() {
  local case=$1 billing=$2; shift 2
  local input=$dir/$case.jsonl
  rm -f "$input".dynaburst-checkpoint "$input".rejects.jsonl
  "$bin" load "$input" --table "sim-$case" --endpoint-url "$url" --simulate --key pk:S,sk:N \
    --billing "$billing" --seed 1 --quiet "$@" >"$dir/$case.sim.json" 2>"$dir/$case.sim.err"
  "$bin" load "$input" --table "real-$case" --endpoint-url "$url" --create-table --key pk:S,sk:N \
    --billing "$billing" --seed 1 --quiet --report "$dir/$case.real.json" "$@" 2>"$dir/$case.real.err"
  python3 - "$dir/$case.sim.json" "$dir/$case.real.json" "$case" "$billing" "$*" <<'PY'
import json, sys
sim, real = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
ps, pr = sim["predicted_duration_s"], sim["mean_items_per_s"]
ms, mr = real["duration_s"], real["items_per_s"]["mean"]
n = real["records"]["written"]
print(f"| {sys.argv[3]} | {sys.argv[4]} | {sys.argv[5] or '(defaults)'} | {n:,} | {ps:.1f} | {ms:.1f} | {100*(ps-ms)/ms:+.1f}% | {pr:,.0f} | {mr:,.0f} | {100*(pr-mr)/mr:+.1f}% |")
PY
}
run single-key on-demand --order as-is
run sorted on-demand --order as-is --concurrency 1
run shuffled on-demand --order as-is
run provisioned provisioned:1000:10000 --order as-is
run prov5 provisioned:5:5
