# Shared by the bench scripts (source it after `cd` to the repository root):
# a scratch directory that goes away on exit, and one `dynaburst serve`.
#
#   bench_workdir              sets $work (removed on exit, with the server)
#   bench_serve BIN LOG ARGS.. starts `BIN serve --port 0 ARGS..` logging to
#                              LOG, waits up to 60 s for its listening line,
#                              sets $server_pid and $url
work=""
server_pid=""
bench_cleanup() {
  [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null
  [ -n "$work" ] && rm -rf "$work"
  return 0
}
trap bench_cleanup EXIT

bench_workdir() { work=$(mktemp -d); }

bench_serve() { # bin log args...
  local bin=$1 log=$2
  shift 2
  "$bin" serve --port 0 "$@" > "$log" 2>&1 &
  server_pid=$!
  for _ in $(seq 600); do grep -q "listening on" "$log" 2>/dev/null && break; sleep 0.1; done
  url=$(sed -n 's/^dynaburst listening on //p' "$log")
  [ -n "$url" ] || { echo "dynaburst serve did not start: $(tail -3 "$log")" >&2; exit 1; }
}
