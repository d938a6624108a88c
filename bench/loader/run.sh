#!/usr/bin/env bash
# Loader benchmark (not part of CI). In one run, against one
# `dynaburst serve --capacity-model off`:
#   1. items/s of `dynaburst load` vs boto3's Table.batch_writer, same data,
#      and the client CPU seconds per million items of each (cpu.py: user +
#      system of the client process; the server shares the machine);
#   2. items/s and client CPU of `dynaburst dump` vs a boto3 parallel Scan
#      (boto3_parallel_scan.py), both writing DynamoDB JSON lines, same
#      table and segments;
#   3. peak memory of `dynaburst load` for 1 million vs 10 million lines.
# Results go to bench/loader/results/<date>.{md,json}.
#
# Usage: bench/loader/run.sh [ITEMS_FOR_THROUGHPUT (default 100000)]
#        VENV=DIR: the Python virtualenv with boto3 (default tests/python/.venv)
#        SKIP_MEMORY=1 bench/loader/run.sh ...   throughput, CPU and dump only
#          (results/<date>-throughput.{md,json}, no memory runs)
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$(pwd)
items=${1:-100000}
source bench/lib/serve.sh
bench_workdir
out_dir="$root/bench/loader/results"
mkdir -p "$out_dir"
stamp=$(date -u +%Y-%m-%dT%H%M%SZ)

cargo build --release --locked -p dynaburst >/dev/null
bin="$root/target/release/dynaburst"
venv="${VENV:-$root/tests/python/.venv}"
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r tests/python/requirements.txt

bench_serve "$bin" "$work/server.out" --capacity-model off
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

# Client CPU seconds of the command run by cpu.py (its last stderr line).
cpu_of() { tail -n 1 "$1" | python3 -c "import json,sys;print(json.load(sys.stdin)['cpu_s'])"; }
# A JSON object with cpu_s and cpu_s_per_million_items added.
with_cpu() { # json cpu_s
  python3 -c "import json,sys;d=json.loads(sys.argv[1]);c=float(sys.argv[2]);d['cpu_s']=c;d['cpu_s_per_million_items']=c*1e6/max(d['items'],1);print(json.dumps(d))" "$1" "$2"
}
cpu="python3 bench/loader/cpu.py"

echo "boto3 Table.batch_writer: $items people"
boto=$($cpu "$venv/bin/python" bench/loader/boto3_batch_writer.py "$url" boto3_people "$work/people.jsonl" 2>"$work/boto.cpu")
boto=$(with_cpu "$boto" "$(cpu_of "$work/boto.cpu")")
echo "  $boto"
echo "dynaburst load: $items people"
$cpu "$bin" load "$work/people.jsonl" --table dynaburst_people --endpoint-url "$url" --quiet --seed 1 \
  --checkpoint "$work/p.ckpt" --report "$work/people-report.json" 2>"$work/load.cpu"
ours=$(python3 -c "import json;r=json.load(open('$work/people-report.json'));print(json.dumps({'items':r['records']['written'],'seconds':r['duration_s'],'items_per_s':r['items_per_s']['mean'],'peak_memory_bytes':r['peak_memory_bytes']}))")
ours=$(with_cpu "$ours" "$(cpu_of "$work/load.cpu")")
echo "  $ours"
boto_count=$("$bin" count --table boto3_people --endpoint-url "$url")
ours_count=$("$bin" count --table dynaburst_people --endpoint-url "$url")

segments=${DUMP_SEGMENTS:-4}
echo "boto3 parallel Scan ($segments segments) to DynamoDB JSON lines"
pyscan=$($cpu "$venv/bin/python" bench/loader/boto3_parallel_scan.py "$url" dynaburst_people "$segments" "$work/pyscan.json" 2>"$work/pyscan.cpu")
pyscan=$(with_cpu "$pyscan" "$(cpu_of "$work/pyscan.cpu")")
echo "  $pyscan"
echo "dynaburst dump ($segments segments) to DynamoDB JSON lines"
$cpu "$bin" dump --table dynaburst_people --endpoint-url "$url" --segments "$segments" --quiet --seed 1 \
  -o "$work/dump.ddb.json" --report "$work/dump-report.json" 2>"$work/dump.cpu"
dump=$(python3 -c "import json;r=json.load(open('$work/dump-report.json'));print(json.dumps({'items':r['items'],'seconds':r['duration_s'],'items_per_s':r['items_per_s']}))")
dump=$(with_cpu "$dump" "$(cpu_of "$work/dump.cpu")")
echo "  $dump"
dump_lines=$(wc -l < "$work/dump.ddb.json"); pyscan_lines=$(wc -l < "$work/pyscan.json")
rm -f "$work/dump.ddb.json" "$work/pyscan.json"

memory_run() { # lines
  "$bin" gen minimal --count "$1" --seed 1 --out "$work/minimal-$1.jsonl"
  "$bin" load "$work/minimal-$1.jsonl" --table "minimal_$1" --endpoint-url "$url" --create-table --key id:S \
    --quiet --seed 1 --checkpoint "$work/m$1.ckpt" --report "$work/minimal-$1.json"
  rm -f "$work/minimal-$1.jsonl"
  python3 -c "import json;r=json.load(open('$work/minimal-$1.json'));print(json.dumps({'lines':$1,'written':r['records']['written'],'seconds':r['duration_s'],'items_per_s':r['items_per_s']['mean'],'peak_memory_bytes':r['peak_memory_bytes']}))"
}
if [ -n "${SKIP_MEMORY:-}" ]; then
  m1=null; m10=null; stamp="$stamp-throughput"
else
  echo "peak memory: 1,000,000 lines"
  m1=$(memory_run 1000000); echo "  $m1"
  echo "peak memory: 10,000,000 lines"
  m10=$(memory_run 10000000); echo "  $m10"
fi

python3 - "$out_dir/$stamp" "$boto" "$ours" "$boto_count" "$ours_count" "$m1" "$m10" "$items" "$pyscan" "$dump" "$pyscan_lines" "$dump_lines" "$segments" <<'PY'
import json, platform, subprocess, sys
out, boto, ours, bc, oc, m1, m10, items = sys.argv[1], *map(json.loads, sys.argv[2:4]), int(sys.argv[4]), int(sys.argv[5]), *map(json.loads, sys.argv[6:8]), int(sys.argv[8])
pyscan, dump, pyscan_lines, dump_lines, segments = json.loads(sys.argv[9]), json.loads(sys.argv[10]), int(sys.argv[11]), int(sys.argv[12]), int(sys.argv[13])
cpu_ratio = boto["cpu_s_per_million_items"] / max(ours["cpu_s_per_million_items"], 1e-9)
dump_ratio = dump["items_per_s"] / pyscan["items_per_s"]
dump_cpu_ratio = pyscan["cpu_s_per_million_items"] / max(dump["cpu_s_per_million_items"], 1e-9)
cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
ratio = ours["items_per_s"] / boto["items_per_s"]
mem_ratio = m10["peak_memory_bytes"] / m1["peak_memory_bytes"] if m1 and m10 else None
doc = {"command": f"bench/loader/run.sh {items}", "cpu": cpu, "cores": subprocess.check_output(["nproc"]).decode().strip(),
       "throughput": {"boto3_batch_writer": boto, "dynaburst_load": ours, "ratio": ratio,
                      "counted_after": {"boto3": bc, "dynaburst": oc}, "cpu_ratio_boto3_to_dynaburst": cpu_ratio},
       "dump": {"segments": segments, "boto3_parallel_scan": pyscan, "dynaburst_dump": dump, "ratio": dump_ratio,
                "cpu_ratio_python_to_dynaburst": dump_cpu_ratio, "lines": {"boto3": pyscan_lines, "dynaburst": dump_lines}},
       "memory": {"1M": m1, "10M": m10, "ratio_10M_to_1M": mem_ratio}}
json.dump(doc, open(out + ".json", "w"), indent=2)
mb = lambda b: b / 1e6
md = f"""# Loader benchmark, {out.rsplit('/', 1)[1]}

Command: `bench/loader/run.sh {items}` on {doc['cores']} cores ({cpu}), against
`dynaburst serve --capacity-model off`, both loaders on the same data
(`dynaburst gen people --count {items} --seed 1`) and server, one after the other.

| loader | items | seconds | items/s | client CPU s | CPU s per million items | counted after |
|---|---:|---:|---:|---:|---:|---:|
| boto3 Table.batch_writer | {boto['items']:,} | {boto['seconds']:.2f} | {boto['items_per_s']:,.0f} | {boto['cpu_s']:.2f} | {boto['cpu_s_per_million_items']:,.1f} | {bc:,} |
| dynaburst load | {ours['items']:,} | {ours['seconds']:.2f} | {ours['items_per_s']:,.0f} | {ours['cpu_s']:.2f} | {ours['cpu_s_per_million_items']:,.1f} | {oc:,} |

**Ratio: {ratio:.1f}x** the throughput (goal: 10x or more), **{cpu_ratio:.1f}x** less client CPU per item
(goal: 10x or more; client CPU is user + system of the loader's process, the
server runs beside it on the same cores).

Dump, {segments} segments, both writing DynamoDB JSON lines of the
`dynaburst load` table above:

| dumper | items | seconds | items/s | client CPU s | CPU s per million items | lines |
|---|---:|---:|---:|---:|---:|---:|
| boto3 parallel Scan (threads) | {pyscan['items']:,} | {pyscan['seconds']:.2f} | {pyscan['items_per_s']:,.0f} | {pyscan['cpu_s']:.2f} | {pyscan['cpu_s_per_million_items']:,.1f} | {pyscan_lines:,} |
| dynaburst dump | {dump['items']:,} | {dump['seconds']:.2f} | {dump['items_per_s']:,.0f} | {dump['cpu_s']:.2f} | {dump['cpu_s_per_million_items']:,.1f} | {dump_lines:,} |

**Dump: {dump_ratio:.1f}x** the throughput, **{dump_cpu_ratio:.1f}x** less client CPU per item.
"""
if m1 and m10:
    md += f"""
Peak memory of `dynaburst load` (VmHWM), `dynaburst gen minimal`:

| lines | written | seconds | items/s | peak memory |
|---:|---:|---:|---:|---:|
| 1,000,000 | {m1['written']:,} | {m1['seconds']:.1f} | {m1['items_per_s']:,.0f} | {mb(m1['peak_memory_bytes']):.0f} MB |
| 10,000,000 | {m10['written']:,} | {m10['seconds']:.1f} | {m10['items_per_s']:,.0f} | {mb(m10['peak_memory_bytes']):.0f} MB |

10M/1M peak memory: **{mem_ratio:.2f}** (goal: under 200 MB and within 20%).
"""
else:
    md += "\nPeak memory: not measured in this run (SKIP_MEMORY=1).\n"
open(out + ".md", "w").write(md)
print(md)
PY
