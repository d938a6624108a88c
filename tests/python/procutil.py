"""Process helpers shared by the server wrappers of the suite
(conftest.ServerProcess for dynaburst, ferretdb.FerretDBServer)."""

from __future__ import annotations

import signal
import subprocess


def stop_process(proc: subprocess.Popen, timeout: float) -> int:
    """SIGTERM `proc`, then SIGKILL after `timeout` seconds; returns its exit code."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    return proc.returncode


def file_tail(path, limit: int = 4000) -> str:
    """The last `limit` characters of a log file, or "" if it cannot be read."""
    try:
        with open(path, "rb") as f:
            return f.read().decode("utf-8", "replace")[-limit:]
    except OSError:
        return ""
