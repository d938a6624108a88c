#!/usr/bin/env bash
# Soak benchmark (not CI): MINUTES (default 30) of mixed load against one
# `dynaburst serve --capacity-model off`: BatchWriteItem and PutItem at the
# same time, each at SHARE (default 0.8) of the rate it reached when both
# ran flat out for 10 s just before. Records the server's RSS every 10 s,
# p50/p99 latency and errors per minute for each kind, and writes
# results/<UTC time>/summary.md.
#
# Each minute is one `dynaburst loadgen --rate R --key-space 20000
# --duration 60 --seed 2` per kind: request k writes the keys of request
# k mod 20,000 (500,000 batch items, 20,000 put items), so the table stops
# growing once they are written and RSS should level off.
# Latency counts from when a request was due (open loop), so a server that
# falls behind shows it. The machine is shared: the summary records the
# load average at the start and the end.
#
#   DYNABURST_BIN=target/release/dynaburst MINUTES=30 bench/soak/run.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
bin=${DYNABURST_BIN:-target/release/dynaburst}
minutes=${MINUTES:-30}
share=${SHARE:-0.8}
connections=${CONNECTIONS:-8}
# Requests whose keys each kind reuses in turn: the table's size.
key_space=${KEY_SPACE:-20000}
out=bench/soak/results/$(date -u +%Y-%m-%dT%H%MZ)
mkdir -p "$out"
[ -x "$bin" ] || { echo "no $bin: cargo build --release -p dynaburst first" >&2; exit 2; }

"$bin" serve --capacity-model off --host 127.0.0.1 --port 0 --seed 1 >"$out/serve.out" 2>"$out/serve.err" &
server=$!
sampler=
cleanup() { [ -n "$sampler" ] && kill "$sampler" 2>/dev/null; kill "$server" 2>/dev/null; wait 2>/dev/null || true; }
trap cleanup EXIT
for _ in $(seq 100); do grep -q "listening on" "$out/serve.out" 2>/dev/null && break; sleep 0.1; done
url=$(sed -n 's/^dynaburst listening on //p' "$out/serve.out")
[ -n "$url" ] || { echo "the server did not start: $(cat "$out/serve.err")" >&2; exit 1; }
echo "soak: $minutes min against $url (pid $server), results in $out"
uptime >"$out/uptime-start"

gen() { # mode table rate-or-empty duration warmup seed result
    local rate=()
    [ -n "$3" ] && rate=(--rate "$3" --key-space "$key_space")
    "$bin" loadgen --endpoint-url "$url" --mode "$1" --table "$2" --connections "$connections" \
        --duration "$4" --warmup "$5" --seed "$6" "${rate[@]}" --json >"$7" 2>>"$out/loadgen.err" || true
}

# The maximum of this mix on this machine now.
gen batch soak_batch "" 10 2 1 "$out/max-batch.json" &
batch=$!
gen put soak_put "" 10 2 1 "$out/max-put.json"
wait "$batch" || true
rate_of() { python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(round(float(sys.argv[2]) * r["requests_per_sec"], 1))' "$1" "$share"; }
batch_rate=$(rate_of "$out/max-batch.json")
put_rate=$(rate_of "$out/max-put.json")
echo "soak: maximum of the mix measured; soaking at batch $batch_rate and put $put_rate requests/s"

# RSS every 10 s.
( echo "seconds,rss_kib"; t0=$(date +%s)
  while kill -0 "$server" 2>/dev/null; do
      echo "$(( $(date +%s) - t0 )),$(awk '/^VmRSS/ {print $2}' /proc/$server/status)"
      sleep 10
  done ) >"$out/rss.csv" &
sampler=$!

for m in $(seq "$minutes"); do
    gen batch soak_batch "$batch_rate" 60 0 2 "$out/minute-$m-batch.json" &
    batch=$!
    gen put soak_put "$put_rate" 60 0 2 "$out/minute-$m-put.json"
    wait "$batch" || true
    echo "soak: minute $m of $minutes done"
done
uptime >"$out/uptime-end"
kill -0 "$server" 2>/dev/null && alive=yes || alive=no

python3 - "$out" "$minutes" "$share" "$alive" <<'PY'
import csv, json, os, sys
out, minutes, share, alive = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
def load(name):
    try:
        return json.load(open(os.path.join(out, name)))
    except (OSError, ValueError):
        return None
mb, mp = load("max-batch.json"), load("max-put.json")
rows, errors = [], 0
for m in range(1, minutes + 1):
    b, p = load(f"minute-{m}-batch.json"), load(f"minute-{m}-put.json")
    cell = lambda r, k: "-" if r is None else r[k]
    lat = lambda r, k: "-" if r is None else r["latency_ms"][k]
    errors += sum((r or {"errors": 1})["errors"] for r in (b, p))
    rows.append(f"| {m} | {cell(b,'requests_per_sec')} | {lat(b,'p50')} | {lat(b,'p99')} | {cell(b,'errors')} "
                f"| {cell(p,'requests_per_sec')} | {lat(p,'p50')} | {lat(p,'p99')} | {cell(p,'errors')} |")
rss = [(int(r["seconds"]), int(r["rss_kib"])) for r in csv.DictReader(open(os.path.join(out, "rss.csv"))) if r["rss_kib"]]
after = [k for s, k in rss if s >= 60]
lines = [
    f"# Soak: {minutes} min of BatchWriteItem and PutItem at {share:.0%} of the mix's maximum",
    "",
    f"Command: `MINUTES={minutes} SHARE={share} bench/soak/run.sh` (dynaburst serve --capacity-model off, "
    "loadgen --rate on an open-loop schedule, --key-space 20000, 8 connections each).",
    f"Load average at the start: `{open(os.path.join(out, 'uptime-start')).read().strip()}`; "
    f"at the end: `{open(os.path.join(out, 'uptime-end')).read().strip()}`.",
    "",
    f"Maximum of the mix (10 s, both flat out): batch {mb and mb['requests_per_sec']} requests/s "
    f"({mb and mb['items_per_sec']} items/s), put {mp and mp['requests_per_sec']} requests/s.",
    "",
    f"- Errors over the soak: **{errors}**; server alive at the end: **{alive}**.",
    f"- RSS after the first minute: min {min(after)/1024:.1f} MiB, max {max(after)/1024:.1f} MiB, "
    f"last {after[-1]/1024:.1f} MiB ({len(after)} samples, every 10 s; all in rss.csv)." if after else "- RSS: no samples",
    "",
    "| minute | batch req/s | batch p50 ms | batch p99 ms | batch errors | put req/s | put p50 ms | put p99 ms | put errors |",
    "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    *rows,
]
open(os.path.join(out, "summary.md"), "w").write("\n".join(lines) + "\n")
print("\n".join(lines[:12]))
PY
