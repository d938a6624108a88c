"""`dynaburst load` when the other side misbehaves, against the real binaries.

A small HTTP/1.1 proxy in front of `dynaburst serve` injects the faults:
connections reset at random (after the request reached the server, so the
write may or may not have been applied), a stretch of HTTP 500
InternalServerError answers, and a server killed and restarted on its
--data-dir in the middle of a load. Also a rejects file and a checkpoint
that cannot be written. For each: records read = written + rejected, and
the table holds exactly the input.

Every loop is bounded: the proxy serves until stopped, each load has a
subprocess timeout, and each wait has a deadline.
"""

from __future__ import annotations

import json
import os
import random
import signal
import socket
import subprocess
import threading
import time

import pytest

from conftest import ServerProcess, make_client, retry_throttled, server_binary

RECORDS = 3000
LOAD_TIMEOUT_S = 240
RESET_PROBABILITY = 0.05
ERROR_500_ANSWERS = 40
MAX_HEAD_BYTES = 64 * 1024

INTERNAL_ERROR = json.dumps(
    {"__type": "com.amazonaws.dynamodb.v20120810#InternalServerError", "message": "Internal server error"}
).encode()


def read_message(sock, buf: bytearray):
    """One HTTP/1.1 message (head and Content-Length body) from `sock`;
    None when the peer closed first."""
    while b"\r\n\r\n" not in buf:
        if len(buf) > MAX_HEAD_BYTES:
            return None
        chunk = sock.recv(65536)
        if not chunk:
            return None
        buf += chunk
    head_end = buf.index(b"\r\n\r\n") + 4
    head = bytes(buf[:head_end])
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value.strip())
    while len(buf) < head_end + length:
        chunk = sock.recv(65536)
        if not chunk:
            return None
        buf += chunk
    message = bytes(buf[: head_end + length])
    del buf[: head_end + length]
    return message


def reset(sock):
    """Closes with a TCP reset (SO_LINGER 0), as a broken network does."""
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
    except OSError:
        pass
    sock.close()


class FaultProxy:
    """Forwards each request to the server on its own upstream connection
    and each answer back, unless a fault is due. `upstream_port` may change
    while it runs (a restarted server)."""

    def __init__(self, upstream_port, seed, reset_probability=0.0, error_answers=0, errors_after=0):
        self.upstream_port = upstream_port
        self.errors_after = errors_after
        self.rng = random.Random(seed)
        self.reset_probability = reset_probability
        self.error_answers = error_answers
        self.lock = threading.Lock()
        self.counts = {"requests": 0, "resets": 0, "errors": 0, "upstream_down": 0}
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.listener.settimeout(0.5)
        self.port = self.listener.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._accept, daemon=True)
        self.thread.start()

    def _decide(self):
        with self.lock:
            self.counts["requests"] += 1
            if self.error_answers > 0 and self.counts["requests"] > self.errors_after:
                self.error_answers -= 1
                self.counts["errors"] += 1
                return "error"
            if self.rng.random() < self.reset_probability:
                self.counts["resets"] += 1
                return "reset"
            return "forward"

    def _accept(self):
        while not self.stopping.is_set():
            try:
                client, _ = self.listener.accept()
            except socket.timeout:
                continue
            except OSError:
                return
            threading.Thread(target=self._serve, args=(client,), daemon=True).start()

    def _serve(self, client):
        client.settimeout(60)
        buf = bytearray()
        upstream = None
        up_buf = bytearray()
        try:
            while not self.stopping.is_set():
                request = read_message(client, buf)
                if request is None:
                    break
                action = self._decide()
                if action == "error":
                    client.sendall(
                        b"HTTP/1.1 500 Internal Server Error\r\ncontent-type: application/x-amz-json-1.0\r\n"
                        + f"content-length: {len(INTERNAL_ERROR)}\r\n\r\n".encode()
                        + INTERNAL_ERROR
                    )
                    continue
                if upstream is None:
                    try:
                        upstream = socket.create_connection(("127.0.0.1", self.upstream_port), timeout=60)
                    except OSError:
                        with self.lock:
                            self.counts["upstream_down"] += 1
                        reset(client)
                        return
                upstream.sendall(request)
                if action == "reset":
                    # The request reached the server; its answer never
                    # reaches the client.
                    reset(client)
                    return
                answer = read_message(upstream, up_buf)
                if answer is None:
                    reset(client)
                    return
                client.sendall(answer)
        except OSError:
            reset(client)
            return
        finally:
            if upstream is not None:
                upstream.close()
        client.close()

    def stop(self):
        self.stopping.set()
        self.listener.close()
        self.thread.join(timeout=5)


def write_input(path, n=RECORDS, pad=200):
    expected = {}
    with open(path, "w") as f:
        for i in range(n):
            key, value = f"k{i:05}", f"v{i}-" + "x" * pad
            expected[key] = value
            f.write(json.dumps({"id": key, "v": value}) + "\n")
    return expected


LOAD_ENV = {"AWS_ACCESS_KEY_ID": "x", "AWS_SECRET_ACCESS_KEY": "y", "AWS_REGION": "us-east-1"}


def load_command(url, input_path, table, report, *extra):
    """`dynaburst load` of `input_path` into a table it creates (key id:S)."""
    return [
        server_binary(),
        "load",
        str(input_path),
        "--table",
        table,
        "--endpoint-url",
        url,
        "--quiet",
        "--seed",
        "7",
        "--create-table",
        "--key",
        "id:S",
        "--report",
        str(report),
        *extra,
    ]


def load(url, input_path, table, tmp_path, *extra, timeout=LOAD_TIMEOUT_S):
    report = tmp_path / f"{table}.report.json"
    cmd = load_command(url, input_path, table, report, *extra)
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env={**os.environ, **LOAD_ENV})
    rep = json.loads(report.read_text()) if report.exists() else None
    return done, rep


def table_contents(url, table):
    ddb = make_client(url)
    items = {}
    kwargs = {"TableName": table, "ConsistentRead": True}
    for _ in range(10_000):
        page = retry_throttled(lambda: ddb.scan(**kwargs))
        for item in page["Items"]:
            items[item["id"]["S"]] = item["v"]["S"]
        if "LastEvaluatedKey" not in page:
            break
        kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]
    return items


def assert_complete(done, rep, expected, url, table):
    assert done.returncode == 0, done.stderr
    records = rep["records"]
    assert records["read"] == len(expected)
    assert records["read"] == records["written"] + records["rejected"], records
    assert records["rejected"] == 0, records
    assert table_contents(url, table) == expected


@pytest.fixture
def server_and_input(server, tmp_path):
    return server, write_input(tmp_path / "data.jsonl"), tmp_path / "data.jsonl"


def test_connections_reset_at_random_lose_nothing(server_and_input, tmp_path):
    server, expected, path = server_and_input
    proxy = FaultProxy(server.port, seed=11, reset_probability=RESET_PROBABILITY)
    try:
        done, rep = load(proxy.url, path, "resets", tmp_path)
    finally:
        proxy.stop()
    print(proxy.counts)
    assert proxy.counts["resets"] > 0
    assert_complete(done, rep, expected, server.url, "resets")


@pytest.mark.parametrize(
    "errors_after, answers",
    [
        pytest.param(0, 5, id="at-set-up"),
        pytest.param(20, ERROR_500_ANSWERS, id="mid-load"),
    ],
)
def test_a_stretch_of_500_answers_is_retried_and_loses_nothing(server_and_input, tmp_path, errors_after, answers):
    server, expected, path = server_and_input
    table = f"errors500-{errors_after}"
    proxy = FaultProxy(server.port, seed=12, error_answers=answers, errors_after=errors_after)
    try:
        done, rep = load(proxy.url, path, table, tmp_path)
    finally:
        proxy.stop()
    print(proxy.counts)
    assert proxy.counts["errors"] == answers
    assert_complete(done, rep, expected, server.url, table)


def test_a_server_killed_and_restarted_mid_load_on_its_data_dir_loses_nothing(tmp_path):
    data_dir = tmp_path / "data"
    expected = write_input(tmp_path / "data.jsonl", n=RECORDS, pad=400)
    first = ServerProcess(["--data-dir", str(data_dir)])
    proxy = FaultProxy(first.port, seed=13)
    report = tmp_path / "killed.report.json"
    # Slow enough that the kill lands in the middle.
    cmd = load_command(proxy.url, tmp_path / "data.jsonl", "killed", report, "--billing", "provisioned:3000:400")
    env = {**os.environ, **LOAD_ENV}
    child = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
    second = None
    try:
        # Kill once some of the input is in the table.
        client = make_client(first.url)
        deadline = time.monotonic() + 60
        count = 0
        while time.monotonic() < deadline and child.poll() is None:
            try:
                count = client.scan(TableName="killed", Select="COUNT")["Count"]
            except Exception:
                count = 0
            if count >= RECORDS // 5:
                break
            time.sleep(0.1)
        assert child.poll() is None and count > 0, "the load ended before the kill"
        first.proc.send_signal(signal.SIGKILL)
        first.proc.wait(timeout=30)
        time.sleep(1.0)  # the loader sees the server gone
        second = ServerProcess(["--data-dir", str(data_dir)])
        proxy.upstream_port = second.port
        _, err = child.communicate(timeout=LOAD_TIMEOUT_S)
        assert child.returncode == 0, err
        rep = json.loads(report.read_text())
        records = rep["records"]
        print(records, proxy.counts)
        assert proxy.counts["upstream_down"] > 0, "the kill was seen by the loader"
        assert records["read"] == len(expected)
        assert records["read"] == records["written"] + records["rejected"], records
        assert records["rejected"] == 0
        assert table_contents(second.url, "killed") == expected
    finally:
        if child.poll() is None:
            child.kill()
            child.wait(timeout=30)
        proxy.stop()
        first.stop()
        if second is not None:
            second.stop()


def test_an_unwritable_rejects_file_stops_the_load_with_a_clear_error(server, tmp_path):
    path = tmp_path / "mixed.jsonl"
    good = {}
    with open(path, "w") as f:
        for i in range(200):
            if i == 100:
                f.write("{this is not json\n")
            key = f"k{i:04}"
            good[key] = f"v{i}"
            f.write(json.dumps({"id": key, "v": f"v{i}"}) + "\n")
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("a file where a directory should be")
    done, rep = load(server.url, path, "badrejects", tmp_path, "--rejects", str(blocker / "rejects.jsonl"))
    assert done.returncode not in (0, 2), done.stderr
    assert "rejects" in done.stderr.lower(), done.stderr
    assert str(blocker / "rejects.jsonl") in done.stderr
    # Nothing is reported written that is not in the table.
    in_table = table_contents(server.url, "badrejects") if rep else {}
    if rep is not None:
        written = rep["records"]["written"]
        assert written <= len(in_table)
        assert all(in_table[k] == good[k] for k in in_table)


def test_an_unwritable_checkpoint_stops_the_load_with_a_clear_error(server, tmp_path):
    expected = write_input(tmp_path / "cp.jsonl", n=500)
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("a file where a directory should be")
    checkpoint = blocker / "load.checkpoint"
    done, rep = load(server.url, tmp_path / "cp.jsonl", "badcheckpoint", tmp_path, "--checkpoint", str(checkpoint))
    assert done.returncode not in (0, 2), done.stderr
    assert "checkpoint" in done.stderr.lower(), done.stderr
    assert str(checkpoint) in done.stderr
    if rep is not None:
        in_table = table_contents(server.url, "badcheckpoint")
        assert rep["records"]["written"] <= len(in_table)
        assert all(in_table[k] == expected[k] for k in in_table)
