"""The legacy (pre-expression) parameters: Expected, ConditionalOperator,
AttributeUpdates, KeyConditions, QueryFilter, ScanFilter and AttributesToGet,
every ComparisonOperator, and the rules for mixing them with expressions."""

from __future__ import annotations

import pytest

from conftest import EVERY_TYPE_ITEM, EVERY_TYPE_KEY, expect_error

VALIDATION = "ValidationException"
INVALID = "One or more parameter values were invalid: "
COMPARISON_SET = "[IN, NULL, BETWEEN, LT, NOT_CONTAINS, EQ, GT, NOT_NULL, NE, LE, BEGINS_WITH, GE, CONTAINS]"
NOT_INDEXABLE = "Attempted conditional constraint is not an indexable operation"
SCHEMA_TYPE = INVALID + "Condition parameter type does not match schema type"
BETWEEN_REVERSED = "The BETWEEN condition was provided a range where the lower bound is greater than the upper bound"
NO_NAMES = "ExpressionAttributeNames can only be specified when using expressions"
NO_VALUES = "ExpressionAttributeValues can only be specified when using expressions: "
ONLY_DELETE = INVALID + "Only DELETE action is allowed when no attribute value is specified"


def arguments(op):
    return f"{INVALID}Invalid number of argument(s) for the {op} ComparisonOperator"


def not_valid_for(op, value_type):
    return f"{INVALID}ComparisonOperator {op} is not valid for {value_type} AttributeValue type"


def operator_enum(value, path):
    return (
        f"1 validation error detected: Value '{value}' at '{path}' failed to satisfy constraint: "
        f"Member must satisfy enum value set: {COMPARISON_SET}"
    )

KEY, ITEM = EVERY_TYPE_KEY, EVERY_TYPE_ITEM


def N(x):
    return {"N": str(x)}


def S(x):
    return {"S": x}


def B(x):
    return {"B": x}


def cond(op, *values):
    c = {"ComparisonOperator": op}
    if values:
        c["AttributeValueList"] = list(values)
    return c


def get(ddb, table, key=KEY):
    return ddb.get_item(TableName=table, Key=key, ConsistentRead=True).get("Item")


def scan_pks(ddb, table, **kwargs):
    return sorted(i["pk"]["S"] for i in ddb.scan(TableName=table, ConsistentRead=True, **kwargs)["Items"])


def conditional_failure(fn):
    return expect_error(fn, "ConditionalCheckFailedException", "The conditional request failed")


# (attribute, operator, values, holds on ITEM). "missing" is absent from ITEM.
CASES = [
    ("n", "EQ", [N(5)], True),
    ("n", "EQ", [N(6)], False),
    ("n", "EQ", [S("5")], False),
    ("missing", "EQ", [N(5)], False),
    ("ss", "EQ", [{"SS": ["b", "a"]}], True),
    ("l", "EQ", [{"L": [S("x"), N(1)]}], True),
    ("m", "EQ", [{"M": {"k": S("v")}}], True),
    ("t", "EQ", [{"BOOL": True}], True),
    ("n", "NE", [N(5)], False),
    ("n", "NE", [N(6)], True),
    ("n", "NE", [S("5")], True),
    ("missing", "NE", [N(1)], True),
    ("n", "LE", [N(5)], True),
    ("n", "LE", [N(4)], False),
    ("n", "LT", [N(5)], False),
    ("n", "LT", [N(10)], True),
    ("n", "GE", [N(5)], True),
    ("n", "GE", [N(6)], False),
    ("n", "GT", [N(4)], True),
    ("n", "GT", [N(5)], False),
    ("s", "LT", [S("help")], True),
    ("s", "GT", [S("help")], False),
    ("b", "GE", [B(b"\x01\x02")], True),
    ("b", "LT", [B(b"\x01\x02")], False),
    ("b", "GT", [B(b"\x01\x7f")], False),
    ("n", "LT", [S("9")], False),
    ("missing", "GE", [N(0)], False),
    ("nul", "NOT_NULL", [], True),
    ("missing", "NOT_NULL", [], False),
    ("missing", "NULL", [], True),
    ("nul", "NULL", [], False),
    ("s", "CONTAINS", [S("ell")], True),
    ("s", "CONTAINS", [S("xyz")], False),
    ("ss", "CONTAINS", [S("a")], True),
    ("ns", "CONTAINS", [N(2)], True),
    ("ns", "CONTAINS", [N(3)], False),
    ("bs", "CONTAINS", [B(b"\x01")], True),
    ("l", "CONTAINS", [S("x")], True),
    ("b", "CONTAINS", [B(b"\x02\x03")], True),
    ("n", "CONTAINS", [S("5")], False),
    ("missing", "CONTAINS", [S("a")], False),
    ("s", "NOT_CONTAINS", [S("ell")], False),
    ("s", "NOT_CONTAINS", [S("xyz")], True),
    ("ss", "NOT_CONTAINS", [S("c")], True),
    ("ns", "NOT_CONTAINS", [N(1)], False),
    ("l", "NOT_CONTAINS", [N(1)], False),
    ("s", "NOT_CONTAINS", [N(1)], True),
    ("missing", "NOT_CONTAINS", [S("a")], False),
    ("s", "BEGINS_WITH", [S("he")], True),
    ("s", "BEGINS_WITH", [S("lo")], False),
    ("b", "BEGINS_WITH", [B(b"\x01")], True),
    ("n", "BEGINS_WITH", [S("5")], False),
    ("missing", "BEGINS_WITH", [S("h")], False),
    ("n", "IN", [N(1), N(5)], True),
    ("n", "IN", [N(1), N(2)], False),
    ("s", "IN", [S("hello")], True),
    ("ns", "IN", [N(1)], False),
    ("missing", "IN", [N(5)], False),
    ("n", "BETWEEN", [N(1), N(5)], True),
    ("n", "BETWEEN", [N(6), N(9)], False),
    ("s", "BETWEEN", [S("a"), S("z")], True),
    ("b", "BETWEEN", [B(b"\x01"), B(b"\x02")], True),
    ("n", "BETWEEN", [S("a"), S("z")], False),
    ("missing", "BETWEEN", [N(0), N(9)], False),
]
CASE_IDS = [f"{a}-{op}-{i}" for i, (a, op, _, _) in enumerate(CASES)]


# ---------------------------------------------------------------- Expected


@pytest.mark.parametrize("attribute, op, values, holds", CASES, ids=CASE_IDS)
def test_expected_comparison(ddb, table, attribute, op, values, holds):
    ddb.put_item(TableName=table, Item=ITEM)
    update = lambda: ddb.update_item(  # noqa: E731
        TableName=table,
        Key=KEY,
        AttributeUpdates={"hit": {"Value": N(1)}},
        Expected={attribute: cond(op, *values)},
    )
    if holds:
        update()
        assert get(ddb, table) == {**ITEM, "hit": N(1)}
    else:
        conditional_failure(update)
        assert get(ddb, table) == ITEM


@pytest.mark.parametrize("attribute, op, values, holds", CASES, ids=CASE_IDS)
def test_scan_filter_comparison(ddb, table, attribute, op, values, holds):
    ddb.put_item(TableName=table, Item=ITEM)
    ddb.put_item(TableName=table, Item={"pk": S("e")})
    # The item without attributes matches only NE and NULL.
    expected = (["c"] if holds else []) + (["e"] if op in ("NE", "NULL") else [])
    resp = ddb.scan(TableName=table, ScanFilter={attribute: cond(op, *values)})
    assert sorted(i["pk"]["S"] for i in resp["Items"]) == expected
    assert resp["Count"] == len(expected)
    assert resp["ScannedCount"] == 2


def test_expected_value_form(ddb, table):
    ddb.put_item(TableName=table, Item=ITEM)
    ddb.put_item(TableName=table, Item={**ITEM, "v": N(2)}, Expected={"n": {"Value": N(5)}})
    ddb.put_item(TableName=table, Item={**ITEM, "v": N(3)}, Expected={"n": {"Value": N(5), "Exists": True}})
    ddb.put_item(TableName=table, Item={**ITEM, "v": N(4)}, Expected={"missing": {"Exists": False}})
    assert get(ddb, table) == {**ITEM, "v": N(4)}
    conditional_failure(lambda: ddb.put_item(TableName=table, Item=ITEM, Expected={"n": {"Value": N(6)}}))
    conditional_failure(lambda: ddb.put_item(TableName=table, Item=ITEM, Expected={"n": {"Exists": False}}))
    conditional_failure(lambda: ddb.put_item(TableName=table, Item=ITEM, Expected={"missing": {"Value": N(1)}}))
    assert get(ddb, table) == {**ITEM, "v": N(4)}


def test_expected_on_missing_item(ddb, table):
    conditional_failure(lambda: ddb.put_item(TableName=table, Item=ITEM, Expected={"n": {"Value": N(5)}}))
    assert get(ddb, table) is None
    ddb.put_item(TableName=table, Item=ITEM, Expected={"pk": {"Exists": False}})
    assert get(ddb, table) == ITEM
    conditional_failure(lambda: ddb.put_item(TableName=table, Item=ITEM, Expected={"pk": {"Exists": False}}))


def test_expected_comparison_with_single_value(ddb, table):
    ddb.put_item(TableName=table, Item=ITEM)
    ddb.put_item(TableName=table, Item={**ITEM, "v": N(1)}, Expected={"n": {"ComparisonOperator": "GT", "Value": N(4)}})
    assert get(ddb, table) == {**ITEM, "v": N(1)}


def test_empty_expected_is_no_condition(ddb, table):
    ddb.put_item(TableName=table, Item=ITEM)
    ddb.put_item(TableName=table, Item={**ITEM, "v": N(1)}, Expected={})
    assert get(ddb, table) == {**ITEM, "v": N(1)}


def test_expected_and_is_the_default(ddb, table):
    ddb.put_item(TableName=table, Item=ITEM)
    both_true = {"n": cond("EQ", N(5)), "s": cond("BEGINS_WITH", S("he"))}
    one_false = {"n": cond("EQ", N(5)), "s": cond("BEGINS_WITH", S("x"))}
    ddb.put_item(TableName=table, Item={**ITEM, "v": N(1)}, Expected=both_true)
    ddb.put_item(TableName=table, Item={**ITEM, "v": N(2)}, Expected=both_true, ConditionalOperator="AND")
    conditional_failure(lambda: ddb.put_item(TableName=table, Item=ITEM, Expected=one_false))
    conditional_failure(lambda: ddb.put_item(TableName=table, Item=ITEM, Expected=one_false, ConditionalOperator="AND"))
    assert get(ddb, table) == {**ITEM, "v": N(2)}


def test_expected_or(ddb, table):
    ddb.put_item(TableName=table, Item=ITEM)
    one_true = {"n": cond("EQ", N(6)), "missing": {"Exists": False}}
    none_true = {"n": cond("EQ", N(6)), "s": {"Value": S("bye")}}
    update = lambda value, expected: ddb.update_item(  # noqa: E731
        TableName=table, Key=KEY, AttributeUpdates={"v": {"Value": value}}, Expected=expected, ConditionalOperator="OR"
    )
    update(N(1), one_true)
    conditional_failure(lambda: update(N(2), none_true))
    assert get(ddb, table) == {**ITEM, "v": N(1)}


def test_delete_item_expected(ddb, table):
    ddb.put_item(TableName=table, Item=ITEM)
    conditional_failure(lambda: ddb.delete_item(TableName=table, Key=KEY, Expected={"n": cond("LT", N(5))}))
    assert get(ddb, table) == ITEM
    resp = ddb.delete_item(
        TableName=table,
        Key=KEY,
        Expected={"n": cond("LT", N(5)), "ss": cond("CONTAINS", S("b"))},
        ConditionalOperator="OR",
        ReturnValues="ALL_OLD",
    )
    assert resp["Attributes"] == ITEM
    assert get(ddb, table) is None


def test_expected_failure_returns_old_item_on_request(ddb, table):
    ddb.put_item(TableName=table, Item=ITEM)
    err = conditional_failure(
        lambda: ddb.put_item(
            TableName=table,
            Item=KEY,
            Expected={"n": {"Value": N(1)}},
            ReturnValuesOnConditionCheckFailure="ALL_OLD",
        )
    )
    assert err.response["Item"] == ITEM


def test_expected_attribute_names_are_literal(ddb, table):
    # Legacy names are never parsed: dots, reserved words and '#' are plain names.
    item = {**KEY, "a.b": N(1), "name": N(2), "#x": N(3)}
    ddb.put_item(TableName=table, Item=item)
    expected = {"a.b": {"Value": N(1)}, "name": cond("EQ", N(2)), "#x": cond("NOT_NULL")}
    ddb.update_item(TableName=table, Key=KEY, AttributeUpdates={"size": {"Value": N(9)}}, Expected=expected)
    assert get(ddb, table) == {**item, "size": N(9)}


# ------------------------------------------------------- Expected: messages


@pytest.mark.parametrize(
    "condition, message",
    [
        (
            {"Value": N(1), "AttributeValueList": [N(1)]},
            "Value and AttributeValueList cannot be used together for Attribute: a",
        ),
        (
            {"Exists": False, "ComparisonOperator": "EQ", "AttributeValueList": [N(1)]},
            "Exists and ComparisonOperator cannot be used together for Attribute: a",
        ),
        (
            {"ComparisonOperator": "EQ"},
            "Value or AttributeValueList must be used with ComparisonOperator: EQ for Attribute: a",
        ),
        (
            {"AttributeValueList": [N(1)]},
            "AttributeValueList can only be used with a ComparisonOperator for Attribute: a",
        ),
        ({"Exists": True}, "Value must be provided when Exists is true for Attribute: a"),
        ({}, "Value must be provided when Exists is null for Attribute: a"),
        ({"Exists": False, "Value": N(1)}, "Value cannot be used when Exists is false for Attribute: a"),
        (cond("EQ", N(1), N(2)), "Invalid number of argument(s) for the EQ ComparisonOperator"),
        (
            {"ComparisonOperator": "NULL", "Value": N(1)},
            "Invalid number of argument(s) for the NULL ComparisonOperator",
        ),
        (
            {"ComparisonOperator": "BETWEEN", "Value": N(1)},
            "Invalid number of argument(s) for the BETWEEN ComparisonOperator",
        ),
        (cond("IN", N(3), S("dog")), "AttributeValues inside AttributeValueList must be of same type"),
        (cond("CONTAINS", {"L": [N(1)]}), "ComparisonOperator CONTAINS is not valid for L AttributeValue type"),
        (cond("BEGINS_WITH", N(3)), "ComparisonOperator BEGINS_WITH is not valid for N AttributeValue type"),
    ],
)
def test_expected_messages(ddb, table, condition, message):
    ddb.put_item(TableName=table, Item=ITEM)
    expect_error(
        lambda: ddb.put_item(TableName=table, Item=ITEM, Expected={"a": condition}), VALIDATION, INVALID + message
    )
    assert get(ddb, table) == ITEM


def test_expected_between_bounds_reversed(ddb, table):
    expect_error(
        lambda: ddb.put_item(TableName=table, Item=ITEM, Expected={"n": cond("BETWEEN", N(9), N(1))}),
        VALIDATION,
        "The BETWEEN condition was provided a range where the lower bound is greater than the upper bound",
    )


def test_expected_unknown_operator(ddb, table):
    expect_error(
        lambda: ddb.put_item(TableName=table, Item=ITEM, Expected={"a": cond("ABOUT", N(1))}),
        VALIDATION,
        "1 validation error detected: Value 'ABOUT' at 'expected.a.member.comparisonOperator' failed to satisfy "
        f"constraint: Member must satisfy enum value set: {COMPARISON_SET}",
    )


def test_conditional_operator_messages(ddb, table):
    put = lambda **kw: ddb.put_item(TableName=table, Item=ITEM, **kw)  # noqa: E731
    without = "ConditionalOperator cannot be used without Filter or Expected"
    expect_error(lambda: put(ConditionalOperator="OR"), VALIDATION, without)
    expect_error(lambda: put(ConditionalOperator="AND", Expected={}), VALIDATION, without)
    expect_error(
        lambda: put(ConditionalOperator="OR", Expected={"n": {"Value": N(5)}}),
        VALIDATION,
        "ConditionalOperator can only be used when Filter or Expected has two or more elements",
    )
    expect_error(
        lambda: put(ConditionalOperator="XOR", Expected={"n": {"Value": N(5)}, "s": {"Value": S("x")}}),
        VALIDATION,
        "1 validation error detected: Value 'XOR' at 'conditionalOperator' failed to satisfy constraint: "
        "Member must satisfy enum value set: [OR, AND]",
    )
    expect_error(
        lambda: ddb.scan(TableName=table, ScanFilter={"n": cond("EQ", N(5))}, ConditionalOperator="OR"),
        VALIDATION,
        "ConditionalOperator can only be used when Filter or Expected has two or more elements",
    )
    assert get(ddb, table) is None


# ---------------------------------------------------------- AttributeUpdates


def put_then_update(ddb, table, attribute_updates, **kwargs):
    """Puts ITEM, then updates it with the legacy AttributeUpdates; returns UpdateItem's response."""
    ddb.put_item(TableName=table, Item=ITEM)
    return ddb.update_item(TableName=table, Key=KEY, AttributeUpdates=attribute_updates, **kwargs)


def test_attribute_updates_put(ddb, table):
    resp = put_then_update(
        ddb,
        table,
        {"n": {"Action": "PUT", "Value": S("five")}, "new": {"Value": {"L": [N(1)]}}},
        ReturnValues="UPDATED_OLD",
    )
    assert resp["Attributes"] == {"n": N(5)}
    assert get(ddb, table) == {**ITEM, "n": S("five"), "new": {"L": [N(1)]}}


def test_attribute_updates_add_numbers(ddb, table):
    resp = put_then_update(
        ddb,
        table,
        {"n": {"Action": "ADD", "Value": N("-7.5")}, "count": {"Action": "ADD", "Value": N(3)}},
        ReturnValues="UPDATED_NEW",
    )
    assert resp["Attributes"] == {"n": N("-2.5"), "count": N(3)}
    assert get(ddb, table) == {**ITEM, "n": N("-2.5"), "count": N(3)}


def test_attribute_updates_add_sets(ddb, table):
    put_then_update(
        ddb,
        table,
        {
            "ss": {"Action": "ADD", "Value": {"SS": ["b", "c"]}},
            "ns": {"Action": "ADD", "Value": {"NS": ["3"]}},
            "bs2": {"Action": "ADD", "Value": {"BS": [b"\x09"]}},
        },
    )
    got = get(ddb, table)
    assert sorted(got["ss"]["SS"]) == ["a", "b", "c"]
    assert sorted(got["ns"]["NS"]) == ["1", "2", "3"]
    assert got["bs2"] == {"BS": [b"\x09"]}
    assert {k: v for k, v in got.items() if k not in ("ss", "ns", "bs2")} == {
        k: v for k, v in ITEM.items() if k not in ("ss", "ns")
    }


def test_attribute_updates_add_list_appends(ddb, table):
    put_then_update(
        ddb,
        table,
        {
            "l": {"Action": "ADD", "Value": {"L": [S("y"), S("x")]}},
            "fresh": {"Action": "ADD", "Value": {"L": [N(7)]}},
        },
    )
    assert get(ddb, table) == {**ITEM, "l": {"L": [S("x"), N(1), S("y"), S("x")]}, "fresh": {"L": [N(7)]}}


def test_attribute_updates_delete(ddb, table):
    put_then_update(
        ddb,
        table,
        {
            "s": {"Action": "DELETE"},
            "ss": {"Action": "DELETE", "Value": {"SS": ["a", "zzz"]}},
            "ns": {"Action": "DELETE", "Value": {"NS": ["1", "2"]}},
            "missing": {"Action": "DELETE"},
            "missing_set": {"Action": "DELETE", "Value": {"SS": ["q"]}},
        },
    )
    expected = {k: v for k, v in ITEM.items() if k not in ("s", "ns")}
    assert get(ddb, table) == {**expected, "ss": {"SS": ["b"]}}


def test_attribute_updates_on_missing_item(ddb, table):
    # PUT and ADD create the item; DELETE alone does nothing and creates nothing.
    ddb.update_item(TableName=table, Key={"pk": S("d")}, AttributeUpdates={"x": {"Action": "DELETE"}})
    ddb.update_item(
        TableName=table, Key={"pk": S("d2")}, AttributeUpdates={"x": {"Action": "DELETE", "Value": {"SS": ["a"]}}}
    )
    resp = ddb.update_item(
        TableName=table,
        Key={"pk": S("d3")},
        AttributeUpdates={"x": {"Action": "DELETE"}},
        ReturnValues="ALL_NEW",
        ReturnConsumedCapacity="TOTAL",
    )
    assert "Attributes" not in resp
    assert resp["ConsumedCapacity"] == {"TableName": table, "CapacityUnits": 1.0}
    ddb.update_item(TableName=table, Key={"pk": S("a")}, AttributeUpdates={"n": {"Action": "ADD", "Value": N(4)}})
    ddb.update_item(
        TableName=table, Key={"pk": S("s")}, AttributeUpdates={"tags": {"Action": "ADD", "Value": {"SS": ["t"]}}}
    )
    ddb.update_item(TableName=table, Key={"pk": S("p")}, AttributeUpdates={"v": {"Value": S("x")}})
    ddb.update_item(
        TableName=table,
        Key={"pk": S("m")},
        AttributeUpdates={"v": {"Action": "PUT", "Value": N(1)}, "gone": {"Action": "DELETE"}},
    )
    assert scan_pks(ddb, table) == ["a", "m", "p", "s"]
    assert get(ddb, table, {"pk": S("a")}) == {"pk": S("a"), "n": N(4)}
    assert get(ddb, table, {"pk": S("s")}) == {"pk": S("s"), "tags": {"SS": ["t"]}}
    assert get(ddb, table, {"pk": S("p")}) == {"pk": S("p"), "v": S("x")}
    assert get(ddb, table, {"pk": S("m")}) == {"pk": S("m"), "v": N(1)}


def test_attribute_updates_with_expected(ddb, table):
    ddb.put_item(TableName=table, Item=ITEM)
    ddb.update_item(
        TableName=table,
        Key=KEY,
        AttributeUpdates={"n": {"Action": "ADD", "Value": N(1)}},
        Expected={"n": cond("EQ", N(5))},
    )
    conditional_failure(
        lambda: ddb.update_item(
            TableName=table,
            Key=KEY,
            AttributeUpdates={"n": {"Action": "ADD", "Value": N(1)}},
            Expected={"n": cond("EQ", N(5))},
        )
    )
    assert get(ddb, table) == {**ITEM, "n": N(6)}


def test_attribute_updates_all_new(ddb, table):
    resp = ddb.update_item(
        TableName=table,
        Key=KEY,
        AttributeUpdates={"v": {"Value": S("x")}, "c": {"Action": "ADD", "Value": N(2)}},
        ReturnValues="ALL_NEW",
    )
    assert resp["Attributes"] == {**KEY, "v": S("x"), "c": N(2)}


@pytest.mark.parametrize(
    "updates, message",
    [
        ({"a": {"Action": "PUT"}}, ONLY_DELETE),
        ({"a": {"Action": "ADD"}}, ONLY_DELETE),
        (
            {"a": {"Action": "DELETE", "Value": N(1)}},
            INVALID + "DELETE action with value is not supported for the type N",
        ),
        (
            {"a": {"Action": "DELETE", "Value": {"L": [N(1)]}}},
            INVALID + "DELETE action with value is not supported for the type L",
        ),
        ({"a": {"Action": "ADD", "Value": S("x")}}, INVALID + "ADD action is not supported for the type S"),
        ({"a": {"Action": "ADD", "Value": B(b"x")}}, INVALID + "ADD action is not supported for the type B"),
        ({"a": {"Action": "ADD", "Value": {"BOOL": True}}}, INVALID + "ADD action is not supported for the type BOOL"),
        ({"a": {"Action": "ADD", "Value": {"NULL": True}}}, INVALID + "ADD action is not supported for the type NULL"),
        ({"a": {"Action": "ADD", "Value": {"M": {}}}}, INVALID + "ADD action is not supported for the type M"),
        (
            {"a": {"Action": "REPLACE", "Value": N(1)}},
            "1 validation error detected: Value 'REPLACE' at 'attributeUpdates.a.member.action' failed to satisfy "
            "constraint: Member must satisfy enum value set: [ADD, DELETE, PUT]",
        ),
        ({"pk": {"Value": S("other")}}, INVALID + "Cannot update attribute pk. This attribute is part of the key"),
        ({"pk": {"Action": "DELETE"}}, INVALID + "Cannot update attribute pk. This attribute is part of the key"),
    ],
)
def test_attribute_updates_messages(ddb, table, updates, message):
    ddb.put_item(TableName=table, Item=ITEM)
    expect_error(lambda: ddb.update_item(TableName=table, Key=KEY, AttributeUpdates=updates), VALIDATION, message)
    assert get(ddb, table) == ITEM


def test_legacy_constraint_violations_are_reported_together(ddb, table):
    expect_error(
        lambda: ddb.update_item(
            TableName=table,
            Key=KEY,
            AttributeUpdates={"a": {"Action": "MERGE", "Value": N(1)}, "b": {"Action": "ADD"}},
            Expected={"c": cond("ALMOST", N(1)), "d": {"Exists": True}},
            ConditionalOperator="NAND",
        ),
        VALIDATION,
        "3 validation errors detected: Value 'MERGE' at 'attributeUpdates.a.member.action' failed to satisfy "
        "constraint: Member must satisfy enum value set: [ADD, DELETE, PUT]; Value 'ALMOST' at "
        "'expected.c.member.comparisonOperator' failed to satisfy constraint: Member must satisfy enum value set: "
        f"{COMPARISON_SET}; Value 'NAND' at 'conditionalOperator' failed to satisfy constraint: Member must satisfy "
        "enum value set: [OR, AND]",
    )
    assert get(ddb, table) is None


@pytest.mark.parametrize(
    "updates",
    [
        {"ss": {"Action": "ADD", "Value": {"NS": ["1"]}}},
        {"s": {"Action": "ADD", "Value": N(1)}},
        {"ns": {"Action": "ADD", "Value": N(1)}},
        {"s": {"Action": "ADD", "Value": {"L": [N(1)]}}},
        {"ss": {"Action": "DELETE", "Value": {"NS": ["1"]}}},
        {"n": {"Action": "DELETE", "Value": {"NS": ["5"]}}},
    ],
)
def test_attribute_updates_type_mismatch(ddb, table, updates):
    ddb.put_item(TableName=table, Item=ITEM)
    expect_error(
        lambda: ddb.update_item(TableName=table, Key=KEY, AttributeUpdates=updates),
        VALIDATION,
        "Type mismatch for attribute to update",
    )
    assert get(ddb, table) == ITEM


def test_delete_only_on_missing_item_still_checks_the_key(ddb, table):
    expect_error(
        lambda: ddb.update_item(TableName=table, Key=KEY, AttributeUpdates={"pk": {"Action": "DELETE"}}),
        VALIDATION,
        INVALID + "Cannot update attribute pk. This attribute is part of the key",
    )
    assert get(ddb, table) is None


# ------------------------------------------------------------ AttributesToGet


def test_get_item_attributes_to_get(ddb, table):
    ddb.put_item(TableName=table, Item=ITEM)
    resp = ddb.get_item(TableName=table, Key=KEY, AttributesToGet=["n", "ss", "nothing"])
    # Key attributes are not added, unknown names are absent.
    assert resp["Item"] == {"n": N(5), "ss": ITEM["ss"]}


def test_attributes_to_get_duplicates(ddb, table):
    expect_error(
        lambda: ddb.get_item(TableName=table, Key=KEY, AttributesToGet=["n", "s", "n"]),
        VALIDATION,
        INVALID + "Duplicate value in attribute name: n",
    )
    expect_error(
        lambda: ddb.scan(TableName=table, AttributesToGet=["a", "a"]),
        VALIDATION,
        INVALID + "Duplicate value in attribute name: a",
    )


def test_attributes_to_get_empty(ddb_raw, table):
    expect_error(
        lambda: ddb_raw.get_item(TableName=table, Key=KEY, AttributesToGet=[]),
        VALIDATION,
        "1 validation error detected: Value '[]' at 'attributesToGet' failed to satisfy constraint: "
        "Member must have length greater than or equal to 1",
    )


def test_batch_get_item_attributes_to_get(ddb, make_table):
    one, two = make_table(), make_table()
    ddb.put_item(TableName=one, Item=ITEM)
    ddb.put_item(TableName=two, Item=ITEM)
    resp = ddb.batch_get_item(
        RequestItems={
            one: {"Keys": [KEY], "AttributesToGet": ["s", "pk"]},
            two: {"Keys": [KEY], "ProjectionExpression": "n"},
        }
    )
    assert resp["Responses"] == {one: [{"pk": S("c"), "s": S("hello")}], two: [{"n": N(5)}]}
    assert resp["UnprocessedKeys"] == {}


def test_scan_and_query_attributes_to_get(ddb, table_hn):
    ddb.put_item(TableName=table_hn, Item={"pk": S("q"), "sk": N(1), "a": N(1), "b": N(2)})
    scan = ddb.scan(TableName=table_hn, AttributesToGet=["a", "sk"])
    assert scan["Items"] == [{"a": N(1), "sk": N(1)}]
    query = ddb.query(
        TableName=table_hn,
        KeyConditions={"pk": cond("EQ", S("q"))},
        AttributesToGet=["b"],
        Select="SPECIFIC_ATTRIBUTES",
    )
    assert query["Items"] == [{"b": N(2)}]


def test_attributes_to_get_with_select(ddb, table_hn):
    expect_error(
        lambda: ddb.query(
            TableName=table_hn, KeyConditions={"pk": cond("EQ", S("q"))}, AttributesToGet=["b"], Select="COUNT"
        ),
        VALIDATION,
        "1 validation error detected: Cannot specify the AttributesToGet when choosing to get only the Count",
    )
    expect_error(
        lambda: ddb.scan(TableName=table_hn, AttributesToGet=["b"], Select="COUNT"),
        VALIDATION,
        "Cannot specify the AttributesToGet when choosing to get only the Count",
    )
    expect_error(
        lambda: ddb.scan(TableName=table_hn, AttributesToGet=["b"], Select="ALL_ATTRIBUTES"),
        VALIDATION,
        INVALID + "Cannot specify the AttributesToGet when choosing to get ALL_ATTRIBUTES",
    )


# ------------------------------------------------------ KeyConditions, filters


@pytest.fixture
def qtable(ddb, table_hn):
    for sk in range(1, 7):
        item = {"pk": S("q"), "sk": N(sk), "v": N(sk * 10)}
        if sk % 2 == 0:
            item["even"] = {"BOOL": True}
        ddb.put_item(TableName=table_hn, Item=item)
    ddb.put_item(TableName=table_hn, Item={"pk": S("other"), "sk": N(1), "v": N(10)})
    return table_hn


def sks(resp):
    return [int(i["sk"]["N"]) for i in resp["Items"]]


@pytest.mark.parametrize(
    "range_condition, expected",
    [
        (None, [1, 2, 3, 4, 5, 6]),
        (cond("EQ", N(3)), [3]),
        (cond("LT", N(3)), [1, 2]),
        (cond("LE", N(3)), [1, 2, 3]),
        (cond("GT", N(4)), [5, 6]),
        (cond("GE", N(4)), [4, 5, 6]),
        (cond("BETWEEN", N(2), N(4)), [2, 3, 4]),
    ],
)
def test_key_conditions(ddb, qtable, range_condition, expected):
    key_conditions = {"pk": cond("EQ", S("q"))}
    if range_condition:
        key_conditions["sk"] = range_condition
    resp = ddb.query(TableName=qtable, KeyConditions=key_conditions)
    assert sks(resp) == expected
    assert ddb.query(TableName=qtable, KeyConditions=key_conditions, ScanIndexForward=False)["Items"] == list(
        reversed(resp["Items"])
    )


def test_key_conditions_begins_with(ddb, table_hr):
    for sk in ["apple", "apricot", "banana"]:
        ddb.put_item(TableName=table_hr, Item={"pk": S("f"), "sk": S(sk)})
    resp = ddb.query(
        TableName=table_hr, KeyConditions={"pk": cond("EQ", S("f")), "sk": cond("BEGINS_WITH", S("ap"))}
    )
    assert [i["sk"]["S"] for i in resp["Items"]] == ["apple", "apricot"]


def test_query_filter(ddb, qtable):
    keys = {"pk": cond("EQ", S("q"))}
    resp = ddb.query(TableName=qtable, KeyConditions=keys, QueryFilter={"even": cond("NOT_NULL")})
    assert sks(resp) == [2, 4, 6]
    assert (resp["Count"], resp["ScannedCount"]) == (3, 6)
    resp = ddb.query(
        TableName=qtable, KeyConditions=keys, QueryFilter={"even": cond("NULL"), "v": cond("GT", N(20))}
    )
    assert sks(resp) == [3, 5]
    resp = ddb.query(
        TableName=qtable,
        KeyConditions=keys,
        QueryFilter={"even": cond("NULL"), "v": cond("GT", N(20))},
        ConditionalOperator="OR",
    )
    assert sks(resp) == [1, 3, 4, 5, 6]
    resp = ddb.query(TableName=qtable, KeyConditions=keys, QueryFilter={"v": cond("IN", N(10), N(60))}, Limit=3)
    assert sks(resp) == [1]
    assert resp["LastEvaluatedKey"] == {"pk": S("q"), "sk": N(3)}


def test_scan_filter_or(ddb, qtable):
    scan_filter = {"v": cond("LT", N(20)), "even": cond("EQ", {"BOOL": True})}
    resp = ddb.scan(TableName=qtable, ScanFilter=scan_filter, ConditionalOperator="OR")
    assert sorted((i["pk"]["S"], int(i["sk"]["N"])) for i in resp["Items"]) == [
        ("other", 1),
        ("q", 1),
        ("q", 2),
        ("q", 4),
        ("q", 6),
    ]


def test_key_conditions_beside_expressions(ddb, qtable):
    # KeyConditions may go with FilterExpression and ProjectionExpression; the
    # client's placeholders may use any name, even the generated ones'.
    resp = ddb.query(
        TableName=qtable,
        KeyConditions={"pk": cond("EQ", S("q")), "sk": cond("GT", N(2))},
        FilterExpression="#lg0 >= :lg0",
        ProjectionExpression="#lg1",
        ExpressionAttributeNames={"#lg0": "v", "#lg1": "sk"},
        ExpressionAttributeValues={":lg0": N(50)},
    )
    assert resp["Items"] == [{"sk": N(5)}, {"sk": N(6)}]


@pytest.mark.parametrize(
    "key_conditions, message",
    [
        ({"sk": cond("IN", N(1))}, NOT_INDEXABLE),
        ({"sk": cond("NOT_NULL")}, NOT_INDEXABLE),
        ({"pk": cond("GT", S("q"))}, "Query key condition not supported"),
        ({"v": cond("EQ", N(1))}, "Query key condition not supported"),
        ({"pk": None, "sk": cond("EQ", N(1))}, "Query condition missed key schema element: pk"),
        ({"pk": cond("EQ", N(1))}, SCHEMA_TYPE),
        ({"sk": cond("LT", S("1"))}, SCHEMA_TYPE),
        ({"sk": cond("BEGINS_WITH", N(1))}, not_valid_for("BEGINS_WITH", "N")),
        ({"sk": cond("BETWEEN", N(5), N(1))}, BETWEEN_REVERSED),
        ({"pk": cond("EQ", S("q"), S("r"))}, arguments("EQ")),
        ({"pk": cond("SOMETIMES", S("q"))}, operator_enum("SOMETIMES", "keyConditions.pk.member.comparisonOperator")),
    ],
)
def test_key_conditions_messages(ddb, qtable, key_conditions, message):
    # Each case changes the valid {"pk": EQ "q"} (None drops an entry).
    merged = {**{"pk": cond("EQ", S("q"))}, **key_conditions}
    merged = {k: v for k, v in merged.items() if v is not None}
    expect_error(lambda: ddb.query(TableName=qtable, KeyConditions=merged), VALIDATION, message)


def test_key_conditions_operator_required(ddb_raw, qtable):
    expect_error(
        lambda: ddb_raw.query(TableName=qtable, KeyConditions={"pk": {"AttributeValueList": [S("q")]}}),
        VALIDATION,
        "1 validation error detected: Value null at 'keyConditions.pk.member.comparisonOperator' failed to satisfy "
        "constraint: Member must not be null",
    )


def test_query_filter_on_key_attributes(ddb, qtable):
    keys = {"pk": cond("EQ", S("q"))}
    for attribute, value in [("sk", N(1)), ("pk", S("q"))]:
        expect_error(
            lambda: ddb.query(
                TableName=qtable, KeyConditions=keys, QueryFilter={"v": cond("EQ", N(1)), attribute: cond("EQ", value)}
            ),
            VALIDATION,
            f"QueryFilter can only contain non-primary key attributes: Primary key attribute: {attribute}",
        )


def test_conditional_operator_without_filter_in_query(ddb, qtable):
    message = "ConditionalOperator cannot be used without Filter or Expected"
    expect_error(
        lambda: ddb.query(TableName=qtable, KeyConditions={"pk": cond("EQ", S("q"))}, ConditionalOperator="AND"),
        VALIDATION,
        message,
    )
    # Checked before the missing key condition.
    expect_error(lambda: ddb.query(TableName=qtable, ConditionalOperator="OR"), VALIDATION, message)


def test_query_filter_without_key_conditions(ddb, qtable):
    expect_error(
        lambda: ddb.query(TableName=qtable, QueryFilter={"v": cond("EQ", N(1))}),
        VALIDATION,
        "Either the KeyConditions or KeyConditionExpression parameter must be specified in the request.",
    )


def test_scan_filter_messages(ddb, table):
    for scan_filter, message in [
        ({"a": cond("LT", {"SS": ["x"]})}, not_valid_for("LT", "SS")),
        ({"a": cond("BETWEEN", {"BOOL": True}, {"BOOL": False})}, not_valid_for("BETWEEN", "BOOL")),
        ({"a": cond("IN")}, arguments("IN")),
        ({"a": cond("NOT_NULL", N(1))}, arguments("NOT_NULL")),
        ({"a": cond("GT", N(1), N(2))}, arguments("GT")),
        ({"a": cond("BETWEEN", S("b"), S("a"))}, BETWEEN_REVERSED),
        ({"a": cond("like", S("b"))}, operator_enum("like", "scanFilter.a.member.comparisonOperator")),
    ]:
        expect_error(lambda: ddb.scan(TableName=table, ScanFilter=scan_filter), VALIDATION, message)


def test_in_with_many_values(ddb, table):
    ddb.put_item(TableName=table, Item={**KEY, "n": N(250)})
    values = [N(i) for i in range(1, 301)]
    assert scan_pks(ddb, table, ScanFilter={"n": cond("IN", *values)}) == ["c"]
    assert scan_pks(ddb, table, ScanFilter={"n": cond("IN", *values[:200])}) == []


# ------------------------------------------------------------------- mixing


MIXING = "Can not use both expression and non-expression parameters in the same request: "


@pytest.mark.parametrize(
    "kwargs, message",
    [
        pytest.param(
            dict(KeyConditionExpression="pk = :p", FilterExpression="v > :p", ProjectionExpression="v",
                 ExpressionAttributeValues={":p": S("q")}, KeyConditions={"pk": cond("EQ", S("q"))},
                 QueryFilter={"v": cond("NOT_NULL")}, ConditionalOperator="AND", AttributesToGet=["v"]),
            "Non-expression parameters: {AttributesToGet, QueryFilter, ConditionalOperator, KeyConditions} "
            "Expression parameters: {ProjectionExpression, FilterExpression, KeyConditionExpression}",
            id="every-parameter",
        ),
        pytest.param(
            dict(KeyConditionExpression="pk = :p", ExpressionAttributeValues={":p": S("q")},
                 KeyConditions={"pk": cond("EQ", S("q"))}),
            "Non-expression parameters: {KeyConditions} Expression parameters: {KeyConditionExpression}",
            id="key-conditions",
        ),
        pytest.param(
            dict(KeyConditions={"pk": cond("EQ", S("q"))}, QueryFilter={"v": cond("NOT_NULL")},
                 FilterExpression="attribute_exists(v)"),
            "Non-expression parameters: {QueryFilter} Expression parameters: {FilterExpression}",
            id="filter",
        ),
    ],
)
def test_mixing_query(ddb, qtable, kwargs, message):
    expect_error(lambda: ddb.query(TableName=qtable, **kwargs), VALIDATION, MIXING + message)


@pytest.mark.parametrize(
    "operation, kwargs, message",
    [
        (
            "scan",
            dict(ProjectionExpression="v", FilterExpression="v > :v", ExpressionAttributeValues={":v": N(1)},
                 ScanFilter={"v": cond("NULL")}, AttributesToGet=["v"], ConditionalOperator="OR"),
            "Non-expression parameters: {AttributesToGet, ScanFilter, ConditionalOperator} "
            "Expression parameters: {ProjectionExpression, FilterExpression}",
        ),
        (
            "update_item",
            dict(Key=KEY, UpdateExpression="SET v = :v", ConditionExpression="attribute_exists(v)",
                 ExpressionAttributeValues={":v": N(1)}, AttributeUpdates={"v": {"Value": N(1)}},
                 Expected={"v": {"Exists": False}}, ConditionalOperator="AND"),
            "Non-expression parameters: {AttributeUpdates, Expected, ConditionalOperator} "
            "Expression parameters: {UpdateExpression, ConditionExpression}",
        ),
        (
            "update_item",
            dict(Key=KEY, UpdateExpression="SET v = :v", ExpressionAttributeValues={":v": N(1)},
                 Expected={"v": {"Exists": False}}),
            "Non-expression parameters: {Expected} Expression parameters: {UpdateExpression}",
        ),
        (
            "put_item",
            dict(Item=ITEM, ConditionExpression="attribute_not_exists(pk)", Expected={"pk": {"Exists": False}}),
            "Non-expression parameters: {Expected} Expression parameters: {ConditionExpression}",
        ),
        pytest.param(
            "put_item",
            dict(Item=ITEM, ConditionExpression="attribute_exists(pk)", ExpressionAttributeValues={":unused": N(1)},
                 Expected={"pk": {"Exists": False}}),
            "Non-expression parameters: {Expected} Expression parameters: {ConditionExpression}",
            id="mixing-is-checked-before-unused-values",
        ),
        (
            "delete_item",
            dict(Key=KEY, ConditionExpression="attribute_exists(pk)", ConditionalOperator="OR"),
            "Non-expression parameters: {ConditionalOperator} Expression parameters: {ConditionExpression}",
        ),
        (
            "get_item",
            dict(Key=KEY, ProjectionExpression="n", AttributesToGet=["n"]),
            "Non-expression parameters: {AttributesToGet} Expression parameters: {ProjectionExpression}",
        ),
    ],
)
def test_mixing(ddb, table, operation, kwargs, message):
    ddb.put_item(TableName=table, Item=ITEM)
    expect_error(lambda: getattr(ddb, operation)(TableName=table, **kwargs), VALIDATION, MIXING + message)
    assert get(ddb, table) == ITEM


def test_mixing_batch_get_item(ddb, table):
    expect_error(
        lambda: ddb.batch_get_item(
            RequestItems={table: {"Keys": [KEY], "ProjectionExpression": "n", "AttributesToGet": ["n"]}}
        ),
        VALIDATION,
        MIXING + "Non-expression parameters: {AttributesToGet} Expression parameters: {ProjectionExpression}",
    )


@pytest.mark.parametrize(
    "operation, kwargs, message",
    [
        (
            "put_item",
            dict(Item=ITEM, Expected={"n": {"Exists": False}}, ExpressionAttributeNames={"#n": "n"}),
            NO_NAMES,
        ),
        ("get_item", dict(Key=KEY, AttributesToGet=["n"], ExpressionAttributeNames={"#n": "n"}), NO_NAMES),
        ("scan", dict(ScanFilter={"n": cond("NULL")}, ExpressionAttributeNames={"#n": "n"}), NO_NAMES),
        (
            "put_item",
            dict(Item=ITEM, Expected={"n": {"Exists": False}}, ExpressionAttributeValues={":n": N(1)}),
            NO_VALUES + "ConditionExpression is null",
        ),
        (
            "delete_item",
            dict(Key=KEY, ExpressionAttributeValues={":n": N(1)}),
            NO_VALUES + "ConditionExpression is null",
        ),
        (
            "update_item",
            dict(Key=KEY, AttributeUpdates={"v": {"Value": N(1)}}, ExpressionAttributeValues={":n": N(1)}),
            NO_VALUES + "UpdateExpression and ConditionExpression are null",
        ),
        (
            "scan",
            dict(ProjectionExpression="n", ExpressionAttributeValues={":n": N(1)}),
            NO_VALUES + "FilterExpression is null",
        ),
        (
            "query",
            dict(KeyConditions={"pk": cond("EQ", S("c"))}, ExpressionAttributeValues={":n": N(1)}),
            NO_VALUES + "FilterExpression and KeyConditionExpression are null",
        ),
    ],
)
def test_placeholders_without_expressions(ddb, table, operation, kwargs, message):
    ddb.put_item(TableName=table, Item=ITEM)
    expect_error(lambda: getattr(ddb, operation)(TableName=table, **kwargs), VALIDATION, message)
    assert get(ddb, table) == ITEM


def test_table_name_is_checked_before_mixing(ddb_raw):
    expect_error(
        lambda: ddb_raw.put_item(
            TableName="x", Item=ITEM, ConditionExpression="attribute_exists(pk)", Expected={"pk": {"Exists": False}}
        ),
        VALIDATION,
        "1 validation error detected: Value 'x' at 'tableName' failed to satisfy constraint: "
        "Member must have length greater than or equal to 3",
    )


def test_legacy_write_on_missing_table(ddb):
    expect_error(
        lambda: ddb.update_item(
            TableName="no-such-table",
            Key=KEY,
            AttributeUpdates={"v": {"Value": N(1)}},
            Expected={"v": {"Exists": False}},
        ),
        "ResourceNotFoundException",
        "Requested resource not found",
    )
    expect_error(
        lambda: ddb.query(TableName="no-such-table", KeyConditions={"pk": cond("EQ", S("q"))}),
        "ResourceNotFoundException",
        "Requested resource not found",
    )
