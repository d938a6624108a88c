# Sourced by the scripts of bench/durable: from the repository root, the
# binary ($bin: DYNABURST_BIN, or the release build) and the Python with
# boto3 ($python: VENV's, the repository's, or the main checkout's venv).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
root=$(pwd)
bin="${DYNABURST_BIN:-$root/target/release/dynaburst}"
python="${VENV:-$root/tests/python/.venv}/bin/python"
[ -x "$python" ] || python="/work/main/tests/python/.venv/bin/python"
