"""`serve --credentials FILE`: every request's SigV4 signature is verified.

Messages and namespaces are DynamoDB's (dynamodb-behaviour.md C10,
dynamodb-api-surface.md S82; the skew messages as real DynamoDB answers
quoted in public SDK issues: "Signature expired: 20140218T073406Z is now
earlier than 20140218T141758Z (20140218T143258Z - 15 min.)").
"""

from __future__ import annotations

import datetime
import json
import os
import re
import subprocess

import boto3
import botocore.auth
import pytest
import requests
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

from conftest import (
    REGION,
    ServerProcess,
    client_config,
    expect_error,
    http_status,
    running,
    server_binary,
    unique_name,
)

KEYS = {"default": ("AKIDDEFAULT0000001", "secret-one"), "ci": ("AKIDCI000000000002", "secret/two+three")}
UNKNOWN_KEY = "The security token included in the request is invalid."
BAD_SIGNATURE = (
    "The request signature we calculated does not match the signature you provided. "
    "Check your AWS Secret Access Key and signing method. Consult the service documentation for details."
)
NS = "com.amazon.coral.service#"
AMZ_DATE = r"\d{8}T\d{6}Z"


@pytest.fixture(scope="module")
def signed_server(tmp_path_factory):
    path = tmp_path_factory.mktemp("creds") / "credentials"
    lines = ["# two profiles, both accepted"]
    for profile, (key, secret) in KEYS.items():
        lines += [f"[{profile}]", f"aws_access_key_id = {key}", f"aws_secret_access_key = {secret}", "region = us-east-1", ""]
    path.write_text("\n".join(lines))
    yield from running(ServerProcess(["--credentials", str(path)]))


def client(url, key, secret):
    return boto3.client(
        "dynamodb",
        endpoint_url=url,
        region_name=REGION,
        aws_access_key_id=key,
        aws_secret_access_key=secret,
        config=client_config(),
    )


def signed(url, key, secret, target, body: bytes, sent_body: bytes | None = None, extra=None):
    """POST `sent_body` (default: `body`) signed over `body`."""
    headers = {"X-Amz-Target": target, "Content-Type": "application/x-amz-json-1.0", **(extra or {})}
    req = AWSRequest(method="POST", url=url, data=body, headers=headers)
    SigV4Auth(Credentials(key, secret), "dynamodb", REGION).add_auth(req)
    return requests.post(url, data=sent_body if sent_body is not None else body, headers=dict(req.headers.items()), timeout=30)


@pytest.mark.parametrize("profile", list(KEYS))
def test_every_profiles_key_pair_is_accepted(signed_server, profile):
    ddb = client(signed_server.url, *KEYS[profile])
    name = unique_name("sig")
    ddb.create_table(
        TableName=name,
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
    )
    ddb.put_item(TableName=name, Item={"pk": {"S": "a"}, "v": {"S": "é ünïcode"}})
    got = ddb.get_item(TableName=name, Key={"pk": {"S": "a"}}, ConsistentRead=True)
    assert got["Item"]["v"] == {"S": "é ünïcode"}
    ddb.delete_table(TableName=name)


def test_an_unknown_access_key_is_an_unrecognized_client(signed_server):
    ddb = client(signed_server.url, "AKIDNOTINTHEFILE0000", "secret-one")
    err = expect_error(ddb.list_tables, "UnrecognizedClientException", UNKNOWN_KEY)
    assert http_status(err) == 400


def test_a_wrong_secret_is_an_invalid_signature(signed_server):
    ddb = client(signed_server.url, KEYS["default"][0], "not-the-secret")
    err = expect_error(ddb.list_tables, "InvalidSignatureException", BAD_SIGNATURE)
    assert http_status(err) == 400


def test_the_wire_body_carries_dynamodbs_namespace(signed_server):
    body = b"{}"
    r = signed(signed_server.url, KEYS["ci"][0], "wrong", "DynamoDB_20120810.ListTables", body)
    assert r.status_code == 400
    assert r.json() == {"__type": NS + "InvalidSignatureException", "message": BAD_SIGNATURE}
    r = signed(signed_server.url, "AKIDUNKNOWN", "x", "DynamoDB_20120810.ListTables", body)
    assert r.status_code == 400
    assert r.json() == {"__type": NS + "UnrecognizedClientException", "message": UNKNOWN_KEY}


def test_a_body_changed_after_signing_does_not_verify(signed_server):
    key, secret = KEYS["default"]
    ok = signed(signed_server.url, key, secret, "DynamoDB_20120810.ListTables", b'{"Limit": 5}')
    assert ok.status_code == 200, ok.text
    r = signed(signed_server.url, key, secret, "DynamoDB_20120810.ListTables", b'{"Limit": 5}', b'{"Limit": 6}')
    assert r.status_code == 400
    assert r.json()["__type"] == NS + "InvalidSignatureException"


def test_a_signed_header_changed_after_signing_does_not_verify(signed_server):
    key, secret = KEYS["default"]
    headers = {"X-Amz-Target": "DynamoDB_20120810.ListTables", "Content-Type": "application/x-amz-json-1.0"}
    req = AWSRequest(method="POST", url=signed_server.url, data=b"{}", headers=headers)
    SigV4Auth(Credentials(key, secret), "dynamodb", REGION).add_auth(req)
    sent = dict(req.headers.items())
    sent["X-Amz-Target"] = "DynamoDB_20120810.DescribeLimits"
    r = requests.post(signed_server.url, data=b"{}", headers=sent, timeout=30)
    assert r.status_code == 400
    assert r.json() == {"__type": NS + "InvalidSignatureException", "message": BAD_SIGNATURE}


def test_an_authorization_header_without_a_signature_is_incomplete(signed_server):
    auth = f"AWS4-HMAC-SHA256 Credential={KEYS['default'][0]}/20260101/us-east-1/dynamodb/aws4_request, SignedHeaders=host"
    r = requests.post(
        signed_server.url,
        data=b"{}",
        headers={
            "X-Amz-Target": "DynamoDB_20120810.ListTables",
            "Content-Type": "application/x-amz-json-1.0",
            "Authorization": auth,
        },
        timeout=30,
    )
    assert r.status_code == 400
    body = r.json()
    assert body["__type"] == NS + "IncompleteSignatureException"
    assert body["message"] == f"Authorization header requires 'Signature' parameter. Authorization={auth}"


@pytest.mark.parametrize(
    "skew_minutes, prefix, middle, sign",
    [
        (-20, "Signature expired: ", "is now earlier than", "-"),
        (20, "Signature not yet current: ", "is still later than", "+"),
    ],
)
def test_a_request_signed_more_than_15_minutes_off_is_refused(signed_server, monkeypatch, skew_minutes, prefix, middle, sign):
    signed_at = datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None) + datetime.timedelta(minutes=skew_minutes)
    monkeypatch.setattr(botocore.auth, "get_current_datetime", lambda: signed_at)
    ddb = client(signed_server.url, *KEYS["default"])
    err = expect_error(ddb.list_tables, "InvalidSignatureException", startswith=prefix)
    assert http_status(err) == 400
    message = err.response["Error"]["Message"]
    m = re.fullmatch(rf"{prefix}({AMZ_DATE}) {middle} ({AMZ_DATE}) \(({AMZ_DATE}) \{sign} 15 min\.\)", message)
    assert m, message
    assert m.group(1) == signed_at.strftime("%Y%m%dT%H%M%SZ")
    fmt = "%Y%m%dT%H%M%SZ"
    bound, now = (datetime.datetime.strptime(m.group(i), fmt) for i in (2, 3))
    assert now - bound == datetime.timedelta(minutes=15 if sign == "-" else -15)


def test_a_request_signed_ten_minutes_off_is_within_the_skew(signed_server, monkeypatch):
    signed_at = datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None) - datetime.timedelta(minutes=10)
    monkeypatch.setattr(botocore.auth, "get_current_datetime", lambda: signed_at)
    ddb = client(signed_server.url, *KEYS["ci"])
    assert "TableNames" in ddb.list_tables()


def test_without_credentials_any_signature_is_accepted(ddb, endpoint):
    # The session's server runs without --credentials: a key and secret it
    # has never seen, and a wrong signature, are served as before.
    other = client(endpoint, "AKIDANYTHING", "any-secret")
    assert "TableNames" in other.list_tables()
    r = signed(endpoint, "x", "y", "DynamoDB_20120810.ListTables", b'{"Limit": 1}', b'{"Limit": 2}')
    assert r.status_code == 200, r.text
    assert json.loads(r.text).get("TableNames") is not None


def test_a_credentials_file_with_half_a_pair_stops_the_server_with_a_usage_error(tmp_path):
    path = tmp_path / "credentials"
    path.write_text("[default]\naws_access_key_id = AKIDONLYHALF\n")
    done = subprocess.run(
        [server_binary(), "serve", "--port", "0", "--credentials", str(path)],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode == 64, done.stderr
    assert f"--credentials {path}: profile [default] has no aws_secret_access_key" in done.stderr
    assert done.stdout == ""


def test_the_loader_signs_through_the_rust_sdk_and_is_verified(signed_server, tmp_path):
    # `dynaburst load` signs with the AWS SDK for Rust: its requests carry
    # more signed headers (amz-sdk-*, x-amz-user-agent, content-length).
    path = tmp_path / "in.jsonl"
    path.write_text("".join(json.dumps({"id": f"k{i}", "v": i}) + "\n" for i in range(300)))
    key, secret = KEYS["ci"]
    table = unique_name("sigload")

    def run(key_id):
        env = {
            **{k: v for k, v in os.environ.items() if not k.startswith("AWS_")},
            "AWS_ACCESS_KEY_ID": key_id,
            "AWS_SECRET_ACCESS_KEY": secret,
            "AWS_REGION": REGION,
        }
        cmd = [server_binary(), "load", str(path), "--table", table, "--endpoint-url", signed_server.url]
        cmd += ["--create-table", "--key", "id:S", "--quiet"]
        return subprocess.run(cmd, capture_output=True, text=True, timeout=120, env=env)

    refused = run("AKIDNOTINTHEFILE0000")
    assert refused.returncode != 0
    assert "UnrecognizedClientException" in refused.stderr or UNKNOWN_KEY in refused.stderr, refused.stderr
    done = run(key)
    assert done.returncode == 0, done.stderr
    ddb = client(signed_server.url, key, secret)
    assert ddb.scan(TableName=table, Select="COUNT")["Count"] == 300
