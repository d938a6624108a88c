"""Secondary indexes through boto3: CreateTable with GSIs and LSIs,
DescribeTable, index maintenance by every write, Query and Scan on indexes
(projections, Select, paging, sparse indexes), multi-attribute GSI keys,
index key validation, ConsumedCapacity INDEXES and GSI back-pressure.
Facts and messages: docs/reference/dynamodb-api-surface.md, section 1."""

from __future__ import annotations

import pytest

from conftest import batch_put, expect_error, unique_name

S = lambda v: {"S": v}  # noqa: E731
N = lambda v: {"N": str(v)}  # noqa: E731


def attrs(**types):
    """AttributeDefinitions from name=type keywords, in their order."""
    return [{"AttributeName": name, "AttributeType": t} for name, t in types.items()]


def gsi(name, keys, projection=None, **extra):
    return {
        "IndexName": name,
        "KeySchema": [{"AttributeName": a, "KeyType": t} for a, t in keys],
        "Projection": {"ProjectionType": "ALL"} if projection is None else projection,
        **extra,
    }


@pytest.fixture
def orders(ddb, make_table):
    """pk/sk table; GSI by_status (status, amount), KEYS_ONLY GSI by_customer
    (customer), INCLUDE LSI by_amount (pk, amount) projecting note."""
    return make_table(
        range_key=("sk", "S"),
        AttributeDefinitions=attrs(pk="S", sk="S", status="S", amount="N", customer="S"),
        GlobalSecondaryIndexes=[
            gsi("by_status", [("status", "HASH"), ("amount", "RANGE")]),
            gsi("by_customer", [("customer", "HASH")], {"ProjectionType": "KEYS_ONLY"}),
        ],
        LocalSecondaryIndexes=[
            gsi(
                "by_amount",
                [("pk", "HASH"), ("amount", "RANGE")],
                {"ProjectionType": "INCLUDE", "NonKeyAttributes": ["note"]},
            )
        ],
    )


def order(sk, status=None, amount=None, customer=None, note=None, pk="u1"):
    item = {"pk": S(pk), "sk": S(sk)}
    if status is not None:
        item["status"] = S(status)
    if amount is not None:
        item["amount"] = N(amount)
    if customer is not None:
        item["customer"] = S(customer)
    if note is not None:
        item["note"] = S(note)
    item["extra"] = S("x")
    return item


def sks(resp):
    return [i["sk"]["S"] for i in resp["Items"]]


def query_index(ddb, table, index, condition, values, **kw):
    """Query of `index` with key condition `condition` and its values."""
    return ddb.query(
        TableName=table, IndexName=index, KeyConditionExpression=condition, ExpressionAttributeValues=values, **kw
    )


def by_status(ddb, table, status, **kw):
    return ddb.query(
        TableName=table,
        IndexName="by_status",
        KeyConditionExpression="#s = :s",
        ExpressionAttributeNames={"#s": "status"},
        ExpressionAttributeValues={":s": S(status)},
        **kw,
    )


def test_describe_table_lists_every_index(ddb, orders):
    for i in range(3):
        ddb.put_item(TableName=orders, Item=order(f"o{i}", "open", 10 + i, "c1"))
    ddb.put_item(TableName=orders, Item=order("o9", customer="c2"))  # in by_customer only
    t = ddb.describe_table(TableName=orders)["Table"]
    gsis = {g["IndexName"]: g for g in t["GlobalSecondaryIndexes"]}
    assert set(gsis) == {"by_status", "by_customer"}
    st = gsis["by_status"]
    assert st["KeySchema"] == [
        {"AttributeName": "status", "KeyType": "HASH"},
        {"AttributeName": "amount", "KeyType": "RANGE"},
    ]
    assert st["Projection"] == {"ProjectionType": "ALL"}
    assert st["IndexStatus"] == "ACTIVE"
    assert st["IndexArn"] == t["TableArn"] + "/index/by_status"
    assert st["ItemCount"] == 3
    assert "Backfilling" not in st
    assert st["ProvisionedThroughput"]["ReadCapacityUnits"] == 0
    assert gsis["by_customer"]["ItemCount"] == 4
    assert gsis["by_customer"]["Projection"] == {"ProjectionType": "KEYS_ONLY"}
    [lsi] = t["LocalSecondaryIndexes"]
    assert lsi["IndexName"] == "by_amount"
    assert lsi["Projection"] == {"ProjectionType": "INCLUDE", "NonKeyAttributes": ["note"]}
    assert lsi["ItemCount"] == 3
    assert "IndexStatus" not in lsi


def test_every_write_keeps_the_gsi_in_step_and_items_without_its_key_stay_out(ddb, orders):
    ddb.put_item(TableName=orders, Item=order("a", "open", 30))
    ddb.put_item(TableName=orders, Item=order("b", "open", 10))
    ddb.put_item(TableName=orders, Item=order("c", amount=5))  # no status: sparse
    ddb.batch_write_item(RequestItems={orders: [{"PutRequest": {"Item": order("d", "open", 20)}}]})
    assert sks(by_status(ddb, orders, "open")) == ["b", "d", "a"], "ordered by amount"
    assert sks(by_status(ddb, orders, "open", ScanIndexForward=False)) == ["a", "d", "b"]
    # UpdateItem moves "a" from open to shipped.
    ddb.update_item(
        TableName=orders,
        Key={"pk": S("u1"), "sk": S("a")},
        UpdateExpression="SET #s = :s",
        ExpressionAttributeNames={"#s": "status"},
        ExpressionAttributeValues={":s": S("shipped")},
    )
    assert sks(by_status(ddb, orders, "open")) == ["b", "d"]
    assert sks(by_status(ddb, orders, "shipped")) == ["a"]
    # REMOVE of the key attribute takes the item out of the index.
    ddb.update_item(TableName=orders, Key={"pk": S("u1"), "sk": S("d")}, UpdateExpression="REMOVE amount")
    assert sks(by_status(ddb, orders, "open")) == ["b"]
    # DeleteItem and a transaction.
    ddb.delete_item(TableName=orders, Key={"pk": S("u1"), "sk": S("b")})
    ddb.transact_write_items(
        TransactItems=[
            {"Put": {"TableName": orders, "Item": order("e", "open", 1)}},
            {"Delete": {"TableName": orders, "Key": {"pk": S("u1"), "sk": S("a")}}},
        ]
    )
    assert sks(by_status(ddb, orders, "open")) == ["e"]
    assert sks(by_status(ddb, orders, "shipped")) == []
    scanned = ddb.scan(TableName=orders, IndexName="by_status")
    assert sks(scanned) == ["e"] and scanned["ScannedCount"] == 1


def test_projections_keys_only_and_include_and_select_rules(ddb, orders):
    ddb.put_item(TableName=orders, Item=order("a", "open", 7, "c1", note="fragile"))
    keys_only = query_index(ddb, orders, "by_customer", "customer = :c", {":c": S("c1")})
    assert keys_only["Items"] == [{"pk": S("u1"), "sk": S("a"), "customer": S("c1")}]
    lsi = query_index(ddb, orders, "by_amount", "pk = :p AND amount > :a", {":p": S("u1"), ":a": N(5)})
    assert lsi["Items"] == [{"pk": S("u1"), "sk": S("a"), "amount": N(7), "note": S("fragile")}]
    # An LSI fetches what it does not project from the table ...
    whole = query_index(ddb, orders, "by_amount", "pk = :p", {":p": S("u1")}, Select="ALL_ATTRIBUTES")
    assert whole["Items"] == [order("a", "open", 7, "c1", note="fragile")]
    # ... a GSI refuses to.
    expect_error(
        lambda: query_index(ddb, orders, "by_customer", "customer = :c", {":c": S("c1")}, Select="ALL_ATTRIBUTES"),
        "ValidationException",
        "One or more parameter values were invalid: Select type ALL_ATTRIBUTES is not supported for global "
        "secondary index by_customer because its projection type is not ALL",
    )
    expect_error(
        lambda: ddb.query(
            TableName=orders,
            KeyConditionExpression="pk = :p",
            ExpressionAttributeValues={":p": S("u1")},
            Select="ALL_PROJECTED_ATTRIBUTES",
        ),
        "ValidationException",
        "1 validation error detected: ALL_PROJECTED_ATTRIBUTES can be used only when Querying using an IndexName",
    )


def test_index_read_errors(ddb, orders):
    expect_error(
        lambda: by_status(ddb, orders, "open", ConsistentRead=True),
        "ValidationException",
        "Consistent reads are not supported on global secondary indexes",
    )
    expect_error(
        lambda: ddb.scan(TableName=orders, IndexName="nope"),
        "ValidationException",
        "The table does not have the specified index: nope",
    )
    # LSIs allow strongly consistent reads.
    query_index(ddb, orders, "by_amount", "pk = :p", {":p": S("u1")}, ConsistentRead=True)


@pytest.mark.parametrize(
    "value,actual",
    [(N(1), "N"), ({"NULL": True}, "NULL")],
    ids=["number", "null"],
)
def test_a_wrong_typed_index_key_refuses_the_whole_write(ddb, orders, value, actual):
    item = order("a", amount=1)
    item["status"] = value
    expected = (
        "One or more parameter values were invalid: Type mismatch for Index Key status Expected: S "
        f"Actual: {actual} IndexName: by_status"
    )
    expect_error(lambda: ddb.put_item(TableName=orders, Item=item), "ValidationException", expected)
    expect_error(
        lambda: ddb.batch_write_item(
            RequestItems={orders: [{"PutRequest": {"Item": order("ok", "open", 1)}}, {"PutRequest": {"Item": item}}]}
        ),
        "ValidationException",
        expected,
    )
    assert ddb.scan(TableName=orders)["Items"] == [], "nothing reached the table"


def test_a_wrong_typed_key_of_several_indexes_names_the_first_by_name(ddb, make_table):
    # A GSI and an LSI keyed on x: the message names the alphabetically
    # first (CONF's transaction messages name gsi1 of gsi1, gsi2, lsi1).
    table = make_table(
        range_key=("sk", "S"),
        AttributeDefinitions=attrs(pk="S", sk="S", x="S"),
        GlobalSecondaryIndexes=[gsi("z_gsi", [("x", "HASH")])],
        LocalSecondaryIndexes=[gsi("a_lsi", [("pk", "HASH"), ("x", "RANGE")])],
    )
    expect_error(
        lambda: ddb.put_item(TableName=table, Item={"pk": S("a"), "sk": S("b"), "x": N(1)}),
        "ValidationException",
        "One or more parameter values were invalid: Type mismatch for Index Key x Expected: S Actual: N "
        "IndexName: a_lsi",
    )


@pytest.mark.parametrize(
    "keys",
    [[("a", "HASH"), ("a", "HASH"), ("b", "RANGE")], [("a", "HASH"), ("b", "HASH"), ("a", "RANGE")]],
    ids=["hash-twice", "hash-and-range"],
)
def test_an_index_key_attribute_named_twice_is_refused(ddb_raw, keys):
    # DynamoDB's text, without the usual prefix (ack-api-quirks DDB-TABLE-123,
    # DDB-TABLE-442, live 2026-10).
    create_error(
        ddb_raw,
        "The KeySchema contains multiple key attributes with the same name",
        AttributeDefinitions=attrs(pk="S", a="S", b="S"),
        GlobalSecondaryIndexes=[gsi("twice", keys)],
    )


def test_an_empty_string_index_key_is_refused(ddb, orders):
    expect_error(
        lambda: ddb.put_item(TableName=orders, Item=order("a", "", 1)),
        "ValidationException",
        "One or more parameter values are not valid. A value specified for a secondary index key is not supported. "
        "The AttributeValue for a key attribute cannot contain an empty string value. IndexName: by_status, "
        "IndexKey: status",
    )


def test_nested_paths_into_key_attributes_are_refused(ddb, orders):
    # S34: key attributes are scalars; a path into one is refused, naming
    # it as a table key (Key) or an index key (IndexKey).
    ddb.put_item(TableName=orders, Item=order("a", "open", 1, "c1"))
    scalars = "Key attributes must be scalars; list random access '[]' and map lookup '.' are not allowed: "
    expect_error(
        lambda: ddb.update_item(
            TableName=orders,
            Key={"pk": S("u1"), "sk": S("a")},
            UpdateExpression="SET #s.y = :v",
            ExpressionAttributeNames={"#s": "status"},
            ExpressionAttributeValues={":v": S("x")},
        ),
        "ValidationException",
        scalars + "IndexKey: status",
    )
    key = {"pk": S("u1"), "sk": S("a")}
    expect_error(
        lambda: ddb.get_item(TableName=orders, Key=key, ProjectionExpression="pk.x"),
        "ValidationException",
        scalars + "Key: pk",
    )
    expect_error(
        lambda: ddb.get_item(TableName=orders, Key=key, ProjectionExpression="customer[0]"),
        "ValidationException",
        scalars + "IndexKey: customer",
    )
    expect_error(
        lambda: ddb.scan(TableName=orders, FilterExpression="attribute_exists(amount.c)"),
        "ValidationException",
        scalars + "IndexKey: amount",
    )
    expect_error(
        lambda: query_index(ddb, orders, "by_status", "#s = :s", {":s": S("open")},
                            ExpressionAttributeNames={"#s": "status"}, FilterExpression="customer.x = :s"),
        "ValidationException",
        scalars + "IndexKey: customer",
    )
    assert ddb.get_item(TableName=orders, Key=key)["Item"] == order("a", "open", 1, "c1"), "nothing changed"


def test_paging_through_an_index_resumes_at_the_index_and_table_key(ddb, orders):
    batch_put(ddb, orders, [order(f"o{i:02d}", "open", i % 4) for i in range(10)])
    whole = sks(by_status(ddb, orders, "open"))
    assert len(whole) == 10
    seen, start, pages = [], None, 0
    while True:
        kw = {"Limit": 3}
        if start:
            kw["ExclusiveStartKey"] = start
        page = by_status(ddb, orders, "open", **kw)
        seen += sks(page)
        pages += 1
        start = page.get("LastEvaluatedKey")
        if not start:
            break
        assert set(start) == {"pk", "sk", "status", "amount"}
    assert seen == whole and pages == 4
    expect_error(
        lambda: by_status(ddb, orders, "open", ExclusiveStartKey={"pk": S("u1"), "sk": S("o01")}),
        "ValidationException",
        "The provided starting key is invalid",
    )


def test_consumed_capacity_indexes_reports_each_index(ddb, orders):
    out = ddb.put_item(TableName=orders, Item=order("a", "open", 1, "c1"), ReturnConsumedCapacity="INDEXES")
    c = out["ConsumedCapacity"]
    # S59: item operations report CapacityUnits alone, at every level.
    assert c["Table"] == {"CapacityUnits": 1.0}
    assert c["GlobalSecondaryIndexes"] == {
        "by_status": {"CapacityUnits": 1.0},
        "by_customer": {"CapacityUnits": 1.0},
    }
    assert c["LocalSecondaryIndexes"] == {"by_amount": {"CapacityUnits": 1.0}}
    assert c["CapacityUnits"] == 4.0
    # Moving the item to another index key costs a delete and a put there.
    out = ddb.put_item(TableName=orders, Item=order("a", "shipped", 1, "c1"), ReturnConsumedCapacity="INDEXES")
    assert out["ConsumedCapacity"]["GlobalSecondaryIndexes"] == {
        "by_status": {"CapacityUnits": 2.0}
    }
    assert ddb.put_item(TableName=orders, Item=order("b"), ReturnConsumedCapacity="TOTAL")["ConsumedCapacity"] == {
        "TableName": orders,
        "CapacityUnits": 1.0,
    }
    q = by_status(ddb, orders, "shipped", ReturnConsumedCapacity="INDEXES")["ConsumedCapacity"]
    assert q["GlobalSecondaryIndexes"] == {"by_status": {"CapacityUnits": 0.5, "ReadCapacityUnits": 0.5}}
    assert "Table" not in q, "an index read reports only that index"


@pytest.fixture
def tournament(make_table):
    """Multi-attribute GSI: partition key (region, season), sort key (round, score)."""
    return make_table(
        AttributeDefinitions=attrs(pk="S", region="S", season="N", round="S", score="N"),
        GlobalSecondaryIndexes=[
            gsi("games", [("region", "HASH"), ("season", "HASH"), ("round", "RANGE"), ("score", "RANGE")])
        ],
    )


def test_multi_attribute_gsi_keys_sort_component_by_component(ddb, tournament):
    rows = [("g1", "final", 50), ("g2", "semi", 70), ("g3", "final", 90), ("g4", "semi", 10), ("g5", "final", 70)]
    for pk, rnd, score in rows:
        ddb.put_item(
            TableName=tournament,
            Item={"pk": S(pk), "region": S("eu"), "season": N(2026), "round": S(rnd), "score": N(score)},
        )
    ddb.put_item(TableName=tournament, Item={"pk": S("g9"), "region": S("eu"), "season": N(2026)})  # sparse
    vals = {":r": S("eu"), ":s": N(2026)}
    cond = "#r = :r AND season = :s"
    names = {"#r": "region"}

    def games(extra_cond="", extra_vals=None, **kw):
        resp = ddb.query(
            TableName=tournament,
            IndexName="games",
            KeyConditionExpression=cond + extra_cond,
            ExpressionAttributeNames={**names, **({"#rd": "round"} if "#rd" in extra_cond else {})},
            ExpressionAttributeValues={**vals, **(extra_vals or {})},
            **kw,
        )
        return [i["pk"]["S"] for i in resp["Items"]]

    assert games() == ["g1", "g5", "g3", "g4", "g2"]
    assert games(" AND #rd = :f AND score > :x", {":f": S("final"), ":x": N(50)}) == ["g5", "g3"]
    assert games(" AND #rd = :f AND score BETWEEN :a AND :b", {":f": S("semi"), ":a": N(0), ":b": N(20)}) == ["g4"]
    expect_error(
        lambda: games(" AND score > :x", {":x": N(50)}),
        "ValidationException",
        "RANGE key attributes round must have equality conditions specified in the query because a condition is "
        "present on key attribute score",
    )
    # S24: every partition-key component needs `=`; the text is DynamoDB's
    # RANGE message's HASH counterpart (alternator's AWS-run tests match
    # "HASH.*equality"; a DynamoDBMapper user quotes "HASH key attributes
    # createdAt must have equality conditions").
    expect_error(
        lambda: query_index(
            ddb, tournament, "games", "#r = :r AND season > :s", vals, ExpressionAttributeNames=names
        ),
        "ValidationException",
        startswith="HASH key attributes season must have equality conditions",
    )
    expect_error(
        lambda: query_index(ddb, tournament, "games", "#r = :r", {":r": S("eu")}, ExpressionAttributeNames=names),
        "ValidationException",
        "Query condition missed key schema element: season",
    )
    t = ddb.describe_table(TableName=tournament)["Table"]
    assert [k["KeyType"] for k in t["GlobalSecondaryIndexes"][0]["KeySchema"]] == ["HASH", "HASH", "RANGE", "RANGE"]
    assert t["GlobalSecondaryIndexes"][0]["ItemCount"] == 5


def create_error(ddb_raw, message, **kw):
    base = dict(
        TableName=unique_name(),
        AttributeDefinitions=[
            {"AttributeName": "pk", "AttributeType": "S"},
            {"AttributeName": "g", "AttributeType": "S"},
        ],
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        BillingMode="PAY_PER_REQUEST",
    )
    base.update(kw)
    expect_error(lambda: ddb_raw.create_table(**base), "ValidationException", message)


P = "One or more parameter values were invalid: "


@pytest.mark.parametrize(
    "message,kw",
    [
        (P + "List of GlobalSecondaryIndexes is empty", dict(GlobalSecondaryIndexes=[])),
        (
            P + "Table KeySchema does not have a range key, which is required when specifying a LocalSecondaryIndex",
            dict(LocalSecondaryIndexes=[gsi("lsi", [("pk", "HASH"), ("g", "RANGE")])]),
        ),
        (
            P + "Duplicate index name: idx",
            dict(GlobalSecondaryIndexes=[gsi("idx", [("g", "HASH")]), gsi("idx", [("g", "HASH")])]),
        ),
        (P + "Unknown ProjectionType: null", dict(GlobalSecondaryIndexes=[gsi("idx", [("g", "HASH")], {})])),
        (
            P + "ProjectionType is INCLUDE, but NonKeyAttributes is not specified",
            dict(GlobalSecondaryIndexes=[gsi("idx", [("g", "HASH")], {"ProjectionType": "INCLUDE"})]),
        ),
        (
            P + "ProjectionType is ALL, but NonKeyAttributes is specified",
            dict(
                GlobalSecondaryIndexes=[
                    gsi("idx", [("g", "HASH")], {"ProjectionType": "ALL", "NonKeyAttributes": ["x"]})
                ]
            ),
        ),
        (
            P + "Number of attributes in KeySchema does not exactly match number of attributes defined in "
            "AttributeDefinitions",
            dict(),
        ),
        (
            P + "ProvisionedThroughput should not be specified for index: idx when BillingMode is PAY_PER_REQUEST",
            dict(
                GlobalSecondaryIndexes=[
                    gsi("idx", [("g", "HASH")], ProvisionedThroughput={"ReadCapacityUnits": 1, "WriteCapacityUnits": 1})
                ]
            ),
        ),
    ],
    ids=["empty-gsi-list", "lsi-without-range", "duplicate-name", "no-projection-type", "include-without-names",
         "all-with-names", "unused-definition", "gsi-throughput-on-demand"],
)
def test_create_table_index_validation(ddb_raw, message, kw):
    create_error(ddb_raw, message, **kw)


@pytest.fixture
def narrow(make_table):
    """A PROVISIONED table (100 RCU, 1,000 WCU) whose GSI "narrow" (hash key g)
    has 1 RCU and 1 WCU."""
    return make_table(
        billing="PROVISIONED",
        rcu=100,
        wcu=1000,
        AttributeDefinitions=attrs(pk="S", g="S"),
        GlobalSecondaryIndexes=[
            gsi("narrow", [("g", "HASH")], ProvisionedThroughput={"ReadCapacityUnits": 1, "WriteCapacityUnits": 1})
        ],
    )


def test_a_provisioned_gsi_throttles_base_table_writes_it_cannot_absorb(ddb, narrow):
    table = narrow
    arn = ddb.describe_table(TableName=table)["Table"]["TableArn"]
    # Items without g never touch the GSI: the table's 1,000 WCU absorb them.
    for i in range(50):
        ddb.put_item(TableName=table, Item={"pk": S(f"free{i}")})
    err = None
    for i in range(400):
        try:
            ddb.put_item(TableName=table, Item={"pk": S(f"k{i}"), "g": S("hot")})
        except ddb.exceptions.ProvisionedThroughputExceededException as e:
            err = e
            break
    assert err is not None, "a 1 WCU GSI cannot take 400 writes at once"
    assert err.response["ThrottlingReasons"] == [
        {"reason": "IndexWriteProvisionedThroughputExceeded", "resource": arn + "/index/narrow"}
    ]
    # The refused write is not in the table.
    assert "Item" not in ddb.get_item(TableName=table, Key={"pk": S(f"k{i}")})


def test_update_table_adds_a_gsi_with_a_backfill_then_deletes_it(ddb, make_table):
    table = make_table()
    batch_put(ddb, table, [{"pk": S(f"k{i}"), "team": S("red" if i % 2 else "blue")} for i in range(6)])
    ddb.put_item(TableName=table, Item={"pk": S("odd"), "team": N(7)})  # wrong type: skipped by the backfill
    out = ddb.update_table(
        TableName=table,
        AttributeDefinitions=[{"AttributeName": "team", "AttributeType": "S"}],
        GlobalSecondaryIndexUpdates=[{"Create": gsi("by_team", [("team", "HASH")])}],
    )["TableDescription"]
    [created] = out["GlobalSecondaryIndexes"]
    assert (created["IndexName"], created["IndexStatus"], created["Backfilling"]) == ("by_team", "CREATING", True)
    assert {"AttributeName": "team", "AttributeType": "S"} in out["AttributeDefinitions"]
    desc = wait_index_active(ddb, table, "by_team")
    assert (desc["IndexStatus"], desc["ItemCount"]) == ("ACTIVE", 6)
    assert "Backfilling" not in desc, "an ACTIVE index shows no Backfilling"
    resp = query_index(ddb, table, "by_team", "team = :t", {":t": S("red")})
    assert sorted(i["pk"]["S"] for i in resp["Items"]) == ["k1", "k3", "k5"]
    # Now a wrong-typed write is refused.
    expect_error(
        lambda: ddb.put_item(TableName=table, Item={"pk": S("odd2"), "team": N(1)}),
        "ValidationException",
        "One or more parameter values were invalid: Type mismatch for Index Key team Expected: S Actual: N "
        "IndexName: by_team",
    )
    expect_error(
        lambda: ddb.update_table(TableName=table, GlobalSecondaryIndexUpdates=[{"Delete": {"IndexName": "nope"}}]),
        "ResourceNotFoundException",
        f"Requested resource not found: Index nope for table {table}",
    )
    expect_error(
        lambda: ddb.update_table(
            TableName=table,
            AttributeDefinitions=[{"AttributeName": "a", "AttributeType": "S"}, {"AttributeName": "b", "AttributeType": "S"}],
            GlobalSecondaryIndexUpdates=[
                {"Create": gsi("by_aaa", [("a", "HASH")])},
                {"Create": gsi("by_bbb", [("b", "HASH")])},
            ],
        ),
        "LimitExceededException",
        "Subscriber limit exceeded: Only 1 online index can be created or deleted simultaneously per table",
    )
    out = ddb.update_table(TableName=table, GlobalSecondaryIndexUpdates=[{"Delete": {"IndexName": "by_team"}}])
    assert "GlobalSecondaryIndexes" not in out["TableDescription"]
    ddb.put_item(TableName=table, Item={"pk": S("odd2"), "team": N(1)})  # no index constrains team any more
    expect_error(
        lambda: query_index(ddb, table, "by_team", "team = :t", {":t": S("red")}),
        "ValidationException",
        "The table does not have the specified index: by_team",
    )


def test_a_backfilling_gsi_holds_off_a_second_index_change_and_reads_until_deleted(ddb, make_table):
    # 25 items into a 1 WCU index: its backfill lasts at least 25 s, far
    # longer than the requests below, so none of them races its end.
    table = make_table(billing="PROVISIONED", rcu=100, wcu=1000)
    batch_put(ddb, table, [{"pk": S(f"k{i}"), "g": S("x")} for i in range(25)])
    out = ddb.update_table(
        TableName=table,
        AttributeDefinitions=[{"AttributeName": "g", "AttributeType": "S"}],
        GlobalSecondaryIndexUpdates=[
            {"Create": gsi("slow", [("g", "HASH")], ProvisionedThroughput={"ReadCapacityUnits": 1, "WriteCapacityUnits": 1})}
        ],
    )["TableDescription"]
    [created] = out["GlobalSecondaryIndexes"]
    assert (created["IndexStatus"], created["Backfilling"]) == ("CREATING", True)
    # A second online index change waits for this one.
    expect_error(
        lambda: ddb.update_table(
            TableName=table,
            AttributeDefinitions=[{"AttributeName": "other", "AttributeType": "S"}],
            GlobalSecondaryIndexUpdates=[
                {"Create": gsi("by_other", [("other", "HASH")], ProvisionedThroughput={"ReadCapacityUnits": 1, "WriteCapacityUnits": 1})}
            ],
        ),
        "LimitExceededException",
        "Subscriber limit exceeded: Only 1 online index can be created or deleted simultaneously per table",
    )
    for read in (
        lambda: query_index(ddb, table, "slow", "g = :g", {":g": S("x")}),
        lambda: ddb.scan(TableName=table, IndexName="slow"),
    ):
        expect_error(read, "ValidationException", "Cannot read from backfilling global secondary index: slow")
    [still] = ddb.describe_table(TableName=table)["Table"]["GlobalSecondaryIndexes"]
    assert (still["IndexStatus"], still["Backfilling"]) == ("CREATING", True)
    # The index being built may itself be deleted.
    out = ddb.update_table(TableName=table, GlobalSecondaryIndexUpdates=[{"Delete": {"IndexName": "slow"}}])
    assert "GlobalSecondaryIndexes" not in out["TableDescription"]
    expect_error(
        lambda: query_index(ddb, table, "slow", "g = :g", {":g": S("x")}),
        "ValidationException",
        "The table does not have the specified index: slow",
    )


def wait_index_active(ddb, table, name, polls=200):
    """DescribeTable until index `name` is ACTIVE (bounded: a backfill of a
    few items takes well under a second)."""
    import time

    for _ in range(polls):
        [desc] = [g for g in ddb.describe_table(TableName=table)["Table"]["GlobalSecondaryIndexes"] if g["IndexName"] == name]
        if desc["IndexStatus"] == "ACTIVE":
            return desc
        time.sleep(0.05)
    raise AssertionError(f"index {name} still {desc['IndexStatus']} after {polls} polls")


def test_item_collection_metrics_on_a_table_with_an_lsi(ddb, orders, make_table):
    out = ddb.put_item(TableName=orders, Item=order("a", "open", 1), ReturnItemCollectionMetrics="SIZE")
    assert out["ItemCollectionMetrics"] == {"ItemCollectionKey": {"pk": S("u1")}, "SizeEstimateRangeGB": [0.0, 1.0]}
    out = ddb.batch_write_item(
        RequestItems={orders: [{"PutRequest": {"Item": order("b", amount=2, pk="u2")}}]},
        ReturnItemCollectionMetrics="SIZE",
    )
    assert out["ItemCollectionMetrics"] == {
        orders: [{"ItemCollectionKey": {"pk": S("u2")}, "SizeEstimateRangeGB": [0.0, 1.0]}]
    }
    assert "ItemCollectionMetrics" not in ddb.put_item(TableName=orders, Item=order("c", "open", 3))
    out = ddb.transact_write_items(
        TransactItems=[{"Put": {"TableName": orders, "Item": order("d", amount=4, pk="u3")}}],
        ReturnItemCollectionMetrics="SIZE",
    )
    assert out["ItemCollectionMetrics"] == {
        orders: [{"ItemCollectionKey": {"pk": S("u3")}, "SizeEstimateRangeGB": [0.0, 1.0]}]
    }
    plain = make_table()
    out = ddb.put_item(TableName=plain, Item={"pk": S("x")}, ReturnItemCollectionMetrics="SIZE")
    assert "ItemCollectionMetrics" not in out, "only tables with an LSI have item collections"


def test_switching_to_on_demand_takes_the_gsis_along(ddb, narrow):
    table = narrow
    ddb.update_table(TableName=table, BillingMode="PAY_PER_REQUEST")
    [g] = ddb.describe_table(TableName=table)["Table"]["GlobalSecondaryIndexes"]
    assert (g["ProvisionedThroughput"]["ReadCapacityUnits"], g["ProvisionedThroughput"]["WriteCapacityUnits"]) == (0, 0)
    # 200 writes into the index: a 1 WCU index would throttle them, an on-demand one does not.
    for i in range(200):
        ddb.put_item(TableName=table, Item={"pk": S(f"k{i}"), "g": S("hot")})
    assert ddb.describe_table(TableName=table)["Table"]["GlobalSecondaryIndexes"][0]["ItemCount"] == 200


def test_switching_to_provisioned_gives_the_gsis_their_throughput_in_the_same_request(ddb, orders):
    # orders is on demand with two GSIs: both need throughput for the switch.
    switch = dict(
        TableName=orders,
        BillingMode="PROVISIONED",
        ProvisionedThroughput={"ReadCapacityUnits": 5, "WriteCapacityUnits": 6},
    )
    gsi_update = lambda name, r, w: {  # noqa: E731
        "Update": {"IndexName": name, "ProvisionedThroughput": {"ReadCapacityUnits": r, "WriteCapacityUnits": w}}
    }
    expect_error(
        lambda: ddb.update_table(**switch, GlobalSecondaryIndexUpdates=[gsi_update("by_status", 3, 4)]),
        "ValidationException",
        "One or more parameter values were invalid: ProvisionedThroughput must be specified for index: by_customer",
    )
    assert ddb.describe_table(TableName=orders)["Table"]["BillingModeSummary"]["BillingMode"] == "PAY_PER_REQUEST"
    ddb.update_table(**switch, GlobalSecondaryIndexUpdates=[gsi_update("by_status", 3, 4), gsi_update("by_customer", 1, 2)])
    t = ddb.describe_table(TableName=orders)["Table"]
    assert t["BillingModeSummary"]["BillingMode"] == "PROVISIONED"
    throughput = {
        g["IndexName"]: (g["ProvisionedThroughput"]["ReadCapacityUnits"], g["ProvisionedThroughput"]["WriteCapacityUnits"])
        for g in t["GlobalSecondaryIndexes"]
    }
    assert throughput == {"by_status": (3, 4), "by_customer": (1, 2)}


def test_update_table_names_gsis_only_and_checks_the_projected_attribute_total(ddb, orders, make_table):
    # by_amount is an LSI: a GlobalSecondaryIndexUpdate cannot touch it (S15;
    # DynamoDB's texts, ack-api-quirks DDB-TABLE-137 and -442).
    for action, verb in (
        ({"Update": {"IndexName": "by_amount", "ProvisionedThroughput": {"ReadCapacityUnits": 1, "WriteCapacityUnits": 1}}}, "update"),
        ({"Delete": {"IndexName": "by_amount"}}, "delete"),
    ):
        expect_error(
            lambda: ddb.update_table(TableName=orders, GlobalSecondaryIndexUpdates=[action]),
            "ValidationException",
            f"Cannot {verb} an index that is not a GlobalSecondaryIndex: by_amount",
        )
    # 5 indexes of 20 projected names make 100; a GSI added with one more
    # passes 100 (S18), as it would at CreateTable.
    include = lambda i: {"ProjectionType": "INCLUDE", "NonKeyAttributes": [f"a{i}_{j}" for j in range(20)]}  # noqa: E731
    table = make_table(
        AttributeDefinitions=attrs(pk="S", **{f"k{i}": "S" for i in range(5)}),
        GlobalSecondaryIndexes=[gsi(f"gsi{i}", [(f"k{i}", "HASH")], include(i)) for i in range(5)],
    )
    expect_error(
        lambda: ddb.update_table(
            TableName=table,
            AttributeDefinitions=attrs(k5="S"),
            GlobalSecondaryIndexUpdates=[
                {"Create": gsi("gsi5", [("k5", "HASH")], {"ProjectionType": "INCLUDE", "NonKeyAttributes": ["x"]})}
            ],
        ),
        "ValidationException",
        "One or more parameter values were invalid: The sum of NonKeyAttributes across all secondary indexes "
        "exceeds the limit of 100",
    )
    assert len(ddb.describe_table(TableName=table)["Table"]["GlobalSecondaryIndexes"]) == 5


def test_an_lsi_filter_on_an_unprojected_attribute_still_returns_the_entries(ddb, orders):
    ddb.put_item(TableName=orders, Item=order("a", "open", 7, note="fragile"))
    ddb.put_item(TableName=orders, Item=order("b", "open", 9, note="plain"))
    out = query_index(
        ddb,
        orders,
        "by_amount",
        "pk = :p",
        {":p": S("u1"), ":s": S("open")},
        FilterExpression="#s = :s",
        ExpressionAttributeNames={"#s": "status"},
    )
    # The filter reads status (fetched from the table); the page shows the
    # INCLUDE entries: keys, amount and note, not status or extra.
    assert out["Items"] == [
        {"pk": S("u1"), "sk": S("a"), "amount": N(7), "note": S("fragile")},
        {"pk": S("u1"), "sk": S("b"), "amount": N(9), "note": S("plain")},
    ]
