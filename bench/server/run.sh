#!/usr/bin/env bash
# Server benchmark (not part of CI): batch-write and single-put throughput
# and latency of `dynaburst serve --capacity-model off`, DynamoDB Local and
# dynoxide, one run, side by side, with `dynaburst loadgen` as the client.
# `durable` is dynaburst on durable storage (`serve --data-dir`, a fresh
# directory per run, every write synced before its answer).
#
#   bench/server/run.sh
#
# Installs the peers itself if missing, into a cache outside the repository
# ($BENCH_CACHE, default ${XDG_CACHE_HOME:-$HOME/.cache}/dynaburst-bench):
# DynamoDB Local from Maven Central (needs java and mvn) and dynoxide with
# `cargo install dynoxide-rs`. Builds dynaburst (release), then for each
# server and mode starts a fresh server on a free 127.0.0.1 port, runs the
# load, and stops it. Servers run one at a time. Writes
# bench/server/results/<date>.md and .json.
#
# Settings (environment):
#   SERVERS="dynaburst dynoxide ddblocal"  MODES="batch put"
#     (add `durable` for dynaburst --data-dir: SERVERS="dynaburst durable")
#     (the peers on disk: `ddblocal-disk` is DynamoDB Local with its default
#     on-disk database, -dbPath, not -inMemory; `dynoxide-disk` is dynoxide
#     with its SQLite file, --db-path; a fresh directory per run, as durable)
#     (a mode may name GSIs: batch-gsi2 is batch into a table with 2 GSIs,
#     `dynaburst loadgen --gsis 2`; the baseline build predates indexes and
#     skips such modes)
#   BASELINE_REV=<commit>: also run `baseline`, dynaburst built at that commit
#     (into $BENCH_CACHE/baseline-<sha>), so a change is compared with what
#     it changed in the same run: SERVERS="dynaburst baseline" BASELINE_REV=1fb8027
#   CONNECTIONS=16 BATCH_SIZE=25 ITEM_BYTES=230 DURATION=10 WARMUP=2
#   REPEAT=3 (runs per server and mode, interleaved; the ratios use the median)
#   QUIET_WAIT=180 (seconds each run may wait for the rest of the machine to go idle)
#   WEB_VIEW=1: a headless Chromium holds dynaburst's web view
#     (http://127.0.0.1:PORT/, polling /metrics.json every second) open during
#     each dynaburst run, to measure what the page costs the server
#   DDBL_VERSION=2.6.1 DYNOXIDE_VERSION=3.2.0 BENCH_CACHE=...
#
# Every step is bounded (timeouts) and every server this script started is
# stopped on exit, failure or Ctrl-C.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
invocation="bench/server/run.sh${*:+ $*}"

SERVERS=${SERVERS:-"dynaburst dynoxide ddblocal"}
MODES=${MODES:-"batch put"}
CONNECTIONS=${CONNECTIONS:-16}
BATCH_SIZE=${BATCH_SIZE:-25}
ITEM_BYTES=${ITEM_BYTES:-230}
DURATION=${DURATION:-10}
WARMUP=${WARMUP:-2}
REPEAT=${REPEAT:-3}
DDBL_VERSION=${DDBL_VERSION:-2.6.1}
DYNOXIDE_VERSION=${DYNOXIDE_VERSION:-3.2.0}
BENCH_CACHE=${BENCH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/dynaburst-bench}

# The settings that differ from the defaults are part of the exact command.
BASELINE_REV=${BASELINE_REV:-}
WEB_VIEW=${WEB_VIEW:-}
for var in BASELINE_REV WEB_VIEW SERVERS MODES CONNECTIONS BATCH_SIZE ITEM_BYTES DURATION WARMUP REPEAT DDBL_VERSION DYNOXIDE_VERSION; do
    case "$var=${!var}" in
        "SERVERS=dynaburst dynoxide ddblocal" | "MODES=batch put" | CONNECTIONS=16 | BATCH_SIZE=25 | ITEM_BYTES=230 \
            | DURATION=10 | WARMUP=2 | REPEAT=3 | DDBL_VERSION=2.6.1 | DYNOXIDE_VERSION=3.2.0) ;;
        BASELINE_REV= | WEB_VIEW=) ;;
        *) invocation="$var='${!var}' $invocation" ;;
    esac
done

log() { printf '[bench] %s\n' "$*" >&2; }

work=$(mktemp -d "${TMPDIR:-/tmp}/dynaburst-bench.XXXXXX")
started_pids=()

stop_pid() {
    local pid=$1 i
    kill -0 "$pid" 2>/dev/null || { wait "$pid" 2>/dev/null || true; return 0; }
    kill -TERM "$pid" 2>/dev/null || true
    for i in $(seq 1 100); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    if kill -0 "$pid" 2>/dev/null; then
        log "pid $pid did not stop on SIGTERM in 10 s: SIGKILL"
        kill -KILL "$pid" 2>/dev/null || true
    fi
    wait "$pid" 2>/dev/null || true
}

cleanup() {
    local i
    # Newest first: the load generator before the server it loads.
    for ((i = ${#started_pids[@]} - 1; i >= 0; i--)); do
        stop_pid "${started_pids[i]}"
    done
    rm -rf "$work"
}
trap cleanup EXIT
trap 'log "interrupted"; exit 130' INT TERM HUP

need() { command -v "$1" >/dev/null 2>&1; }

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

# CPU seconds (user + system) a process has used so far.
clk_tck=$(getconf CLK_TCK 2>/dev/null || echo 100)
cpu_secs() {
    local stat
    stat=$(cat "/proc/$1/stat" 2>/dev/null) || { echo ""; return 0; }
    echo "${stat##*) }" | awk -v hz="$clk_tck" '{ printf "%.2f", ($12 + $13) / hz }'
}
# CPU seconds the whole machine has been busy (all CPUs, not idle/iowait).
machine_busy_secs() {
    awk -v hz="$clk_tck" '/^cpu / { printf "%.2f", ($2 + $3 + $4 + $7 + $8 + $9) / hz }' /proc/stat
}
now_secs() { date +%s.%N; }

# Waits (up to QUIET_WAIT seconds) until the rest of the machine is idle:
# under 0.3 cores busy over one second. Other builds on a 2-core machine
# would otherwise decide the numbers.
QUIET_WAIT=${QUIET_WAIT:-180}
wait_quiet() {
    local deadline=$((SECONDS + QUIET_WAIT)) a b
    while :; do
        a=$(machine_busy_secs); sleep 1; b=$(machine_busy_secs)
        if awk -v a="$a" -v b="$b" 'BEGIN { exit !(b - a < 0.3) }'; then
            return 0
        fi
        if ((SECONDS >= deadline)); then
            log "the machine is still busy ($(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.2f", b - a }') cores) after ${QUIET_WAIT} s: running anyway (see the other CPU column)"
            return 0
        fi
    done
}

mkdir -p "$BENCH_CACHE"
declare -A unavailable=()
declare -A version=()

# --- peers -------------------------------------------------------------------

ddbl_dir="$BENCH_CACHE/dynamodb-local-$DDBL_VERSION"
ddbl_lib="$ddbl_dir/lib"
install_ddblocal() {
    [[ -f "$ddbl_lib/DynamoDBLocal-$DDBL_VERSION.jar" ]] && ls "$ddbl_lib"/libsqlite4java-linux-amd64*.so >/dev/null 2>&1 && return 0
    need java || { unavailable[ddblocal]="java is not installed"; return 1; }
    need mvn || { unavailable[ddblocal]="mvn is not installed"; return 1; }
    log "installing DynamoDB Local $DDBL_VERSION from Maven Central into $ddbl_dir"
    local pom="$work/ddbl-pom"
    mkdir -p "$pom"
    cat >"$pom/pom.xml" <<EOF
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>dynaburst.bench</groupId>
  <artifactId>dynamodb-local-fetch</artifactId>
  <version>1</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency>
      <groupId>com.amazonaws</groupId>
      <artifactId>DynamoDBLocal</artifactId>
      <version>$DDBL_VERSION</version>
    </dependency>
  </dependencies>
</project>
EOF
    rm -rf "$ddbl_lib.partial"
    if ! (cd "$pom" && timeout 1200 mvn -q -B dependency:copy-dependencies \
            -DoutputDirectory="$ddbl_lib.partial" -DincludeScope=runtime) >"$work/ddbl-install.log" 2>&1; then
        unavailable[ddblocal]="mvn dependency:copy-dependencies of com.amazonaws:DynamoDBLocal:$DDBL_VERSION failed: $(tail -3 "$work/ddbl-install.log" | tr '\n' ' ')"
        return 1
    fi
    # The sqlite4java native library normally comes as a dependency; fetch
    # it explicitly if it did not.
    if ! ls "$ddbl_lib.partial"/libsqlite4java-linux-amd64*.so >/dev/null 2>&1; then
        local sqlite_version
        sqlite_version=$(ls "$ddbl_lib.partial" | sed -n 's/^sqlite4java-\([0-9.]*\)\.jar$/\1/p' | head -1)
        (cd "$pom" && timeout 600 mvn -q -B dependency:copy \
            -Dartifact="com.almworks.sqlite4java:libsqlite4java-linux-amd64:${sqlite_version:-1.0.392}:so" \
            -DoutputDirectory="$ddbl_lib.partial") >>"$work/ddbl-install.log" 2>&1 || true
    fi
    if ! ls "$ddbl_lib.partial"/libsqlite4java-linux-amd64*.so >/dev/null 2>&1; then
        unavailable[ddblocal]="the sqlite4java native library (libsqlite4java-linux-amd64.so) could not be fetched"
        return 1
    fi
    rm -rf "$ddbl_lib"
    mv "$ddbl_lib.partial" "$ddbl_lib"
}

dynoxide_root="$BENCH_CACHE/dynoxide-$DYNOXIDE_VERSION"
dynoxide_bin="$dynoxide_root/bin/dynoxide"
install_dynoxide() {
    [[ -x "$dynoxide_bin" ]] && return 0
    need cargo || { unavailable[dynoxide]="cargo is not installed"; return 1; }
    log "installing dynoxide-rs $DYNOXIDE_VERSION with cargo install into $dynoxide_root (a few minutes)"
    if ! timeout 2400 cargo install dynoxide-rs --version "$DYNOXIDE_VERSION" --locked --root "$dynoxide_root" \
            >"$work/dynoxide-install.log" 2>&1; then
        log "cargo install --locked failed; retrying without --locked"
        if ! timeout 2400 cargo install dynoxide-rs --version "$DYNOXIDE_VERSION" --root "$dynoxide_root" \
                >>"$work/dynoxide-install.log" 2>&1; then
            unavailable[dynoxide]="cargo install dynoxide-rs $DYNOXIDE_VERSION failed: $(tail -3 "$work/dynoxide-install.log" | tr '\n' ' ')"
            return 1
        fi
    fi
}

baseline_sha=""
baseline_bin=""
install_baseline() {
    [[ -n "$BASELINE_REV" ]] || { unavailable[baseline]="BASELINE_REV is not set (the commit to compare with)"; return 1; }
    baseline_sha=$(cd "$repo" && git rev-parse --short "$BASELINE_REV^{commit}" 2>/dev/null) \
        || { unavailable[baseline]="$BASELINE_REV is not a commit of this repository"; return 1; }
    local dir="$BENCH_CACHE/baseline-$baseline_sha"
    baseline_bin="$dir/target/release/dynaburst"
    [[ -x "$baseline_bin" ]] && return 0
    log "building dynaburst at $baseline_sha into $dir (a release build, several minutes)"
    rm -rf "$dir/src" && mkdir -p "$dir/src"
    (cd "$repo" && git archive "$baseline_sha") | tar -x -C "$dir/src"
    if ! (cd "$dir/src" && CARGO_TARGET_DIR="$dir/target" timeout 3600 cargo build --release --locked -p dynaburst) \
            >"$work/baseline-build.log" 2>&1; then
        unavailable[baseline]="cargo build at $baseline_sha failed: $(tail -3 "$work/baseline-build.log" | tr '\n' ' ')"
        return 1
    fi
}

for server in $SERVERS; do
    case $server in
        dynaburst | durable) ;;
        baseline) install_baseline || log "baseline unavailable: ${unavailable[baseline]}" ;;
        dynoxide) install_dynoxide || log "dynoxide unavailable: ${unavailable[dynoxide]}" ;;
        ddblocal) install_ddblocal || log "DynamoDB Local unavailable: ${unavailable[ddblocal]}" ;;
        dynoxide-disk) install_dynoxide || unavailable[dynoxide-disk]="${unavailable[dynoxide]}" ;;
        ddblocal-disk) install_ddblocal || unavailable[ddblocal-disk]="${unavailable[ddblocal]}" ;;
        *) log "unknown server '$server' (known: dynaburst durable baseline dynoxide ddblocal dynoxide-disk ddblocal-disk)"; exit 2 ;;
    esac
done

# --- dynaburst ---------------------------------------------------------------

log "building dynaburst (cargo build --release -p dynaburst)"
(cd "$repo" && timeout 3600 cargo build --release -p dynaburst) >"$work/build.log" 2>&1 || {
    tail -30 "$work/build.log" >&2
    log "cargo build failed"
    exit 1
}
dynaburst="$repo/target/release/dynaburst"

version[dynaburst]="$(cd "$repo" && git rev-parse --short HEAD 2>/dev/null || echo unknown)$(cd "$repo" && git diff --quiet HEAD 2>/dev/null || echo '+dirty')"
[[ " $SERVERS " == *" durable "* ]] && version[durable]="${version[dynaburst]}"
[[ -z "${unavailable[baseline]:-}" && " $SERVERS " == *" baseline "* ]] \
    && version[baseline]="$baseline_sha"
[[ -z "${unavailable[dynoxide]:-}" && " $SERVERS " == *" dynoxide "* ]] \
    && version[dynoxide]="dynoxide-rs $DYNOXIDE_VERSION ($("$dynoxide_bin" --version 2>/dev/null | head -1))"
[[ -z "${unavailable[ddblocal]:-}" && " $SERVERS " == *" ddblocal "* ]] \
    && version[ddblocal]="DynamoDBLocal $DDBL_VERSION on $(java -version 2>&1 | head -1)"
[[ -z "${unavailable[dynoxide-disk]:-}" && " $SERVERS " == *" dynoxide-disk "* ]] \
    && version[dynoxide-disk]="dynoxide-rs $DYNOXIDE_VERSION ($("$dynoxide_bin" --version 2>/dev/null | head -1))"
[[ -z "${unavailable[ddblocal-disk]:-}" && " $SERVERS " == *" ddblocal-disk "* ]] \
    && version[ddblocal-disk]="DynamoDBLocal $DDBL_VERSION on $(java -version 2>&1 | head -1)"

# --- runs --------------------------------------------------------------------

server_command() { # name port -> the command line that starts the server
    case $1 in
        dynaburst) echo "$dynaburst serve --capacity-model off --host 127.0.0.1 --port $2" ;;
        durable) echo "$dynaburst serve --capacity-model off --host 127.0.0.1 --port $2 --data-dir <fresh directory>" ;;
        baseline) echo "$baseline_bin serve --capacity-model off --host 127.0.0.1 --port $2" ;;
        dynoxide) echo "$dynoxide_bin serve --host 127.0.0.1 --port $2" ;;
        ddblocal) echo "java -Djava.library.path=$ddbl_lib -cp $ddbl_lib/* com.amazonaws.services.dynamodbv2.local.main.ServerRunner -inMemory -sharedDb -port $2" ;;
        dynoxide-disk) echo "$dynoxide_bin serve --host 127.0.0.1 --port $2 --db-path <fresh directory>/dynoxide.db" ;;
        ddblocal-disk) echo "java -Djava.library.path=$ddbl_lib -cp $ddbl_lib/* com.amazonaws.services.dynamodbv2.local.main.ServerRunner -dbPath <fresh directory> -sharedDb -port $2" ;;
    esac
}

start_server() { # name port log -> sets server_pid
    local name=$1 port=$2 out=$3 i
    case $name in
        dynaburst) "$dynaburst" serve --capacity-model off --host 127.0.0.1 --port "$port" >"$out" 2>&1 & ;;
        durable)
            rm -rf "$work/data-dir"
            "$dynaburst" serve --capacity-model off --host 127.0.0.1 --port "$port" --data-dir "$work/data-dir" \
                >"$out" 2>&1 &
            ;;
        baseline) "$baseline_bin" serve --capacity-model off --host 127.0.0.1 --port "$port" >"$out" 2>&1 & ;;
        dynoxide) "$dynoxide_bin" serve --host 127.0.0.1 --port "$port" >"$out" 2>&1 & ;;
        ddblocal) java "-Djava.library.path=$ddbl_lib" -cp "$ddbl_lib/*" \
            com.amazonaws.services.dynamodbv2.local.main.ServerRunner -inMemory -sharedDb -port "$port" >"$out" 2>&1 & ;;
        dynoxide-disk)
            rm -rf "$work/data-dir" && mkdir -p "$work/data-dir"
            "$dynoxide_bin" serve --host 127.0.0.1 --port "$port" --db-path "$work/data-dir/dynoxide.db" >"$out" 2>&1 &
            ;;
        ddblocal-disk)
            rm -rf "$work/data-dir" && mkdir -p "$work/data-dir"
            java "-Djava.library.path=$ddbl_lib" -cp "$ddbl_lib/*" \
                com.amazonaws.services.dynamodbv2.local.main.ServerRunner -dbPath "$work/data-dir" -sharedDb -port "$port" \
                >"$out" 2>&1 &
            ;;
    esac
    server_pid=$!
    started_pids+=("$server_pid")
    for i in $(seq 1 600); do
        kill -0 "$server_pid" 2>/dev/null || { log "$name exited at start-up:"; tail -20 "$out" >&2; return 1; }
        if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
            return 0
        fi
        sleep 0.1
    done
    log "$name did not open port $port in 60 s"
    return 1
}

runs="$work/runs.jsonl"
: >"$runs"
# server mode repetition exit server_cmd loadgen_cmd result_file stderr_file
#   wall_secs server_cpu machine_busy (CPU seconds over the loadgen's lifetime)
record() {
    python3 - "$@" >>"$runs" <<'EOF'
import json, sys
server, mode, rep, code, server_cmd, loadgen_cmd, result_file, stderr_file = sys.argv[1:9]
num = lambda s: float(s) if s else None
wall, server_cpu, busy = (num(a) for a in (sys.argv[9:12] + [""] * 3)[:3])
try:
    result = json.loads(open(result_file).read().strip().splitlines()[-1])
except Exception:
    result = None
loadgen_cpu = (result or {}).get("client_cpu_total_secs")
stderr = open(stderr_file, errors="replace").read().strip()[-2000:] if stderr_file else ""
print(json.dumps({
    "server": server, "mode": mode, "repetition": int(rep), "exit_code": int(code),
    "server_command": server_cmd, "loadgen_command": loadgen_cmd,
    "wall_secs": wall, "server_cpu_secs": server_cpu, "loadgen_cpu_secs": loadgen_cpu,
    "machine_busy_cpu_secs": busy,
    "other_cpu_secs": round(busy - server_cpu - loadgen_cpu, 2) if None not in (busy, server_cpu, loadgen_cpu) else None,
    "result": result, "stderr": stderr,
}))
EOF
}

run_limit=$((DURATION + WARMUP + 180))
for rep in $(seq 1 "$REPEAT"); do
    for server in $SERVERS; do
        if [[ -n "${unavailable[$server]:-}" ]]; then
            continue
        fi
        for mode in $MODES; do
            if [[ "$server" == baseline && "$mode" == *-gsi* ]]; then
                continue
            fi
            wait_quiet
            port=$(free_port)
            out="$work/$server-$mode-$rep.server.log"
            log "$server $mode (run $rep/$REPEAT) on 127.0.0.1:$port"
            if ! start_server "$server" "$port" "$out"; then
                stop_pid "$server_pid"
                : >"$work/empty"
                record "$server" "$mode" "$rep" 99 "$(server_command "$server" "$port")" "" "$work/empty" "$out"
                continue
            fi
            browser_pid=""
            if [[ -n "$WEB_VIEW" && "$server" != dynoxide* && "$server" != ddblocal* ]]; then
                # The page stays open (and polls) for as long as Chromium runs.
                timeout "$run_limit" chromium --headless=new --no-sandbox --disable-gpu --disable-dev-shm-usage \
                    --user-data-dir="$work/chromium" --remote-debugging-port=0 \
                    "http://127.0.0.1:$port/" >"$work/chromium.log" 2>&1 &
                browser_pid=$!
                started_pids+=("$browser_pid")
                sleep 2
            fi
            table="bench_${mode//-/_}"
            request_mode=${mode%%-gsi*}
            gsis=0
            [[ "$mode" == *-gsi* ]] && gsis=${mode##*-gsi}
            loadgen=("$dynaburst" loadgen --endpoint-url "http://127.0.0.1:$port" --mode "$request_mode"
                --connections "$CONNECTIONS" --batch-size "$BATCH_SIZE" --item-bytes "$ITEM_BYTES"
                --duration "$DURATION" --warmup "$WARMUP" --table "$table" --gsis "$gsis" --json)
            cpu_before=$(cpu_secs "$server_pid")
            busy_before=$(machine_busy_secs)
            t_before=$(now_secs)
            code=0
            # In the background so that a signal to this script is handled
            # at once (the trap stops the generator and the server).
            timeout "$run_limit" "${loadgen[@]}" >"$work/result.json" 2>"$work/loadgen.err" &
            loadgen_pid=$!
            started_pids+=("$loadgen_pid")
            wait "$loadgen_pid" || code=$?
            t_after=$(now_secs)
            busy_after=$(machine_busy_secs)
            cpu_after=$(cpu_secs "$server_pid")
            server_cpu=""
            [[ -n "$cpu_before" && -n "$cpu_after" ]] && server_cpu=$(awk -v a="$cpu_before" -v b="$cpu_after" 'BEGIN { printf "%.2f", b - a }')
            wall=$(awk -v a="$t_before" -v b="$t_after" 'BEGIN { printf "%.2f", b - a }')
            busy=$(awk -v a="$busy_before" -v b="$busy_after" 'BEGIN { printf "%.2f", b - a }')
            stop_pid "$server_pid"
            [[ -n "$browser_pid" ]] && stop_pid "$browser_pid"
            [[ $code -eq 0 ]] || { log "loadgen exit $code:"; cat "$work/loadgen.err" >&2; }
            cat "$work/result.json" >&2
            record "$server" "$mode" "$rep" "$code" "$(server_command "$server" "$port")" \
                "dynaburst loadgen --endpoint-url http://127.0.0.1:$port --mode $request_mode --connections $CONNECTIONS --batch-size $BATCH_SIZE --item-bytes $ITEM_BYTES --duration $DURATION --warmup $WARMUP --table $table --gsis $gsis --json" \
                "$work/result.json" "$work/loadgen.err" "$wall" "$server_cpu" "$busy"
        done
    done
done

# --- report ------------------------------------------------------------------

mkdir -p "$here/results"
stamp=$(date -u +%Y-%m-%dT%H%MZ)
unavailable_json=$(for k in "${!unavailable[@]}"; do printf '%s\t%s\n' "$k" "${unavailable[$k]}"; done)
versions_json=$(for k in "${!version[@]}"; do printf '%s\t%s\n' "$k" "${version[$k]}"; done)
export invocation stamp CONNECTIONS BATCH_SIZE ITEM_BYTES DURATION WARMUP REPEAT unavailable_json versions_json
python3 - "$runs" "$here/results/$stamp" <<'EOF'
import json, os, platform, statistics, subprocess, sys

runs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
base = sys.argv[2]
env = os.environ
def pairs(text):
    return dict(l.split("\t", 1) for l in text.splitlines() if "\t" in l)
unavailable, versions = pairs(env["unavailable_json"]), pairs(env["versions_json"])
model = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), platform.processor())
mem_gb = next((round(int(l.split()[1]) / 1048576, 1) for l in open("/proc/meminfo") if l.startswith("MemTotal")), None)
rustc = subprocess.run(["rustc", "--version"], capture_output=True, text=True).stdout.strip()
machine = {"nproc": os.cpu_count(), "model_name": model, "memory_gb": mem_gb,
           "kernel": platform.release(), "rustc": rustc}
names = {"dynaburst": "dynaburst (--capacity-model off)", "durable": "dynaburst --data-dir (durable, --capacity-model off)", "dynoxide": "dynoxide", "ddblocal": "DynamoDB Local",
         "dynoxide-disk": "dynoxide --db-path (SQLite file)", "ddblocal-disk": "DynamoDB Local -dbPath (on disk)",
         "baseline": f"dynaburst at {versions.get('baseline', 'baseline')} (--capacity-model off)"}
duration = float(env["DURATION"])

DISTURBED_CORES = 0.25

def good(r):
    return r["result"] is not None and r["result"].get("ok") and r["exit_code"] == 0

def disturbed(r):
    other, wall = r.get("other_cpu_secs"), r.get("wall_secs")
    return other is not None and bool(wall) and other / wall > DISTURBED_CORES

def median_items(server, mode):
    ok = [r for r in runs if r["server"] == server and r["mode"] == mode and good(r)]
    quiet = [r for r in ok if not disturbed(r)]
    xs = [r["result"]["items_per_sec"] for r in (quiet or ok)]
    return statistics.median(xs) if xs else None

modes = list(dict.fromkeys(r["mode"] for r in runs))
servers = list(dict.fromkeys(r["server"] for r in runs))
ratios = {}
for mode in modes:
    ours = median_items("dynaburst", mode)
    for peer in ("baseline", "dynoxide", "ddblocal"):
        theirs = median_items(peer, mode)
        if ours and theirs:
            ratios[f"{mode}: dynaburst/{peer}"] = round(ours / theirs, 2)
    durable = median_items("durable", mode)
    if ours and durable:
        ratios[f"{mode}: durable/dynaburst"] = round(durable / ours, 2)
goals = {}
if "batch: durable/dynaburst" in ratios:
    goals["durable batch >= 0.5x in-memory"] = ratios["batch: durable/dynaburst"] >= 0.5
if "batch: dynaburst/dynoxide" in ratios:
    goals["batch >= 3x dynoxide"] = ratios["batch: dynaburst/dynoxide"] >= 3.0
if "put: dynaburst/dynoxide" in ratios:
    goals["put > dynoxide"] = ratios["put: dynaburst/dynoxide"] > 1.0

settings = {k.lower(): int(env[k]) for k in ("CONNECTIONS", "BATCH_SIZE", "ITEM_BYTES", "DURATION", "WARMUP", "REPEAT")}
doc = {"date": env["stamp"], "command": env["invocation"], "machine": machine, "settings": settings,
       "versions": versions, "unavailable": unavailable, "ratios_items_per_sec": ratios, "goals": goals, "runs": runs}
with open(base + ".json", "w") as f:
    json.dump(doc, f, indent=2)
    f.write("\n")

out = []
w = out.append
w(f"# Server benchmark {env['stamp']}\n")
w(f"Command (from the repository root): `{env['invocation']}`\n")
w(f"Machine: {machine['nproc']} CPUs, {model}, {mem_gb} GB, Linux {machine['kernel']}; {rustc}.\n")
w(f"Load: `dynaburst loadgen`, closed loop, {settings['connections']} keep-alive connections, one request in flight on each; "
  f"batch = BatchWriteItem of {settings['batch_size']} items, put = PutItem; items of {settings['item_bytes']} bytes "
  f"(DynamoDB size); {settings['warmup']} s warm-up then {settings['duration']} s measured; a fresh server process per run, "
  "one server at a time, the generator on the same machine (one thread).\n")
w("Versions: " + "; ".join(f"{names.get(k, k)}: {v}" for k, v in sorted(versions.items())) + "\n")
for k, v in unavailable.items():
    w(f"**{names.get(k, k)} not run:** {v}\n")
w("| Server | Mode | Run | items/s | requests/s | p50 ms | p90 ms | p99 ms | max ms | errors | server CPU | loadgen CPU | other CPU |")
w("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
for mode in modes:
    for server in servers:
        for r in [r for r in runs if r["server"] == server and r["mode"] == mode]:
            res = r["result"]
            if res is None:
                why = (r["stderr"].splitlines() or ["no result"])[-1][:120].replace("|", "/")
                w(f"| {names.get(server, server)} | {mode} | {r['repetition']} | failed: {why} | | | | | | | | | |")
                continue
            lat = res["latency_ms"]
            wall = r.get("wall_secs") or (res["duration_secs"] + res["warmup_secs"])
            cores = lambda k: "" if r.get(k) is None else f"{r[k] / wall:.2f}"
            scpu, ccpu, ocpu = cores("server_cpu_secs"), cores("loadgen_cpu_secs"), cores("other_cpu_secs")
            errs = str(res["errors"]) + ("" if good(r) else " (INVALID)")
            if disturbed(r):
                ocpu += " (disturbed)"
            w(f"| {names.get(server, server)} | {mode} | {r['repetition']} | {res['items_per_sec']:,.0f} | {res['requests_per_sec']:,.0f} | "
              f"{lat['p50']:.2f} | {lat['p90']:.2f} | {lat['p99']:.2f} | {lat['max']:.2f} | {errs} | {scpu} | {ccpu} | {ocpu} |")
w("")
w("CPU columns are in cores, averaged over the load generator's whole life (table creation, warm-up, measurement): "
  "the server process's user+system time, the generator's, and everything else on the machine (busy time from "
  f"/proc/stat minus both). The machine has {machine['nproc']} cores in all. A run with other CPU above "
  f"{DISTURBED_CORES} cores competed with unrelated work (marked *disturbed*); the medians leave such runs out "
  "when the same server and mode has undisturbed ones.\n")
if ratios:
    w("Ratios of items/s (medians of undisturbed runs):\n")
    peers = [p for p in ("baseline", "dynoxide", "ddblocal") if any(f"{m}: dynaburst/{p}" in ratios for m in modes)]
    if peers:
        w("| Mode | " + " | ".join(f"dynaburst / {names[p]}" for p in peers) + " |")
        w("|---|" + "---:|" * len(peers))
        for mode in modes:
            cells = [ratios.get(f"{mode}: dynaburst/{p}") for p in peers]
            w(f"| {mode} | " + " | ".join("" if c is None else f"{c:.2f}x" for c in cells) + " |")
        w("")
    durable_modes = [m for m in modes if f"{m}: durable/dynaburst" in ratios]
    if durable_modes:
        w("| Mode | durable (--data-dir) / in-memory |")
        w("|---|---:|")
        for mode in durable_modes:
            w(f"| {mode} | {ratios[f'{mode}: durable/dynaburst']:.2f}x |")
        w("")
if goals:
    w("Goals: " + "; ".join(f"{k}: {'met' if v else 'NOT met'}" for k, v in goals.items()) + ".\n")
w("Server commands (ports vary per run):\n")
seen = set()
for r in runs:
    if r["server"] not in seen and r["server_command"]:
        seen.add(r["server"])
        w(f"- {names.get(r['server'], r['server'])}: `{r['server_command']}`")
w("")
w("Load command per run (port varies): `" + (runs[0]["loadgen_command"] if runs else "") + "` and the same with `--mode put`.")
with open(base + ".md", "w") as f:
    f.write("\n".join(out) + "\n")
print(base + ".md")
print(base + ".json")
EOF
log "done"
