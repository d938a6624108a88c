"""Shared fixtures for the dynaburst conformance suite.

The suite talks to the server only over HTTP, with boto3 (and raw HTTP in
test_protocol.py). The expectations encode how real Amazon DynamoDB behaves:
error codes and messages come from the reference notes
(docs/reference/dynamodb-behaviour.md, sections B and C) and from
messages captured against the live service. Where the exact live text is not
known, a test asserts the code plus a stable part of the message and says so
in a comment.

One server is started per session (``dynaburst serve --port 0``); every test
works on its own uniquely named tables, so tests do not interfere.
"""

from __future__ import annotations

import json
import os
import re
import select
import subprocess
import tempfile
import threading
import time
import uuid
from pathlib import Path

import boto3
import pytest
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.config import Config
from botocore.credentials import Credentials
from botocore.exceptions import ClientError

from procutil import file_tail, stop_process

REPO_ROOT = Path(__file__).resolve().parents[2]
REGION = "us-east-1"
ACCESS_KEY = "x"
SECRET_KEY = "y"
LISTENING_RE = re.compile(r"^dynaburst listening on (http://127\.0\.0\.1:(\d+))$")


def server_binary() -> str:
    return os.environ.get("DYNABURST_BIN") or str(REPO_ROOT / "target" / "release" / "dynaburst")


class ServerProcess:
    """A running dynaburst process and the URL it announced."""

    def __init__(self, extra_args=(), startup_timeout=15.0):
        binary = server_binary()
        if not os.path.exists(binary):
            raise RuntimeError(f"dynaburst binary not found at {binary} (set DYNABURST_BIN)")
        self.stderr_file = tempfile.NamedTemporaryFile(prefix="dynaburst-stderr-", suffix=".log", delete=False)
        self.proc = subprocess.Popen(
            [binary, "serve", "--host", "127.0.0.1", "--port", "0", *extra_args],
            stdout=subprocess.PIPE,
            stderr=self.stderr_file,
            stdin=subprocess.DEVNULL,
        )
        self.first_line = self._read_first_line(startup_timeout)
        m = LISTENING_RE.match(self.first_line)
        if not m:
            self.stop()
            raise RuntimeError(f"unexpected first stdout line from dynaburst: {self.first_line!r}")
        self.url = m.group(1)
        self.port = int(m.group(2))
        # Keep draining stdout so the server never blocks on a full pipe.
        self._drain = threading.Thread(target=self._drain_stdout, daemon=True)
        self._drain.start()

    def _read_first_line(self, timeout):
        deadline = time.monotonic() + timeout
        buf = b""
        fd = self.proc.stdout.fileno()
        while b"\n" not in buf:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                self.stop()
                raise RuntimeError(f"dynaburst did not announce its port within {timeout}s; stderr: {self.stderr_text()}")
            ready, _, _ = select.select([fd], [], [], remaining)
            if not ready:
                continue
            chunk = os.read(fd, 1)
            if not chunk:
                raise RuntimeError(
                    f"dynaburst exited before announcing its port (rc={self.proc.poll()}); stderr: {self.stderr_text()}"
                )
            buf += chunk
        return buf.decode("utf-8", "replace").rstrip("\r\n")

    def _drain_stdout(self):
        try:
            while self.proc.stdout.read(65536):
                pass
        except (OSError, ValueError):
            pass

    def stderr_text(self):
        return file_tail(self.stderr_file.name)

    def stop(self, timeout=10.0):
        """SIGTERM the server and return its exit code."""
        return stop_process(self.proc, timeout)


def running(srv):
    """Fixture body for a started server process: yields it, then stops it."""
    yield srv
    srv.stop()


@pytest.fixture(scope="session")
def server(tmp_path_factory):
    """The session's server: in memory, or with DYNABURST_TEST_DATA_DIR=1
    on durable storage (``serve --data-dir`` in a fresh directory), so the
    whole suite can run against either."""
    extra = []
    if os.environ.get("DYNABURST_TEST_DATA_DIR") == "1":
        extra = ["--data-dir", str(tmp_path_factory.mktemp("data-dir"))]
    yield from running(ServerProcess(extra))


@pytest.fixture(scope="session")
def endpoint(server):
    return server.url


# --- MongoDB-wire target (FerretDB) --------------------------------------------
# Started only when a test asks for one of these fixtures; see ferretdb.py.


@pytest.fixture(scope="session")
def ferretdb_server(tmp_path_factory):
    """One FerretDB (SQLite handler) per session, answering ping."""
    from ferretdb import FerretDBServer

    yield from running(FerretDBServer.start(tmp_path_factory.mktemp("ferretdb")))


@pytest.fixture(scope="module")
def mongo_uri(ferretdb_server):
    """mongodb:// URI of the session's FerretDB (directConnection=true)."""
    return ferretdb_server.uri


@pytest.fixture(scope="module")
def mongo_client(mongo_uri):
    from pymongo import MongoClient

    client = MongoClient(mongo_uri, serverSelectionTimeoutMS=10000, socketTimeoutMS=60000)
    yield client
    client.close()


@pytest.fixture
def mongo_db(mongo_client):
    """A uniquely named database, dropped afterwards."""
    name = "t_" + uuid.uuid4().hex[:16]
    yield mongo_client[name]
    try:
        mongo_client.drop_database(name)
    except Exception:
        pass


def client_config(**overrides):
    base = dict(
        region_name=REGION,
        # One attempt only: a retried request would hide server errors.
        retries={"total_max_attempts": 1, "mode": "legacy"},
        connect_timeout=5,
        read_timeout=60,
        max_pool_connections=64,
    )
    base.update(overrides)
    return Config(**base)


def boto_args(endpoint_url, **config_overrides):
    """Keyword arguments for boto3.client / boto3.resource against a dynaburst server."""
    return dict(
        endpoint_url=endpoint_url,
        region_name=REGION,
        aws_access_key_id=ACCESS_KEY,
        aws_secret_access_key=SECRET_KEY,
        config=client_config(**config_overrides),
    )


def make_client(endpoint_url, **config_overrides):
    return boto3.client("dynamodb", **boto_args(endpoint_url, **config_overrides))


@pytest.fixture(scope="session")
def ddb(endpoint):
    """Low-level boto3 DynamoDB client."""
    return make_client(endpoint)


@pytest.fixture(scope="session")
def ddb_raw(endpoint):
    """Client with botocore's client-side parameter validation switched off, so
    requests that violate model constraints reach the server (as they would
    from an SDK that does not validate)."""
    return make_client(endpoint, parameter_validation=False)


@pytest.fixture(scope="session")
def ddb_resource(endpoint):
    return boto3.resource("dynamodb", **boto_args(endpoint))


def unique_name(prefix="t"):
    return f"{prefix}-{uuid.uuid4().hex[:16]}"


def away_from_utc_midnight(margin_s=120.0):
    """Sleeps past 00:00 UTC when it is less than margin_s away, so that a
    test counting a UTC day's events (throughput decreases) stays within
    one day: the server counts them on its clock, which is this one."""
    into_day = time.time() % 86_400
    if into_day > 86_400 - margin_s:
        time.sleep(86_400 - into_day + 1)


def wait_active(client, name, timeout=20.0):
    deadline = time.monotonic() + timeout
    while True:
        desc = client.describe_table(TableName=name)["Table"]
        if desc["TableStatus"] == "ACTIVE":
            return desc
        if time.monotonic() > deadline:
            raise AssertionError(f"table {name} not ACTIVE after {timeout}s: {desc['TableStatus']}")
        time.sleep(0.05)


class TableFactory:
    def __init__(self, client):
        self.client = client
        self.created = []

    def __call__(self, hash_key=("pk", "S"), range_key=None, billing="PAY_PER_REQUEST", rcu=5, wcu=5, name=None, **extra):
        name = name or unique_name()
        attrs = [{"AttributeName": hash_key[0], "AttributeType": hash_key[1]}]
        schema = [{"AttributeName": hash_key[0], "KeyType": "HASH"}]
        if range_key:
            attrs.append({"AttributeName": range_key[0], "AttributeType": range_key[1]})
            schema.append({"AttributeName": range_key[0], "KeyType": "RANGE"})
        kwargs = dict(TableName=name, AttributeDefinitions=attrs, KeySchema=schema, BillingMode=billing)
        if billing == "PROVISIONED":
            kwargs["ProvisionedThroughput"] = {"ReadCapacityUnits": rcu, "WriteCapacityUnits": wcu}
        kwargs.update(extra)
        self.client.create_table(**kwargs)
        self.created.append(name)
        wait_active(self.client, name)
        return name

    def cleanup(self):
        for name in self.created:
            try:
                self.client.delete_table(TableName=name)
            except Exception:
                pass


@pytest.fixture
def make_table(ddb):
    """Factory: make_table(hash_key=("pk","S"), range_key=None, billing=...) -> name."""
    factory = TableFactory(ddb)
    yield factory
    factory.cleanup()


@pytest.fixture
def table(make_table):
    """A fresh on-demand table with a string HASH key named pk."""
    return make_table()


@pytest.fixture
def table_hr(make_table):
    """A fresh on-demand table: pk (S) HASH + sk (S) RANGE."""
    return make_table(range_key=("sk", "S"))


@pytest.fixture
def table_hn(make_table):
    """A fresh on-demand table: pk (S) HASH + sk (N) RANGE."""
    return make_table(range_key=("sk", "N"))


# An item (key pk = "c") with an attribute of every type, for the condition
# tests of test_conditions.py (which adds to it) and test_legacy.py.
EVERY_TYPE_KEY = {"pk": {"S": "c"}}
EVERY_TYPE_ITEM = {
    **EVERY_TYPE_KEY,
    "s": {"S": "hello"},
    "n": {"N": "5"},
    "b": {"B": b"\x01\x02\x03"},
    "t": {"BOOL": True},
    "nul": {"NULL": True},
    "ss": {"SS": ["a", "b"]},
    "ns": {"NS": ["1", "2"]},
    "bs": {"BS": [b"\x01"]},
    "l": {"L": [{"S": "x"}, {"N": "1"}]},
    "m": {"M": {"k": {"S": "v"}}},
}


def expect_error(fn, code, message=None, *, startswith=None, endswith=None, contains=None):
    """Call fn() and require a ClientError with the exact error code and,
    if given, the exact message (or a prefix / suffix / substring of it).
    Returns the ClientError for further checks."""
    try:
        result = fn()
    except ClientError as err:
        got_code = err.response["Error"].get("Code")
        got_msg = err.response["Error"].get("Message")
        assert got_code == code, f"expected error code {code!r}, got {got_code!r} with message {got_msg!r}"
        if message is not None:
            assert got_msg == message, f"error message mismatch for {code}:\n  expected: {message!r}\n  actual:   {got_msg!r}"
        if startswith is not None:
            assert got_msg is not None and got_msg.startswith(startswith), (
                f"error message for {code} should start with {startswith!r}, got {got_msg!r}"
            )
        if endswith is not None:
            assert got_msg is not None and got_msg.endswith(endswith), (
                f"error message for {code} should end with {endswith!r}, got {got_msg!r}"
            )
        if contains is not None:
            assert got_msg is not None and contains in got_msg, (
                f"error message for {code} should contain {contains!r}, got {got_msg!r}"
            )
        return err
    raise AssertionError(f"expected {code} but the call succeeded: {str(result)[:500]}")


def http_status(err):
    return err.response["ResponseMetadata"]["HTTPStatusCode"]


# --- raw HTTP helpers (used by test_protocol.py and a few others) -------------


def signed_headers(url, target, body: bytes, content_type="application/x-amz-json-1.0", extra=None):
    headers = {"X-Amz-Target": target, "Content-Type": content_type}
    if extra:
        headers.update(extra)
    req = AWSRequest(method="POST", url=url, data=body, headers=headers)
    SigV4Auth(Credentials(ACCESS_KEY, SECRET_KEY), "dynamodb", REGION).add_auth(req)
    return dict(req.headers.items())


def raw_post(url, target, payload, *, content_type="application/x-amz-json-1.0", sign=True, session=None):
    """POST a JSON body (dict, or bytes sent verbatim) and return the requests.Response."""
    import requests

    body = payload if isinstance(payload, (bytes, bytearray)) else json.dumps(payload).encode()
    if sign:
        headers = signed_headers(url, target, bytes(body), content_type)
    else:
        headers = {"X-Amz-Target": target, "Content-Type": content_type}
    return (session or requests).post(url, data=body, headers=headers, timeout=60)


def item_size_s(item):
    """Size in bytes of an item whose values are all S (or B given as bytes):
    attribute-name UTF-8 length + value length (reference B1)."""
    total = 0
    for k, v in item.items():
        total += len(k.encode())
        if "S" in v:
            total += len(v["S"].encode())
        elif "B" in v:
            total += len(v["B"])
        else:
            raise ValueError("only S/B supported")
    return total


def padded_item(pk, size, pad_attr="data", **other):
    """A {'pk': S, <other S attrs>, pad_attr: S} item of exactly `size` bytes."""
    item = {"pk": {"S": pk}}
    for k, v in other.items():
        item[k] = {"S": v}
    base = item_size_s(item) + len(pad_attr)
    assert size >= base, "size too small"
    item[pad_attr] = {"S": "x" * (size - base)}
    assert item_size_s(item) == size
    return item


ENVELOPE = "1 validation error detected: "


class Prefix(str):
    """An expected message of which only this stable prefix is asserted, for
    tables of cases that mix exact messages with messages whose live text goes
    on with details (operand values, the offending token, a list whose order
    differs between captures). expect_expr_error treats it as ``startswith``."""


def invalid_expression(kind, message):
    """The full message "Invalid <kind>: <message>" (kind: ConditionExpression,
    UpdateExpression, ...); a Prefix stays a Prefix."""
    full = f"Invalid {kind}: {message}"
    return Prefix(full) if isinstance(message, Prefix) else full


def expect_expr_error(fn, message=None, *, startswith=None):
    """Expression parse/validation errors ("Invalid ConditionExpression: ...").

    Live captures disagree on whether some single-item APIs wrap these in the
    "1 validation error detected: " envelope, so exactly two forms are
    accepted: the bare message and the enveloped one. With ``startswith`` (or
    a ``Prefix`` message) the same applies to the prefix."""
    if isinstance(message, Prefix):
        assert startswith is None, "give either a Prefix message or startswith"
        message, startswith = None, str(message)
    try:
        result = fn()
    except ClientError as err:
        code = err.response["Error"].get("Code")
        msg = err.response["Error"].get("Message") or ""
        assert code == "ValidationException", f"expected ValidationException, got {code!r}: {msg!r}"
        bare = msg[len(ENVELOPE):] if msg.startswith(ENVELOPE) else msg
        if message is not None:
            assert bare == message, f"error message mismatch:\n  expected: {message!r}\n  actual:   {msg!r}"
        if startswith is not None:
            assert bare.startswith(startswith), f"error message should start with {startswith!r}, got {msg!r}"
        return err
    raise AssertionError(f"expected ValidationException but the call succeeded: {str(result)[:500]}")


def batch_put(ddb, table, items, timeout=30.0):
    """Write items with BatchWriteItem, resending UnprocessedItems with
    exponential backoff as AWS advises (reference E6/E18). Large items on one
    partition key can exceed the per-partition write limit (reference A1), so
    a conforming server may legitimately leave some unprocessed."""
    deadline = time.monotonic() + timeout
    for start in range(0, len(items), 25):
        pending = {table: [{"PutRequest": {"Item": i}} for i in items[start : start + 25]]}
        delay = 0.05
        while pending:
            try:
                resp = ddb.batch_write_item(RequestItems=pending)
                pending = resp.get("UnprocessedItems") or {}
            except ClientError as err:
                if err.response["Error"]["Code"] not in ("ThrottlingException", "ProvisionedThroughputExceededException"):
                    raise
            if pending:
                assert time.monotonic() < deadline, "BatchWriteItem kept returning UnprocessedItems"
                time.sleep(delay)
                delay = min(delay * 2, 1.0)


THROTTLE_CODES = ("ThrottlingException", "ProvisionedThroughputExceededException", "RequestLimitExceeded")


def retry_throttled(fn, timeout=30.0):
    """Call fn(), resending after throttling errors with backoff (what SDK
    retries do for these codes, reference E2/E3). Any other error propagates."""
    deadline = time.monotonic() + timeout
    delay = 0.02
    while True:
        try:
            return fn()
        except ClientError as err:
            if err.response["Error"]["Code"] not in THROTTLE_CODES or time.monotonic() > deadline:
                raise
        time.sleep(delay)
        delay = min(delay * 2, 0.5)
