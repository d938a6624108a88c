"""BatchWriteItem, BatchGetItem and boto3's Table.batch_writer."""

from __future__ import annotations

import pytest
from botocore.exceptions import ClientError

from conftest import expect_error, unique_name


def put_req(item):
    return {"PutRequest": {"Item": item}}


def del_req(key):
    return {"DeleteRequest": {"Key": key}}


def k(v):
    return {"pk": {"S": v}}


HR_KEY = {"pk": {"S": "p"}, "sk": {"S": "1"}}


def get(ddb, table, key):
    return ddb.get_item(TableName=table, Key=key, ConsistentRead=True).get("Item")


# ---------------------------------------------------------------- BatchWriteItem


def test_batch_write_put_and_delete(ddb, table):
    ddb.put_item(TableName=table, Item={**k("old"), "v": {"S": "1"}})
    resp = ddb.batch_write_item(
        RequestItems={table: [put_req({**k("a"), "v": {"N": "1"}}), put_req({**k("b"), "v": {"N": "2"}}), del_req(k("old"))]}
    )
    assert resp["UnprocessedItems"] == {}
    assert get(ddb, table, k("a")) == {**k("a"), "v": {"N": "1"}}
    assert get(ddb, table, k("b")) == {**k("b"), "v": {"N": "2"}}
    assert get(ddb, table, k("old")) is None


def test_batch_write_delete_missing_item_is_fine(ddb, table):
    resp = ddb.batch_write_item(RequestItems={table: [del_req(k("ghost"))]})
    assert resp["UnprocessedItems"] == {}


def test_batch_write_multiple_tables(ddb, make_table):
    t1 = make_table()
    t2 = make_table(hash_key=("id", "N"))
    resp = ddb.batch_write_item(
        RequestItems={t1: [put_req(k("x"))], t2: [put_req({"id": {"N": "1"}}), put_req({"id": {"N": "2"}})]}
    )
    assert resp["UnprocessedItems"] == {}
    assert get(ddb, t1, k("x")) == k("x")
    assert ddb.scan(TableName=t2)["Count"] == 2


def test_batch_write_25_items(ddb, table):
    reqs = [put_req({**k(f"i{i:02d}"), "n": {"N": str(i)}}) for i in range(25)]
    resp = ddb.batch_write_item(RequestItems={table: reqs})
    assert resp["UnprocessedItems"] == {}
    assert ddb.scan(TableName=table, Select="COUNT")["Count"] == 25


def test_batch_write_26_items_one_table(ddb, table):
    reqs = [put_req(k(f"i{i:02d}")) for i in range(26)]
    # The live message embeds the Java rendering of the whole request map in
    # Value '...'; that part cannot be reproduced, so assert both ends.
    expect_error(
        lambda: ddb.batch_write_item(RequestItems={table: reqs}),
        "ValidationException",
        startswith="1 validation error detected: Value '",
        endswith="' at 'requestItems' failed to satisfy constraint: Map value must satisfy constraint: "
        "[Member must have length less than or equal to 25, Member must have length greater than or equal to 1]",
    )
    assert ddb.scan(TableName=table)["Count"] == 0


def test_batch_write_26_items_across_tables(ddb, make_table):
    t1, t2 = make_table(), make_table()
    expect_error(
        lambda: ddb.batch_write_item(
            RequestItems={t1: [put_req(k(f"a{i}")) for i in range(13)], t2: [put_req(k(f"b{i}")) for i in range(13)]}
        ),
        "ValidationException",
        "Too many items requested for the BatchWriteItem call",
    )
    assert ddb.scan(TableName=t1)["Count"] == 0
    assert ddb.scan(TableName=t2)["Count"] == 0


def test_batch_write_empty_request_items(ddb_raw):
    expect_error(
        lambda: ddb_raw.batch_write_item(RequestItems={}),
        "ValidationException",
        "1 validation error detected: Value '{}' at 'requestItems' failed to satisfy constraint: "
        "Member must have length greater than or equal to 1",
    )


@pytest.mark.parametrize(
    "table_fixture, writes",
    [
        pytest.param("table", [put_req(k("d")), put_req({**k("d"), "v": {"S": "2"}})], id="two-puts"),
        pytest.param("table", [put_req(k("d")), del_req(k("d"))], id="put-and-delete"),
        pytest.param("table_hr", [put_req(HR_KEY), del_req(HR_KEY)], id="put-and-delete-composite-key"),
    ],
)
def test_batch_write_duplicate_keys(ddb, request, table_fixture, writes):
    name = request.getfixturevalue(table_fixture)
    expect_error(
        lambda: ddb.batch_write_item(RequestItems={name: writes}),
        "ValidationException",
        "Provided list of item keys contains duplicates",
    )
    # The first put (an item that is only its key) was not written either.
    assert get(ddb, name, writes[0]["PutRequest"]["Item"]) is None


def test_batch_write_same_hash_different_range_is_not_duplicate(ddb, table_hr):
    resp = ddb.batch_write_item(
        RequestItems={
            table_hr: [
                put_req({"pk": {"S": "p"}, "sk": {"S": "1"}}),
                put_req({"pk": {"S": "p"}, "sk": {"S": "2"}}),
            ]
        }
    )
    assert resp["UnprocessedItems"] == {}
    assert ddb.scan(TableName=table_hr)["Count"] == 2


def test_batch_write_missing_table(ddb):
    expect_error(
        lambda: ddb.batch_write_item(RequestItems={unique_name("missing"): [put_req(k("a"))]}),
        "ResourceNotFoundException",
        "Requested resource not found",
    )


@pytest.mark.parametrize(
    "table_fixture, write, message",
    [
        pytest.param("table", del_req({"pk": {"N": "1"}}), "The provided key element does not match the schema", id="delete-key-mismatch"),
        pytest.param(
            "table_hr",
            put_req({"pk": {"S": "x"}}),
            "One or more parameter values were invalid: Missing the key sk in the item",
            id="put-missing-range-key",
        ),
        pytest.param(
            "table",
            put_req({"pk": {"N": "1"}}),
            "One or more parameter values were invalid: Type mismatch for key pk expected: S actual: N",
            id="put-wrong-key-type",
        ),
    ],
)
def test_batch_write_invalid_key(ddb, request, table_fixture, write, message):
    name = request.getfixturevalue(table_fixture)
    expect_error(lambda: ddb.batch_write_item(RequestItems={name: [write]}), "ValidationException", message)


def test_batch_write_oversized_item_rejects_whole_batch(ddb, table):
    big = {**k("big"), "data": {"S": "x" * (400 * 1024)}}
    expect_error(
        lambda: ddb.batch_write_item(RequestItems={table: [put_req(k("small")), put_req(big)]}),
        "ValidationException",
        "Item size has exceeded the maximum allowed size",
    )
    assert get(ddb, table, k("small")) is None


def test_batch_write_one_bad_table_rejects_all(ddb, table):
    expect_error(
        lambda: ddb.batch_write_item(
            RequestItems={table: [put_req(k("ok"))], unique_name("missing"): [put_req(k("a"))]}
        ),
        "ResourceNotFoundException",
        "Requested resource not found",
    )
    assert get(ddb, table, k("ok")) is None


# ---------------------------------------------------------------- BatchGetItem


def test_batch_get_basic(ddb, table):
    for i in range(5):
        ddb.put_item(TableName=table, Item={**k(f"g{i}"), "n": {"N": str(i)}})
    resp = ddb.batch_get_item(
        RequestItems={table: {"Keys": [k("g0"), k("g3"), k("nope")], "ConsistentRead": True}}
    )
    items = sorted(resp["Responses"][table], key=lambda i: i["pk"]["S"])
    assert items == [{**k("g0"), "n": {"N": "0"}}, {**k("g3"), "n": {"N": "3"}}]
    assert resp["UnprocessedKeys"] == {}


def test_batch_get_multiple_tables_and_projection(ddb, make_table):
    t1 = make_table()
    t2 = make_table(hash_key=("id", "N"))
    ddb.put_item(TableName=t1, Item={**k("a"), "x": {"S": "1"}, "y": {"S": "2"}})
    ddb.put_item(TableName=t2, Item={"id": {"N": "7"}, "name": {"S": "seven"}, "z": {"S": "zz"}})
    resp = ddb.batch_get_item(
        RequestItems={
            t1: {"Keys": [k("a")], "ProjectionExpression": "x"},
            t2: {"Keys": [{"id": {"N": "7"}}], "ProjectionExpression": "#n", "ExpressionAttributeNames": {"#n": "name"}},
        }
    )
    assert resp["Responses"][t1] == [{"x": {"S": "1"}}]
    assert resp["Responses"][t2] == [{"name": {"S": "seven"}}]
    assert resp["UnprocessedKeys"] == {}


def test_batch_get_no_matches_returns_empty_list(ddb, table):
    resp = ddb.batch_get_item(RequestItems={table: {"Keys": [k("none1"), k("none2")]}})
    assert resp["Responses"] == {table: []}
    assert resp["UnprocessedKeys"] == {}


def test_batch_get_100_keys(ddb, table):
    with_items = [k(f"h{i:03d}") for i in range(100)]
    for start in range(0, 100, 25):
        ddb.batch_write_item(RequestItems={table: [put_req(key) for key in with_items[start : start + 25]]})
    resp = ddb.batch_get_item(RequestItems={table: {"Keys": with_items}})
    assert len(resp["Responses"][table]) == 100
    assert resp["UnprocessedKeys"] == {}


def test_batch_get_more_than_100_keys(ddb, make_table):
    t1, t2 = make_table(), make_table()
    expect_error(
        lambda: ddb.batch_get_item(
            RequestItems={t1: {"Keys": [k(str(i)) for i in range(100)]}, t2: {"Keys": [k("100")]}}
        ),
        "ValidationException",
        "Too many items requested for the BatchGetItem call",
    )


def test_batch_get_duplicate_keys(ddb, table):
    expect_error(
        lambda: ddb.batch_get_item(RequestItems={table: {"Keys": [k("a"), k("a")]}}),
        "ValidationException",
        "Provided list of item keys contains duplicates",
    )


def test_batch_get_missing_table(ddb):
    expect_error(
        lambda: ddb.batch_get_item(RequestItems={unique_name("missing"): {"Keys": [k("a")]}}),
        "ResourceNotFoundException",
        "Requested resource not found",
    )


def test_batch_get_key_mismatch(ddb, table):
    expect_error(
        lambda: ddb.batch_get_item(RequestItems={table: {"Keys": [{"pk": {"S": "a"}, "extra": {"S": "b"}}]}}),
        "ValidationException",
        "The provided key element does not match the schema",
    )


def test_batch_get_empty_request_items(ddb_raw):
    expect_error(
        lambda: ddb_raw.batch_get_item(RequestItems={}),
        "ValidationException",
        "1 validation error detected: Value '{}' at 'requestItems' failed to satisfy constraint: "
        "Member must have length greater than or equal to 1",
    )


# ---------------------------------------------------------------- batch_writer


def test_batch_writer_many_items(ddb_resource, ddb, table):
    t = ddb_resource.Table(table)
    with t.batch_writer() as bw:
        for i in range(60):
            bw.put_item(Item={"pk": f"w{i:03d}", "n": i})
        bw.delete_item(Key={"pk": "w000"})
    assert ddb.scan(TableName=table, Select="COUNT")["Count"] == 59
    assert t.get_item(Key={"pk": "w059"})["Item"]["n"] == 59


def test_batch_writer_duplicates_without_overwrite_fail(ddb_resource, table):
    t = ddb_resource.Table(table)
    with pytest.raises(ClientError) as info:
        with t.batch_writer() as bw:
            bw.put_item(Item={"pk": "same", "v": 1})
            bw.put_item(Item={"pk": "same", "v": 2})
    assert info.value.response["Error"]["Code"] == "ValidationException"
    assert info.value.response["Error"]["Message"] == "Provided list of item keys contains duplicates"


def test_batch_writer_overwrite_by_pkeys(ddb_resource, make_table):
    name = make_table(range_key=("sk", "S"))
    t = ddb_resource.Table(name)
    with t.batch_writer(overwrite_by_pkeys=["pk", "sk"]) as bw:
        bw.put_item(Item={"pk": "p", "sk": "s", "v": 1})
        bw.put_item(Item={"pk": "p", "sk": "s", "v": 2})
        bw.put_item(Item={"pk": "p", "sk": "t", "v": 3})
        bw.delete_item(Key={"pk": "p", "sk": "t"})
    items = t.scan()["Items"]
    assert items == [{"pk": "p", "sk": "s", "v": 2}]
