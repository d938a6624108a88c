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

from conftest import ServerProcess, make_client

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


def make(ddb, *, provisioned=None, range_key=True):
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
    ddb.create_table(**kwargs)
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
    # 25 items of 20 KB on one partition key: 500 units asked of a
    # partition that serves 1,000 units/s and holds 0.3 s of it at once.
    requests = put_requests("hot", 0, 25, 20)
    resp = ddb.batch_write_item(RequestItems={name: requests}, ReturnConsumedCapacity="TOTAL")
    unprocessed = resp["UnprocessedItems"].get(name, [])
    assert 0 < len(unprocessed) < 25, len(unprocessed)
    # Unprocessed items come back in the request's own shape, in order.
    assert unprocessed == requests[25 - len(unprocessed):]
    written = 25 - len(unprocessed)
    assert resp["ConsumedCapacity"] == [
        {"TableName": name, "CapacityUnits": 20.0 * written, "WriteCapacityUnits": 20.0 * written}
    ]
    # Keep asking: once the partition has less left than one 40 KB item,
    # nothing is admitted and the whole call fails, as on-demand tables
    # fail. The partition refills 1,000 units a second, so a call that
    # lands after a pause may still get an item in; bounded at 50 calls.
    error = None
    for attempt in range(50):
        try:
            ddb.batch_write_item(RequestItems={name: put_requests("hot", 1000 + 25 * attempt, 25, 40)})
        except ClientError as err:
            error = err.response
            break
    assert error is not None, "a hot partition refuses a whole batch at some point"
    assert error["Error"]["Code"] == "ThrottlingException"
    assert error["Error"]["Message"].startswith("Throughput exceeds the current capacity of your table or index.")
    assert error["throttlingReasons"] == [
        {"reason": "TableWriteKeyRangeThroughputExceeded", "resource": ARN_PREFIX + name}
    ]
    assert error["ResponseMetadata"]["HTTPStatusCode"] == 400


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
    # 5 RCU to read the result back; 1 WCU cannot take 3 transactional puts.
    name = make(ddb, provisioned=(5, 1), range_key=False)
    actions = [{"Put": {"TableName": name, "Item": {"pk": {"S": f"t{i}"}}}} for i in range(3)]
    with pytest.raises(ClientError) as err:
        ddb.transact_write_items(TransactItems=actions)
    e = err.value.response
    assert e["Error"]["Code"] == "TransactionCanceledException"
    assert [r["Code"] for r in e["CancellationReasons"]] == ["ProvisionedThroughputExceeded"] * 3
    # Nothing was written.
    got = ddb.batch_get_item(RequestItems={name: {"Keys": [{"pk": {"S": f"t{i}"}} for i in range(3)]}})
    assert got["UnprocessedKeys"] == {}
    assert got["Responses"][name] == []


def test_batch_get_returns_unprocessed_keys(modelled):
    ddb, _ = modelled
    name = make(ddb, provisioned=(1, 100))
    ddb.batch_write_item(RequestItems={name: put_requests("k", 0, 10, 4)})
    keys = [{"pk": {"S": "k"}, "sk": {"N": str(i)}} for i in range(10)]
    resp = ddb.batch_get_item(RequestItems={name: {"Keys": keys, "ConsistentRead": True}})
    unprocessed = resp["UnprocessedKeys"][name]
    returned = resp["Responses"][name]
    assert len(returned) + len(unprocessed["Keys"]) == 10
    assert 0 < len(unprocessed["Keys"]) < 10
    assert unprocessed["ConsistentRead"] is True
    assert {r["sk"]["N"] for r in returned} | {k["sk"]["N"] for k in unprocessed["Keys"]} == {str(i) for i in range(10)}


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
    # ceil(1/3000 + 10000/1000) = 11 partitions.
    assert raw_describe(srv.url, provisioned)["PartitionCount"] == 11
    assert ddb.describe_table(TableName=provisioned)["Table"]["WarmThroughput"]["WriteUnitsPerSecond"] == 11000


def test_metrics_count_throttled_items(modelled):
    ddb, srv = modelled
    name = make(ddb, provisioned=(1, 1), range_key=False)
    resp = ddb.batch_write_item(RequestItems={name: [{"PutRequest": {"Item": {"pk": {"S": f"m{i}"}}}} for i in range(25)]})
    refused = len(resp["UnprocessedItems"].get(name, []))
    assert refused >= 23
    text = urllib.request.urlopen(srv.url + "/metrics").read().decode()
    assert f'dynaburst_throttled_items_total{{table="{name}"}} {refused}' in text
    assert f'dynaburst_partitions{{table="{name}"}} 1' in text
    doc = json.loads(urllib.request.urlopen(srv.url + "/metrics.json").read())
    table = next(t for t in doc["tables"] if t["table"] == name)
    assert table["mode"] == "provisioned"
    assert table["provisioned"] == {"read": 1.0, "write": 1.0}
    assert table["totals"]["throttled_items"] == refused
    assert table["totals"]["write_units"] == 25 - refused


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
    assert "WarmThroughput" not in described
    text = urllib.request.urlopen(srv.url + "/metrics").read().decode()
    assert name not in text
