#!/usr/bin/env bash
# Loader benchmark (not part of CI). In one run, against one
# `dynaburst serve --capacity-model off`:
#   1. items/s of `dynaburst load` vs boto3's Table.batch_writer, same data;
#   2. peak memory of `dynaburst load` for 1 million vs 10 million lines.
# Results go to bench/loader/results/<date>.{md,json}.
#
# Usage: bench/loader/run.sh [ITEMS_FOR_THROUGHPUT (default 100000)]
#        SKIP_MEMORY=1 bench/loader/run.sh ...   throughput only (no results file)
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$(pwd)
items=${1:-100000}
work=$(mktemp -d)
out_dir="$root/bench/loader/results"
mkdir -p "$out_dir"
stamp=$(date -u +%Y-%m-%dT%H%M%SZ)
server_pid=""
cleanup() { [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT

cargo build --release --locked -p dynaburst >/dev/null
bin="$root/target/release/dynaburst"
venv="$root/tests/python/.venv"
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r tests/python/requirements.txt

"$bin" serve --port 0 --capacity-model off > "$work/server.out" 2>&1 &
server_pid=$!
for _ in $(seq 50); do grep -q listening "$work/server.out" && break; sleep 0.1; done
url=$(sed -n 's/^dynaburst listening on //p' "$work/server.out")
echo "server: $url (capacity model off)"

"$bin" gen people --count "$items" --seed 1 --out "$work/people.jsonl"
create() {
  "$venv/bin/python" - "$url" "$1" <<'PY'
import sys, boto3
c = boto3.client("dynamodb", endpoint_url=sys.argv[1], region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="y")
c.create_table(TableName=sys.argv[2], KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}],
               AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "S"}], BillingMode="PAY_PER_REQUEST")
PY
}
create boto3_people
create dynaburst_people

echo "boto3 Table.batch_writer: $items people"
boto=$("$venv/bin/python" bench/loader/boto3_batch_writer.py "$url" boto3_people "$work/people.jsonl")
echo "  $boto"
echo "dynaburst load: $items people"
"$bin" load "$work/people.jsonl" --table dynaburst_people --endpoint-url "$url" --quiet --seed 1 \
  --checkpoint "$work/p.ckpt" --report "$work/people-report.json"
ours=$(python3 -c "import json;r=json.load(open('$work/people-report.json'));print(json.dumps({'items':r['records']['written'],'seconds':r['duration_s'],'items_per_s':r['items_per_s']['mean'],'peak_memory_bytes':r['peak_memory_bytes']}))")
echo "  $ours"
boto_count=$("$bin" count --table boto3_people --endpoint-url "$url")
ours_count=$("$bin" count --table dynaburst_people --endpoint-url "$url")

memory_run() { # lines
  "$bin" gen minimal --count "$1" --seed 1 --out "$work/minimal-$1.jsonl"
  "$bin" load "$work/minimal-$1.jsonl" --table "minimal_$1" --endpoint-url "$url" --create-table --key id:S \
    --quiet --seed 1 --checkpoint "$work/m$1.ckpt" --report "$work/minimal-$1.json"
  rm -f "$work/minimal-$1.jsonl"
  python3 -c "import json;r=json.load(open('$work/minimal-$1.json'));print(json.dumps({'lines':$1,'written':r['records']['written'],'seconds':r['duration_s'],'items_per_s':r['items_per_s']['mean'],'peak_memory_bytes':r['peak_memory_bytes']}))"
}
if [ -n "${SKIP_MEMORY:-}" ]; then
  python3 -c "import json,sys;b,o=json.loads(sys.argv[1]),json.loads(sys.argv[2]);print(f\"ratio {o['items_per_s']/b['items_per_s']:.2f}x (boto3 {b['items_per_s']:,.0f}/s, dynaburst {o['items_per_s']:,.0f}/s; counted {sys.argv[3]} / {sys.argv[4]})\")" "$boto" "$ours" "$boto_count" "$ours_count"
  exit 0
fi
echo "peak memory: 1,000,000 lines"
m1=$(memory_run 1000000); echo "  $m1"
echo "peak memory: 10,000,000 lines"
m10=$(memory_run 10000000); echo "  $m10"

python3 - "$out_dir/$stamp" "$boto" "$ours" "$boto_count" "$ours_count" "$m1" "$m10" "$items" <<'PY'
import json, platform, subprocess, sys
out, boto, ours, bc, oc, m1, m10, items = sys.argv[1], *map(json.loads, sys.argv[2:4]), int(sys.argv[4]), int(sys.argv[5]), *map(json.loads, sys.argv[6:8]), int(sys.argv[8])
cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
ratio = ours["items_per_s"] / boto["items_per_s"]
mem_ratio = m10["peak_memory_bytes"] / m1["peak_memory_bytes"]
doc = {"command": f"bench/loader/run.sh {items}", "cpu": cpu, "cores": subprocess.check_output(["nproc"]).decode().strip(),
       "throughput": {"boto3_batch_writer": boto, "dynaburst_load": ours, "ratio": ratio,
                      "counted_after": {"boto3": bc, "dynaburst": oc}},
       "memory": {"1M": m1, "10M": m10, "ratio_10M_to_1M": mem_ratio}}
json.dump(doc, open(out + ".json", "w"), indent=2)
mb = lambda b: b / 1e6
md = f"""# Loader benchmark, {out.rsplit('/', 1)[1]}

Command: `bench/loader/run.sh {items}` on {doc['cores']} cores ({cpu}), against
`dynaburst serve --capacity-model off`, both loaders on the same data
(`dynaburst gen people --count {items} --seed 1`) and server, one after the other.

| loader | items | seconds | items/s | counted after |
|---|---:|---:|---:|---:|
| boto3 Table.batch_writer | {boto['items']:,} | {boto['seconds']:.2f} | {boto['items_per_s']:,.0f} | {bc:,} |
| dynaburst load | {ours['items']:,} | {ours['seconds']:.2f} | {ours['items_per_s']:,.0f} | {oc:,} |

**Ratio: {ratio:.1f}x** (goal: 10x or more).

Peak memory of `dynaburst load` (VmHWM), `dynaburst gen minimal`:

| lines | written | seconds | items/s | peak memory |
|---:|---:|---:|---:|---:|
| 1,000,000 | {m1['written']:,} | {m1['seconds']:.1f} | {m1['items_per_s']:,.0f} | {mb(m1['peak_memory_bytes']):.0f} MB |
| 10,000,000 | {m10['written']:,} | {m10['seconds']:.1f} | {m10['items_per_s']:,.0f} | {mb(m10['peak_memory_bytes']):.0f} MB |

10M/1M peak memory: **{mem_ratio:.2f}** (goal: under 200 MB and within 20%).
"""
open(out + ".md", "w").write(md)
print(md)
PY
