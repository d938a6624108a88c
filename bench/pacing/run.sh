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
#   ONLY='rising|GSI' bench/pacing/run.sh  only the workloads whose names match
#
# Writes bench/pacing/results/<UTC time>.md. Takes about 5 minutes a binary.
set -euo pipefail
cd "$(dirname "$0")/../.."
BIN=${1:-target/release/dynaburst}
BEFORE=${BEFORE:-}
ONLY=${ONLY:-} # a regular expression: run only the workloads whose names match
PY=${PYTHON:-python3}
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; [ -s "$work/proxy.pid" ] && kill "$(cat "$work/proxy.pid")" 2>/dev/null; rm -rf "$work"' EXIT
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
"$BIN" gen people --count 200000 -o "$work/people200k.jsonl" 2>/dev/null
head -n 100000 "$work/people200k.jsonl" >"$work/people.jsonl"
head -n 40000 "$work/people.jsonl" >"$work/people40k.jsonl"
$PY - "$work" <<'PY'
import json, random, sys
d = sys.argv[1]
with open(f"{d}/hot.jsonl", "w") as f:
    for i in range(30000):
        f.write(json.dumps({"pk": "hot", "sk": i, "v": "x" * 200}) + "\n")
rng = random.Random(3)
with open(f"{d}/orders.jsonl", "w") as f:
    for i in range(60000):
        f.write(json.dumps({"id": f"order-{i:06d}", "status": rng.choice(["NEW", "PAID", "SHIPPED"]), "v": "z" * 200}) + "\n")
# 150,000 rows (750 a key): about 45 s at the 3,334 units/s the keys
# allow, so the rate after the first 10 s is judged over 30 s or more.
rows = [{"pk": 1 + k % 200, "sk": k, "v": "y" * 200} for k in range(150000)]
rows.sort(key=lambda r: (r["pk"], r["sk"]))
with open(f"{d}/octets-sorted.jsonl", "w") as f:
    f.writelines(json.dumps(r) + "\n" for r in rows)
random.Random(4).shuffle(rows)
with open(f"{d}/octets-shuffled.jsonl", "w") as f:
    f.writelines(json.dumps(r) + "\n" for r in rows)
PY

# name | input | key | billing | order | the table's limit (units/s) | kind
# kind: plain; rising (the table is created with an on-demand maximum of
# 2,000 write units a second, raised to 4,000 by UpdateTable RISE_AT seconds
# into the load: the rate counts from 10 s after the rise); gsi (the table
# has a GSI keyed on `status`, three values); slow (the loader talks to the
# server through a proxy that holds each answer SLOW_MS, then from RISE_AT
# seconds on 3 x SLOW_MS: with the server's own few milliseconds, the round
# trip doubles or more in the middle of the load).
RISE_AT=15
SLOW_MS=10
workloads=(
  "on-demand, spread keys|people.jsonl|id:S|on-demand|interleave|4000|plain"
  "provisioned 1,000 WCU|people40k.jsonl|id:S|provisioned:1000:1000|interleave|1000|plain"
  "one hot partition key|hot.jsonl|pk:S,sk:N|on-demand|as-is|1000|plain"
  "200 octet keys, sorted (as-is)|octets-sorted.jsonl|pk:N,sk:N|on-demand|as-is|4000|plain"
  "200 octet keys, shuffled|octets-shuffled.jsonl|pk:N,sk:N|on-demand|as-is|4000|plain"
  "on-demand ceiling 2,000 rising to 4,000|people200k.jsonl|id:S|on-demand|interleave|4000|rising"
  "GSI keyed on 3 status values|orders.jsonl|id:S|on-demand|as-is|4000|gsi"
  "round trip doubling mid-load|people.jsonl|id:S|on-demand|interleave|4000|slow"
)

# A DynamoDB call over plain HTTP (the server takes any signature).
ddb() { # operation json
  $PY - "$url" "$1" "$2" <<'PY'
import json, sys, urllib.request
url, op, body = sys.argv[1:4]
req = urllib.request.Request(url, data=body.encode(), headers={
    "Content-Type": "application/x-amz-json-1.0", "X-Amz-Target": f"DynamoDB_20120810.{op}",
    "Authorization": "AWS4-HMAC-SHA256 Credential=x/20260101/us-east-1/dynamodb/aws4_request, SignedHeaders=host, Signature=0"})
urllib.request.urlopen(req).read()
PY
}

# A TCP proxy in front of the server that holds each chunk of an answer
# SLOW_MS (3 x SLOW_MS from RISE_AT seconds after it starts), in order,
# per connection. Prints its port.
start_slow_proxy() {
  $PY - "$port" "$SLOW_MS" "$RISE_AT" >"$work/proxy.port" 2>"$work/proxy.err" <<'PY' &
import asyncio, socket, sys, time
upstream, slow_ms, rise_at = int(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3])
start = None
def delay():
    global start
    start = start or time.monotonic()
    return slow_ms / 1000 * (1 if time.monotonic() - start < rise_at else 3)
async def pipe(reader, writer, hold):
    queue = asyncio.Queue(maxsize=1024)
    async def read():
        while data := await reader.read(65536):
            await queue.put((time.monotonic() + (delay() if hold else 0), data))
        await queue.put(None)
    async def write():
        while (entry := await queue.get()) is not None:
            at, data = entry
            await asyncio.sleep(max(0, at - time.monotonic()))
            writer.write(data)
            await writer.drain()
        writer.close()
    await asyncio.gather(read(), write(), return_exceptions=True)
async def serve(cr, cw):
    sr, sw = await asyncio.open_connection("127.0.0.1", upstream)
    await asyncio.gather(pipe(cr, sw, False), pipe(sr, cw, True), return_exceptions=True)
async def main():
    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    print(server.sockets[0].getsockname()[1], flush=True)
    async with server:
        await server.serve_forever()
asyncio.run(main())
PY
  echo $! >"$work/proxy.pid"
  for _ in $(seq 100); do [ -s "$work/proxy.port" ] && break; sleep 0.1; done
  cat "$work/proxy.port"
}

run_one() { # binary label
  local bin=$1 label=$2 i=0
  for w in "${workloads[@]}"; do
    IFS='|' read -r name input key billing order cap kind <<<"$w"
    [[ -z "$ONLY" || "$name" =~ $ONLY ]] || continue
    i=$((i + 1))
    local table="pace-$label-$i-$RANDOM" target=$url create=(--create-table) proxy="" riser=""
    rm -f "$work/$input.dynaburst-checkpoint" "$work/$input.rejects.jsonl"
    local attrs='{"AttributeName":"id","AttributeType":"S"}' schema='[{"AttributeName":"id","KeyType":"HASH"}]'
    case $kind in
      rising)
        ddb CreateTable "{\"TableName\":\"$table\",\"BillingMode\":\"PAY_PER_REQUEST\",\"AttributeDefinitions\":[$attrs],\"KeySchema\":$schema,\"OnDemandThroughput\":{\"MaxWriteRequestUnits\":2000}}"
        create=()
        ( sleep "$RISE_AT"; ddb UpdateTable "{\"TableName\":\"$table\",\"OnDemandThroughput\":{\"MaxWriteRequestUnits\":4000}}" ) &
        riser=$!
        ;;
      gsi)
        ddb CreateTable "{\"TableName\":\"$table\",\"BillingMode\":\"PAY_PER_REQUEST\",\"AttributeDefinitions\":[$attrs,{\"AttributeName\":\"status\",\"AttributeType\":\"S\"}],\"KeySchema\":$schema,\"GlobalSecondaryIndexes\":[{\"IndexName\":\"by-status\",\"KeySchema\":[{\"AttributeName\":\"status\",\"KeyType\":\"HASH\"}],\"Projection\":{\"ProjectionType\":\"KEYS_ONLY\"}}]}"
        create=()
        ;;
      slow)
        rm -f "$work/proxy.port"
        target=http://127.0.0.1:$(start_slow_proxy)
        # (started in the command substitution's subshell: not a job here)
        proxy=$(cat "$work/proxy.pid")
        ;;
    esac
    "$bin" load "$work/$input" --endpoint-url "$target" --table "$table" "${create[@]}" --key "$key" \
      --billing "$billing" --order "$order" --seed 1 --quiet \
      --report "$work/r.json" --timeline "$work/t.csv" >/dev/null 2>"$work/load.err" || {
      echo "load failed: $name ($label)" >&2; cat "$work/load.err" >&2; exit 1; }
    [ -z "$proxy" ] || { kill "$proxy" 2>/dev/null || true; rm -f "$work/proxy.pid"; }
    [ -z "$riser" ] || wait "$riser" || { echo "UpdateTable failed: $name ($label)" >&2; exit 1; }
    $PY - "$work/r.json" "$work/t.csv" "$name" "$label" "$cap" "$url" "$table" "$kind" "$RISE_AT" >>"$work/rows.md" <<'PY'
import csv, json, sys, urllib.request
report, timeline, name, label, ceiling, url, table, kind, rise_at = sys.argv[1:10]
ceiling = float(ceiling)
# What the key distribution lets the table take: with every partition
# taking its share of the items at once, the busiest one (the largest share
# of the stored bytes, the items being alike) reaches its limit first.
doc = json.load(urllib.request.urlopen(f"{url}/metrics.json"))
def bound(model):
    sizes = [p["size_bytes"] for p in model["partitions"]]
    share = max(sizes) / max(sum(sizes), 1)
    return (model["partition_max"]["write"] / share if share > 0 else ceiling), sizes, share
model = next(t for t in doc["tables"] if t["table"] == table and not t.get("index"))
spread, sizes, share = bound(model)
model_sizes = sizes
cap = min(ceiling, spread)
if kind == "gsi":
    # Every item writes one GSI entry too: the GSI's busiest partition
    # (the status values' entries, alike in size) bounds the load as well.
    index = next(t for t in doc["tables"] if t["table"] == table and t.get("index"))
    index_bound, index_sizes, index_share = bound(index)
    cap = min(cap, index_bound)
    sizes, share = index_sizes, index_share
r = json.load(open(report))
rows = list(csv.DictReader(open(timeline)))
# The rate counts from 10 s in; for a rising ceiling, from 10 s after the rise.
skip = int(float(rise_at)) + 10 if kind == "rising" else 10
steady = rows[skip:-1] or rows
secs = len(steady)
units = sum(float(x["write_units"]) for x in steady) / secs
note = ""
if kind == "gsi":
    # The timeline's units are the table's and the GSI's: count the table's.
    total = r["write_units"]
    table_units = total - sum(r.get("index_write_units", {}).values())
    units = sum(float(x["items_written"]) for x in steady) / secs * table_units / max(r["records"]["written"], 1)
    note = f"partitions and busiest share are the GSI's ({len(index_sizes)} partitions; the table's busiest holds {100*max(model_sizes)/max(sum(model_sizes),1):.1f}%)"
elif kind == "rising":
    before = rows[10:int(float(rise_at))]
    if before:
        b = sum(float(x["write_units"]) for x in before) / len(before)
        note = f"ceiling 2,000 until {float(rise_at):.0f} s: {b:,.0f} units/s from 10 s to the rise ({100*b/2000:.0f}%); rate counted from {skip} s"
elif kind == "slow":
    p99 = [float(x["p99_ms"]) for x in rows if x.get("p99_ms")]
    at = int(float(rise_at))
    early, late = sorted(p99[2:at])[len(p99[2:at]) // 2:][:1], sorted(p99[at + 2:])[len(p99[at + 2:]) // 2:][:1]
    if early and late:
        note = f"median of the per-second p99 round trips: {early[0]:.0f} ms before {at} s, {late[0]:.0f} ms after"
throttled = sum(int(x["throttled_requests"]) + int(x.get("partial_requests", 0) or 0) for x in steady) / secs
written = r["records"]["written"]
resent = r["items_resent"] / max(written, 1)
print(f"| {name} | {label} | {written:,} | {r['duration_s']:.1f} | {units:,.0f} | {cap:,.0f} | {100*units/cap:.0f}% | {ceiling:,.0f} | {len(sizes)} | {100*share:.1f}% "
      f"| {100*resent:.1f}% | {throttled:.2f} | {r['throttle_events']:,} | {r.get('partial_requests', 0):,} | {note} |")
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
  echo "| workload | loader | items | seconds | units/s after 10 s | capacity | share of capacity | table limit | partitions | busiest partition's items | items re-sent | throttled requests/s after 10 s | requests refused | requests partly unprocessed | note |"
  echo "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |"
  sort -t'|' -k2,2 -s "$work/rows.md"
} >"$out"
cat "$out"
echo "written $out"
