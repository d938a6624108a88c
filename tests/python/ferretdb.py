"""A throw-away FerretDB server for the MongoDB/DocumentDB load-target tests.

FerretDB v1 speaks the MongoDB wire protocol on top of SQLite, so the tests
get a real MongoDB-wire server without mongod (which no registry here ships).
The binary comes from ``DYNABURST_FERRETDB`` or is built once by
``scripts/install-ferretdb`` (cached under ``$DYNABURST_CACHE``, default
``~/.cache/dynaburst``; the path is the last line of the script's stdout).

Usage::

    server = FerretDBServer.start(tmp_dir)   # or: uri, server = start_ferretdb(tmp_dir)
    ...  # pymongo.MongoClient(server.uri)
    server.stop()

Each server gets a fresh state/data directory and free 127.0.0.1 ports, and is
ready (answers ``ping``) when ``start`` returns.

FerretDB v1.24.0 (SQLite handler) quirks seen with pymongo 4.20:
- hello/isMaster: maxBsonObjectSize 16777216, maxMessageSizeBytes 48000000,
  maxWriteBatchSize 100000; buildInfo reports version "7.0.42".
- Decimal128, NaN, MinKey/MaxKey and Code values anywhere in a message make
  the server drop the connection (pymongo: AutoReconnect "connection closed");
  +/-Infinity and arrays directly inside arrays are write errors (code 2).
- Field names starting with '$' or containing '.' (any depth) are write
  errors, code 2, no codeName: 'invalid key: "a.b" (key must not contain '.'
  sign)' / 'invalid key: "$set" (key must not start with '$' sign)'.
- Duplicate _id: writeErrors code 11000 with the right index, errmsg
  "E11000 duplicate key error collection: <db>.<coll>"; unordered inserts
  write the rest.
- An `update` command holds one SQLite connection per statement that matched
  an existing document until the command ends; the pool is 100 per database,
  so >= 100 matching statements in flight on one database (one command, or
  several concurrent ones) deadlock that database for good. The _id index is
  not used for queries either, so each replace/upsert scans the collection.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import threading
import time
from pathlib import Path

from procutil import file_tail, stop_process

REPO_ROOT = Path(__file__).resolve().parents[2]
INSTALL_SCRIPT = REPO_ROOT / "scripts" / "install-ferretdb"
STARTUP_TIMEOUT = 30.0
STOP_TIMEOUT = 5.0
INSTALL_TIMEOUT = 1800.0

_binary_lock = threading.Lock()
_binary_path: str | None = None


def ferretdb_binary() -> str:
    """Path of the ferretdb binary: $DYNABURST_FERRETDB, else whatever
    scripts/install-ferretdb builds or already has in its cache."""
    global _binary_path
    with _binary_lock:
        if _binary_path:
            return _binary_path
        env = os.environ.get("DYNABURST_FERRETDB")
        if env:
            if not os.access(env, os.X_OK):
                raise RuntimeError(f"DYNABURST_FERRETDB={env!r} is not an executable file")
            _binary_path = env
            return env
        try:
            res = subprocess.run(
                [str(INSTALL_SCRIPT)],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                stdin=subprocess.DEVNULL,
                timeout=INSTALL_TIMEOUT,
                check=False,
            )
        except subprocess.TimeoutExpired as err:
            raise RuntimeError(f"{INSTALL_SCRIPT} did not finish within {INSTALL_TIMEOUT:.0f}s") from err
        stderr = res.stderr.decode("utf-8", "replace")
        lines = res.stdout.decode("utf-8", "replace").strip().splitlines()
        if res.returncode != 0 or not lines:
            raise RuntimeError(
                f"{INSTALL_SCRIPT} failed (rc={res.returncode}); set DYNABURST_FERRETDB to a ferretdb "
                f"binary to skip the build. Its stderr ends with:\n{stderr[-3000:]}"
            )
        path = lines[-1].strip()
        if not os.access(path, os.X_OK):
            raise RuntimeError(f"{INSTALL_SCRIPT} printed {path!r}, which is not an executable file")
        _binary_path = path
        return path


def _die_with_parent() -> None:
    """Runs in the child before exec: on Linux, have the kernel SIGTERM
    FerretDB if the test process dies without tearing it down (e.g. killed by
    a timeout), so no server is left behind. Best effort elsewhere."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        PR_SET_PDEATHSIG = 1
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    except Exception:
        pass


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class FerretDBServer:
    """A running FerretDB (SQLite handler) process."""

    def __init__(self, proc: subprocess.Popen, port: int, debug_port: int, state_dir: Path, log_path: Path):
        self.proc = proc
        self.port = port
        self.debug_port = debug_port
        self.state_dir = state_dir
        self.log_path = log_path
        self.uri = f"mongodb://127.0.0.1:{port}/?directConnection=true"

    @classmethod
    def start(cls, tmp_dir, startup_timeout: float = STARTUP_TIMEOUT, extra_args=()) -> "FerretDBServer":
        """Start FerretDB in a fresh directory under tmp_dir and wait until it
        answers ping. Retries with new ports if the chosen ones were taken."""
        binary = ferretdb_binary()
        base = Path(tmp_dir)
        last_error = None
        for attempt in range(3):
            state_dir = base / f"ferretdb-{os.getpid()}-{time.monotonic_ns()}-{attempt}"
            data_dir = state_dir / "data"
            data_dir.mkdir(parents=True)
            port, debug_port = free_port(), free_port()
            while debug_port == port:
                debug_port = free_port()
            log_path = state_dir / "ferretdb.log"
            with open(log_path, "wb") as log:
                proc = subprocess.Popen(
                    [
                        binary,
                        "--handler=sqlite",
                        f"--sqlite-url=file:{data_dir}/",
                        f"--listen-addr=127.0.0.1:{port}",
                        f"--debug-addr=127.0.0.1:{debug_port}",
                        f"--state-dir={state_dir}",
                        "--telemetry=disable",
                        "--log-level=warn",
                        *extra_args,
                    ],
                    stdin=subprocess.DEVNULL,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    preexec_fn=_die_with_parent if os.name == "posix" else None,
                )
            server = cls(proc, port, debug_port, state_dir, log_path)
            try:
                server._wait_ready(startup_timeout)
                return server
            except RuntimeError as err:
                server.stop()
                last_error = err
                if "address already in use" not in server.log_tail().lower():
                    raise
        raise last_error

    def _wait_ready(self, timeout: float) -> None:
        from pymongo import MongoClient
        from pymongo.errors import PyMongoError

        deadline = time.monotonic() + timeout
        last = None
        while True:
            rc = self.proc.poll()
            if rc is not None:
                raise RuntimeError(f"ferretdb exited during start-up (rc={rc}); log tail:\n{self.log_tail()}")
            client = MongoClient(
                self.uri, serverSelectionTimeoutMS=500, connectTimeoutMS=500, socketTimeoutMS=2000
            )
            try:
                client.admin.command("ping")
                return
            except PyMongoError as err:
                last = err
            finally:
                client.close()
            if time.monotonic() > deadline:
                raise RuntimeError(
                    f"ferretdb did not answer ping on {self.uri} within {timeout:.0f}s "
                    f"(last error: {last}); log tail:\n{self.log_tail()}"
                )
            time.sleep(0.1)

    def log_tail(self, limit: int = 4000) -> str:
        return file_tail(self.log_path, limit)

    def stop(self, timeout: float = STOP_TIMEOUT) -> int:
        """SIGTERM, then SIGKILL after `timeout` seconds; returns the exit code."""
        return stop_process(self.proc, timeout)


def start_ferretdb(tmp_dir, **kwargs) -> tuple[str, FerretDBServer]:
    """Start a ready FerretDB under tmp_dir; returns (uri, server). Call
    server.stop() when done."""
    server = FerretDBServer.start(tmp_dir, **kwargs)
    return server.uri, server
