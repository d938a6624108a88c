"""`dynaburst streams tail`: a table's change records as JSON Lines, read
through the DynamoDB Streams SDK from the server under test."""

from __future__ import annotations

import json
import os
import subprocess

from conftest import ACCESS_KEY, REGION, SECRET_KEY, server_binary

# Bounds, not measurements: a tail that never ends fails instead of hanging.
TAIL_TIMEOUT_S = 60
MAX_WRITES = 200


def tail_command(endpoint, table, *extra):
    return [server_binary(), "streams", "tail", "--table", table, "--endpoint-url", endpoint, "--region", REGION,
            "--poll-ms", "20", *extra]


def tail_env():
    return {**os.environ, "AWS_ACCESS_KEY_ID": ACCESS_KEY, "AWS_SECRET_ACCESS_KEY": SECRET_KEY}


def stream_table(make_table):
    return make_table(StreamSpecification={"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"})


def test_tail_from_start_prints_every_change_in_order(ddb, endpoint, make_table):
    table = stream_table(make_table)
    ddb.put_item(TableName=table, Item={"pk": {"S": "a"}, "v": {"N": "1"}})
    ddb.update_item(TableName=table, Key={"pk": {"S": "a"}}, UpdateExpression="SET v = :two",
                    ExpressionAttributeValues={":two": {"N": "2"}})
    ddb.delete_item(TableName=table, Key={"pk": {"S": "a"}})
    out = subprocess.run(tail_command(endpoint, table, "--from-start", "--max-records", "3"), env=tail_env(),
                         capture_output=True, text=True, timeout=TAIL_TIMEOUT_S)
    assert out.returncode == 0, out.stderr
    records = [json.loads(line) for line in out.stdout.splitlines()]
    assert [r["eventName"] for r in records] == ["INSERT", "MODIFY", "REMOVE"]
    assert all(r["dynamodb"]["Keys"] == {"pk": {"S": "a"}} for r in records)
    assert records[0]["dynamodb"]["NewImage"] == {"pk": {"S": "a"}, "v": {"N": "1"}}
    assert records[1]["dynamodb"]["OldImage"]["v"] == {"N": "1"}
    assert records[1]["dynamodb"]["NewImage"]["v"] == {"N": "2"}
    assert "NewImage" not in records[2]["dynamodb"]
    seqs = [int(r["dynamodb"]["SequenceNumber"]) for r in records]
    assert seqs == sorted(seqs) and len(set(seqs)) == 3


def test_tail_from_latest_skips_what_was_written_before(ddb, endpoint, make_table):
    table = stream_table(make_table)
    ddb.put_item(TableName=table, Item={"pk": {"S": "before"}})
    proc = subprocess.Popen(tail_command(endpoint, table, "--max-records", "1"), env=tail_env(),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        # The tail starts at LATEST whenever it gets there: keep writing
        # new items until it prints one (a bounded number of writes).
        for i in range(MAX_WRITES):
            ddb.put_item(TableName=table, Item={"pk": {"S": f"after-{i}"}})
            if proc.poll() is not None:
                break
            try:
                proc.wait(timeout=0.05)
            except subprocess.TimeoutExpired:
                continue
        stdout, stderr = proc.communicate(timeout=TAIL_TIMEOUT_S)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 0, stderr
    (record,) = [json.loads(line) for line in stdout.splitlines()]
    assert record["eventName"] == "INSERT"
    assert record["dynamodb"]["Keys"]["pk"]["S"].startswith("after-")


def test_tail_of_a_table_without_a_stream_fails_and_says_why(endpoint, make_table):
    table = make_table()
    out = subprocess.run(tail_command(endpoint, table, "--max-records", "1"), env=tail_env(), capture_output=True,
                         text=True, timeout=TAIL_TIMEOUT_S)
    assert out.returncode == 1
    assert "LatestStreamArn" in out.stderr, out.stderr
    assert out.stdout == ""


def test_tail_follows_a_split_into_the_child_shards(ddb, endpoint, make_table):
    """UpdateTable raising WCU splits the one partition: the tail reads the
    closed parent shard, then its children, so each item's records come out
    in the order they were written."""
    from conftest import wait_active

    table = make_table(billing="PROVISIONED", rcu=5, wcu=500,
                       StreamSpecification={"StreamEnabled": True, "StreamViewType": "NEW_IMAGE"})
    keys = [f"k{i}" for i in range(6)]
    for k in keys:
        ddb.put_item(TableName=table, Item={"pk": {"S": k}, "v": {"N": "1"}})
    ddb.update_table(TableName=table, ProvisionedThroughput={"ReadCapacityUnits": 5, "WriteCapacityUnits": 1500})
    wait_active(ddb, table)
    for k in keys:
        ddb.put_item(TableName=table, Item={"pk": {"S": k}, "v": {"N": "2"}})
    out = subprocess.run(tail_command(endpoint, table, "--from-start", "--max-records", str(2 * len(keys))),
                         env=tail_env(), capture_output=True, text=True, timeout=TAIL_TIMEOUT_S)
    assert out.returncode == 0, out.stderr
    per_key = {}
    for line in out.stdout.splitlines():
        r = json.loads(line)
        per_key.setdefault(r["dynamodb"]["Keys"]["pk"]["S"], []).append(
            (r["eventName"], r["dynamodb"]["NewImage"]["v"]["N"]))
    assert per_key == {k: [("INSERT", "1"), ("MODIFY", "2")] for k in keys}
