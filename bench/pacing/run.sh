#!/usr/bin/env bash
# Pacing at capacity, in real time: `dynaburst load` against `dynaburst serve
# --latency-model aws` (seed 003's service times) on the workloads of issue
# 15, each into a new table. For each: the mean write units a second after
# the first 10 s (and the capacity the table offers that load), items sent
# more than once, and requests throttled or answered with items unprocessed
# per second after the first 10 s.
#
#   bench/pacing/run.sh [BIN]            BIN: a dynaburst binary (default
#                                        target/release/dynaburst)
#   BEFORE=path/to/old/dynaburst bench/pacing/run.sh
#                                        also run an older loader (the same
#                                        server) for a before/after table
#
# Writes bench/pacing/results/<UTC time>.md. Takes about 5 minutes a binary.
set -euo pipefail
cd "$(dirname "$0")/../.."
BIN=${1:-target/release/dynaburst}
BEFORE=${BEFORE:-}
PY=${PYTHON:-python3}
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
port=$($PY -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$BIN" serve --port "$port" --latency-model aws >"$work/serve.log" 2>&1 &
for _ in $(seq 100); do
  (echo >/dev/tcp/127.0.0.1/$port) 2>/dev/null && break
  sleep 0.1
done
url=http://127.0.0.1:$port
export AWS_ACCESS_KEY_ID=x AWS_SECRET_ACCESS_KEY=x AWS_REGION=us-east-1

# Inputs: seed 000's people (spread keys), one hot key, seed 004's 200
# first-octet keys sorted and shuffled.
"$BIN" gen people --count 100000 -o "$work/people.jsonl" 2>/dev/null
head -n 40000 "$work/people.jsonl" >"$work/people40k.jsonl"
$PY - "$work" <<'PY'
import json, random, sys
d = sys.argv[1]
with open(f"{d}/hot.jsonl", "w") as f:
    for i in range(30000):
        f.write(json.dumps({"pk": "hot", "sk": i, "v": "x" * 200}) + "\n")
rows = [{"pk": 1 + k % 200, "sk": k, "v": "y" * 200} for k in range(60000)]
rows.sort(key=lambda r: (r["pk"], r["sk"]))
with open(f"{d}/octets-sorted.jsonl", "w") as f:
    f.writelines(json.dumps(r) + "\n" for r in rows)
random.Random(4).shuffle(rows)
with open(f"{d}/octets-shuffled.jsonl", "w") as f:
    f.writelines(json.dumps(r) + "\n" for r in rows)
PY

# name | input | key | billing | order | the table's limit (units/s)
workloads=(
  "on-demand, spread keys|people.jsonl|id:S|on-demand|interleave|4000"
  "provisioned 1,000 WCU|people40k.jsonl|id:S|provisioned:1000:1000|interleave|1000"
  "one hot partition key|hot.jsonl|pk:S,sk:N|on-demand|as-is|1000"
  "200 octet keys, sorted (as-is)|octets-sorted.jsonl|pk:N,sk:N|on-demand|as-is|4000"
  "200 octet keys, shuffled|octets-shuffled.jsonl|pk:N,sk:N|on-demand|as-is|4000"
)

run_one() { # binary label
  local bin=$1 label=$2 i=0
  for w in "${workloads[@]}"; do
    IFS='|' read -r name input key billing order cap <<<"$w"
    i=$((i + 1))
    local table="pace-$label-$i-$RANDOM"
    rm -f "$work/$input.dynaburst-checkpoint" "$work/$input.rejects.jsonl"
    "$bin" load "$work/$input" --endpoint-url "$url" --table "$table" --create-table --key "$key" \
      --billing "$billing" --order "$order" --seed 1 --quiet \
      --report "$work/r.json" --timeline "$work/t.csv" >/dev/null 2>"$work/load.err" || {
      echo "load failed: $name ($label)" >&2; cat "$work/load.err" >&2; exit 1; }
    $PY - "$work/r.json" "$work/t.csv" "$name" "$label" "$cap" "$url" "$table" >>"$work/rows.md" <<'PY'
import csv, json, sys, urllib.request
report, timeline, name, label, ceiling, url, table = sys.argv[1:8]
ceiling = float(ceiling)
# What the key distribution lets the table take: with every partition
# taking its share of the items at once, the busiest one (the largest share
# of the stored bytes, the items being alike) reaches its limit first.
doc = json.load(urllib.request.urlopen(f"{url}/metrics.json"))
model = next(t for t in doc["tables"] if t["table"] == table and not t.get("index"))
sizes = [p["size_bytes"] for p in model["partitions"]]
share = max(sizes) / max(sum(sizes), 1)
spread = model["partition_max"]["write"] / share if share > 0 else ceiling
cap = min(ceiling, spread)
r = json.load(open(report))
rows = list(csv.DictReader(open(timeline)))
steady = rows[10:-1] or rows
secs = len(steady)
units = sum(float(x["write_units"]) for x in steady) / secs
throttled = sum(int(x["throttled_requests"]) + int(x.get("partial_requests", 0) or 0) for x in steady) / secs
written = r["records"]["written"]
resent = r["items_resent"] / max(written, 1)
print(f"| {name} | {label} | {written:,} | {r['duration_s']:.1f} | {units:,.0f} | {cap:,.0f} | {100*units/cap:.0f}% | {ceiling:,.0f} | {len(sizes)} | {100*share:.1f}% "
      f"| {100*resent:.1f}% | {throttled:.2f} | {r['throttle_events']:,} | {r.get('partial_requests', 0):,} |")
PY
  done
}

run_one "$BIN" after
if [ -n "$BEFORE" ]; then run_one "$BEFORE" before; fi

mkdir -p bench/pacing/results
out=bench/pacing/results/$(date -u +%Y-%m-%dT%H%MZ).md
{
  echo "# Pacing at capacity, real time"
  echo
  echo "Command: \`BEFORE=${BEFORE:-} bench/pacing/run.sh $BIN\` on $(nproc) cores; server \`serve --latency-model aws\`;"
  echo "loader and server share the machine. Rate and throttled requests are over the seconds after the first 10"
  echo "(the last, partial second left out); re-sent is over the whole load. Capacity: what the table offers that"
  echo "load, the least of the table's limit (a new on-demand table 4,000 WRU over 4 partitions, or the provisioned"
  echo "WCU) and what the key distribution allows: a partition's 1,000 units/s over the busiest partition's share"
  echo "of the items (its share of the stored bytes at the end, from the server's /metrics.json; the items of a"
  echo "load are alike). For sorted input it is an upper bound: a load reaches it only by writing every partition's"
  echo "keys at once."
  echo
  echo "| workload | loader | items | seconds | units/s after 10 s | capacity | share of capacity | table limit | partitions | busiest partition's items | items re-sent | throttled requests/s after 10 s | requests refused | requests partly unprocessed |"
  echo "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
  sort -t'|' -k2,2 -s "$work/rows.md"
} >"$out"
cat "$out"
echo "written $out"
