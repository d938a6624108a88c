"""Wire protocol, tested with raw HTTP: auth, serialization, targets, limits, headers, keep-alive."""

from __future__ import annotations

import http.client
import json
import re
import socket
import zlib
from urllib.parse import urlparse

import pytest
import requests

from conftest import LISTENING_RE, ServerProcess, make_client, raw_post, signed_headers, unique_name

DDB_NS = "com.amazonaws.dynamodb.v20120810#"
TARGET = "DynamoDB_20120810."


def body_json(resp):
    return json.loads(resp.content.decode("utf-8"))


def assert_crc(resp):
    assert "x-amz-crc32" in resp.headers, dict(resp.headers)
    assert int(resp.headers["x-amz-crc32"]) == zlib.crc32(resp.content) & 0xFFFFFFFF


def assert_request_id(resp):
    rid = resp.headers.get("x-amzn-RequestId")
    assert rid, dict(resp.headers)
    assert re.fullmatch(r"[A-Za-z0-9-]+", rid), rid


def test_success_has_request_id_and_crc32(endpoint):
    resp = raw_post(endpoint, TARGET + "ListTables", {})
    assert resp.status_code == 200
    assert_request_id(resp)
    assert_crc(resp)
    assert resp.headers["Content-Type"] == "application/x-amz-json-1.0"
    assert isinstance(body_json(resp)["TableNames"], list)


def test_request_ids_are_unique(endpoint):
    ids = {raw_post(endpoint, TARGET + "ListTables", {}).headers["x-amzn-RequestId"] for _ in range(5)}
    assert len(ids) == 5


def test_error_has_request_id_and_crc32(endpoint):
    resp = raw_post(endpoint, TARGET + "DescribeTable", {"TableName": unique_name("missing")})
    assert resp.status_code == 400
    assert_request_id(resp)
    assert_crc(resp)
    assert resp.headers["Content-Type"] == "application/x-amz-json-1.0"


def test_crc32_on_large_body(endpoint, table):
    import requests

    raw_post(endpoint, TARGET + "PutItem", {"TableName": table, "Item": {"pk": {"S": "big"}, "d": {"S": "é" * 150000}}})
    plain = requests.Session()
    plain.headers["Accept-Encoding"] = "identity"
    resp = raw_post(endpoint, TARGET + "GetItem", {"TableName": table, "Key": {"pk": {"S": "big"}}}, session=plain)
    assert resp.status_code == 200
    assert "Content-Encoding" not in resp.headers
    assert_crc(resp)
    assert body_json(resp)["Item"]["d"]["S"] == "é" * 150000


def test_a_client_accepting_gzip_gets_a_large_answer_gzipped_with_the_crc_of_what_was_sent(endpoint, table):
    """DynamoDB gzips a large answer for a client that accepts gzip, and its
    x-amz-crc32 covers the gzipped bytes (ScyllaDB's Alternator suite, run
    against DynamoDB: test_crc.py)."""
    import gzip

    import requests

    raw_post(endpoint, TARGET + "PutItem", {"TableName": table, "Item": {"pk": {"S": "big"}, "d": {"S": "x" * 5000}}})
    session = requests.Session()
    session.headers["Accept-Encoding"] = "gzip"
    body = json.dumps({"TableName": table, "Key": {"pk": {"S": "big"}}}).encode()
    from conftest import signed_headers

    resp = session.post(endpoint, data=body, headers=signed_headers(endpoint, TARGET + "GetItem", body, "application/x-amz-json-1.0"), stream=True)
    resp.raw.decode_content = False
    sent = resp.raw.read()
    assert resp.headers["Content-Encoding"] == "gzip"
    assert sent[:2] == b"\x1f\x8b"
    assert int(resp.headers["x-amz-crc32"]) == zlib.crc32(sent) & 0xFFFFFFFF
    assert json.loads(gzip.decompress(sent))["Item"]["d"]["S"] == "x" * 5000


def test_missing_authorization(endpoint):
    resp = raw_post(endpoint, TARGET + "ListTables", {}, sign=False)
    assert resp.status_code == 400
    body = body_json(resp)
    assert body["__type"] == "com.amazon.coral.service#MissingAuthenticationTokenException"
    assert body["message"] == "Request is missing Authentication Token"
    assert_request_id(resp)


def test_malformed_json(endpoint):
    resp = raw_post(endpoint, TARGET + "ListTables", b'{"Limit": 5,,}')
    assert resp.status_code == 400
    assert body_json(resp)["__type"] == "com.amazon.coral.service#SerializationException"
    assert_crc(resp)


def test_wrong_json_type_is_serialization_error(endpoint):
    # A string where an integer is expected is a deserialization failure.
    resp = raw_post(endpoint, TARGET + "ListTables", {"Limit": "five"})
    assert resp.status_code == 400
    assert body_json(resp)["__type"] == "com.amazon.coral.service#SerializationException"


def test_empty_body_is_serialization_error(endpoint):
    resp = raw_post(endpoint, TARGET + "ListTables", b"")
    assert resp.status_code == 400
    assert body_json(resp)["__type"] == "com.amazon.coral.service#SerializationException"


@pytest.mark.parametrize("target", [TARGET + "NoSuchOperation", "DynamoDB_20990101.ListTables", "ListTables"])
def test_unknown_operation(endpoint, target):
    resp = raw_post(endpoint, target, {})
    assert resp.status_code == 400
    assert body_json(resp)["__type"] == "com.amazon.coral.service#UnknownOperationException"
    assert_request_id(resp)


def test_missing_target_header(endpoint):
    body = b"{}"
    headers = signed_headers(endpoint, TARGET + "ListTables", body)
    del headers["X-Amz-Target"]
    resp = requests.post(endpoint, data=body, headers=headers, timeout=30)
    assert resp.status_code == 400
    assert body_json(resp)["__type"] == "com.amazon.coral.service#UnknownOperationException"


@pytest.mark.parametrize("content_type", ["application/x-amz-json-1.0", "application/x-amz-json-1.1"])
def test_content_types_accepted(endpoint, content_type):
    resp = raw_post(endpoint, TARGET + "ListTables", {"Limit": 1}, content_type=content_type)
    assert resp.status_code == 200
    assert "TableNames" in body_json(resp)


def test_validation_exception_namespace(endpoint, table):
    resp = raw_post(endpoint, TARGET + "GetItem", {"TableName": table, "Key": {"nope": {"S": "a"}}})
    assert resp.status_code == 400
    body = body_json(resp)
    assert body["__type"] == "com.amazon.coral.validate#ValidationException"
    assert body["message"] == "The provided key element does not match the schema"


def test_resource_not_found_namespace(endpoint):
    name = unique_name("missing")
    resp = raw_post(endpoint, TARGET + "DescribeTable", {"TableName": name})
    body = body_json(resp)
    assert body["__type"] == DDB_NS + "ResourceNotFoundException"
    assert body["message"] == f"Requested resource not found: Table: {name} not found"


def test_resource_in_use_namespace(endpoint, table):
    resp = raw_post(
        endpoint,
        TARGET + "CreateTable",
        {
            "TableName": table,
            "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}],
            "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
            "BillingMode": "PAY_PER_REQUEST",
        },
    )
    assert resp.status_code == 400
    body = body_json(resp)
    assert body["__type"] == DDB_NS + "ResourceInUseException"
    assert body["message"] == f"Table already exists: {table}"


def test_conditional_check_failed_namespace(endpoint, table):
    item = {"pk": {"S": "c"}, "v": {"N": "1"}}
    raw_post(endpoint, TARGET + "PutItem", {"TableName": table, "Item": item})
    resp = raw_post(
        endpoint,
        TARGET + "PutItem",
        {
            "TableName": table,
            "Item": item,
            "ConditionExpression": "attribute_not_exists(pk)",
            "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
        },
    )
    assert resp.status_code == 400
    body = body_json(resp)
    assert body["__type"] == DDB_NS + "ConditionalCheckFailedException"
    assert body["message"] == "The conditional request failed"
    assert body["Item"] == item
    assert_crc(resp)


def test_request_over_16mb_is_413(endpoint):
    url = urlparse(endpoint)
    size = 16 * 1024 * 1024 + 1
    head = (
        f"POST / HTTP/1.1\r\nHost: {url.netloc}\r\nContent-Type: application/x-amz-json-1.0\r\n"
        f"X-Amz-Target: {TARGET}ListTables\r\nAuthorization: AWS4-HMAC-SHA256 Credential=x/20240101/us-east-1/dynamodb/aws4_request, "
        f"SignedHeaders=host, Signature=0\r\nX-Amz-Date: 20240101T000000Z\r\nContent-Length: {size}\r\n\r\n"
    ).encode()
    sock = socket.create_connection((url.hostname, url.port), timeout=30)
    try:
        sock.sendall(head)
        chunk = b" " * (1024 * 1024)
        sent = 0
        try:
            while sent < size:
                n = min(len(chunk), size - sent)
                sock.sendall(chunk[:n])
                sent += n
        except (BrokenPipeError, ConnectionResetError):
            pass  # the server may answer and close before reading it all
        data = b""
        try:
            while b"\r\n" not in data:
                part = sock.recv(4096)
                if not part:
                    break
                data += part
        except ConnectionResetError:
            pass
    finally:
        sock.close()
    assert data, "no HTTP response to a body over 16 MB"
    status_line = data.split(b"\r\n", 1)[0].decode()
    assert status_line.split()[1] == "413", status_line


def test_request_just_under_16mb_is_not_413(endpoint, table):
    # A 15 MB body is within the limit: it must be processed (here: an item too large).
    payload = {"TableName": table, "Item": {"pk": {"S": "x"}, "d": {"S": "a" * (15 * 1024 * 1024)}}}
    resp = raw_post(endpoint, TARGET + "PutItem", payload)
    assert resp.status_code == 400
    body = body_json(resp)
    assert body["__type"] == "com.amazon.coral.validate#ValidationException"
    assert body["message"] == "Item size has exceeded the maximum allowed size"


def test_keep_alive_many_requests_one_connection(endpoint):
    url = urlparse(endpoint)
    conn = http.client.HTTPConnection(url.hostname, url.port, timeout=30)
    try:
        first_sock = None
        for i in range(10):
            body = json.dumps({"Limit": 1}).encode()
            headers = signed_headers(endpoint, TARGET + "ListTables", body)
            conn.request("POST", "/", body=body, headers=headers)
            resp = conn.getresponse()
            data = resp.read()
            assert resp.status == 200, data
            assert "TableNames" in json.loads(data)
            assert int(resp.getheader("x-amz-crc32")) == zlib.crc32(data) & 0xFFFFFFFF
            if first_sock is None:
                first_sock = conn.sock
            assert conn.sock is first_sock, f"connection was not kept alive (request {i})"
    finally:
        conn.close()


def test_keep_alive_after_error_response(endpoint):
    url = urlparse(endpoint)
    conn = http.client.HTTPConnection(url.hostname, url.port, timeout=30)
    try:
        for target, status in [(TARGET + "NoSuchOp", 400), (TARGET + "ListTables", 200), (TARGET + "DescribeTable", 400)]:
            body = b"{}"
            conn.request("POST", "/", body=body, headers=signed_headers(endpoint, target, body))
            resp = conn.getresponse()
            resp.read()
            assert resp.status == status
        sock = conn.sock
        body = b"{}"
        conn.request("POST", "/", body=body, headers=signed_headers(endpoint, TARGET + "ListTables", body))
        resp = conn.getresponse()
        resp.read()
        assert resp.status == 200
        assert conn.sock is sock
    finally:
        conn.close()


def test_server_start_announce_and_sigterm():
    srv = ServerProcess()
    try:
        assert LISTENING_RE.match(srv.first_line), srv.first_line
        assert srv.port > 0
        client = make_client(srv.url)
        assert client.list_tables()["TableNames"] == []
    finally:
        rc = srv.stop()
    assert rc == 0, f"dynaburst exited with {rc} after SIGTERM; stderr: {srv.stderr_text()}"
