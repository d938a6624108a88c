#!/usr/bin/env bash
# Parquet vs JSON Lines input (not part of CI): `dynaburst load` of the same
# people (`dynaburst gen people --seed 1`) from JSON Lines and from Parquet
# (converted by crates/parquet's jsonl_to_parquet example: Snappy, row
# groups of 100,000 rows) into one `dynaburst serve --capacity-model off`,
# one after the other: items/s, client CPU seconds (cpu.py: user + system of
# the loader's process; the server shares the machine's cores) and peak
# memory of each. The loads run under `nice -n 19`.
# Results go to bench/loader/results/<date>-parquet.{md,json}.
#
# Usage: bench/loader/parquet.sh [ITEMS (default 1000000)]
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$(pwd)
items=${1:-1000000}
source bench/lib/serve.sh
bench_workdir
out_dir="$root/bench/loader/results"
mkdir -p "$out_dir"
stamp=$(date -u +%Y-%m-%dT%H%M%SZ)-parquet

cargo build --release --locked -p dynaburst >/dev/null
cargo build --release --locked -p dynaburst-parquet --example jsonl_to_parquet >/dev/null
bin="$root/target/release/dynaburst"
convert="$root/target/release/examples/jsonl_to_parquet"

bench_serve "$bin" "$work/server.out" --capacity-model off
echo "server: $url (capacity model off)"

"$bin" gen people --count "$items" --seed 1 --out "$work/people.jsonl"
"$convert" "$work/people.jsonl" "$work/people.parquet"
jsonl_bytes=$(stat -c %s "$work/people.jsonl")
parquet_bytes=$(stat -c %s "$work/people.parquet")

cpu_of() { tail -n 1 "$1" | python3 -c "import json,sys;print(json.load(sys.stdin)['cpu_s'])"; }
run() { # name input
  nice -n 19 python3 bench/loader/cpu.py "$bin" load "$2" --table "$1" --endpoint-url "$url" --create-table \
    --key id:S --quiet --seed 1 --checkpoint "$work/$1.ckpt" --report "$work/$1.json" 2>"$work/$1.cpu"
  python3 - "$work/$1.json" "$(cpu_of "$work/$1.cpu")" <<'PY'
import json, sys
r = json.load(open(sys.argv[1])); cpu = float(sys.argv[2])
w = r["records"]["written"]
print(json.dumps({"items": w, "seconds": r["duration_s"], "items_per_s": r["items_per_s"]["mean"],
                  "cpu_s": cpu, "cpu_s_per_million_items": cpu * 1e6 / max(w, 1),
                  "peak_memory_bytes": r["peak_memory_bytes"]}))
PY
}
echo "dynaburst load, JSON Lines: $items people"
jsonl=$(run people_jsonl "$work/people.jsonl"); echo "  $jsonl"
echo "dynaburst load, Parquet: $items people"
parquet=$(run people_parquet "$work/people.parquet"); echo "  $parquet"
jc=$("$bin" count --table people_jsonl --endpoint-url "$url")
pc=$("$bin" count --table people_parquet --endpoint-url "$url")

python3 - "$out_dir/$stamp" "$items" "$jsonl" "$parquet" "$jc" "$pc" "$jsonl_bytes" "$parquet_bytes" <<'PY'
import json, subprocess, sys
out, items = sys.argv[1], int(sys.argv[2])
jsonl, parquet = json.loads(sys.argv[3]), json.loads(sys.argv[4])
jc, pc, jb, pb = map(int, sys.argv[5:9])
cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
cores = subprocess.check_output(["nproc"]).decode().strip()
doc = {"command": f"bench/loader/parquet.sh {items}", "cpu": cpu, "cores": cores,
       "jsonl": {**jsonl, "file_bytes": jb, "counted_after": jc},
       "parquet": {**parquet, "file_bytes": pb, "counted_after": pc}}
json.dump(doc, open(out + ".json", "w"), indent=2)
mb = lambda b: b / 1e6
rows = "\n".join(
    f"| {name} | {mb(d['file_bytes']):,.0f} MB | {d['items']:,} | {d['seconds']:.1f} | {d['items_per_s']:,.0f} | "
    f"{d['cpu_s']:.1f} | {d['cpu_s_per_million_items']:,.1f} | {mb(d['peak_memory_bytes']):.0f} MB | {d['counted_after']:,} |"
    for name, d in (("JSON Lines", doc["jsonl"]), ("Parquet (Snappy)", doc["parquet"])))
md = f"""# Parquet vs JSON Lines input, {out.rsplit('/', 1)[1]}

Command: `bench/loader/parquet.sh {items}` on {cores} cores ({cpu}): `dynaburst load`
(under `nice -n 19`) of `dynaburst gen people --count {items} --seed 1`, from JSON Lines
and from the same rows in Parquet, into one `dynaburst serve --capacity-model off`
on the same machine, one after the other.

| input | file | items | seconds | items/s | client CPU s | CPU s per million items | peak memory | counted after |
|---|---:|---:|---:|---:|---:|---:|---:|---:|
{rows}
"""
open(out + ".md", "w").write(md)
print(md)
PY
