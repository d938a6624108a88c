"""`dynaburst load` encodes each item's DynamoDB JSON once and builds the
request bodies from it (the AWS SDK signs and sends them): every attribute
type, strings that need escaping, large items and every write mode arrive
in the table exactly as the input had them, read back with boto3.
"""

from __future__ import annotations

import base64
import json
import subprocess

import pytest

from conftest import server_binary, unique_name

LOAD_TIMEOUT_S = 120
# Characters JSON must escape, and some it must not touch.
TRICKY = "quote \" backslash \\ newline \n tab \t cr \r nul \u0000 bell \u0007 unit \u001f del \u007f é 日本 🦀 </b>"
# Largest items: 25 of them fill a BatchWriteItem of about 9 MB.
BIG_BYTES = 360 * 1024


def items():
    """DynamoDB JSON items (the input) with every attribute type."""
    out = []
    for i in range(60):
        out.append(
            {
                "id": {"S": f"item-{i:03d}"},
                "s": {"S": TRICKY + str(i)},
                "n": {"N": str(i * 7 - 100)},
                "big": {"N": "12345678901234567890123456789012345678"},
                "small": {"N": "-0.000000000000000000000000000001"},
                "b": {"B": base64.b64encode(bytes([i % 256, 0, 255, 10])).decode()},
                "t": {"BOOL": i % 2 == 0},
                "z": {"NULL": True},
                "ss": {"SS": ["a", TRICKY, f"x{i}"]},
                "ns": {"NS": ["1", "2.5", str(i + 10)]},
                "bs": {"BS": [base64.b64encode(b"\x00").decode(), base64.b64encode(bytes([i + 1])).decode()]},
                "l": {"L": [{"S": "y"}, {"N": "3"}, {"L": []}, {"M": {"k": {"S": TRICKY}}}]},
                "m": {"M": {TRICKY: {"M": {"deep": {"L": [{"BOOL": False}, {"NULL": True}]}}}, "e": {"M": {}}}},
                TRICKY: {"S": "an attribute name that needs escaping"},
                "empty": {"S": ""},
            }
        )
    for i in range(30):
        out.append({"id": {"S": f"big-{i:03d}"}, "pad": {"S": chr(ord("a") + i % 26) * BIG_BYTES}})
    return out


def load(endpoint, path, table, tmp_path, *extra):
    report = tmp_path / f"{table}.report.json"
    proc = subprocess.run(
        [
            server_binary(),
            "load",
            str(path),
            "--table",
            table,
            "--endpoint-url",
            endpoint,
            "--create-table",
            "--key",
            "id:S",
            "--quiet",
            "--checkpoint",
            str(tmp_path / f"{table}.ckpt"),
            "--report",
            str(report),
            *extra,
        ],
        capture_output=True,
        text=True,
        timeout=LOAD_TIMEOUT_S,
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(report.read_text())


def shaped(value, decode):
    """An attribute value with its sets in a fixed order (DynamoDB does not
    keep theirs); with `decode`, an input value's base64 binaries as the
    bytes boto3's low-level client returns."""
    (ty, v), = value.items()
    binary = base64.b64decode if decode else (lambda x: x)
    if ty == "B":
        return {"B": binary(v)}
    if ty in ("SS", "NS", "BS"):
        return {ty: sorted(binary(x) if ty == "BS" else x for x in v)}
    if ty == "L":
        return {"L": [shaped(x, decode) for x in v]}
    if ty == "M":
        return {"M": {k: shaped(x, decode) for k, x in v.items()}}
    return value


@pytest.mark.parametrize("mode", ["batch", "put", "transact"])
def test_every_type_and_escape_loads_exactly_in_every_mode(ddb, endpoint, tmp_path, mode):
    expected = items()
    path = tmp_path / "items.ddb.json"
    path.write_text("".join(json.dumps({"Item": it}) + "\n" for it in expected))
    table = unique_name("enc")
    report = load(endpoint, path, table, tmp_path, "--mode", mode, "--transact-size", "7")
    assert report["records"]["written"] == len(expected)
    assert report["records"]["rejected"] == 0
    for it in expected:
        got = ddb.get_item(TableName=table, Key={"id": it["id"]}, ConsistentRead=True)["Item"]
        assert {k: shaped(v, False) for k, v in got.items()} == {k: shaped(v, True) for k, v in it.items()}
