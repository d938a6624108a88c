"""Request validation with exact error types and messages (reference section C)."""

from __future__ import annotations

import pytest

from conftest import expect_error, expect_expr_error, padded_item

SCHEMA_MSG = "The provided key element does not match the schema"


# ---------------------------------------------------------------- key shape


@pytest.mark.parametrize(
    "key",
    [
        {"pk": {"N": "1"}},
        {"other": {"S": "a"}},
        {"pk": {"S": "a"}, "extra": {"S": "b"}},
        {},
    ],
    ids=["wrong-type", "wrong-name", "extra-attr", "empty"],
)
def test_get_item_key_mismatch(ddb_raw, table, key):
    expect_error(lambda: ddb_raw.get_item(TableName=table, Key=key), "ValidationException", SCHEMA_MSG)


def test_get_item_missing_range_key(ddb, table_hr):
    expect_error(lambda: ddb.get_item(TableName=table_hr, Key={"pk": {"S": "a"}}), "ValidationException", SCHEMA_MSG)


def test_delete_item_key_mismatch(ddb, table_hr):
    expect_error(
        lambda: ddb.delete_item(TableName=table_hr, Key={"pk": {"S": "a"}, "sk": {"N": "1"}}), "ValidationException", SCHEMA_MSG
    )


def test_update_item_key_mismatch(ddb, table):
    expect_error(
        lambda: ddb.update_item(
            TableName=table, Key={"id": {"S": "a"}}, UpdateExpression="SET v = :v", ExpressionAttributeValues={":v": {"S": "x"}}
        ),
        "ValidationException",
        SCHEMA_MSG,
    )


INVALID = "One or more parameter values were invalid: "
EMPTY_KEY = "One or more parameter values are not valid. The AttributeValue for a key attribute cannot contain an empty "


@pytest.fixture
def table_bin(make_table):
    """A fresh on-demand table with a binary HASH key named k."""
    return make_table(hash_key=("k", "B"))


# Items PutItem must reject, with the exact message. Each case names the table
# fixture it writes to: table (pk S), table_hr (pk S + sk S), table_hn (pk S + sk N),
# table_bin (k B).
PUT_REJECTED = [
    pytest.param("table", {"other": {"S": "a"}}, INVALID + "Missing the key pk in the item", id="missing-hash-key"),
    pytest.param("table_hr", {"pk": {"S": "a"}}, INVALID + "Missing the key sk in the item", id="missing-range-key"),
    pytest.param(
        "table_hn",
        {"pk": {"S": "a"}, "sk": {"S": "1"}},
        INVALID + "Type mismatch for key sk expected: N actual: S",
        id="range-key-type-mismatch",
    ),
    pytest.param("table", {"pk": {"S": ""}}, EMPTY_KEY + "string value. Key: pk", id="empty-string-hash-key"),
    pytest.param("table_hr", {"pk": {"S": "a"}, "sk": {"S": ""}}, EMPTY_KEY + "string value. Key: sk", id="empty-string-range-key"),
    pytest.param("table_bin", {"k": {"B": b""}}, EMPTY_KEY + "binary value. Key: k", id="empty-binary-hash-key"),
    # 1025 two-byte characters = 2050 bytes.
    pytest.param(
        "table",
        {"pk": {"S": "é" * 1025}},
        INVALID + "Size of hashkey has exceeded the maximum size limit of2048 bytes",
        id="hash-key-over-2048-utf8-bytes",
    ),
    pytest.param("table", {"pk": {"S": "a"}, "s": {"SS": []}}, INVALID + "An string set  may not be empty", id="empty-SS"),
    pytest.param("table", {"pk": {"S": "a"}, "s": {"NS": []}}, INVALID + "An number set  may not be empty", id="empty-NS"),
    pytest.param("table", {"pk": {"S": "a"}, "s": {"BS": []}}, INVALID + "Binary sets should not be empty", id="empty-BS"),
    pytest.param(
        "table",
        {"pk": {"S": "a"}, "s": {"SS": ["a", "a"]}},
        INVALID + "Input collection [a, a] contains duplicates.",
        id="duplicate-SS-members",
    ),
    pytest.param(
        "table",
        {"pk": {"S": "a"}, "x": {}},
        "Supplied AttributeValue is empty, must contain exactly one of the supported datatypes",
        id="empty-attribute-value",
    ),
    pytest.param(
        "table",
        {"pk": {"S": "a"}, "x": {"L": [{"M": {"y": {}}}]}},
        "Supplied AttributeValue is empty, must contain exactly one of the supported datatypes",
        id="empty-attribute-value-nested",
    ),
    pytest.param(
        "table",
        {"pk": {"S": "a"}, "x": {"S": "s", "N": "1"}},
        "Supplied AttributeValue has more than one datatypes set, must contain exactly one of the supported datatypes",
        id="attribute-value-with-two-types",
    ),
]


@pytest.mark.parametrize("table_fixture, item, message", PUT_REJECTED)
def test_put_item_rejected(ddb_raw, request, table_fixture, item, message):
    # ddb_raw: some of these items (empty sets, empty or two-typed values) would
    # be stopped by botocore before reaching the server.
    name = request.getfixturevalue(table_fixture)
    expect_error(lambda: ddb_raw.put_item(TableName=name, Item=item), "ValidationException", message)


def test_get_item_empty_string_key(ddb, table):
    expect_error(
        lambda: ddb.get_item(TableName=table, Key={"pk": {"S": ""}}),
        "ValidationException",
        EMPTY_KEY + "string value. Key: pk",
    )


def test_empty_string_and_binary_allowed_for_non_key(ddb, table):
    ddb.put_item(TableName=table, Item={"pk": {"S": "e"}, "s": {"S": ""}, "b": {"B": b""}})
    got = ddb.get_item(TableName=table, Key={"pk": {"S": "e"}})["Item"]
    assert got == {"pk": {"S": "e"}, "s": {"S": ""}, "b": {"B": b""}}


def test_hash_key_size_limit(ddb, table):
    ddb.put_item(TableName=table, Item={"pk": {"S": "h" * 2048}})
    expect_error(
        lambda: ddb.put_item(TableName=table, Item={"pk": {"S": "h" * 2049}}),
        "ValidationException",
        "One or more parameter values were invalid: Size of hashkey has exceeded the maximum size limit of2048 bytes",
    )


def test_range_key_size_limit(ddb, table_hr):
    ddb.put_item(TableName=table_hr, Item={"pk": {"S": "a"}, "sk": {"S": "r" * 1024}})
    expect_error(
        lambda: ddb.put_item(TableName=table_hr, Item={"pk": {"S": "a"}, "sk": {"S": "r" * 1025}}),
        "ValidationException",
        "One or more parameter values were invalid: Aggregated size of all range keys has exceeded the size limit of 1024 bytes",
    )


# ---------------------------------------------------------------- item size


def test_item_exactly_400kb_allowed(ddb, table):
    ddb.put_item(TableName=table, Item=padded_item("max", 400 * 1024))
    got = ddb.get_item(TableName=table, Key={"pk": {"S": "max"}}, ProjectionExpression="pk")
    assert got["Item"] == {"pk": {"S": "max"}}


def test_item_over_400kb_rejected(ddb, table):
    expect_error(
        lambda: ddb.put_item(TableName=table, Item=padded_item("over", 400 * 1024 + 1)),
        "ValidationException",
        "Item size has exceeded the maximum allowed size",
    )
    assert "Item" not in ddb.get_item(TableName=table, Key={"pk": {"S": "over"}})


def test_attribute_names_count_toward_item_size(ddb, table):
    # A long attribute name pushes an otherwise-fitting item over the limit.
    item = padded_item("names", 400 * 1024 - 10)
    item["n" * 11] = {"S": ""}
    expect_error(
        lambda: ddb.put_item(TableName=table, Item=item),
        "ValidationException",
        "Item size has exceeded the maximum allowed size",
    )


def test_update_over_400kb_rejected(ddb, table):
    ddb.put_item(TableName=table, Item=padded_item("u", 300 * 1024))
    expect_error(
        lambda: ddb.update_item(
            TableName=table,
            Key={"pk": {"S": "u"}},
            UpdateExpression="SET more = :m",
            ExpressionAttributeValues={":m": {"S": "m" * (101 * 1024)}},
        ),
        "ValidationException",
        "Item size to update has exceeded the maximum allowed size",
    )
    got = ddb.get_item(TableName=table, Key={"pk": {"S": "u"}}, ConsistentRead=True)["Item"]
    assert "more" not in got


def test_nesting_31_levels_ok_32_rejected(ddb, table):
    def deep(n):
        v = {"S": "leaf"}
        for _ in range(n):
            v = {"M": {"n": v}}
        return v

    ddb.put_item(TableName=table, Item={"pk": {"S": "deep31"}, "d": deep(31)})
    # Live wording: "Nesting Levels have exceeded supported limits: Attributes in the
    # item have nested levels beyond supported limit" (varies by region); assert the stable part.
    expect_error(
        lambda: ddb.put_item(TableName=table, Item={"pk": {"S": "deep32"}, "d": deep(32)}),
        "ValidationException",
        startswith="Nesting Levels have exceeded supported limits",
    )


# ---------------------------------------------------------------- attribute values


@pytest.mark.parametrize(
    "set_value", [{"NS": ["1", "1"]}, {"BS": [b"\x01", b"\x01"]}], ids=["duplicate-NS-members", "duplicate-BS-members"]
)
def test_duplicate_set_members(ddb, table, set_value):
    # The NS/BS wording differs from SS (pinned in PUT_REJECTED) and is not pinned in the reference.
    expect_error(
        lambda: ddb.put_item(TableName=table, Item={"pk": {"S": "a"}, "s": set_value}),
        "ValidationException",
        contains="contains duplicates",
    )


# ---------------------------------------------------------------- expression attribute maps


@pytest.mark.parametrize(
    "operation, request_args, message",
    [
        pytest.param(
            "put_item",
            dict(Item={"pk": {"S": "a"}}, ConditionExpression="attribute_not_exists(pk)", ExpressionAttributeValues={":x": {"S": "x"}}),
            "Value provided in ExpressionAttributeValues unused in expressions: keys: {:x}",
            id="put-unused-value",
        ),
        pytest.param(
            "update_item",
            dict(
                Key={"pk": {"S": "a"}},
                UpdateExpression="SET v = :v",
                ExpressionAttributeNames={"#unused": "zz"},
                ExpressionAttributeValues={":v": {"S": "x"}},
            ),
            "Value provided in ExpressionAttributeNames unused in expressions: keys: {#unused}",
            id="update-unused-name",
        ),
        pytest.param(
            "query",
            dict(KeyConditionExpression="pk = :p", ExpressionAttributeValues={":p": {"S": "a"}}, ExpressionAttributeNames={"#n": "x"}),
            "Value provided in ExpressionAttributeNames unused in expressions: keys: {#n}",
            id="query-unused-name",
        ),
    ],
)
def test_unused_expression_attribute(ddb, table, operation, request_args, message):
    call = getattr(ddb, operation)
    expect_error(lambda: call(TableName=table, **request_args), "ValidationException", message)


def test_values_used_across_expressions_count_as_used(ddb, table):
    # :v used only by the ConditionExpression and #n only by the UpdateExpression.
    ddb.put_item(TableName=table, Item={"pk": {"S": "a"}, "x": {"S": "1"}})
    ddb.update_item(
        TableName=table,
        Key={"pk": {"S": "a"}},
        UpdateExpression="SET #n = :w",
        ConditionExpression="x = :v",
        ExpressionAttributeNames={"#n": "y"},
        ExpressionAttributeValues={":v": {"S": "1"}, ":w": {"S": "2"}},
    )
    assert ddb.get_item(TableName=table, Key={"pk": {"S": "a"}}, ConsistentRead=True)["Item"]["y"] == {"S": "2"}


@pytest.mark.parametrize("attribute_map", ["ExpressionAttributeValues", "ExpressionAttributeNames"])
def test_empty_expression_attribute_map(ddb, table, attribute_map):
    expect_error(
        lambda: ddb.put_item(
            TableName=table, Item={"pk": {"S": "a"}}, ConditionExpression="attribute_not_exists(pk)", **{attribute_map: {}}
        ),
        "ValidationException",
        f"{attribute_map} must not be empty",
    )


def test_values_without_expression(ddb, table):
    # Live text may add the envelope prefix and ": ConditionExpression is null".
    expect_error(
        lambda: ddb.put_item(TableName=table, Item={"pk": {"S": "a"}}, ExpressionAttributeValues={":v": {"S": "x"}}),
        "ValidationException",
        contains="ExpressionAttributeValues can only be specified when using expressions",
    )


def test_names_without_expression(ddb, table):
    expect_error(
        lambda: ddb.get_item(TableName=table, Key={"pk": {"S": "a"}}, ExpressionAttributeNames={"#a": "x"}),
        "ValidationException",
        contains="ExpressionAttributeNames can only be specified when using expressions",
    )


def test_invalid_name_placeholder_key(ddb, table):
    expect_error(
        lambda: ddb.get_item(
            TableName=table, Key={"pk": {"S": "a"}}, ProjectionExpression="#a", ExpressionAttributeNames={"#a-b": "x"}
        ),
        "ValidationException",
        'ExpressionAttributeNames contains invalid key: Syntax error; key: "#a-b"',
    )


def test_empty_name_placeholder_value(ddb, table):
    expect_error(
        lambda: ddb.get_item(TableName=table, Key={"pk": {"S": "a"}}, ProjectionExpression="#a", ExpressionAttributeNames={"#a": ""}),
        "ValidationException",
        "ExpressionAttributeNames contains invalid value: Empty attribute name for key #a",
    )


def test_empty_value_placeholder_value(ddb_raw, table):
    expect_error(
        lambda: ddb_raw.scan(TableName=table, FilterExpression="x = :v", ExpressionAttributeValues={":v": {}}),
        "ValidationException",
        "ExpressionAttributeValues contains invalid value: Supplied AttributeValue is empty, must contain exactly one of the supported datatypes for key :v",
    )


# ---------------------------------------------------------------- malformed expressions and limits


def test_malformed_projection_expression(ddb, table):
    expect_expr_error(
        lambda: ddb.get_item(TableName=table, Key={"pk": {"S": "a"}}, ProjectionExpression="a,,b"),
        startswith="Invalid ProjectionExpression: Syntax error; token: ",
    )


def test_malformed_filter_expression(ddb, table):
    expect_expr_error(
        lambda: ddb.scan(TableName=table, FilterExpression="x = = :v", ExpressionAttributeValues={":v": {"S": "x"}}),
        startswith="Invalid FilterExpression: Syntax error; token: ",
    )


def test_condition_expression_over_4kb(ddb, table):
    expr = "attribute_not_exists(" + "a" * 4076 + ")"
    assert len(expr) == 4098
    expect_expr_error(
        lambda: ddb.put_item(TableName=table, Item={"pk": {"S": "a"}}, ConditionExpression=expr),
        startswith="Invalid ConditionExpression: Expression size has exceeded the maximum allowed size",
    )


def test_update_expression_over_4kb(ddb, table):
    expr = "SET " + "a" * 4088 + " = :v"
    assert len(expr) == 4097
    expect_expr_error(
        lambda: ddb.update_item(
            TableName=table, Key={"pk": {"S": "a"}}, UpdateExpression=expr, ExpressionAttributeValues={":v": {"S": "x"}}
        ),
        startswith="Invalid UpdateExpression: Expression size has exceeded the maximum allowed size",
    )


def test_projection_expression_at_4kb_accepted(ddb, table):
    ddb.put_item(TableName=table, Item={"pk": {"S": "a"}})
    resp = ddb.get_item(TableName=table, Key={"pk": {"S": "a"}}, ProjectionExpression="a" + "z" * 4095)
    assert resp["Item"] == {}


def test_projection_expression_over_4kb(ddb, table):
    expect_expr_error(
        lambda: ddb.get_item(TableName=table, Key={"pk": {"S": "a"}}, ProjectionExpression="a" + "z" * 4096),
        "Invalid ProjectionExpression: Expression size has exceeded the maximum allowed size;",
    )


def test_ten_thousand_nested_parentheses(ddb, table):
    expr = "(" * 10000 + "attribute_exists(pk)" + ")" * 10000
    expect_expr_error(
        lambda: ddb.put_item(TableName=table, Item={"pk": {"S": "a"}}, ConditionExpression=expr),
        startswith="Invalid ConditionExpression: ",
    )
    # The server is still healthy.
    assert isinstance(ddb.list_tables(Limit=1)["TableNames"], list)
    ddb.put_item(TableName=table, Item={"pk": {"S": "after"}})
    assert "Item" in ddb.get_item(TableName=table, Key={"pk": {"S": "after"}})


def test_deep_parentheses_under_size_limit(ddb, table):
    # 2,000 levels fit in 4 KB, so the parser itself must cope (no stack overflow).
    expr = "(" * 2000 + "x = :v" + ")" * 2000
    assert len(expr) <= 4096
    expect_expr_error(
        lambda: ddb.put_item(
            TableName=table, Item={"pk": {"S": "a"}}, ConditionExpression=expr, ExpressionAttributeValues={":v": {"S": "v"}}
        ),
        startswith="Invalid ConditionExpression: ",
    )
    ddb.put_item(TableName=table, Item={"pk": {"S": "still-alive"}})


# ---------------------------------------------------------------- generic constraints


def test_table_name_pattern(ddb_raw):
    # Since table ARNs became valid TableName values the pattern constraint text is not pinned.
    expect_error(lambda: ddb_raw.describe_table(TableName="bad name!"), "ValidationException", startswith="1 validation error detected: ")


def test_scan_limit_zero(ddb_raw, table):
    expect_error(
        lambda: ddb_raw.scan(TableName=table, Limit=0),
        "ValidationException",
        "1 validation error detected: Value '0' at 'limit' failed to satisfy constraint: Member must have value greater than or equal to 1",
    )


def test_invalid_select_value(ddb, table):
    # Enum order as captured against the live service by dynalite.
    expect_error(
        lambda: ddb.scan(TableName=table, Select="EVERYTHING"),
        "ValidationException",
        "1 validation error detected: Value 'EVERYTHING' at 'select' failed to satisfy constraint: "
        "Member must satisfy enum value set: [SPECIFIC_ATTRIBUTES, COUNT, ALL_ATTRIBUTES, ALL_PROJECTED_ATTRIBUTES]",
    )
