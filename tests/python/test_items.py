"""PutItem / GetItem / DeleteItem / UpdateItem basics, value types, numbers and ordering."""

from __future__ import annotations

import random
from decimal import Decimal

import pytest
from boto3.dynamodb.types import Binary

from conftest import expect_error, expect_expr_error


def norm(value):
    """Normalise an AttributeValue for comparison: sets are unordered."""
    (t, v), = value.items()
    if t in ("SS", "NS"):
        return {t: sorted(v)}
    if t == "BS":
        return {t: sorted(bytes(x) for x in v)}
    if t == "L":
        return {t: [norm(x) for x in v]}
    if t == "M":
        return {t: {k: norm(x) for k, x in v.items()}}
    if t == "B":
        return {t: bytes(v)}
    return {t: v}


def norm_item(item):
    return {k: norm(v) for k, v in item.items()}


ALL_TYPES = {
    "s": {"S": "hello wörld ✓"},
    "s_empty": {"S": ""},
    "n_int": {"N": "42"},
    "n_neg": {"N": "-3.25"},
    "b": {"B": bytes(range(256))},
    "b_empty": {"B": b""},
    "t": {"BOOL": True},
    "f": {"BOOL": False},
    "null": {"NULL": True},
    "ss": {"SS": ["x", "y", "z"]},
    "ns": {"NS": ["1", "2.5", "-7"]},
    "bs": {"BS": [b"\x00", b"\x01\x02", b"\xff"]},
    "l": {"L": [{"S": "a"}, {"N": "1"}, {"L": []}, {"M": {}}, {"NULL": True}]},
    "m": {
        "M": {
            "inner": {"M": {"deep": {"L": [{"M": {"x": {"SS": ["q"]}}}]}}},
            "n": {"N": "0"},
            "empty_s": {"S": ""},
        }
    },
}


def test_put_get_every_attribute_type(ddb, table):
    item = {"pk": {"S": "types"}, **ALL_TYPES}
    ddb.put_item(TableName=table, Item=item)
    got = ddb.get_item(TableName=table, Key={"pk": {"S": "types"}}, ConsistentRead=True)["Item"]
    assert norm_item(got) == norm_item(item)


def test_binary_round_trip_all_byte_values(ddb, make_table):
    name = make_table(hash_key=("k", "B"))
    key = bytes([0, 255, 10, 13, 0x80, 0x7F])
    payload = bytes(random.Random(7).randrange(256) for _ in range(5000))
    ddb.put_item(TableName=name, Item={"k": {"B": key}, "data": {"B": payload}})
    got = ddb.get_item(TableName=name, Key={"k": {"B": key}})["Item"]
    assert got["k"]["B"] == key
    assert got["data"]["B"] == payload


def test_deeply_nested_document(ddb, table):
    value = {"S": "bottom"}
    for i in range(30):
        value = {"M": {f"level{i}": value}} if i % 2 else {"L": [value]}
    ddb.put_item(TableName=table, Item={"pk": {"S": "deep"}, "doc": value})
    got = ddb.get_item(TableName=table, Key={"pk": {"S": "deep"}})["Item"]
    assert got["doc"] == value


def test_get_missing_item_has_no_item_key(ddb, table):
    resp = ddb.get_item(TableName=table, Key={"pk": {"S": "nope"}})
    assert "Item" not in resp


def test_put_overwrites_whole_item(ddb, table):
    ddb.put_item(TableName=table, Item={"pk": {"S": "a"}, "x": {"N": "1"}, "y": {"S": "keep?"}})
    ddb.put_item(TableName=table, Item={"pk": {"S": "a"}, "z": {"BOOL": True}})
    got = ddb.get_item(TableName=table, Key={"pk": {"S": "a"}}, ConsistentRead=True)["Item"]
    assert got == {"pk": {"S": "a"}, "z": {"BOOL": True}}


def test_delete_item(ddb, table):
    ddb.put_item(TableName=table, Item={"pk": {"S": "d"}, "v": {"S": "1"}})
    resp = ddb.delete_item(TableName=table, Key={"pk": {"S": "d"}})
    assert "Attributes" not in resp
    assert "Item" not in ddb.get_item(TableName=table, Key={"pk": {"S": "d"}}, ConsistentRead=True)


def test_delete_missing_item_succeeds(ddb, table):
    resp = ddb.delete_item(TableName=table, Key={"pk": {"S": "ghost"}}, ReturnValues="ALL_OLD")
    assert "Attributes" not in resp
    assert resp["ResponseMetadata"]["HTTPStatusCode"] == 200


def test_hash_range_items_are_distinct(ddb, table_hr):
    for sk in ("a", "b"):
        ddb.put_item(TableName=table_hr, Item={"pk": {"S": "p"}, "sk": {"S": sk}, "v": {"S": sk * 2}})
    a = ddb.get_item(TableName=table_hr, Key={"pk": {"S": "p"}, "sk": {"S": "a"}})["Item"]
    b = ddb.get_item(TableName=table_hr, Key={"pk": {"S": "p"}, "sk": {"S": "b"}})["Item"]
    assert a["v"] == {"S": "aa"}
    assert b["v"] == {"S": "bb"}
    ddb.delete_item(TableName=table_hr, Key={"pk": {"S": "p"}, "sk": {"S": "a"}})
    assert "Item" not in ddb.get_item(TableName=table_hr, Key={"pk": {"S": "p"}, "sk": {"S": "a"}})
    assert "Item" in ddb.get_item(TableName=table_hr, Key={"pk": {"S": "p"}, "sk": {"S": "b"}})


# ---------------------------------------------------------------- ReturnValues


def test_put_return_values_none_and_all_old(ddb, table):
    r1 = ddb.put_item(TableName=table, Item={"pk": {"S": "rv"}, "v": {"N": "1"}}, ReturnValues="ALL_OLD")
    assert "Attributes" not in r1
    r2 = ddb.put_item(TableName=table, Item={"pk": {"S": "rv"}, "v": {"N": "2"}}, ReturnValues="ALL_OLD")
    assert r2["Attributes"] == {"pk": {"S": "rv"}, "v": {"N": "1"}}
    r3 = ddb.put_item(TableName=table, Item={"pk": {"S": "rv"}, "v": {"N": "3"}}, ReturnValues="NONE")
    assert "Attributes" not in r3


def test_put_rejects_other_return_values(ddb, table):
    for rv in ["ALL_NEW", "UPDATED_OLD", "UPDATED_NEW"]:
        expect_error(
            lambda: ddb.put_item(TableName=table, Item={"pk": {"S": "x"}}, ReturnValues=rv),
            "ValidationException",
            "ReturnValues can only be ALL_OLD or NONE",
        )


def test_delete_rejects_all_new(ddb, table):
    expect_error(
        lambda: ddb.delete_item(TableName=table, Key={"pk": {"S": "x"}}, ReturnValues="ALL_NEW"),
        "ValidationException",
        "ReturnValues can only be ALL_OLD or NONE",
    )


def test_put_invalid_return_values_enum(ddb, table):
    expect_error(
        lambda: ddb.put_item(TableName=table, Item={"pk": {"S": "k"}}, ReturnValues="GARBAGE"),
        "ValidationException",
        "1 validation error detected: Value 'GARBAGE' at 'returnValues' failed to satisfy constraint: "
        "Member must satisfy enum value set: [ALL_NEW, UPDATED_OLD, ALL_OLD, NONE, UPDATED_NEW]",
    )


def test_delete_return_all_old(ddb, table):
    item = {"pk": {"S": "del"}, "a": {"SS": ["x"]}, "b": {"M": {"c": {"N": "1"}}}}
    ddb.put_item(TableName=table, Item=item)
    resp = ddb.delete_item(TableName=table, Key={"pk": {"S": "del"}}, ReturnValues="ALL_OLD")
    assert norm_item(resp["Attributes"]) == norm_item(item)


UPDATE_BASE = {"pk": {"S": "u"}, "a": {"N": "1"}, "b": {"N": "2"}, "c": {"S": "x"}}
UPDATE_KW = dict(
    UpdateExpression="SET a = :n, d = :d REMOVE c",
    ExpressionAttributeValues={":n": {"N": "10"}, ":d": {"S": "new"}},
)


@pytest.mark.parametrize(
    "rv,expected",
    [
        ("NONE", None),
        ("ALL_OLD", UPDATE_BASE),
        ("UPDATED_OLD", {"a": {"N": "1"}, "c": {"S": "x"}}),
        ("ALL_NEW", {"pk": {"S": "u"}, "a": {"N": "10"}, "b": {"N": "2"}, "d": {"S": "new"}}),
        ("UPDATED_NEW", {"a": {"N": "10"}, "d": {"S": "new"}}),
    ],
)
def test_update_return_values(ddb, table, rv, expected):
    ddb.put_item(TableName=table, Item=UPDATE_BASE)
    resp = ddb.update_item(TableName=table, Key={"pk": {"S": "u"}}, ReturnValues=rv, **UPDATE_KW)
    if expected is None:
        assert "Attributes" not in resp
    else:
        assert resp["Attributes"] == expected


def test_update_all_old_on_new_item_has_no_attributes(ddb, table):
    resp = ddb.update_item(
        TableName=table,
        Key={"pk": {"S": "fresh"}},
        UpdateExpression="SET v = :v",
        ExpressionAttributeValues={":v": {"S": "1"}},
        ReturnValues="ALL_OLD",
    )
    assert "Attributes" not in resp


def test_update_creates_missing_item(ddb, table):
    ddb.update_item(
        TableName=table,
        Key={"pk": {"S": "upsert"}},
        UpdateExpression="SET v = :v",
        ExpressionAttributeValues={":v": {"N": "7"}},
    )
    got = ddb.get_item(TableName=table, Key={"pk": {"S": "upsert"}}, ConsistentRead=True)["Item"]
    assert got == {"pk": {"S": "upsert"}, "v": {"N": "7"}}


def test_update_without_expression_creates_key_only_item(ddb, table_hr):
    resp = ddb.update_item(
        TableName=table_hr, Key={"pk": {"S": "bare"}, "sk": {"S": "1"}}, ReturnValues="ALL_NEW"
    )
    assert resp["Attributes"] == {"pk": {"S": "bare"}, "sk": {"S": "1"}}
    got = ddb.get_item(TableName=table_hr, Key={"pk": {"S": "bare"}, "sk": {"S": "1"}})["Item"]
    assert got == {"pk": {"S": "bare"}, "sk": {"S": "1"}}


# ---------------------------------------------------------------- projections


def test_get_item_projection_expression(ddb, table):
    item = {
        "pk": {"S": "proj"},
        "a": {"S": "A"},
        "b": {"S": "B"},
        "m": {"M": {"x": {"N": "1"}, "y": {"N": "2"}}},
        "l": {"L": [{"S": "l0"}, {"S": "l1"}, {"S": "l2"}]},
        "name": {"S": "reserved-word attr"},
    }
    ddb.put_item(TableName=table, Item=item)
    got = ddb.get_item(
        TableName=table,
        Key={"pk": {"S": "proj"}},
        ProjectionExpression="a, m.y, l[2], #n, absent_attr",
        ExpressionAttributeNames={"#n": "name"},
    )["Item"]
    assert got == {
        "a": {"S": "A"},
        "m": {"M": {"y": {"N": "2"}}},
        "l": {"L": [{"S": "l2"}]},
        "name": {"S": "reserved-word attr"},
    }


def test_projection_of_only_missing_attributes_returns_empty_item(ddb, table):
    ddb.put_item(TableName=table, Item={"pk": {"S": "pm"}, "a": {"S": "A"}})
    resp = ddb.get_item(TableName=table, Key={"pk": {"S": "pm"}}, ProjectionExpression="nothere")
    assert resp["Item"] == {}


def test_projection_reserved_word_without_placeholder(ddb, table):
    expect_expr_error(
        lambda: ddb.get_item(TableName=table, Key={"pk": {"S": "x"}}, ProjectionExpression="name"),
        "Invalid ProjectionExpression: Attribute name is a reserved keyword; reserved keyword: name",
    )


# ---------------------------------------------------------------- numbers


NUMBER_CASES = [
    ("1.50", "1.5"),
    ("10.00", "10"),
    ("0.0", "0"),
    ("007", "7"),
    ("-0.500", "-0.5"),
    ("1e2", "100"),
    ("1.5E3", "1500"),
    ("12345678901234567890123456789012345678", "12345678901234567890123456789012345678"),
    ("0.12345678901234567890123456789012345678", "0.12345678901234567890123456789012345678"),
    ("-99999999999999999999999999999999999999", "-99999999999999999999999999999999999999"),
]


def test_number_normalisation(ddb, table):
    wrong = []
    for i, (given, stored) in enumerate(NUMBER_CASES):
        key = {"pk": {"S": f"num{i}"}}
        ddb.put_item(TableName=table, Item={**key, "n": {"N": given}, "ns": {"NS": [given]}})
        got = ddb.get_item(TableName=table, Key=key, ConsistentRead=True)["Item"]
        if got["n"] != {"N": stored} or got["ns"] != {"NS": [stored]}:
            wrong.append(f"{given!r}: expected {stored!r}, got N={got['n']} NS={got['ns']}")
    assert not wrong, "\n".join(wrong)


def test_number_key_is_normalised(ddb, make_table):
    name = make_table(hash_key=("id", "N"))
    ddb.put_item(TableName=name, Item={"id": {"N": "1.0"}, "v": {"S": "one"}})
    got = ddb.get_item(TableName=name, Key={"id": {"N": "1"}})["Item"]
    assert got == {"id": {"N": "1"}, "v": {"S": "one"}}
    ddb.put_item(TableName=name, Item={"id": {"N": "01.000"}, "v": {"S": "uno"}})
    assert ddb.scan(TableName=name)["Count"] == 1


def test_number_more_than_38_digits(ddb, table):
    expect_error(
        lambda: ddb.put_item(
            TableName=table, Item={"pk": {"S": "big"}, "n": {"N": "123456789012345678901234567890123456789"}}
        ),
        "ValidationException",
        "Attempting to store more than 38 significant digits in a Number",
    )


def test_number_trailing_zeros_do_not_count_as_digits(ddb, table):
    ddb.put_item(TableName=table, Item={"pk": {"S": "z"}, "n": {"N": "12345678901234567890123456789012345678000"}})
    got = ddb.get_item(TableName=table, Key={"pk": {"S": "z"}})["Item"]
    assert got["n"] == {"N": "12345678901234567890123456789012345678000"}


@pytest.mark.parametrize(
    "number, message",
    [
        ("1E+126", "Number overflow. Attempting to store a number with magnitude larger than supported range"),
        ("1E-131", "Number underflow. Attempting to store a number with magnitude smaller than supported range"),
        # dynalite's tests (run against DynamoDB) and ScyllaDB's Alternator
        # suite: "numeric value", with the text when there is one.
        ("abc", "The parameter cannot be converted to a numeric value: abc"),
        ("NaN", "The parameter cannot be converted to a numeric value: NaN"),
        ("Infinity", "The parameter cannot be converted to a numeric value: Infinity"),
        (" 1", "The parameter cannot be converted to a numeric value:  1"),
        ("", "The parameter cannot be converted to a numeric value"),
    ],
    ids=["overflow", "underflow", "not-numeric", "nan", "infinity", "leading-space", "empty"],
)
def test_number_rejected(ddb, table, number, message):
    expect_error(
        lambda: ddb.put_item(TableName=table, Item={"pk": {"S": "n"}, "n": {"N": number}}),
        "ValidationException",
        message,
    )


# ---------------------------------------------------------------- ordering


def query_all(ddb, table, pk, forward=True):
    items = []
    kwargs = {}
    while True:
        resp = ddb.query(
            TableName=table,
            KeyConditionExpression="pk = :p",
            ExpressionAttributeValues={":p": {"S": pk}},
            ScanIndexForward=forward,
            **kwargs,
        )
        items.extend(resp["Items"])
        if "LastEvaluatedKey" not in resp:
            return items
        kwargs = {"ExclusiveStartKey": resp["LastEvaluatedKey"]}


def test_numbers_sort_numerically_in_query(ddb, table_hn):
    values = ["-100", "-10", "-1.5", "-0.001", "0", "0.001", "2", "9", "10", "10.5", "100", "1E+20"]
    expected = ["-100", "-10", "-1.5", "-0.001", "0", "0.001", "2", "9", "10", "10.5", "100", "100000000000000000000"]
    shuffled = values[:]
    random.Random(3).shuffle(shuffled)
    for v in shuffled:
        ddb.put_item(TableName=table_hn, Item={"pk": {"S": "n"}, "sk": {"N": v}})
    got = [i["sk"]["N"] for i in query_all(ddb, table_hn, "n")]
    assert got == expected
    got_rev = [i["sk"]["N"] for i in query_all(ddb, table_hn, "n", forward=False)]
    assert got_rev == expected[::-1]


def test_strings_sort_by_utf8_bytes(ddb, table_hr):
    # UTF-8 byte order: "B" (42) < "a" (61) < "é" (C3 A9) < "Ａ" U+FF21 (EF BC A1) < "😀" (F0 9F 98 80).
    # UTF-16 order would put the emoji (D83D ...) before U+FF21.
    values = ["😀", "a", "Ａ", "B", "é", "aa", "A"]
    for v in values:
        ddb.put_item(TableName=table_hr, Item={"pk": {"S": "s"}, "sk": {"S": v}})
    got = [i["sk"]["S"] for i in query_all(ddb, table_hr, "s")]
    assert got == sorted(values, key=lambda s: s.encode("utf-8"))
    assert got == ["A", "B", "a", "aa", "é", "Ａ", "😀"]


def test_binary_sorts_unsigned(ddb, make_table):
    name = make_table(range_key=("sk", "B"))
    values = [b"\xff", b"\x80", b"\x7f", b"\x00", b"\x00\x00", b"\x01"]
    for v in values:
        ddb.put_item(TableName=name, Item={"pk": {"S": "b"}, "sk": {"B": v}})
    got = [bytes(i["sk"]["B"]) for i in query_all(ddb, name, "b")]
    assert got == [b"\x00", b"\x00\x00", b"\x01", b"\x7f", b"\x80", b"\xff"]


# ---------------------------------------------------------------- resource API


def test_resource_round_trip_python_types(ddb_resource, table):
    t = ddb_resource.Table(table)
    item = {
        "pk": "res",
        "i": 5,
        "d": Decimal("3.14"),
        "s": "str",
        "b": Binary(b"\x00\x01"),
        "ss": {"a", "b"},
        "ns": {Decimal("1"), Decimal("2")},
        "l": [1, "two", None, True],
        "m": {"k": {"nested": [Decimal("1.5")]}},
    }
    t.put_item(Item=item)
    got = t.get_item(Key={"pk": "res"}, ConsistentRead=True)["Item"]
    assert got["i"] == Decimal(5)
    assert got["d"] == Decimal("3.14")
    assert got["b"] == Binary(b"\x00\x01")
    assert got["ss"] == {"a", "b"}
    assert got["ns"] == {Decimal(1), Decimal(2)}
    assert got["l"] == [Decimal(1), "two", None, True]
    assert got["m"] == {"k": {"nested": [Decimal("1.5")]}}


def test_resource_update_and_delete(ddb_resource, table):
    t = ddb_resource.Table(table)
    t.put_item(Item={"pk": "r2", "count": 1})
    resp = t.update_item(
        Key={"pk": "r2"},
        UpdateExpression="SET #c = #c + :one",
        ExpressionAttributeNames={"#c": "count"},
        ExpressionAttributeValues={":one": 1},
        ReturnValues="UPDATED_NEW",
    )
    assert resp["Attributes"] == {"count": Decimal(2)}
    t.delete_item(Key={"pk": "r2"})
    assert "Item" not in t.get_item(Key={"pk": "r2"})
