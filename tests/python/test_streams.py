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


def all_shards(streams, arn, limit=100):
    """Every shard of the stream, paging DescribeStream `limit` at a time."""
    shards, start = [], {}
    for _ in range(1000):  # bounded
        d = streams.describe_stream(StreamArn=arn, Limit=limit, **start)["StreamDescription"]
        assert len(d["Shards"]) <= limit
        shards += d["Shards"]
        if "LastEvaluatedShardId" not in d:
            return shards
        start = {"ExclusiveStartShardId": d["LastEvaluatedShardId"]}
    raise AssertionError("DescribeStream never stopped paging")


def read_shard(streams, arn, shard_id):
    """Every record of one shard from its trim horizon, and the last
    iterator (None once a closed shard is read to its end)."""
    it = streams.get_shard_iterator(StreamArn=arn, ShardId=shard_id, ShardIteratorType="TRIM_HORIZON")["ShardIterator"]
    records = []
    for _ in range(1000):  # bounded
        page = streams.get_records(ShardIterator=it, Limit=2)
        records += page["Records"]
        it = page.get("NextShardIterator")
        if not page["Records"] or not it:
            return records, it
    raise AssertionError("the shard never ran dry")


def read_all(streams, arn):
    """Every record of the stream: each shard from the trim horizon, a
    parent before its children, then in sequence-number order (dynaburst's
    sequence numbers increase across the whole stream, so this is the order
    of the writes). Also says whether every shard still gives a next
    iterator (None when one closed shard was read to its end)."""
    records, its = [], []
    done = set()
    for shard in all_shards(streams, arn):
        assert shard.get("ParentShardId") in done | {None}, "a parent is listed before its children"
        got, it = read_shard(streams, arn, shard["ShardId"])
        records += got
        its.append(it)
        done.add(shard["ShardId"])
    records.sort(key=lambda r: int(r["dynamodb"]["SequenceNumber"]))
    return records, (its[0] if all(its) else None)


def shard_of(streams, arn, sequence):
    """The shard whose records hold `sequence`."""
    for shard in all_shards(streams, arn):
        got, _ = read_shard(streams, arn, shard["ShardId"])
        if any(r["dynamodb"]["SequenceNumber"] == sequence for r in got):
            return shard["ShardId"]
    raise AssertionError(f"no shard holds {sequence}")


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
    # AFTER_SEQUENCE_NUMBER and LATEST, in the shard of item a (its
    # partition's): after a's MODIFY comes its REMOVE.
    sequence = records[1]["dynamodb"]["SequenceNumber"]
    shard = shard_of(streams, arn, sequence)
    after = streams.get_shard_iterator(
        StreamArn=arn,
        ShardId=shard,
        ShardIteratorType="AFTER_SEQUENCE_NUMBER",
        SequenceNumber=sequence,
    )["ShardIterator"]
    later = [r for r in summary(streams.get_records(ShardIterator=after)["Records"]) if r[1] == "a"]
    assert later == [("REMOVE", "a", N(2), None)]
    latest = streams.get_shard_iterator(StreamArn=arn, ShardId=shard, ShardIteratorType="LATEST")["ShardIterator"]
    assert streams.get_records(ShardIterator=latest)["Records"] == []
    ddb.put_item(TableName=table, Item={"pk": S("a"), "v": N(9)})
    assert summary(streams.get_records(ShardIterator=latest)["Records"]) == [("INSERT", "a", None, N(9))]


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
    # On demand, a new table has four partitions: four open shards.
    assert len(d["Shards"]) == 4
    assert all("EndingSequenceNumber" not in s["SequenceNumberRange"] for s in d["Shards"])
    assert all("ParentShardId" not in s for s in d["Shards"])
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
    assert all("EndingSequenceNumber" in s["SequenceNumberRange"] for s in closed["Shards"])
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


def test_a_deleted_tables_stream_stays_readable_and_listed_under_its_name(ddb, streams, make_table):
    """As on AWS (ack-api-quirks DDB-TABLE-378, DDB-TABLE-386): after
    DeleteTable the table's stream is DISABLED with every shard closed, its
    records still readable, and ListStreams(TableName) lists it, before the
    stream of a table re-created under the same name."""
    from conftest import unique_name

    name = unique_name()
    make_table(name=name, StreamSpecification={"StreamEnabled": True, "StreamViewType": "NEW_IMAGE"})
    old = ddb.describe_table(TableName=name)["Table"]["LatestStreamArn"]
    ddb.put_item(TableName=name, Item={"pk": S("a"), "v": N(1)})
    ddb.delete_table(TableName=name)
    expect_error(lambda: ddb.describe_table(TableName=name), "ResourceNotFoundException")
    label = old.rsplit("/", 1)[1]
    assert streams.list_streams(TableName=name)["Streams"] == [
        {"StreamArn": old, "TableName": name, "StreamLabel": label}
    ]
    d = streams.describe_stream(StreamArn=old)["StreamDescription"]
    assert (d["StreamStatus"], d["TableName"], d["StreamViewType"]) == ("DISABLED", name, "NEW_IMAGE")
    assert d["Shards"] and all("EndingSequenceNumber" in s["SequenceNumberRange"] for s in d["Shards"])
    records, it = read_all(streams, old)
    assert summary(records) == [("INSERT", "a", None, N(1))]
    assert it is None

    make_table(name=name, StreamSpecification={"StreamEnabled": True, "StreamViewType": "KEYS_ONLY"})
    new = ddb.describe_table(TableName=name)["Table"]["LatestStreamArn"]
    assert new != old
    ddb.put_item(TableName=name, Item={"pk": S("b")})
    assert [s["StreamArn"] for s in streams.list_streams(TableName=name)["Streams"]] == [old, new]
    every = [s["StreamArn"] for s in streams.list_streams()["Streams"]]
    assert every.index(old) + 1 == every.index(new)
    assert streams.describe_stream(StreamArn=new)["StreamDescription"]["StreamStatus"] == "ENABLED"
    records, _ = read_all(streams, old)
    assert summary(records) == [("INSERT", "a", None, N(1))], "the new table's writes stay out of the old stream"
    records, _ = read_all(streams, new)
    assert [(r["eventName"], r["dynamodb"]["Keys"]) for r in records] == [("INSERT", {"pk": S("b")})]


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


def test_shards_follow_partition_splits(ddb, streams, make_table):
    """UpdateTable raising provisioned throughput splits partitions (1,000
    WCU each): each split closes its partition's shard and opens two
    children naming it as their parent. A consumer reading each parent
    before its children sees every item's changes once, in order."""
    from conftest import wait_active

    table = make_table(
        billing="PROVISIONED",
        rcu=5,
        wcu=500,
        StreamSpecification={"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"},
    )
    arn = ddb.describe_table(TableName=table)["Table"]["LatestStreamArn"]
    [root] = all_shards(streams, arn)
    keys = [f"k{i}" for i in range(12)]
    expected = {k: [] for k in keys}

    def write(v):
        for k in keys:
            ddb.put_item(TableName=table, Item={"pk": S(k), "v": N(v)})
            expected[k].append(("INSERT" if v == 1 else "MODIFY", k, None if v == 1 else N(v - 1), N(v)))

    write(1)
    ddb.update_table(TableName=table, ProvisionedThroughput={"ReadCapacityUnits": 5, "WriteCapacityUnits": 1500})
    wait_active(ddb, table)
    write(2)
    ddb.update_table(TableName=table, ProvisionedThroughput={"ReadCapacityUnits": 5, "WriteCapacityUnits": 3000})
    wait_active(ddb, table)
    write(3)
    for k in keys[:4]:
        ddb.delete_item(TableName=table, Key={"pk": S(k)})
        expected[k].append(("REMOVE", k, N(3), None))

    shards = all_shards(streams, arn, limit=2)
    by_id = {s["ShardId"]: s for s in shards}
    assert shards[0]["ShardId"] == root["ShardId"]
    children = lambda sid: [s["ShardId"] for s in shards if s.get("ParentShardId") == sid]  # noqa: E731
    # 1 partition, then 2, then 4: a root, two children, four grandchildren.
    assert len(children(root["ShardId"])) == 2
    assert all(len(children(c)) == 2 for c in children(root["ShardId"]))
    assert len(shards) == 7
    for s in shards:
        closed = "EndingSequenceNumber" in s["SequenceNumberRange"]
        assert closed == bool(children(s["ShardId"])), "a shard is closed exactly when it has children"

    seen = {k: [] for k in keys}
    done = set()
    for s in shards:
        parent = s.get("ParentShardId")
        assert parent is None or parent in done, "each parent is read before its children"
        got, it = read_shard(streams, arn, s["ShardId"])
        rng = s["SequenceNumberRange"]
        seqs = [int(r["dynamodb"]["SequenceNumber"]) for r in got]
        assert seqs == sorted(seqs)
        assert all(q >= int(rng["StartingSequenceNumber"]) for q in seqs)
        if "EndingSequenceNumber" in rng:
            assert it is None, "a closed shard read to its end gives no next iterator"
            assert all(q <= int(rng["EndingSequenceNumber"]) for q in seqs)
        if parent is not None and "EndingSequenceNumber" in by_id[parent]["SequenceNumberRange"]:
            assert all(q > int(by_id[parent]["SequenceNumberRange"]["EndingSequenceNumber"]) for q in seqs)
        for r in summary(got):
            seen[r[1]].append(r)
        done.add(s["ShardId"])
    assert seen == expected
    # The children filter names a shard's children only.
    kids = streams.describe_stream(StreamArn=arn, ShardFilter={"Type": "CHILD_SHARDS", "ShardId": root["ShardId"]})
    assert [s["ShardId"] for s in kids["StreamDescription"]["Shards"]] == children(root["ShardId"])
