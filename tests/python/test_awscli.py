"""One round trip with the AWS CLI (v1, run as `python -m awscli`)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from conftest import unique_name


def aws(endpoint, tmp_path, *args):
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env.update(
        AWS_ACCESS_KEY_ID="x",
        AWS_SECRET_ACCESS_KEY="y",
        AWS_DEFAULT_REGION="us-east-1",
        AWS_CONFIG_FILE=str(tmp_path / "config"),
        AWS_SHARED_CREDENTIALS_FILE=str(tmp_path / "credentials"),
        AWS_PAGER="",
        AWS_MAX_ATTEMPTS="1",
    )
    proc = subprocess.run(
        [sys.executable, "-m", "awscli", "dynamodb", *args, "--endpoint-url", endpoint, "--output", "json"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    return proc


def ok(proc):
    assert proc.returncode == 0, f"rc={proc.returncode}\nstdout: {proc.stdout}\nstderr: {proc.stderr}"
    return json.loads(proc.stdout) if proc.stdout.strip() else {}


def test_awscli_round_trip(endpoint, tmp_path, ddb):
    name = unique_name("cli")
    try:
        created = ok(
            aws(
                endpoint,
                tmp_path,
                "create-table",
                "--table-name", name,
                "--attribute-definitions", "AttributeName=pk,AttributeType=S", "AttributeName=sk,AttributeType=N",
                "--key-schema", "AttributeName=pk,KeyType=HASH", "AttributeName=sk,KeyType=RANGE",
                "--billing-mode", "PAY_PER_REQUEST",
            )
        )
        assert created["TableDescription"]["TableName"] == name
        ok(aws(endpoint, tmp_path, "wait", "table-exists", "--table-name", name))

        item = {"pk": {"S": "cli"}, "sk": {"N": "1"}, "tags": {"SS": ["a", "b"]}, "doc": {"M": {"x": {"BOOL": True}}}}
        ok(aws(endpoint, tmp_path, "put-item", "--table-name", name, "--item", json.dumps(item)))

        got = ok(
            aws(
                endpoint,
                tmp_path,
                "get-item",
                "--table-name", name,
                "--key", json.dumps({"pk": {"S": "cli"}, "sk": {"N": "1"}}),
                "--consistent-read",
            )
        )
        assert got["Item"]["pk"] == {"S": "cli"}
        assert got["Item"]["sk"] == {"N": "1"}
        assert sorted(got["Item"]["tags"]["SS"]) == ["a", "b"]
        assert got["Item"]["doc"] == {"M": {"x": {"BOOL": True}}}

        scanned = ok(aws(endpoint, tmp_path, "scan", "--table-name", name))
        assert scanned["Count"] == 1
        assert scanned["Items"][0]["pk"] == {"S": "cli"}

        described = ok(aws(endpoint, tmp_path, "describe-table", "--table-name", name))
        assert described["Table"]["TableStatus"] == "ACTIVE"
        assert described["Table"]["TableArn"] == f"arn:aws:dynamodb:us-east-1:000000000000:table/{name}"

        missing = aws(endpoint, tmp_path, "describe-table", "--table-name", name + "-nope")
        # AWS CLI v1 exits with 255 for any service error.
        assert missing.returncode == 255
        assert "ResourceNotFoundException" in missing.stderr
    finally:
        try:
            ddb.delete_table(TableName=name)
        except Exception:
            pass
