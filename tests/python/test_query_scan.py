"""Query and Scan: key conditions, ordering, paging, 1 MB pages, filters, Select, projections, parallel scan."""

from __future__ import annotations

import pytest

from conftest import batch_put, expect_error, expect_expr_error


@pytest.fixture
def qtable(ddb, table_hn):
    """pk 'p' with sk 0..19 (n = sk*10, even flag), plus pk 'other' with 3 items."""
    items = [
        {"pk": {"S": "p"}, "sk": {"N": str(i)}, "n": {"N": str(i * 10)}, "even": {"BOOL": i % 2 == 0}, "tag": {"S": f"t{i:02d}"}}
        for i in range(20)
    ]
    items += [{"pk": {"S": "other"}, "sk": {"N": str(i)}} for i in range(3)]
    batch_put(ddb, table_hn, items)
    return table_hn


def q(ddb, table, cond, values, **kw):
    return ddb.query(TableName=table, KeyConditionExpression=cond, ExpressionAttributeValues=values, **kw)


def sks(resp):
    return [int(i["sk"]["N"]) for i in resp["Items"]]


P = {":p": {"S": "p"}}


@pytest.mark.parametrize(
    "cond,extra,expected",
    [
        ("pk = :p", {}, list(range(20))),
        ("pk = :p AND sk = :a", {":a": {"N": "7"}}, [7]),
        ("pk = :p AND sk < :a", {":a": {"N": "3"}}, [0, 1, 2]),
        ("pk = :p AND sk <= :a", {":a": {"N": "3"}}, [0, 1, 2, 3]),
        ("pk = :p AND sk > :a", {":a": {"N": "16"}}, [17, 18, 19]),
        ("pk = :p AND sk >= :a", {":a": {"N": "16"}}, [16, 17, 18, 19]),
        ("pk = :p AND sk BETWEEN :a AND :b", {":a": {"N": "5"}, ":b": {"N": "8"}}, [5, 6, 7, 8]),
        ("(pk = :p) AND (sk > :a)", {":a": {"N": "17"}}, [18, 19]),
        ("pk = :p AND sk = :a", {":a": {"N": "99"}}, []),
    ],
)
def test_key_conditions_numeric_range(ddb, qtable, cond, extra, expected):
    resp = q(ddb, qtable, cond, {**P, **extra})
    assert sks(resp) == expected
    assert resp["Count"] == len(expected)
    assert resp["ScannedCount"] == len(expected)
    assert "LastEvaluatedKey" not in resp


def test_key_condition_begins_with(ddb, table_hr):
    for sk in ["apple", "apricot", "banana", "ap", "a", "APPLE"]:
        ddb.put_item(TableName=table_hr, Item={"pk": {"S": "f"}, "sk": {"S": sk}})
    resp = q(ddb, table_hr, "pk = :p AND begins_with(sk, :pre)", {":p": {"S": "f"}, ":pre": {"S": "ap"}})
    assert [i["sk"]["S"] for i in resp["Items"]] == ["ap", "apple", "apricot"]


def test_key_condition_begins_with_binary(ddb, make_table):
    name = make_table(range_key=("sk", "B"))
    for sk in [b"\x01\x02", b"\x01\x03", b"\x02", b"\x01"]:
        ddb.put_item(TableName=name, Item={"pk": {"S": "b"}, "sk": {"B": sk}})
    resp = q(ddb, name, "pk = :p AND begins_with(sk, :pre)", {":p": {"S": "b"}, ":pre": {"B": b"\x01"}})
    assert [bytes(i["sk"]["B"]) for i in resp["Items"]] == [b"\x01", b"\x01\x02", b"\x01\x03"]


def test_key_condition_with_attribute_names(ddb, qtable):
    resp = q(ddb, qtable, "#h = :p AND #r < :a", {**P, ":a": {"N": "2"}}, ExpressionAttributeNames={"#h": "pk", "#r": "sk"})
    assert sks(resp) == [0, 1]


def test_scan_index_forward_false(ddb, qtable):
    resp = q(ddb, qtable, "pk = :p AND sk >= :a", {**P, ":a": {"N": "15"}}, ScanIndexForward=False)
    assert sks(resp) == [19, 18, 17, 16, 15]


def test_query_limit_paging_until_exhausted(ddb, qtable):
    pages, seen, kwargs = 0, [], {}
    while True:
        resp = q(ddb, qtable, "pk = :p", P, Limit=6, **kwargs)
        pages += 1
        assert len(resp["Items"]) <= 6
        seen += sks(resp)
        if "LastEvaluatedKey" not in resp:
            break
        lek = resp["LastEvaluatedKey"]
        assert lek == {"pk": {"S": "p"}, "sk": resp["Items"][-1]["sk"]}
        kwargs = {"ExclusiveStartKey": lek}
        assert pages < 10
    assert seen == list(range(20))
    assert pages in (4, 5)


def test_query_paging_backwards(ddb, qtable):
    seen, kwargs = [], {}
    while True:
        resp = q(ddb, qtable, "pk = :p", P, Limit=7, ScanIndexForward=False, **kwargs)
        seen += sks(resp)
        if "LastEvaluatedKey" not in resp:
            break
        kwargs = {"ExclusiveStartKey": resp["LastEvaluatedKey"]}
    assert seen == list(range(19, -1, -1))


def test_query_filter_count_vs_scanned_count(ddb, qtable):
    resp = q(
        ddb, qtable, "pk = :p AND sk < :a", {**P, ":a": {"N": "10"}, ":t": {"BOOL": True}}, FilterExpression="even = :t"
    )
    assert sks(resp) == [0, 2, 4, 6, 8]
    assert resp["Count"] == 5
    assert resp["ScannedCount"] == 10


def test_query_limit_applies_before_filter(ddb, qtable):
    resp = q(ddb, qtable, "pk = :p", {**P, ":t": {"BOOL": True}}, FilterExpression="even = :t", Limit=4)
    assert sks(resp) == [0, 2]
    assert resp["ScannedCount"] == 4
    assert resp["Count"] == 2
    assert resp["LastEvaluatedKey"] == {"pk": {"S": "p"}, "sk": {"N": "3"}}


def test_query_page_can_be_empty_with_last_evaluated_key(ddb, qtable):
    resp = q(ddb, qtable, "pk = :p", {**P, ":big": {"N": "1000"}}, FilterExpression="n > :big", Limit=3)
    assert resp["Items"] == []
    assert resp["Count"] == 0
    assert resp["ScannedCount"] == 3
    assert resp["LastEvaluatedKey"] == {"pk": {"S": "p"}, "sk": {"N": "2"}}


def test_query_select_count(ddb, qtable):
    resp = q(ddb, qtable, "pk = :p AND sk < :a", {**P, ":a": {"N": "5"}}, Select="COUNT")
    assert "Items" not in resp
    assert resp["Count"] == 5
    assert resp["ScannedCount"] == 5


def test_query_projection_and_specific_attributes(ddb, qtable):
    resp = q(ddb, qtable, "pk = :p AND sk < :a", {**P, ":a": {"N": "2"}}, ProjectionExpression="tag, n")
    assert resp["Items"] == [{"tag": {"S": "t00"}, "n": {"N": "0"}}, {"tag": {"S": "t01"}, "n": {"N": "10"}}]
    resp2 = q(
        ddb, qtable, "pk = :p AND sk < :a", {**P, ":a": {"N": "2"}}, ProjectionExpression="tag", Select="SPECIFIC_ATTRIBUTES"
    )
    assert resp2["Items"] == [{"tag": {"S": "t00"}}, {"tag": {"S": "t01"}}]


def test_query_select_count_with_projection_rejected(ddb, qtable):
    expect_error(
        lambda: q(ddb, qtable, "pk = :p", P, Select="COUNT", ProjectionExpression="tag"),
        "ValidationException",
        "1 validation error detected: Cannot specify the ProjectionExpression when choosing to get only the Count",
    )


def test_query_consistent_read(ddb, qtable):
    resp = q(ddb, qtable, "pk = :p AND sk = :a", {**P, ":a": {"N": "3"}}, ConsistentRead=True)
    assert sks(resp) == [3]


def test_query_one_mb_page_limit(ddb, make_table):
    name = make_table(range_key=("sk", "N"))
    pad = "x" * (100 * 1024)
    batch_put(ddb, name, [{"pk": {"S": "big"}, "sk": {"N": str(i)}, "d": {"S": pad}} for i in range(15)])
    first = q(ddb, name, "pk = :p", {":p": {"S": "big"}})
    # 15 x ~100 KB = ~1.5 MB: the first page stops at the 1 MB limit.
    assert 9 <= len(first["Items"]) <= 11
    assert first["LastEvaluatedKey"] == {"pk": {"S": "big"}, "sk": first["Items"][-1]["sk"]}
    rest = q(ddb, name, "pk = :p", {":p": {"S": "big"}}, ExclusiveStartKey=first["LastEvaluatedKey"])
    assert "LastEvaluatedKey" not in rest
    assert sks(first) + sks(rest) == list(range(15))


def test_scan_one_mb_page_limit(ddb, table):
    pad = "y" * (100 * 1024)
    batch_put(ddb, table, [{"pk": {"S": f"s{i:02d}"}, "d": {"S": pad}} for i in range(15)])
    first = ddb.scan(TableName=table)
    assert 9 <= len(first["Items"]) <= 11
    assert first["ScannedCount"] == len(first["Items"])
    assert "LastEvaluatedKey" in first
    rest = ddb.scan(TableName=table, ExclusiveStartKey=first["LastEvaluatedKey"])
    assert "LastEvaluatedKey" not in rest
    names = [i["pk"]["S"] for i in first["Items"] + rest["Items"]]
    assert sorted(names) == [f"s{i:02d}" for i in range(15)]


def test_query_other_partition_isolated(ddb, qtable):
    resp = q(ddb, qtable, "pk = :o", {":o": {"S": "other"}})
    assert sks(resp) == [0, 1, 2]
    assert q(ddb, qtable, "pk = :x", {":x": {"S": "nobody"}})["Items"] == []


def test_query_hash_only_table(ddb, table):
    ddb.put_item(TableName=table, Item={"pk": {"S": "only"}, "v": {"N": "1"}})
    resp = q(ddb, table, "pk = :p", {":p": {"S": "only"}})
    assert resp["Items"] == [{"pk": {"S": "only"}, "v": {"N": "1"}}]


# ---------------------------------------------------------------- query errors


def test_query_missing_hash_key_condition(ddb, qtable):
    expect_error(
        lambda: q(ddb, qtable, "sk = :a", {":a": {"N": "1"}}),
        "ValidationException",
        "Query condition missed key schema element: pk",
    )


def test_query_hash_key_not_equality(ddb, qtable):
    expect_error(
        lambda: q(ddb, qtable, "pk > :p", P),
        "ValidationException",
        "Query key condition not supported",
    )


def test_query_begins_with_on_number_range(ddb, qtable):
    expect_expr_error(
        lambda: q(ddb, qtable, "pk = :p AND begins_with(sk, :a)", {**P, ":a": {"N": "1"}}),
        "Invalid KeyConditionExpression: Incorrect operand type for operator or function; operator or function: begins_with, operand type: N",
    )


def test_query_without_key_condition(ddb, qtable):
    expect_error(
        lambda: ddb.query(TableName=qtable),
        "ValidationException",
        "Either the KeyConditions or KeyConditionExpression parameter must be specified in the request.",
    )


def test_query_invalid_exclusive_start_key(ddb, qtable):
    expect_error(
        lambda: q(ddb, qtable, "pk = :p", P, ExclusiveStartKey={"pk": {"S": "p"}}),
        "ValidationException",
        "The provided starting key is invalid: The provided key element does not match the schema",
    )


def test_query_limit_zero(ddb_raw, qtable):
    # DynamoDB's own quirk (reference S90, verified against DynamoDB in 2026):
    # Query names no value and a capitalised 'Limit'; Scan says "Value '0' at 'limit'".
    expect_error(
        lambda: q(ddb_raw, qtable, "pk = :p", P, Limit=0),
        "ValidationException",
        "1 validation error detected: Value at 'Limit' failed to satisfy constraint: Member must have value greater than or equal to 1",
    )


# ---------------------------------------------------------------- scan


def scan_all(ddb, table, **kw):
    items, pages, kwargs = [], 0, {}
    while True:
        resp = ddb.scan(TableName=table, **kw, **kwargs)
        pages += 1
        items += resp["Items"]
        if "LastEvaluatedKey" not in resp:
            return items, pages
        kwargs = {"ExclusiveStartKey": resp["LastEvaluatedKey"]}


def test_scan_returns_everything(ddb, qtable):
    items, _ = scan_all(ddb, qtable)
    assert len(items) == 23


def test_scan_limit_paging(ddb, qtable):
    items, pages = scan_all(ddb, qtable, Limit=5)
    assert pages in (5, 6)
    keys = sorted((i["pk"]["S"], int(i["sk"]["N"])) for i in items)
    assert len(keys) == 23
    assert len(set(keys)) == 23


def test_scan_filter_count_vs_scanned(ddb, qtable):
    resp = ddb.scan(TableName=qtable, FilterExpression="n >= :a", ExpressionAttributeValues={":a": {"N": "150"}})
    assert sorted(sks(resp)) == [15, 16, 17, 18, 19]
    assert resp["Count"] == 5
    assert resp["ScannedCount"] == 23


def test_scan_select_count(ddb, qtable):
    resp = ddb.scan(TableName=qtable, Select="COUNT", FilterExpression="attribute_exists(tag)")
    assert "Items" not in resp
    assert resp["Count"] == 20
    assert resp["ScannedCount"] == 23


def test_scan_projection(ddb, qtable):
    resp = ddb.scan(
        TableName=qtable,
        ProjectionExpression="sk, #t",
        ExpressionAttributeNames={"#t": "tag"},
        FilterExpression="pk = :p AND sk = :s",
        ExpressionAttributeValues={**P, ":s": {"N": "4"}},
    )
    assert resp["Items"] == [{"sk": {"N": "4"}, "tag": {"S": "t04"}}]


def test_scan_select_count_with_projection_rejected(ddb, qtable):
    expect_error(
        lambda: ddb.scan(TableName=qtable, Select="COUNT", ProjectionExpression="tag"),
        "ValidationException",
        "Cannot specify the ProjectionExpression when choosing to get only the Count",
    )


@pytest.mark.parametrize("is_query", [True, False], ids=["query", "scan"])
def test_select_rules_in_dynamodb_order(ddb, qtable, is_query):
    # S51: Query wraps these in the constraint envelope, Scan does not.
    envelope = "1 validation error detected: " if is_query else ""
    read = (
        (lambda **kw: ddb.query(TableName=qtable, KeyConditionExpression="pk = :p", ExpressionAttributeValues=P, **kw))
        if is_query
        else (lambda **kw: ddb.scan(TableName=qtable, **kw))
    )
    expect_error(
        lambda: read(Select="SPECIFIC_ATTRIBUTES"),
        "ValidationException",
        envelope + "Must specify the AttributesToGet or ProjectionExpression when choosing to get SPECIFIC_ATTRIBUTES",
    )
    # With no IndexName and a projection, the projection is reported.
    expect_error(
        lambda: read(Select="ALL_PROJECTED_ATTRIBUTES", ProjectionExpression="tag"),
        "ValidationException",
        envelope + "Cannot specify the ProjectionExpression when choosing to get ALL_PROJECTED_ATTRIBUTES",
    )


@pytest.mark.parametrize("total", [1, 2, 3, 7])
def test_parallel_scan_covers_every_item_once(ddb, make_table, total):
    name = make_table()
    batch_put(ddb, name, [{"pk": {"S": f"item-{i:03d}"}} for i in range(100)])
    seen = []
    for segment in range(total):
        items, _ = scan_all(ddb, name, Segment=segment, TotalSegments=total, Limit=9)
        seen += [i["pk"]["S"] for i in items]
    assert sorted(seen) == [f"item-{i:03d}" for i in range(100)]


def test_parallel_scan_segment_out_of_range(ddb, table):
    # Live wording is believed to be "The Segment parameter is zero-based and must be less
    # than parameter TotalSegments: Segment: 2 is not less than TotalSegments: 2"; assert the stable part.
    expect_error(
        lambda: ddb.scan(TableName=table, Segment=2, TotalSegments=2),
        "ValidationException",
        startswith="The Segment parameter is zero-based and must be less than parameter TotalSegments",
    )


def test_parallel_scan_segment_without_total(ddb, table):
    # Exact live text uncertain; the requirement that both be given is documented (reference C7).
    expect_error(lambda: ddb.scan(TableName=table, Segment=0), "ValidationException", contains="TotalSegments")


# ---------------------------------------------------------------- paginators


def test_query_paginator(ddb, qtable):
    pages = list(
        ddb.get_paginator("query").paginate(
            TableName=qtable,
            KeyConditionExpression="pk = :p",
            ExpressionAttributeValues=P,
            PaginationConfig={"PageSize": 3},
        )
    )
    assert [int(i["sk"]["N"]) for p in pages for i in p["Items"]] == list(range(20))
    assert len(pages) in (7, 8)


def test_scan_paginator_with_filter(ddb, qtable):
    pages = list(
        ddb.get_paginator("scan").paginate(
            TableName=qtable,
            FilterExpression="even = :t",
            ExpressionAttributeValues={":t": {"BOOL": True}},
            PaginationConfig={"PageSize": 4},
        )
    )
    assert sum(p["Count"] for p in pages) == 10
    assert sum(p["ScannedCount"] for p in pages) == 23


def test_resource_query_with_conditions(ddb_resource, qtable):
    from boto3.dynamodb.conditions import Attr, Key

    t = ddb_resource.Table(qtable)
    resp = t.query(KeyConditionExpression=Key("pk").eq("p") & Key("sk").between(3, 6), FilterExpression=Attr("even").eq(False))
    assert [int(i["sk"]) for i in resp["Items"]] == [3, 5]
