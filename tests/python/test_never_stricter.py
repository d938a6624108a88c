"""Never stricter than DynamoDB: workloads that DynamoDB accepts (the client
suites that run them pass against DynamoDB with SDK retries turned off) are
accepted by the server with its capacity model on (issue 13, workloads 1-4).

DynamoDB admits a request when the partition has tokens and charges it its
actual units (reference A39), so one large batch under one key is not
refused, and an idle partition absorbs a short burst beyond its 1,000
units a second. Each test starts its own server, so the capacity state is
fresh, and makes one attempt per call: any throttling would fail it."""

import pytest
from botocore.exceptions import ClientError

from conftest import ServerProcess, make_client, padded_item, unique_name

KB = 1024


@pytest.fixture
def modelled():
    srv = ServerProcess()
    yield make_client(srv.url, retries={"total_max_attempts": 1, "mode": "standard"}), srv
    assert srv.stop() == 0


@pytest.fixture
def resource():
    import boto3

    from conftest import boto_args

    srv = ServerProcess()
    args = boto_args(srv.url, retries={"total_max_attempts": 1, "mode": "standard"})
    yield boto3.resource("dynamodb", **args), make_client(srv.url, retries={"total_max_attempts": 1}), srv
    assert srv.stop() == 0


def create(ddb, *, sort=False, billing="PAY_PER_REQUEST", units=5):
    name = unique_name("ns")
    keys = [{"AttributeName": "pk", "KeyType": "HASH"}]
    attrs = [{"AttributeName": "pk", "AttributeType": "S"}]
    if sort:
        keys.append({"AttributeName": "sk", "KeyType": "RANGE"})
        attrs.append({"AttributeName": "sk", "AttributeType": "N"})
    extra = {"BillingMode": billing}
    if billing == "PROVISIONED":
        extra["ProvisionedThroughput"] = {"ReadCapacityUnits": units, "WriteCapacityUnits": units}
    ddb.create_table(TableName=name, KeySchema=keys, AttributeDefinitions=attrs, **extra)
    return name


def one_key_items(count, size):
    """`count` items of `size` bytes under partition key "hot", sort keys 0.."""
    out = []
    for i in range(count):
        item = padded_item("hot", size - len("sk") - 2, sk="")
        del item["sk"]
        item["sk"] = {"N": str(i)}
        out.append(item)
    return out


def test_one_batch_of_25_items_of_50_kb_under_one_key_is_accepted_whole(modelled):
    # Workload 1: 1,250 write units in one request, all on one partition.
    ddb, _ = modelled
    name = create(ddb, sort=True)
    items = one_key_items(25, 50 * KB)
    resp = ddb.batch_write_item(
        RequestItems={name: [{"PutRequest": {"Item": i}} for i in items]}, ReturnConsumedCapacity="TOTAL"
    )
    assert resp["UnprocessedItems"] == {}
    [consumed] = resp["ConsumedCapacity"]
    assert (consumed["TableName"], consumed["CapacityUnits"]) == (name, 1250.0)
    # 1.25 MB under one key: two pages of a Query (1 MB each at most).
    pages = ddb.get_paginator("query").paginate(
        TableName=name, KeyConditionExpression="pk = :p", ExpressionAttributeValues={":p": {"S": "hot"}}, Select="COUNT"
    )
    counts = [p["Count"] for p in pages]
    assert (len(counts), sum(counts)) == (2, 25)


def test_batch_writer_200_items_of_10_kb_under_one_key_then_query(resource):
    # Workload 2: boto3's batch_writer sends 8 requests of 25 (2,000 write
    # units within about a second); it re-sends unprocessed items itself,
    # so the proof is that no request failed and that nothing came back
    # unprocessed: count the requests and what they left.
    res, ddb, _ = resource
    name = create(ddb, sort=True)
    table = res.Table(name)
    answers = []
    ddb_meta = table.meta.client.meta.events

    def note(http_response, parsed, **_):
        answers.append((http_response.status_code, len(parsed.get("UnprocessedItems") or {})))

    ddb_meta.register("after-call.dynamodb.BatchWriteItem", note)
    with table.batch_writer() as writer:
        for i in range(200):
            writer.put_item(Item={"pk": "hot", "sk": i, "data": "x" * (10 * KB - 20)})
    assert answers == [(200, 0)] * 8
    pages = ddb.get_paginator("query").paginate(
        TableName=name, KeyConditionExpression="pk = :p", ExpressionAttributeValues={":p": {"S": "hot"}}, Select="COUNT"
    )
    assert sum(p["Count"] for p in pages) == 200


def test_a_5_wcu_table_takes_three_small_batches_and_a_transaction_at_once(modelled):
    # Workload 3: used a moment after creation; six writes within a second
    # on a 5 WCU table, then a transaction of three items at double cost.
    ddb, _ = modelled
    name = create(ddb, billing="PROVISIONED", units=5)
    for b in range(3):
        resp = ddb.batch_write_item(
            RequestItems={name: [{"PutRequest": {"Item": {"pk": {"S": f"b{b}-{i}"}}}} for i in range(2)]}
        )
        assert resp["UnprocessedItems"] == {}
    other = create(ddb, billing="PROVISIONED", units=5)
    resp = ddb.transact_write_items(
        TransactItems=[{"Put": {"TableName": other, "Item": {"pk": {"S": f"t{i}"}}}} for i in range(3)],
        ReturnConsumedCapacity="TOTAL",
    )
    [consumed] = resp["ConsumedCapacity"]
    assert (consumed["TableName"], consumed["CapacityUnits"]) == (other, 6.0)


def test_a_failed_condition_in_a_transaction_on_a_busy_5_wcu_table_is_a_condition_failure(modelled):
    # Workload 3: the cancellation names the condition, not throughput,
    # even when the table has just spent its capacity.
    ddb, _ = modelled
    name = create(ddb, billing="PROVISIONED", units=5)
    ddb.transact_write_items(
        TransactItems=[{"Put": {"TableName": name, "Item": {"pk": {"S": f"t{i}"}}}} for i in range(3)]
    )
    with pytest.raises(ClientError) as err:
        ddb.transact_write_items(
            TransactItems=[
                {
                    "Put": {
                        "TableName": name,
                        "Item": {"pk": {"S": "t0"}},
                        "ConditionExpression": "attribute_not_exists(pk)",
                    }
                },
                {"Put": {"TableName": name, "Item": {"pk": {"S": "t9"}}}},
            ]
        )
    e = err.value.response
    assert e["Error"]["Code"] == "TransactionCanceledException"
    assert [r["Code"] for r in e["CancellationReasons"]] == ["ConditionalCheckFailed", "None"]


def test_a_new_table_takes_25_items_of_50_kb_then_gives_them_back_in_one_batch_get(modelled):
    # Workload 4: a new on-demand table, 1,250 write units at once, then a
    # BatchGetItem of the same 25 items (25 x 13 read units, consistent).
    ddb, _ = modelled
    name = create(ddb)
    items = [padded_item(f"k{i}", 50 * KB) for i in range(25)]
    resp = ddb.batch_write_item(RequestItems={name: [{"PutRequest": {"Item": i}} for i in items]})
    assert resp["UnprocessedItems"] == {}
    resp = ddb.batch_get_item(
        RequestItems={name: {"Keys": [{"pk": i["pk"]} for i in items], "ConsistentRead": True}},
        ReturnConsumedCapacity="TOTAL",
    )
    assert resp["UnprocessedKeys"] == {}
    assert sorted(i["pk"]["S"] for i in resp["Responses"][name]) == sorted(i["pk"]["S"] for i in items)
    assert resp["ConsumedCapacity"][0]["CapacityUnits"] == 25 * 13.0


def test_one_key_still_levels_at_its_partition_maximum_after_the_burst(modelled):
    # The other side: the burst is a reserve, not a higher rate. A second
    # round of 2,000 units under the same key right after the first finds
    # the partition in debt and is refused whole (no item admitted).
    ddb, _ = modelled
    name = create(ddb, sort=True)
    items = one_key_items(25, 50 * KB)
    refused = 0
    for round_ in range(4):
        batch = [dict(i, sk={"N": str(round_ * 25 + n)}) for n, i in enumerate(items)]
        try:
            resp = ddb.batch_write_item(RequestItems={name: [{"PutRequest": {"Item": i}} for i in batch]})
            refused += sum(len(v) for v in resp["UnprocessedItems"].values())
        except ClientError as err:
            # An on-demand table's hot partition: DynamoDB's ThrottlingException.
            assert err.response["Error"]["Code"] == "ThrottlingException"
            refused += 25
    # 5,000 units asked within a fraction of a second: the partition's
    # 300-unit bucket and 2,000-unit bank cover two requests, not four.
    assert refused >= 25, refused
