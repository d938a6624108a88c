"""The capacity model seen over real HTTP by boto3: UnprocessedItems and
UnprocessedKeys, ProvisionedThroughputExceededException and
ThrottlingException with their ThrottlingReasons, throttled transactions,
DescribeTable's partitions and warm throughput, /metrics, and
``--capacity-model off`` never throttling.

Each test starts its own server so that the capacity state (which depends
on wall time) is fresh; no test depends on timing finer than the fraction
of a second a few calls take."""

import json
import urllib.request
import uuid

import pytest
from botocore.exceptions import ClientError

from conftest import ServerProcess, expect_error, make_client

ARN_PREFIX = "arn:aws:dynamodb:us-east-1:000000000000:table/"


def client(url):
    # No SDK retries: the test must see what the server answered.
    return make_client(url, retries={"total_max_attempts": 1, "mode": "standard"})


@pytest.fixture
def modelled():
    srv = ServerProcess()
    yield client(srv.url), srv
    assert srv.stop() == 0


@pytest.fixture
def unlimited():
    srv = ServerProcess(extra_args=("--capacity-model", "off"))
    yield client(srv.url), srv
    assert srv.stop() == 0


def make(ddb, *, provisioned=None, range_key=True, **extra):
    name = "thr-" + uuid.uuid4().hex[:12]
    keys = [{"AttributeName": "pk", "KeyType": "HASH"}]
    defs = [{"AttributeName": "pk", "AttributeType": "S"}]
    if range_key:
        keys.append({"AttributeName": "sk", "KeyType": "RANGE"})
        defs.append({"AttributeName": "sk", "AttributeType": "N"})
    kwargs = dict(TableName=name, KeySchema=keys, AttributeDefinitions=defs)
    if provisioned:
        kwargs["ProvisionedThroughput"] = {"ReadCapacityUnits": provisioned[0], "WriteCapacityUnits": provisioned[1]}
    else:
        kwargs["BillingMode"] = "PAY_PER_REQUEST"
    ddb.create_table(**kwargs, **extra)
    return name


def item(pk, sk, kb):
    # pk + sk + "pad" names and values: exactly kb KiB.
    base = len("pk") + len(pk) + len("sk") + 2 + len("pad")
    return {"pk": {"S": pk}, "sk": {"N": str(sk)}, "pad": {"S": "x" * (kb * 1024 - base)}}


def put_requests(pk, first, count, kb):
    return [{"PutRequest": {"Item": item(pk, first + i, kb)}} for i in range(count)]


def test_hot_partition_batch_returns_unprocessed_items_then_throttling_exception(modelled):
    ddb, _ = modelled
    name = make(ddb)
    # 25 items of 40 KB on one partition key: 1,000 units a request. A
    # partition admits a request while it has tokens and charges it in
    # full (A39), so the first calls are accepted whole; once its bucket
    # and bank are spent it is in debt, and a call finds nothing left: the
    # whole call fails, as on-demand tables fail. Bounded at 50 calls.
    error = None
    for attempt in range(50):
        try:
            resp = ddb.batch_write_item(RequestItems={name: put_requests("hot", 25 * attempt, 25, 40)})
            assert resp["UnprocessedItems"] == {}, "a partition with tokens takes the whole request"
        except ClientError as err:
            error = err.response
            break
    assert error is not None, "a hot partition refuses a whole batch at some point"
    assert 2 <= attempt <= 10, attempt
    assert error["Error"]["Code"] == "ThrottlingException"
    assert error["Error"]["Message"].startswith("Throughput exceeds the current capacity of your table or index.")
    assert error["throttlingReasons"] == [
        {"reason": "TableWriteKeyRangeThroughputExceeded", "resource": ARN_PREFIX + name}
    ]
    assert error["ResponseMetadata"]["HTTPStatusCode"] == 400
    # On a provisioned table of 10 partitions the table keeps room while a
    # hot key spends its partition's share (1,000 of the 10,000 WCU) into
    # debt, and the table's pool has none to lend it; then one batch
    # for the hot key and for 20 other keys: the hot key's items, and
    # those of keys on its partition, come back unprocessed, in the
    # request's own shape and order; the rest is written.
    name = make(ddb, provisioned=(1, 10000))
    for attempt in range(50):
        try:
            resp = ddb.batch_write_item(RequestItems={name: put_requests("hot", 25 * attempt, 25, 40)})
            assert resp["UnprocessedItems"] == {}
        except ClientError as err:
            assert err.response["Error"]["Code"] == "ProvisionedThroughputExceededException"
            assert err.response["ThrottlingReasons"] == [
                {"reason": "TableWriteProvisionedThroughputExceeded", "resource": ARN_PREFIX + name}
            ]
            break
    else:
        raise AssertionError("the hot key's partition never ran out")
    hot = put_requests("hot", 5000, 5, 20)
    cold = [{"PutRequest": {"Item": item(f"cold{i}", 0, 20)}} for i in range(20)]
    requests = hot + cold
    resp = ddb.batch_write_item(RequestItems={name: requests}, ReturnConsumedCapacity="TOTAL")
    unprocessed = resp["UnprocessedItems"].get(name, [])
    assert 5 <= len(unprocessed) < 25, len(unprocessed)
    assert unprocessed[:5] == hot
    assert unprocessed == [r for r in requests if r in unprocessed]
    written = 25 - len(unprocessed)
    [consumed] = resp["ConsumedCapacity"]
    assert (consumed["TableName"], consumed["CapacityUnits"]) == (name, 20.0 * written)


def test_provisioned_table_raises_provisioned_throughput_exceeded(modelled):
    ddb, _ = modelled
    name = make(ddb, provisioned=(1, 1), range_key=False)
    ddb.put_item(TableName=name, Item={"pk": {"S": "a"}})
    with pytest.raises(ClientError) as err:
        for i in range(20):
            ddb.put_item(TableName=name, Item={"pk": {"S": f"b{i}"}, "pad": {"S": "x" * 2000}})
    e = err.value.response
    assert e["Error"]["Code"] == "ProvisionedThroughputExceededException"
    assert e["Error"]["Message"] == (
        "The level of configured provisioned throughput for the table was exceeded. "
        "Consider increasing your provisioning level with the UpdateTable API."
    )
    assert e["ThrottlingReasons"] == [
        {"reason": "TableWriteProvisionedThroughputExceeded", "resource": ARN_PREFIX + name}
    ]


def test_throttled_transaction_is_cancelled_whole(modelled):
    ddb, _ = modelled
    # 5 RCU to read the result back; 1 WCU. A transaction of 3 puts (6
    # units) finds the new table's partition with tokens and is admitted in
    # full (A39); the next one finds it in debt and is cancelled whole.
    name = make(ddb, provisioned=(5, 1), range_key=False)
    ddb.transact_write_items(TransactItems=[{"Put": {"TableName": name, "Item": {"pk": {"S": f"s{i}"}}}} for i in range(3)])
    actions = [{"Put": {"TableName": name, "Item": {"pk": {"S": f"t{i}"}}}} for i in range(3)]
    with pytest.raises(ClientError) as err:
        ddb.transact_write_items(TransactItems=actions)
    e = err.value.response
    assert e["Error"]["Code"] == "TransactionCanceledException"
    assert [r["Code"] for r in e["CancellationReasons"]] == ["ProvisionedThroughputExceeded"] * 3
    # Nothing of it was written; the first transaction was.
    keys = [{"pk": {"S": f"{p}{i}"}} for p in "st" for i in range(3)]
    got = ddb.batch_get_item(RequestItems={name: {"Keys": keys}})
    assert got["UnprocessedKeys"] == {}
    assert sorted(i["pk"]["S"] for i in got["Responses"][name]) == ["s0", "s1", "s2"]


def test_batch_get_returns_unprocessed_keys(modelled):
    ddb, _ = modelled
    # 1 RCU over 2 partitions (ceil(1/3000 + 1500/1000)).
    name = make(ddb, provisioned=(1, 1500))
    ddb.batch_write_item(RequestItems={name: put_requests("k", 0, 10, 4)})
    others = [{"PutRequest": {"Item": item(f"o{i}", 0, 4)}} for i in range(10)]
    ddb.batch_write_item(RequestItems={name: others})
    # The first read of key k's 10 items (10 units, consistent) is
    # admitted whole, leaving k's partition in debt for seconds.
    keys = [{"pk": {"S": "k"}, "sk": {"N": str(i)}} for i in range(10)]
    first = ddb.batch_get_item(RequestItems={name: {"Keys": keys, "ConsistentRead": True}})
    assert len(first["Responses"][name]) == 10
    # Then k's keys and ten keys spread over both partitions: what lies on
    # k's partition comes back unprocessed, the rest is read.
    mixed = keys[:5] + [{"pk": {"S": f"o{i}"}, "sk": {"N": "0"}} for i in range(10)]
    resp = ddb.batch_get_item(RequestItems={name: {"Keys": mixed, "ConsistentRead": True}})
    unprocessed = resp["UnprocessedKeys"][name]
    returned = resp["Responses"][name]
    assert len(returned) + len(unprocessed["Keys"]) == 15
    assert 5 <= len(unprocessed["Keys"]) < 15
    assert all(k in unprocessed["Keys"] for k in keys[:5])
    assert unprocessed["ConsistentRead"] is True
    assert {(r["pk"]["S"], r["sk"]["N"]) for r in returned} | {
        (k["pk"]["S"], k["sk"]["N"]) for k in unprocessed["Keys"]
    } == {(k["pk"]["S"], k["sk"]["N"]) for k in mixed}


def raw_describe(url, name):
    """DescribeTable's raw JSON: boto3 drops members its model lacks, and
    PartitionCount is a dynaburst extension."""
    req = urllib.request.Request(
        url,
        data=json.dumps({"TableName": name}).encode(),
        headers={
            "X-Amz-Target": "DynamoDB_20120810.DescribeTable",
            "Content-Type": "application/x-amz-json-1.0",
            "Authorization": "AWS4-HMAC-SHA256 Credential=x/20260101/us-east-1/dynamodb/aws4_request",
        },
    )
    return json.loads(urllib.request.urlopen(req).read())["Table"]


def test_describe_table_shows_partitions_and_warm_throughput(modelled):
    ddb, srv = modelled
    name = make(ddb)
    assert raw_describe(srv.url, name)["PartitionCount"] == 4
    warm = {"ReadUnitsPerSecond": 12000, "WriteUnitsPerSecond": 4000, "Status": "ACTIVE"}
    assert ddb.describe_table(TableName=name)["Table"]["WarmThroughput"] == warm
    provisioned = make(ddb, provisioned=(1, 10000))
    # ceil(1/3000 + 10000/1000) = 11 partitions; DynamoDB shows a
    # provisioned table's units as its warm throughput (DDB-TABLE-068).
    assert raw_describe(srv.url, provisioned)["PartitionCount"] == 11
    assert ddb.describe_table(TableName=provisioned)["Table"]["WarmThroughput"] == {
        "ReadUnitsPerSecond": 1,
        "WriteUnitsPerSecond": 10000,
        "Status": "ACTIVE",
    }


def test_switching_to_provisioned_keeps_the_partitions(modelled):
    """An on-demand table's 4 partitions stay 4 when it turns provisioned:
    its warm throughput of 12000/4000 is not a reason to split them (a
    review found the switch doubling them)."""
    ddb, srv = modelled
    name = make(ddb)
    assert raw_describe(srv.url, name)["PartitionCount"] == 4
    ddb.update_table(
        TableName=name, BillingMode="PROVISIONED", ProvisionedThroughput={"ReadCapacityUnits": 5, "WriteCapacityUnits": 5}
    )
    assert raw_describe(srv.url, name)["PartitionCount"] == 4


def test_metrics_count_throttled_items(modelled):
    ddb, srv = modelled
    name = make(ddb, provisioned=(1, 1), range_key=False)
    # The first batch finds the 1 WCU table's partition with tokens and is
    # taken whole, into debt (A39); the next is refused whole.
    first = ddb.batch_write_item(RequestItems={name: [{"PutRequest": {"Item": {"pk": {"S": f"m{i}"}}}} for i in range(25)]})
    assert first["UnprocessedItems"] == {}
    with pytest.raises(ClientError) as err:
        ddb.batch_write_item(RequestItems={name: [{"PutRequest": {"Item": {"pk": {"S": f"n{i}"}}}} for i in range(25)]})
    assert err.value.response["Error"]["Code"] == "ProvisionedThroughputExceededException"
    refused = 25
    text = urllib.request.urlopen(srv.url + "/metrics").read().decode()
    assert f'dynaburst_throttled_items_total{{table="{name}"}} {refused}' in text
    assert f'dynaburst_partitions{{table="{name}"}} 1' in text
    doc = json.loads(urllib.request.urlopen(srv.url + "/metrics.json").read())
    table = next(t for t in doc["tables"] if t["table"] == name)
    assert table["mode"] == "provisioned"
    assert table["provisioned"] == {"read": 1.0, "write": 1.0}
    assert table["totals"]["throttled_items"] == refused
    assert table["totals"]["write_units"] == 25


def test_capacity_model_off_never_throttles(unlimited):
    ddb, srv = unlimited
    name = make(ddb, provisioned=(1, 1))
    for batch in range(8):
        resp = ddb.batch_write_item(RequestItems={name: put_requests("hot", batch * 25, 25, 20)})
        assert resp["UnprocessedItems"] == {}
    for i in range(50):
        ddb.put_item(TableName=name, Item=item("hot", 1000 + i, 10))
    keys = [{"pk": {"S": "hot"}, "sk": {"N": str(i)}} for i in range(100)]
    got = ddb.batch_get_item(RequestItems={name: {"Keys": keys, "ConsistentRead": True}})
    assert got["UnprocessedKeys"] == {}
    assert len(got["Responses"][name]) == 100
    pages = ddb.get_paginator("scan").paginate(TableName=name, Select="COUNT")
    assert sum(p["Count"] for p in pages) == 250
    described = raw_describe(srv.url, name)
    assert "PartitionCount" not in described
    # Without the model, what DynamoDB shows: a provisioned table's units.
    assert described["WarmThroughput"] == {"ReadUnitsPerSecond": 1, "WriteUnitsPerSecond": 1, "Status": "ACTIVE"}
    text = urllib.request.urlopen(srv.url + "/metrics").read().decode()
    assert name not in text


def test_on_demand_throughput_caps_an_on_demand_table(modelled):
    ddb, srv = modelled
    name = make(ddb, range_key=False, OnDemandThroughput={"MaxWriteRequestUnits": 10})
    # Only the maximum that is set is shown (DDB-TABLE-178, -182).
    assert ddb.describe_table(TableName=name)["Table"]["OnDemandThroughput"] == {"MaxWriteRequestUnits": 10}
    # The first batch (25 units) finds the maximum's bucket with tokens and
    # is taken whole; the next is refused whole for the maximum (A13).
    first = ddb.batch_write_item(RequestItems={name: [{"PutRequest": {"Item": {"pk": {"S": f"a{i}"}}}} for i in range(25)]})
    assert first["UnprocessedItems"] == {}
    with pytest.raises(ClientError) as err:
        ddb.batch_write_item(RequestItems={name: [{"PutRequest": {"Item": {"pk": {"S": f"b{i}"}}}} for i in range(25)]})
    e = err.value.response
    assert e["Error"]["Code"] == "ThrottlingException"
    assert e["throttlingReasons"] == [
        {"reason": "TableWriteMaxOnDemandThroughputExceeded", "resource": ARN_PREFIX + name}
    ]
    # -1 removes the maximum; reads were never capped.
    ddb.update_table(TableName=name, OnDemandThroughput={"MaxWriteRequestUnits": -1})
    assert "OnDemandThroughput" not in ddb.describe_table(TableName=name)["Table"]


def test_warm_throughput_pre_warms_a_table(modelled):
    ddb, srv = modelled
    name = make(ddb, range_key=False, WarmThroughput={"ReadUnitsPerSecond": 12000, "WriteUnitsPerSecond": 10000})
    # A ceiling of at least 10,000 WRU needs 16 partitions (4 doubled
    # twice: 10,000 / 1,000 rounded up to a power-of-two split).
    warm = ddb.describe_table(TableName=name)["Table"]["WarmThroughput"]
    assert warm == {"ReadUnitsPerSecond": 12000, "WriteUnitsPerSecond": 10000, "Status": "ACTIVE"}
    assert raw_describe(srv.url, name)["PartitionCount"] == 16
    ddb.update_table(TableName=name, WarmThroughput={"WriteUnitsPerSecond": 20000})
    assert ddb.describe_table(TableName=name)["Table"]["WarmThroughput"]["WriteUnitsPerSecond"] == 20000
    assert raw_describe(srv.url, name)["PartitionCount"] == 32
    # Raised, it cannot be lowered (DynamoDB's message, from ack-api-quirks'
    # catalogue of them, DDB-TABLE-442); the same value again is no change.
    expect_error(
        lambda: ddb.update_table(TableName=name, WarmThroughput={"WriteUnitsPerSecond": 19999}),
        "ValidationException",
        "One or more parameter values were invalid: Requested WriteUnitsPerSecond for WarmThroughput for table is "
        "lower than current WarmThroughput, decreasing WarmThroughput is not supported",
    )
    # Refused before anything else in the request is applied: no index.
    expect_error(
        lambda: ddb.update_table(
            TableName=name,
            WarmThroughput={"WriteUnitsPerSecond": 19999},
            AttributeDefinitions=[{"AttributeName": "g", "AttributeType": "S"}],
            GlobalSecondaryIndexUpdates=[
                {
                    "Create": {
                        "IndexName": "by-g",
                        "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
                        "Projection": {"ProjectionType": "KEYS_ONLY"},
                    }
                }
            ],
        ),
        "ValidationException",
        "One or more parameter values were invalid: Create global secondary index cannot be specified when "
        "updating WarmThroughput",
    )
    assert "GlobalSecondaryIndexes" not in ddb.describe_table(TableName=name)["Table"]
    ddb.update_table(TableName=name, WarmThroughput={"ReadUnitsPerSecond": 12000, "WriteUnitsPerSecond": 20000})
    assert ddb.describe_table(TableName=name)["Table"]["WarmThroughput"]["WriteUnitsPerSecond"] == 20000


def test_a_gsis_on_demand_maximum_throttles_the_base_tables_writes(modelled):
    """A GSI's own OnDemandThroughput caps the writes it takes; a base-table
    write its maximum refuses is throttled, naming the index (A13, A28)."""
    ddb, srv = modelled
    gsi = {
        "IndexName": "by_g",
        "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
        "Projection": {"ProjectionType": "KEYS_ONLY"},
        "OnDemandThroughput": {"MaxWriteRequestUnits": 10},
    }
    name = "thr-" + uuid.uuid4().hex[:12]
    ddb.create_table(
        TableName=name,
        BillingMode="PAY_PER_REQUEST",
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}, {"AttributeName": "g", "AttributeType": "S"}],
        GlobalSecondaryIndexes=[gsi],
    )
    described = ddb.describe_table(TableName=name)["Table"]
    assert "OnDemandThroughput" not in described, "the index's maximum is not the table's"
    assert described["GlobalSecondaryIndexes"][0]["OnDemandThroughput"] == {"MaxWriteRequestUnits": 10}
    # Items without the index key write no entry: the index's maximum does
    # not touch them.
    for batch in range(3):
        plain = [{"PutRequest": {"Item": {"pk": {"S": f"p{batch}-{i}"}}}} for i in range(25)]
        assert ddb.batch_write_item(RequestItems={name: plain})["UnprocessedItems"] == {}
    # Items with it: the first batch finds the maximum's bucket with tokens
    # and is taken whole; the next is refused whole, for the index.
    indexed = lambda prefix: [  # noqa: E731
        {"PutRequest": {"Item": {"pk": {"S": f"{prefix}{i}"}, "g": {"S": "x"}}}} for i in range(25)
    ]
    assert ddb.batch_write_item(RequestItems={name: indexed("a")})["UnprocessedItems"] == {}
    with pytest.raises(ClientError) as err:
        ddb.batch_write_item(RequestItems={name: indexed("b")})
    e = err.value.response
    assert e["Error"]["Code"] == "ThrottlingException"
    assert e["throttlingReasons"] == [
        {"reason": "IndexWriteMaxOnDemandThroughputExceeded", "resource": ARN_PREFIX + name + "/index/by_g"}
    ]
    # -1 removes the index's maximum.
    ddb.update_table(TableName=name, GlobalSecondaryIndexUpdates=[
        {"Update": {"IndexName": "by_g", "OnDemandThroughput": {"MaxWriteRequestUnits": -1}}}
    ])
    assert "OnDemandThroughput" not in ddb.describe_table(TableName=name)["Table"]["GlobalSecondaryIndexes"][0]
    assert ddb.batch_write_item(RequestItems={name: indexed("c")})["UnprocessedItems"] == {}
