"""ReturnConsumedCapacity: exact unit accounting (reference section B).

Item sizes are built exactly: attribute-name UTF-8 bytes + value bytes (B1),
with List/Map overheads per B2. 1 write unit = 1 KB per item, rounded up;
1 read unit = 4 KB strongly consistent, half for eventual, double in
transactions; Query/Scan round once on the sum of the items read.
"""

from __future__ import annotations

import pytest

from conftest import batch_put, padded_item


def total(resp, table):
    cc = resp["ConsumedCapacity"]
    assert cc["TableName"] == table
    units = cc["CapacityUnits"]
    # Whether the read/write split is also filled in is unconfirmed (B13);
    # when present it must agree with the total.
    for part in ("ReadCapacityUnits", "WriteCapacityUnits"):
        if part in cc:
            assert cc[part] == units, cc
    return units


def put_units(ddb, table, item):
    """Write units a PutItem of `item` consumed (ReturnConsumedCapacity=TOTAL)."""
    return total(ddb.put_item(TableName=table, Item=item, ReturnConsumedCapacity="TOTAL"), table)


def update_units(ddb, table, pk, expr, values=None, names=None):
    """Write units an UpdateItem of item `pk` consumed (ReturnConsumedCapacity=TOTAL)."""
    kwargs = dict(TableName=table, Key={"pk": {"S": pk}}, UpdateExpression=expr, ReturnConsumedCapacity="TOTAL")
    if values:
        kwargs["ExpressionAttributeValues"] = values
    if names:
        kwargs["ExpressionAttributeNames"] = names
    return total(ddb.update_item(**kwargs), table)


def per_table(resp):
    """ConsumedCapacity list (batch/transaction ops) -> {table: units}."""
    out = {}
    for cc in resp["ConsumedCapacity"]:
        assert cc["TableName"] not in out, "one entry per table"
        out[cc["TableName"]] = cc["CapacityUnits"]
    return out


# ---------------------------------------------------------------- writes


@pytest.mark.parametrize(
    "size,units",
    [(10, 1.0), (1024, 1.0), (1025, 2.0), (1536, 2.0), (2048, 2.0), (2049, 3.0), (10 * 1024, 10.0), (400 * 1024, 400.0)],
)
def test_put_item_write_units(ddb, table, size, units):
    item = padded_item("p", size)
    assert put_units(ddb, table, item) == units


def test_no_consumed_capacity_unless_requested(ddb, table):
    resp = ddb.put_item(TableName=table, Item=padded_item("p", 100))
    assert "ConsumedCapacity" not in resp
    resp = ddb.put_item(TableName=table, Item=padded_item("p", 100), ReturnConsumedCapacity="NONE")
    assert "ConsumedCapacity" not in resp
    resp = ddb.get_item(TableName=table, Key={"pk": {"S": "p"}})
    assert "ConsumedCapacity" not in resp


def test_indexes_mode_reports_table_detail(ddb, table):
    resp = ddb.put_item(TableName=table, Item=padded_item("p", 1500), ReturnConsumedCapacity="INDEXES")
    cc = resp["ConsumedCapacity"]
    assert cc["TableName"] == table
    assert cc["CapacityUnits"] == 2.0
    assert cc["Table"]["CapacityUnits"] == 2.0
    assert "GlobalSecondaryIndexes" not in cc
    assert "LocalSecondaryIndexes" not in cc


ITEM_OPERATIONS = {
    "get_item": lambda ddb, t, rc: ddb.get_item(TableName=t, Key={"pk": {"S": "p"}}, ReturnConsumedCapacity=rc),
    "put_item": lambda ddb, t, rc: ddb.put_item(TableName=t, Item={"pk": {"S": "p"}}, ReturnConsumedCapacity=rc),
    "update_item": lambda ddb, t, rc: ddb.update_item(
        TableName=t, Key={"pk": {"S": "p"}}, UpdateExpression="SET v = :v",
        ExpressionAttributeValues={":v": {"N": "1"}}, ReturnConsumedCapacity=rc,
    ),
    "delete_item": lambda ddb, t, rc: ddb.delete_item(TableName=t, Key={"pk": {"S": "p"}}, ReturnConsumedCapacity=rc),
    "batch_get_item": lambda ddb, t, rc: ddb.batch_get_item(
        RequestItems={t: {"Keys": [{"pk": {"S": "p"}}]}}, ReturnConsumedCapacity=rc
    ),
    "batch_write_item": lambda ddb, t, rc: ddb.batch_write_item(
        RequestItems={t: [{"PutRequest": {"Item": {"pk": {"S": "p"}}}}]}, ReturnConsumedCapacity=rc
    ),
}


@pytest.mark.parametrize("granularity", ["TOTAL", "INDEXES"])
@pytest.mark.parametrize("operation", list(ITEM_OPERATIONS))
def test_item_operations_report_capacity_units_alone(ddb, table, operation, granularity):
    # S59: no ReadCapacityUnits / WriteCapacityUnits, at the top or in Table.
    cc = ITEM_OPERATIONS[operation](ddb, table, granularity)["ConsumedCapacity"]
    if isinstance(cc, list):
        (cc,) = cc
    indexes = granularity == "INDEXES"
    assert set(cc) == {"TableName", "CapacityUnits"} | ({"Table"} if indexes else set())
    if indexes:
        assert set(cc["Table"]) == {"CapacityUnits"}


def test_size_counts_utf8_bytes(ddb, table):
    # "é" is 2 bytes in UTF-8: 2 + 1 + 4 + 2*509 = 1025 bytes -> 2 units
    # (a character count would give 516 -> 1 unit).
    item = {"pk": {"S": "p"}, "data": {"S": "é" * 509}}
    assert put_units(ddb, table, item) == 2.0
    item = {"pk": {"S": "q"}, "data": {"S": "é" * 508 + "a"}}  # 1024 bytes, a different item
    assert put_units(ddb, table, item) == 1.0


def test_size_counts_binary_raw_bytes(ddb, table):
    # pk(2) + "p"(1) + bin(3) + 1018 raw bytes = 1024; base64 text would be ~1360.
    item = {"pk": {"S": "p"}, "bin": {"B": b"\xff" * 1018}}
    assert put_units(ddb, table, item) == 1.0
    item = {"pk": {"S": "q"}, "bin": {"B": b"\xff" * 1019}}
    assert put_units(ddb, table, item) == 2.0


@pytest.mark.parametrize("pad,units", [(1015, 1.0), (1016, 2.0)])
def test_map_size_overhead(ddb, table, pad, units):
    # B2: Map = 3 + number of keys + sum(key name + value).
    # pk(2) + "p"(1) + m(1) + [3 + 1 + a(1) + pad] = 9 + pad bytes.
    item = {"pk": {"S": "p"}, "m": {"M": {"a": {"S": "x" * pad}}}}
    assert put_units(ddb, table, item) == units


@pytest.mark.parametrize("pad,units", [(1016, 1.0), (1017, 2.0)])
def test_list_size_overhead(ddb, table, pad, units):
    # B2: List = 3 + sum(1 + element). pk(2) + "p"(1) + l(1) + [3 + 1 + pad] = 8 + pad bytes.
    item = {"pk": {"S": "p"}, "l": {"L": [{"S": "x" * pad}]}}
    assert put_units(ddb, table, item) == units


@pytest.mark.parametrize("old_size, new_size", [(3000, 100), (100, 2100)], ids=["larger-old-image", "larger-new-image"])
def test_put_overwrite_charged_on_larger_image(ddb, table, old_size, new_size):
    ddb.put_item(TableName=table, Item=padded_item("p", old_size))
    assert put_units(ddb, table, padded_item("p", new_size)) == 3.0


def test_update_charged_on_larger_of_before_and_after(ddb, table):
    ddb.put_item(TableName=table, Item=padded_item("p", 2500))
    assert update_units(ddb, table, "p", "SET small = :v", {":v": {"S": "x"}}) == 3.0
    assert update_units(ddb, table, "p", "REMOVE #d", names={"#d": "data"}) == 3.0
    assert update_units(ddb, table, "p", "SET big = :v", {":v": {"S": "x" * 5000}}) == 5.0


def test_update_new_item(ddb, table):
    assert update_units(ddb, table, "new", "SET v = :v", {":v": {"N": "1"}}) == 1.0


def test_delete_charged_on_deleted_item(ddb, table):
    ddb.put_item(TableName=table, Item=padded_item("p", 3000))
    resp = ddb.delete_item(TableName=table, Key={"pk": {"S": "p"}}, ReturnConsumedCapacity="TOTAL")
    assert total(resp, table) == 3.0
    resp = ddb.delete_item(TableName=table, Key={"pk": {"S": "p"}}, ReturnConsumedCapacity="TOTAL")
    assert total(resp, table) == 1.0


def test_batch_write_rounds_each_item(ddb, table):
    # B7: 500 B + 3.5 KB = 1 + 4 = 5 (not ceil(4000/1024) = 4).
    resp = ddb.batch_write_item(
        RequestItems={
            table: [
                {"PutRequest": {"Item": padded_item("a", 500)}},
                {"PutRequest": {"Item": padded_item("b", 3584)}},
            ]
        },
        ReturnConsumedCapacity="TOTAL",
    )
    assert per_table(resp) == {table: 5.0}


def test_batch_write_delete_missing_costs_one(ddb, table):
    resp = ddb.batch_write_item(
        RequestItems={
            table: [
                {"PutRequest": {"Item": padded_item("a", 500)}},
                {"DeleteRequest": {"Key": {"pk": {"S": "ghost"}}}},
            ]
        },
        ReturnConsumedCapacity="TOTAL",
    )
    assert per_table(resp) == {table: 2.0}


def test_batch_write_one_entry_per_table(ddb, make_table):
    t1, t2 = make_table(), make_table()
    resp = ddb.batch_write_item(
        RequestItems={
            t1: [{"PutRequest": {"Item": padded_item("a", 2000)}}, {"PutRequest": {"Item": padded_item("b", 10)}}],
            t2: [{"PutRequest": {"Item": padded_item("c", 5000)}}],
        },
        ReturnConsumedCapacity="TOTAL",
    )
    assert per_table(resp) == {t1: 3.0, t2: 5.0}


# ---------------------------------------------------------------- reads


@pytest.mark.parametrize(
    "size,consistent,units",
    [
        (100, True, 1.0),
        (100, False, 0.5),
        (4096, True, 1.0),
        (4096, False, 0.5),
        (4097, True, 2.0),
        (4097, False, 1.0),
        (3584, True, 1.0),
        (10 * 1024, True, 3.0),
        (10 * 1024, False, 1.5),
    ],
)
def test_get_item_read_units(ddb, table, size, consistent, units):
    ddb.put_item(TableName=table, Item=padded_item("p", size))
    resp = ddb.get_item(TableName=table, Key={"pk": {"S": "p"}}, ConsistentRead=consistent, ReturnConsumedCapacity="TOTAL")
    assert total(resp, table) == units


def test_get_item_default_is_eventually_consistent(ddb, table):
    ddb.put_item(TableName=table, Item=padded_item("p", 5000))
    resp = ddb.get_item(TableName=table, Key={"pk": {"S": "p"}}, ReturnConsumedCapacity="TOTAL")
    assert total(resp, table) == 1.0


@pytest.mark.parametrize("consistent,units", [(True, 1.0), (False, 0.5)])
def test_get_missing_item_read_units(ddb, table, consistent, units):
    resp = ddb.get_item(TableName=table, Key={"pk": {"S": "none"}}, ConsistentRead=consistent, ReturnConsumedCapacity="TOTAL")
    assert "Item" not in resp
    assert total(resp, table) == units


def test_get_item_projection_does_not_reduce_units(ddb, table):
    ddb.put_item(TableName=table, Item=padded_item("p", 8192))
    resp = ddb.get_item(
        TableName=table, Key={"pk": {"S": "p"}}, ConsistentRead=True, ProjectionExpression="pk", ReturnConsumedCapacity="TOTAL"
    )
    assert resp["Item"] == {"pk": {"S": "p"}}
    assert total(resp, table) == 2.0


def test_batch_get_rounds_each_item(ddb, table):
    # B7: 1.5 KB + 6.5 KB -> 4 KB + 8 KB = 12 KB -> 3 strong.
    ddb.put_item(TableName=table, Item=padded_item("a", 1536))
    ddb.put_item(TableName=table, Item=padded_item("b", 6656))
    resp = ddb.batch_get_item(
        RequestItems={table: {"Keys": [{"pk": {"S": "a"}}, {"pk": {"S": "b"}}], "ConsistentRead": True}},
        ReturnConsumedCapacity="TOTAL",
    )
    assert per_table(resp) == {table: 3.0}
    resp = ddb.batch_get_item(
        RequestItems={table: {"Keys": [{"pk": {"S": "a"}}, {"pk": {"S": "b"}}]}},
        ReturnConsumedCapacity="TOTAL",
    )
    assert per_table(resp) == {table: 1.5}


@pytest.fixture
def ten_items(ddb, make_table):
    """10 items of exactly 1000 bytes in one partition (10,000 bytes in total)."""
    name = make_table(range_key=("sk", "S"))
    items = []
    for i in range(10):
        item = {"pk": {"S": "q"}, "sk": {"S": f"{i:02d}"}}
        # pk(2)+q(1)+sk(2)+2 + data(4) = 11 bytes before padding
        item["data"] = {"S": "x" * (1000 - 11)}
        items.append(item)
    batch_put(ddb, name, items)
    return name


def qry(ddb, table, pk="q", **kw):
    """Query partition `pk` (that of ten_items by default), ReturnConsumedCapacity=TOTAL unless given."""
    kw.setdefault("ReturnConsumedCapacity", "TOTAL")
    return ddb.query(
        TableName=table,
        KeyConditionExpression="pk = :p",
        ExpressionAttributeValues={":p": {"S": pk}, **kw.pop("extra_values", {})},
        **kw,
    )


def test_query_rounds_once_on_the_sum(ddb, ten_items):
    # 10,000 bytes -> 12 KB -> 3 strong units (per-item rounding would give 10).
    assert total(qry(ddb, ten_items, ConsistentRead=True), ten_items) == 3.0
    assert total(qry(ddb, ten_items), ten_items) == 1.5


def test_query_filter_and_count_do_not_reduce_units(ddb, ten_items):
    # A filter on a non-key attribute (DynamoDB refuses filters on the queried key, S53).
    resp = qry(ddb, ten_items, ConsistentRead=True, FilterExpression="nope = :none", extra_values={":none": {"S": "zz"}})
    assert resp["Count"] == 0
    assert total(resp, ten_items) == 3.0
    resp = qry(ddb, ten_items, ConsistentRead=True, Select="COUNT")
    assert total(resp, ten_items) == 3.0
    resp = qry(ddb, ten_items, ConsistentRead=True, ProjectionExpression="sk")
    assert total(resp, ten_items) == 3.0


def test_query_limit_charges_only_items_read(ddb, ten_items):
    # 5 items = 5,000 bytes -> 8 KB -> 2 strong units.
    assert total(qry(ddb, ten_items, ConsistentRead=True, Limit=5), ten_items) == 2.0
    # 4 items = 4,000 bytes -> 4 KB -> 1 strong unit.
    assert total(qry(ddb, ten_items, ConsistentRead=True, Limit=4), ten_items) == 1.0


@pytest.mark.parametrize("consistent,units", [(True, 1.0), (False, 0.5)])
def test_query_matching_nothing_costs_minimum(ddb, ten_items, consistent, units):
    resp = qry(ddb, ten_items, pk="nobody", ConsistentRead=consistent)
    assert resp["Count"] == 0
    assert total(resp, ten_items) == units


def test_scan_charges_items_evaluated(ddb, ten_items):
    resp = ddb.scan(
        TableName=ten_items,
        FilterExpression="sk = :s",
        ExpressionAttributeValues={":s": {"S": "03"}},
        ConsistentRead=True,
        ReturnConsumedCapacity="TOTAL",
    )
    assert resp["Count"] == 1
    assert resp["ScannedCount"] == 10
    assert total(resp, ten_items) == 3.0
    resp = ddb.scan(TableName=ten_items, ReturnConsumedCapacity="TOTAL")
    assert total(resp, ten_items) == 1.5


def test_query_indexes_mode(ddb, ten_items):
    resp = qry(ddb, ten_items, ConsistentRead=True, ReturnConsumedCapacity="INDEXES")
    cc = resp["ConsumedCapacity"]
    assert cc["CapacityUnits"] == 3.0
    assert cc["Table"]["CapacityUnits"] == 3.0


# ---------------------------------------------------------------- transactions


def test_transact_write_units_double(ddb, make_table):
    t1, t2 = make_table(), make_table()
    ddb.put_item(TableName=t2, Item=padded_item("gone", 1500))
    resp = ddb.transact_write_items(
        TransactItems=[
            {"Put": {"TableName": t1, "Item": padded_item("a", 500)}},  # 1 -> 2
            {"Put": {"TableName": t1, "Item": padded_item("b", 2048)}},  # 2 -> 4
            {"Delete": {"TableName": t2, "Key": {"pk": {"S": "gone"}}}},  # 2 -> 4
        ],
        ReturnConsumedCapacity="TOTAL",
    )
    assert per_table(resp) == {t1: 6.0, t2: 4.0}


def test_transact_condition_check_costs_two_write_units(ddb, table):
    ddb.put_item(TableName=table, Item=padded_item("c", 100))
    resp = ddb.transact_write_items(
        TransactItems=[
            {"ConditionCheck": {"TableName": table, "Key": {"pk": {"S": "c"}}, "ConditionExpression": "attribute_exists(pk)"}}
        ],
        ReturnConsumedCapacity="TOTAL",
    )
    assert per_table(resp) == {table: 2.0}


def test_transact_get_units_double(ddb, table):
    ddb.put_item(TableName=table, Item=padded_item("a", 100))
    ddb.put_item(TableName=table, Item=padded_item("b", 8192))
    resp = ddb.transact_get_items(
        TransactItems=[
            {"Get": {"TableName": table, "Key": {"pk": {"S": "a"}}}},  # 1 -> 2
            {"Get": {"TableName": table, "Key": {"pk": {"S": "b"}}}},  # 2 -> 4
        ],
        ReturnConsumedCapacity="TOTAL",
    )
    assert per_table(resp) == {table: 6.0}


def test_transact_write_repeat_with_token_reports_read_units(ddb, table):
    # B11 / model docs: the first call reports the write units used; a repeat
    # with the same ClientRequestToken reads the recorded result (2 read units).
    import uuid

    token = str(uuid.uuid4())
    items = [{"Put": {"TableName": table, "Item": padded_item("tok", 3000)}}]
    first = ddb.transact_write_items(TransactItems=items, ClientRequestToken=token, ReturnConsumedCapacity="TOTAL")
    assert per_table(first) == {table: 6.0}
    again = ddb.transact_write_items(TransactItems=items, ClientRequestToken=token, ReturnConsumedCapacity="TOTAL")
    assert per_table(again) == {table: 2.0}
    (entry,) = again["ConsumedCapacity"]
    assert entry.get("WriteCapacityUnits", 0.0) == 0.0
