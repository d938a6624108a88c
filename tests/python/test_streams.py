"""DynamoDB Streams through boto3's `dynamodbstreams` client against the
same endpoint: enabling, DescribeTable's stream members, ListStreams,
DescribeStream, shard iterators and GetRecords, one record per item-level
change with the images of the view type, and the errors.
Facts and messages: docs/reference/dynamodb-api-surface.md, section 4."""

from __future__ import annotations

import boto3
import pytest

from conftest import boto_args, expect_error

S = lambda v: {"S": v}  # noqa: E731
N = lambda v: {"N": str(v)}  # noqa: E731


@pytest.fixture(scope="module")
def streams(endpoint):
    return boto3.client("dynamodbstreams", **boto_args(endpoint))


def stream_table(make_table, view="NEW_AND_OLD_IMAGES"):
    return make_table(StreamSpecification={"StreamEnabled": True, "StreamViewType": view})


def read_all(streams, arn):
    """Every record of the stream's shard from the trim horizon."""
    shard = streams.describe_stream(StreamArn=arn)["StreamDescription"]["Shards"][0]["ShardId"]
    it = streams.get_shard_iterator(StreamArn=arn, ShardId=shard, ShardIteratorType="TRIM_HORIZON")["ShardIterator"]
    records = []
    for _ in range(100):  # bounded
        page = streams.get_records(ShardIterator=it, Limit=2)
        records += page["Records"]
        it = page.get("NextShardIterator")
        if not page["Records"] or not it:
            return records, it
    raise AssertionError("the stream never ran dry")


def summary(records):
    return [
        (
            r["eventName"],
            r["dynamodb"]["Keys"]["pk"]["S"],
            r["dynamodb"].get("OldImage", {}).get("v"),
            r["dynamodb"].get("NewImage", {}).get("v"),
        )
        for r in records
    ]


def test_every_item_level_change_is_one_record_with_its_images(ddb, streams, make_table):
    table = stream_table(make_table)
    desc = ddb.describe_table(TableName=table)["Table"]
    assert desc["StreamSpecification"] == {"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"}
    arn = desc["LatestStreamArn"]
    assert arn == f"{desc['TableArn']}/stream/{desc['LatestStreamLabel']}"
    ddb.put_item(TableName=table, Item={"pk": S("a"), "v": N(1)})
    ddb.update_item(TableName=table, Key={"pk": S("a")}, UpdateExpression="SET v = :v", ExpressionAttributeValues={":v": N(2)})
    ddb.put_item(TableName=table, Item={"pk": S("a"), "v": N(2)})  # unchanged: no record
    ddb.update_item(TableName=table, Key={"pk": S("a")}, UpdateExpression="REMOVE nothing")  # unchanged
    ddb.batch_write_item(RequestItems={table: [{"PutRequest": {"Item": {"pk": S("b"), "v": N(5)}}}]})
    ddb.transact_write_items(
        TransactItems=[
            {"Delete": {"TableName": table, "Key": {"pk": S("a")}}},
            {"Put": {"TableName": table, "Item": {"pk": S("c"), "v": N(7)}}},
        ]
    )
    ddb.delete_item(TableName=table, Key={"pk": S("missing")})  # nothing deleted: no record
    records, it = read_all(streams, arn)
    assert summary(records) == [
        ("INSERT", "a", None, N(1)),
        ("MODIFY", "a", N(1), N(2)),
        ("INSERT", "b", None, N(5)),
        ("REMOVE", "a", N(2), None),
        ("INSERT", "c", None, N(7)),
    ]
    seqs = [int(r["dynamodb"]["SequenceNumber"]) for r in records]
    assert seqs == sorted(seqs) and len(set(seqs)) == 5
    assert all(len(r["dynamodb"]["SequenceNumber"]) == 21 for r in records)
    first = records[0]
    assert (first["eventSource"], first["awsRegion"], first["dynamodb"]["StreamViewType"]) == (
        "aws:dynamodb",
        "us-east-1",
        "NEW_AND_OLD_IMAGES",
    )
    assert len(first["eventID"]) == 32 and "userIdentity" not in first
    assert first["dynamodb"]["SizeBytes"] > 0
    assert it, "an open shard always gives a next iterator"
    # AFTER_SEQUENCE_NUMBER and LATEST.
    shard = streams.describe_stream(StreamArn=arn)["StreamDescription"]["Shards"][0]["ShardId"]
    after = streams.get_shard_iterator(
        StreamArn=arn,
        ShardId=shard,
        ShardIteratorType="AFTER_SEQUENCE_NUMBER",
        SequenceNumber=records[2]["dynamodb"]["SequenceNumber"],
    )["ShardIterator"]
    assert summary(streams.get_records(ShardIterator=after)["Records"]) == summary(records[3:])
    latest = streams.get_shard_iterator(StreamArn=arn, ShardId=shard, ShardIteratorType="LATEST")["ShardIterator"]
    assert streams.get_records(ShardIterator=latest)["Records"] == []
    ddb.put_item(TableName=table, Item={"pk": S("d"), "v": N(9)})
    assert summary(streams.get_records(ShardIterator=latest)["Records"]) == [("INSERT", "d", None, N(9))]


@pytest.mark.parametrize(
    "view,old,new",
    [("KEYS_ONLY", False, False), ("NEW_IMAGE", False, True), ("OLD_IMAGE", True, False)],
)
def test_view_types_choose_the_images(ddb, streams, make_table, view, old, new):
    table = stream_table(make_table, view)
    arn = ddb.describe_table(TableName=table)["Table"]["LatestStreamArn"]
    ddb.put_item(TableName=table, Item={"pk": S("a"), "v": N(1)})
    ddb.put_item(TableName=table, Item={"pk": S("a"), "v": N(2)})
    records, _ = read_all(streams, arn)
    modify = records[1]["dynamodb"]
    assert modify["Keys"] == {"pk": S("a")}
    assert ("OldImage" in modify, "NewImage" in modify) == (old, new)
    assert modify["StreamViewType"] == view


def test_list_describe_disable_and_errors(ddb, streams, make_table):
    table = stream_table(make_table, "KEYS_ONLY")
    arn = ddb.describe_table(TableName=table)["Table"]["LatestStreamArn"]
    listed = streams.list_streams(TableName=table)["Streams"]
    label = arn.rsplit("/", 1)[1]
    assert listed == [{"StreamArn": arn, "TableName": table, "StreamLabel": label}]
    d = streams.describe_stream(StreamArn=arn)["StreamDescription"]
    assert (d["StreamStatus"], d["StreamViewType"], d["TableName"]) == ("ENABLED", "KEYS_ONLY", table)
    assert d["KeySchema"] == [{"AttributeName": "pk", "KeyType": "HASH"}]
    [shard] = d["Shards"]
    assert "EndingSequenceNumber" not in shard["SequenceNumberRange"]
    expect_error(
        lambda: ddb.update_table(TableName=table, StreamSpecification={"StreamEnabled": True, "StreamViewType": "KEYS_ONLY"}),
        "ValidationException",
        f"Table already has an enabled stream: TableName: {table}",
    )
    expect_error(
        lambda: ddb.update_table(
            TableName=table, StreamSpecification={"StreamEnabled": False, "StreamViewType": "KEYS_ONLY"}
        ),
        "ValidationException",
        "One or more parameter values were invalid: If stream is being disabled, then UpdateViewType must not be specified",
    )
    ddb.put_item(TableName=table, Item={"pk": S("a")})
    ddb.update_table(TableName=table, StreamSpecification={"StreamEnabled": False})
    desc = ddb.describe_table(TableName=table)["Table"]
    assert "StreamSpecification" not in desc and desc["LatestStreamArn"] == arn
    closed = streams.describe_stream(StreamArn=arn)["StreamDescription"]
    assert closed["StreamStatus"] == "DISABLED"
    assert "EndingSequenceNumber" in closed["Shards"][0]["SequenceNumberRange"]
    ddb.put_item(TableName=table, Item={"pk": S("b")})  # after disabling: not recorded
    records, it = read_all(streams, arn)
    assert [r["dynamodb"]["Keys"]["pk"]["S"] for r in records] == ["a"]
    assert it is None, "a closed shard read to its end gives no next iterator"
    expect_error(
        lambda: ddb.update_table(TableName=table, StreamSpecification={"StreamEnabled": False}),
        "ValidationException",
        f"Table has no stream to disable: TableName: {table}",
    )
    # Re-enabling makes a new stream with a new ARN.
    ddb.update_table(TableName=table, StreamSpecification={"StreamEnabled": True, "StreamViewType": "NEW_IMAGE"})
    newer = ddb.describe_table(TableName=table)["Table"]["LatestStreamArn"]
    assert newer != arn
    assert [s["StreamArn"] for s in streams.list_streams(TableName=table)["Streams"]] == [arn, newer]
    expect_error(
        lambda: streams.get_shard_iterator(StreamArn=arn, ShardId="shardId-00000000000000000000-00000000", ShardIteratorType="LATEST"),
        "ResourceNotFoundException",
    )
    expect_error(lambda: streams.describe_stream(StreamArn=arn + "x"), "ResourceNotFoundException")


def test_a_refused_stream_specification_creates_nothing(ddb, ddb_raw, make_table):
    from conftest import unique_name

    name = unique_name()
    kw = dict(
        TableName=name,
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        BillingMode="PAY_PER_REQUEST",
    )
    expect_error(
        lambda: ddb_raw.create_table(**kw, StreamSpecification={"StreamEnabled": False, "StreamViewType": "NEW_IMAGE"}),
        "ValidationException",
        "One or more parameter values were invalid: Table is being created with a stream disabled, "
        "UpdateViewType should not be specified",
    )
    # The same name is free: the refused request left nothing behind.
    make_table(name=name, StreamSpecification={"StreamEnabled": True, "StreamViewType": "KEYS_ONLY"})
    assert ddb.describe_table(TableName=name)["Table"]["StreamSpecification"]["StreamViewType"] == "KEYS_ONLY"
