#!/usr/bin/env bash
# Memory and restart time of `serve --data-dir` with a GSI (not part of CI).
# For each N: a fresh durable server (`--capacity-model off --cache-size
# CACHE_MIB`), a `people` table keyed by `id` with a GSI `byName` (`name`,
# `createdAt`, projection ALL) created through boto3, N seed-000 people
# streamed in (`dynaburst gen people --seed 1 | dynaburst load`), the
# server's peak RSS (VmHWM) after the load and after 100 GSI Queries (one
# `name` each, names from the table's first Scan pages); then a clean stop
# (SIGTERM) and restart on the same directory (time to the listening line,
# RSS, DescribeTable's index counts, the same 100 Queries answering the same
# number of items), and a SIGKILL of that server and a restart again.
#
# Usage: bench/durable/gsi.sh N [N...]           (e.g. 1000000)
#        DYNABURST_BIN=...: the binary (default target/release/dynaburst)
#        CACHE_MIB=256, WORK=DIR (default a mktemp dir), LABEL=text
# Writes bench/durable/results/gsi-<date>.json and prints a line per run.
# Run it under `nice -n 19` on a shared machine.
source "$(dirname "$0")/env.sh"
cache=${CACHE_MIB:-256}
label=${LABEL:-}
work=${WORK:-$(mktemp -d)}
mkdir -p "$work"
out_dir="$root/bench/durable/results"
mkdir -p "$out_dir"
out="$out_dir/gsi-$(date -u +%Y-%m-%dT%H%M%SZ).json"
server_pid=""
cleanup() { [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT

hwm() { awk '/^VmHWM/ {printf "%.0f\n", $2 * 1024}' "/proc/$1/status"; }

start() { # log: starts the server on $dir, sets server_pid, url and $started (seconds to listen)
  local log=$1 t0
  t0=$(date +%s.%N)
  "$bin" serve --port 0 --capacity-model off --data-dir "$dir" --cache-size "$cache" > "$log" 2>&1 &
  server_pid=$!
  for _ in $(seq 6000); do grep -q listening "$log" && break; sleep 0.05; done
  started=$(python3 -c "import sys; print(round($(date +%s.%N) - $t0, 2))")
  url=$(sed -n 's/^dynaburst listening on //p' "$log")
}

# probe MODE: MODE=create creates the table; MODE=names picks the names;
# MODE=check queries them and prints the counts (and the server's RSS).
probe() {
  "$python" - "$url" "$1" "$work/names.json" "$server_pid" <<'PY'
import json, sys, boto3
url, mode, names_file, pid = sys.argv[1:]
c = boto3.client("dynamodb", endpoint_url=url, region_name="us-east-1",
                 aws_access_key_id="x", aws_secret_access_key="y")
if mode == "create":
    c.create_table(TableName="people", BillingMode="PAY_PER_REQUEST",
        AttributeDefinitions=[{"AttributeName": a, "AttributeType": "S"} for a in ("id", "name", "createdAt")],
        KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}],
        GlobalSecondaryIndexes=[{"IndexName": "byName",
            "KeySchema": [{"AttributeName": "name", "KeyType": "HASH"}, {"AttributeName": "createdAt", "KeyType": "RANGE"}],
            "Projection": {"ProjectionType": "ALL"}}])
    sys.exit(0)
if mode == "names":
    names, start = set(), None
    while len(names) < 100:
        kw = {"TableName": "people", "Limit": 1000, "ProjectionExpression": "#n", "ExpressionAttributeNames": {"#n": "name"}}
        if start:
            kw["ExclusiveStartKey"] = start
        page = c.scan(**kw)
        names |= {i["name"]["S"] for i in page["Items"]}
        start = page.get("LastEvaluatedKey")
        if not start:
            break
    json.dump(sorted(names)[:100], open(names_file, "w"))
    sys.exit(0)
import time
names = json.load(open(names_file))
t = time.monotonic()
found = 0
for n in names:
    kw = {"TableName": "people", "IndexName": "byName", "KeyConditionExpression": "#n = :n",
          "ExpressionAttributeNames": {"#n": "name"}, "ExpressionAttributeValues": {":n": {"S": n}},
          "Select": "COUNT"}
    while True:
        r = c.query(**kw)
        found += r["Count"]
        if "LastEvaluatedKey" not in r:
            break
        kw["ExclusiveStartKey"] = r["LastEvaluatedKey"]
q = time.monotonic() - t
d = c.describe_table(TableName="people")["Table"]
g = d["GlobalSecondaryIndexes"][0]
rss = next(int(l.split()[1]) * 1024 for l in open(f"/proc/{pid}/status") if l.startswith("VmRSS"))
print(json.dumps({"queries": len(names), "found": found, "query_s": round(q, 2),
                  "item_count": d["ItemCount"], "index_item_count": g["ItemCount"],
                  "index_size_bytes": g["IndexSizeBytes"], "rss_bytes": rss}))
PY
}

echo "[" > "$out"
first=1
for n in "$@"; do
  dir="$work/data-$n"
  rm -rf "$dir"
  start "$work/server.log"
  probe create
  t0=$(date +%s.%N)
  "$bin" gen people --count "$n" --seed 1 | "$bin" load - --format jsonl --table people \
    --endpoint-url "$url" --quiet --seed 1 --checkpoint "$work/load.ckpt" --report "$work/load.json"
  t1=$(date +%s.%N)
  rm -f "$work/load.ckpt"
  load_hwm=$(hwm "$server_pid")
  probe names
  before=$(probe check)
  read_hwm=$(hwm "$server_pid")
  kill -TERM "$server_pid"; wait "$server_pid" || true
  bytes=$(du -sb "$dir" | cut -f1)
  start "$work/server2.log"
  restart_s=$started
  after=$(probe check)
  restart_hwm=$(hwm "$server_pid")
  kill -KILL "$server_pid"; wait "$server_pid" 2>/dev/null || true
  start "$work/server3.log"
  kill_s=$started
  after_kill=$(probe check)
  kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; server_pid=""
  rm -rf "$dir"
  line=$(python3 - "$label" "$n" "$load_hwm" "$read_hwm" "$t0" "$t1" "$before" "$after" "$after_kill" \
    "$restart_s" "$kill_s" "$restart_hwm" "$bytes" "$cache" <<'PY'
import json, sys
label, n, load_hwm, read_hwm, t0, t1, before, after, after_kill, rs, ks, rh, size, cache = sys.argv[1:]
print(json.dumps({"label": label, "items": int(n), "cache_mib": int(cache),
                  "load_s": round(float(t1) - float(t0), 1), "items_per_s": round(int(n) / (float(t1) - float(t0))),
                  "peak_rss_load_bytes": int(load_hwm), "peak_rss_after_queries_bytes": int(read_hwm),
                  "dir_bytes": int(size), "before_stop": json.loads(before),
                  "restart": {"seconds_to_listen": float(rs), "peak_rss_bytes": int(rh), "check": json.loads(after)},
                  "restart_after_kill": {"seconds_to_listen": float(ks), "check": json.loads(after_kill)}}))
PY
)
  echo "$line"
  [ $first = 1 ] || echo "," >> "$out"
  first=0
  echo "$line" >> "$out"
done
echo "]" >> "$out"
echo "wrote $out"
