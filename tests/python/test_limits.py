"""Limits a shared server needs: a connection limit, header and body read
timeouts. A slow or greedy client cannot hold the server; what is over a
limit is answered as DynamoDB answers overload (HTTP 503, which SDKs
retry) or closed, never left hanging.

Every loop here is bounded by a count of sockets and a socket timeout.
"""

from __future__ import annotations

import json
import socket
import time

import pytest

from conftest import ServerProcess, make_client, running

MAX_CONNECTIONS = 8
HEADER_TIMEOUT_S = 1
BODY_TIMEOUT_S = 1
# How long a test waits for the server to act on a 1 s limit before it
# calls the server hung; generous for a loaded two-core machine.
PATIENCE_S = 20


@pytest.fixture(scope="module")
def limited():
    yield from running(
        ServerProcess(
            [
                "--max-connections",
                str(MAX_CONNECTIONS),
                "--header-timeout",
                str(HEADER_TIMEOUT_S),
                "--body-timeout",
                str(BODY_TIMEOUT_S),
            ]
        )
    )


def connect(server):
    s = socket.create_connection(("127.0.0.1", server.port), timeout=PATIENCE_S)
    s.settimeout(PATIENCE_S)
    return s


def read_until_closed(s, limit=1 << 20):
    """Everything the server sends until it closes the connection."""
    out = b""
    while len(out) < limit:
        chunk = s.recv(65536)
        if not chunk:
            break
        out += chunk
    return out


def partial_request(s):
    """Starts a request and never finishes its headers (slowloris)."""
    s.sendall(b"POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Amz-Target: DynamoDB_20120810.ListTables\r\n")


def test_help_shows_the_limits_and_their_defaults():
    import subprocess

    from conftest import server_binary

    out = subprocess.run([server_binary(), "serve", "--help"], capture_output=True, text=True, timeout=30).stdout
    for flag, default in [("--max-connections", "4096"), ("--header-timeout", "30"), ("--body-timeout", "60")]:
        assert flag in out
        assert f"[default: {default}]" in out.split(flag, 1)[1].split("--", 1)[0]


def test_a_connection_over_the_limit_gets_503_service_unavailable(limited):
    held = [connect(limited) for _ in range(MAX_CONNECTIONS)]
    try:
        for s in held:
            partial_request(s)
        time.sleep(0.2)  # let the server accept them all
        extra = connect(limited)
        extra.sendall(b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}")
        answer = read_until_closed(extra)
        extra.close()
        head, _, body = answer.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 503 "), answer[:200]
        error = json.loads(body)
        assert error["__type"] == "com.amazon.coral.service#ServiceUnavailableException"
        assert f"maximum of {MAX_CONNECTIONS} connections" in error["message"]
    finally:
        for s in held:
            s.close()


def test_slow_clients_are_closed_after_the_header_timeout_and_the_server_serves_again(limited):
    # Slowloris with a bounded number of sockets: every connection the
    # server allows, each dribbling a header line now and then.
    held = [connect(limited) for _ in range(MAX_CONNECTIONS)]
    try:
        for s in held:
            partial_request(s)
        closed = 0
        for s in held:
            try:
                for _ in range(PATIENCE_S * 4):
                    s.sendall(b"X-Slow: 1\r\n")
                    time.sleep(0.25)
            except (BrokenPipeError, ConnectionResetError):
                closed += 1
                continue
        assert closed == MAX_CONNECTIONS
    finally:
        for s in held:
            s.close()
    # Their places are free again: a real client is served.
    ddb = make_client(limited.url)
    assert "TableNames" in ddb.list_tables()


def test_an_idle_connection_is_closed_after_the_header_timeout(limited):
    s = connect(limited)
    try:
        assert read_until_closed(s) == b""
    finally:
        s.close()


def test_a_body_that_does_not_arrive_gets_408_request_timeout(limited):
    s = connect(limited)
    try:
        s.sendall(
            b"POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Amz-Target: DynamoDB_20120810.ListTables\r\n"
            b"Content-Type: application/x-amz-json-1.0\r\n"
            b"Authorization: AWS4-HMAC-SHA256 Credential=x/20260101/us-east-1/dynamodb/aws4_request, "
            b"SignedHeaders=host, Signature=0\r\nContent-Length: 100\r\n\r\n{\"Li"
        )
        answer = read_until_closed(s)
    finally:
        s.close()
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 408 "), answer[:200]
    error = json.loads(body[: int(head.lower().split(b"content-length: ")[1].split(b"\r\n")[0])])
    assert error["__type"] == "com.amazon.coral.service#RequestTimeoutException"
    assert "serve --body-timeout" in error["message"]


def test_a_write_past_max_memory_is_refused_with_a_clear_error_and_deletes_make_room():
    from conftest import expect_error, http_status

    with_budget = ServerProcess(["--max-memory", "1"])  # MiB
    try:
        ddb = make_client(with_budget.url)
        ddb.create_table(
            TableName="budget",
            KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
            AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
            BillingMode="PAY_PER_REQUEST",
        )
        big = "x" * 350_000  # three of these pass 1 MiB
        for pk in ["a", "b"]:
            ddb.put_item(TableName="budget", Item={"pk": {"S": pk}, "v": {"S": big}})
        err = expect_error(
            lambda: ddb.put_item(TableName="budget", Item={"pk": {"S": "c"}, "v": {"S": big}}),
            "LimitExceededException",
            contains="(serve --max-memory)",
        )
        assert "--data-dir" in err.response["Error"]["Message"]
        assert http_status(err) == 400
        assert "Item" not in ddb.get_item(TableName="budget", Key={"pk": {"S": "c"}})
        # The server is alive and reads go on; a delete makes room.
        ddb.delete_item(TableName="budget", Key={"pk": {"S": "a"}})
        ddb.put_item(TableName="budget", Item={"pk": {"S": "c"}, "v": {"S": big}})
        assert ddb.scan(TableName="budget", Select="COUNT")["Count"] == 2
    finally:
        with_budget.stop()
