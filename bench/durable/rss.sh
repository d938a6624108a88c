#!/usr/bin/env bash
# Memory of `serve --data-dir` against the number of items (not part of CI).
# For each N: generate N seed-000 people (`dynaburst gen people`, streamed
# into the loader, so no JSON file takes disk), load them with
# `dynaburst load --create-table` into a fresh server, and record the load
# rate and the server's peak RSS (VmHWM of /proc/PID/status); then time 2,000
# point Queries (boto3, one id each, ids spread over the table) and a full
# parallel Scan (`dynaburst count`, 4 segments), and the peak RSS after them.
# A durable server is also stopped and restarted on its directory: time to
# the listening line, ItemCount, RSS after.
#
# Usage: bench/durable/rss.sh N [N...]      (e.g. 1000000 4000000)
#        SERVERS="durable memory" (default): which servers to measure
#        CACHE_MIB=256: serve --cache-size of the durable server
#        WORK=DIR: where the data directories go (default a mktemp dir)
# Writes bench/durable/results/rss-<date>.json (one object per run) and
# prints a line per run. Run it under `nice -n 19` on a shared machine.
source "$(dirname "$0")/env.sh"
servers=${SERVERS:-"durable memory"}
cache=${CACHE_MIB:-256}
work=${WORK:-$(mktemp -d)}
mkdir -p "$work"
out_dir="$root/bench/durable/results"
mkdir -p "$out_dir"
stamp=$(date -u +%Y-%m-%dT%H%M%SZ)
out="$out_dir/rss-$stamp.json"
server_pid=""
cleanup() { [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT

hwm() { awk '/^VmHWM/ {printf "%.0f\n", $2 * 1024}' "/proc/$1/status"; }
rss() { awk '/^VmRSS/ {printf "%.0f\n", $2 * 1024}' "/proc/$1/status"; }

start() { # log [serve args...]
  local log=$1; shift
  "$bin" serve --port 0 --capacity-model off "$@" > "$log" 2>&1 &
  server_pid=$!
  for _ in $(seq 600); do grep -q listening "$log" && break; sleep 0.1; done
  url=$(sed -n 's/^dynaburst listening on //p' "$log")
}

echo "[" > "$out"
first=1
for n in "$@"; do
  for mode in $servers; do
    dir="$work/data-$mode-$n"
    rm -rf "$dir"
    args=()
    [ "$mode" = durable ] && args=(--data-dir "$dir" --cache-size "$cache")
    start "$work/server.log" "${args[@]}"
    idle=$(rss "$server_pid")
    t0=$(date +%s.%N)
    "$bin" gen people --count "$n" --seed 1 | "$bin" load - --format jsonl --table people \
      --endpoint-url "$url" --create-table --key id:S --quiet --seed 1 \
      --checkpoint "$work/load.ckpt" --report "$work/load.json"
    t1=$(date +%s.%N)
    rm -f "$work/load.ckpt"
    load_hwm=$(hwm "$server_pid")
    reads=$("$python" - "$url" "$bin" <<'PY'
import json, subprocess, sys, time, boto3
url, bin_ = sys.argv[1], sys.argv[2]
c = boto3.client("dynamodb", endpoint_url=url, region_name="us-east-1",
                 aws_access_key_id="x", aws_secret_access_key="y")
# 2,000 ids from a first page of the Scan: spread over the key space.
ids = []
start = None
while len(ids) < 2000:
    kw = {"TableName": "people", "Limit": 1000, "ProjectionExpression": "id"}
    if start:
        kw["ExclusiveStartKey"] = start
    page = c.scan(**kw)
    ids += [i["id"]["S"] for i in page["Items"]]
    start = page.get("LastEvaluatedKey")
    if not start:
        break
t = time.monotonic()
found = 0
for i in ids[:2000]:
    r = c.query(TableName="people", KeyConditionExpression="id = :i",
                ExpressionAttributeValues={":i": {"S": i}})
    found += r["Count"]
q = time.monotonic() - t
t = time.monotonic()
count = int(subprocess.check_output([bin_, "count", "--table", "people", "--endpoint-url", url]).split()[0])
s = time.monotonic() - t
print(json.dumps({"queries": len(ids[:2000]), "query_found": found, "query_s": round(q, 2),
                  "queries_per_s": round(len(ids[:2000]) / q), "scan_items": count, "scan_s": round(s, 2),
                  "scan_items_per_s": round(count / s)}))
PY
)
    read_hwm=$(hwm "$server_pid")
    restart=null
    if [ "$mode" = durable ]; then
      kill -TERM "$server_pid"; wait "$server_pid" || true
      bytes=$(du -sb "$dir" | cut -f1)
      r0=$(date +%s.%N)
      start "$work/server2.log" "${args[@]}"
      r1=$(date +%s.%N)
      restart=$("$python" - "$url" "$server_pid" "$r0" "$r1" "$bytes" <<'PY'
import json, sys, boto3
url, pid, r0, r1, size = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4]), int(sys.argv[5])
c = boto3.client("dynamodb", endpoint_url=url, region_name="us-east-1",
                 aws_access_key_id="x", aws_secret_access_key="y")
t = c.describe_table(TableName="people")["Table"]
rss = next(int(l.split()[1]) * 1024 for l in open(f"/proc/{pid}/status") if l.startswith("VmRSS"))
print(json.dumps({"seconds_to_listen": round(r1 - r0, 2), "item_count": t["ItemCount"],
                  "table_size_bytes": t["TableSizeBytes"], "rss_bytes": rss, "dir_bytes": size}))
PY
)
    fi
    kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; server_pid=""
    rm -rf "$dir"
    line=$(python3 - "$mode" "$n" "$idle" "$load_hwm" "$read_hwm" "$t0" "$t1" "$work/load.json" "$reads" "$restart" "$cache" <<'PY'
import json, sys
mode, n, idle, load_hwm, read_hwm, t0, t1, report, reads, restart, cache = sys.argv[1:]
r = json.load(open(report))
print(json.dumps({"server": mode, "items": int(n), "cache_mib": int(cache) if mode == "durable" else None,
                  "written": r["records"]["written"], "load_s": round(float(t1) - float(t0), 1),
                  "items_per_s": round(int(n) / (float(t1) - float(t0))),
                  "rss_idle_bytes": int(idle), "peak_rss_load_bytes": int(load_hwm),
                  "peak_rss_after_reads_bytes": int(read_hwm), "reads": json.loads(reads),
                  "restart": json.loads(restart)}))
PY
)
    echo "$line"
    [ $first = 1 ] || echo "," >> "$out"
    first=0
    echo "$line" >> "$out"
  done
done
echo "]" >> "$out"
echo "wrote $out"
