#!/usr/bin/env bash
# Memory benchmark (not part of CI): bytes of server RSS per stored item,
# against DynamoDB's own item size.
#
#   bench/memory/run.sh [people|ip-ranges|minimal] [COUNT]
#
# Writes COUNT records of a seed's dataset (`dynaburst gen DATASET --seed
# $SEED`, people by default, 1,000,000 by default), starts `dynaburst serve
# --capacity-model off` on a free port, reads its VmRSS, loads the file with
# `dynaburst load --create-table` (BatchWriteItem of 25), reads VmRSS again
# and asks DescribeTable for ItemCount and TableSizeBytes (the sum of the
# items' DynamoDB sizes). Prints one JSON line: the RSS growth per item and
# its ratio to the mean DynamoDB item size. Server and loader run under
# `nice -n 19`.
#
# Settings (environment): DYNABURST_BIN (default: target/release/dynaburst,
# built if missing), SEED=1, WORK (where the dataset file is kept between
# runs, default /tmp/dynaburst-memory).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
dataset=${1:-people}
count=${2:-1000000}
SEED=${SEED:-1}
WORK=${WORK:-/tmp/dynaburst-memory}
bin=${DYNABURST_BIN:-$repo/target/release/dynaburst}
if [[ ! -x "$bin" ]]; then
    (cd "$repo" && cargo build --release -p dynaburst) >&2
fi

case $dataset in
    people) ext=jsonl key=id:S ;;
    ip-ranges) ext=csv key=netblock:S ;;
    minimal) ext=jsonl key=id:S,sort:S ;;
    *) echo "unknown dataset $dataset (people, ip-ranges, minimal)" >&2; exit 2 ;;
esac
mkdir -p "$WORK"
input="$WORK/$dataset-$SEED-$count.$ext"
[[ -s "$input" ]] || "$bin" gen "$dataset" --count "$count" --seed "$SEED" -o "$input"

port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')
nice -n 19 "$bin" serve --capacity-model off --host 127.0.0.1 --port "$port" >"$WORK/serve.log" 2>&1 &
server=$!
trap 'kill "$server" 2>/dev/null; wait "$server" 2>/dev/null || true' EXIT
for _ in $(seq 1 100); do
    (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
    sleep 0.1
done
rss_kb() { awk '/^VmRSS:/ { print $2 }' "/proc/$server/status"; }
before=$(rss_kb)
rm -f "$input.dynaburst-checkpoint" "$input.rejects.jsonl"
AWS_ACCESS_KEY_ID=x AWS_SECRET_ACCESS_KEY=x nice -n 19 "$bin" load "$input" --table "bench_$dataset" \
    --endpoint-url "http://127.0.0.1:$port" --region us-east-1 --create-table --key "$key" --quiet \
    --report "$WORK/load-report.json" >"$WORK/load.log" 2>&1
sleep 2
after=$(rss_kb)
describe=$(curl -s -X POST "http://127.0.0.1:$port/" -H 'X-Amz-Target: DynamoDB_20120810.DescribeTable' \
    -H 'Content-Type: application/x-amz-json-1.0' \
    -H 'Authorization: AWS4-HMAC-SHA256 Credential=x/20260101/us-east-1/dynamodb/aws4_request, SignedHeaders=host, Signature=0' \
    -d "{\"TableName\": \"bench_$dataset\"}")
version=$("$bin" --version)
python3 - "$dataset" "$SEED" "$before" "$after" "$describe" "$version" <<'PY'
import json, sys
dataset, seed, before, after, describe, version = sys.argv[1:]
t = json.loads(describe)["Table"]
items, size = t["ItemCount"], t["TableSizeBytes"]
grew = (int(after) - int(before)) * 1024
print(json.dumps({
    "dataset": dataset, "seed": int(seed), "items": items, "version": version,
    "rss_before_bytes": int(before) * 1024, "rss_after_bytes": int(after) * 1024,
    "item_size_mean": round(size / items, 1), "rss_per_item": round(grew / items, 1),
    "ratio": round(grew / size, 2),
}))
PY
