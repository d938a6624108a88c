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


def test_put_item_missing_hash_key(ddb, table):
    expect_error(
        lambda: ddb.put_item(TableName=table, Item={"other": {"S": "a"}}),
        "ValidationException",
        "One or more parameter values were invalid: Missing the key pk in the item",
    )


def test_put_item_missing_range_key(ddb, table_hr):
    expect_error(
        lambda: ddb.put_item(TableName=table_hr, Item={"pk": {"S": "a"}}),
        "ValidationException",
        "One or more parameter values were invalid: Missing the key sk in the item",
    )


def test_put_item_key_type_mismatch(ddb, table_hn):
    expect_error(
        lambda: ddb.put_item(TableName=table_hn, Item={"pk": {"S": "a"}, "sk": {"S": "1"}}),
        "ValidationException",
        "One or more parameter values were invalid: Type mismatch for key sk expected: N actual: S",
    )


def test_put_item_empty_string_key(ddb, table):
    expect_error(
        lambda: ddb.put_item(TableName=table, Item={"pk": {"S": ""}}),
        "ValidationException",
        "One or more parameter values are not valid. The AttributeValue for a key attribute cannot contain an empty string value. Key: pk",
    )


def test_get_item_empty_string_key(ddb, table):
    expect_error(
        lambda: ddb.get_item(TableName=table, Key={"pk": {"S": ""}}),
        "ValidationException",
        "One or more parameter values are not valid. The AttributeValue for a key attribute cannot contain an empty string value. Key: pk",
    )


def test_put_item_empty_string_range_key(ddb, table_hr):
    expect_error(
        lambda: ddb.put_item(TableName=table_hr, Item={"pk": {"S": "a"}, "sk": {"S": ""}}),
        "ValidationException",
        "One or more parameter values are not valid. The AttributeValue for a key attribute cannot contain an empty string value. Key: sk",
    )


def test_put_item_empty_binary_key(ddb, make_table):
    name = make_table(hash_key=("k", "B"))
    expect_error(
        lambda: ddb.put_item(TableName=name, Item={"k": {"B": b""}}),
        "ValidationException",
        "One or more parameter values are not valid. The AttributeValue for a key attribute cannot contain an empty binary value. Key: k",
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


def test_hash_key_size_counts_utf8_bytes(ddb, table):
    # 1025 two-byte characters = 2050 bytes.
    expect_error(
        lambda: ddb.put_item(TableName=table, Item={"pk": {"S": "é" * 1025}}),
        "ValidationException",
        "One or more parameter values were invalid: Size of hashkey has exceeded the maximum size limit of2048 bytes",
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


def test_empty_string_set(ddb_raw, table):
    expect_error(
        lambda: ddb_raw.put_item(TableName=table, Item={"pk": {"S": "a"}, "s": {"SS": []}}),
        "ValidationException",
        "One or more parameter values were invalid: An string set  may not be empty",
    )


def test_empty_number_set(ddb_raw, table):
    expect_error(
        lambda: ddb_raw.put_item(TableName=table, Item={"pk": {"S": "a"}, "s": {"NS": []}}),
        "ValidationException",
        "One or more parameter values were invalid: An number set  may not be empty",
    )


def test_empty_binary_set(ddb_raw, table):
    expect_error(
        lambda: ddb_raw.put_item(TableName=table, Item={"pk": {"S": "a"}, "s": {"BS": []}}),
        "ValidationException",
        "One or more parameter values were invalid: Binary sets should not be empty",
    )


def test_duplicate_string_set_members(ddb, table):
    expect_error(
        lambda: ddb.put_item(TableName=table, Item={"pk": {"S": "a"}, "s": {"SS": ["a", "a"]}}),
        "ValidationException",
        "One or more parameter values were invalid: Input collection [a, a] contains duplicates.",
    )


def test_duplicate_number_set_members(ddb, table):
    # The NS wording differs from SS and is not pinned in the reference.
    expect_error(
        lambda: ddb.put_item(TableName=table, Item={"pk": {"S": "a"}, "s": {"NS": ["1", "1"]}}),
        "ValidationException",
        contains="contains duplicates",
    )


def test_duplicate_binary_set_members(ddb, table):
    expect_error(
        lambda: ddb.put_item(TableName=table, Item={"pk": {"S": "a"}, "s": {"BS": [b"\x01", b"\x01"]}}),
        "ValidationException",
        contains="contains duplicates",
    )


def test_empty_attribute_value(ddb_raw, table):
    expect_error(
        lambda: ddb_raw.put_item(TableName=table, Item={"pk": {"S": "a"}, "x": {}}),
        "ValidationException",
        "Supplied AttributeValue is empty, must contain exactly one of the supported datatypes",
    )


def test_empty_attribute_value_nested(ddb_raw, table):
    expect_error(
        lambda: ddb_raw.put_item(TableName=table, Item={"pk": {"S": "a"}, "x": {"L": [{"M": {"y": {}}}]}}),
        "ValidationException",
        "Supplied AttributeValue is empty, must contain exactly one of the supported datatypes",
    )


def test_attribute_value_with_two_types(ddb_raw, table):
    expect_error(
        lambda: ddb_raw.put_item(TableName=table, Item={"pk": {"S": "a"}, "x": {"S": "s", "N": "1"}}),
        "ValidationException",
        "Supplied AttributeValue has more than one datatypes set, must contain exactly one of the supported datatypes",
    )


# ---------------------------------------------------------------- expression attribute maps


def test_unused_expression_attribute_value(ddb, table):
    expect_error(
        lambda: ddb.put_item(
            TableName=table,
            Item={"pk": {"S": "a"}},
            ConditionExpression="attribute_not_exists(pk)",
            ExpressionAttributeValues={":x": {"S": "x"}},
        ),
        "ValidationException",
        "Value provided in ExpressionAttributeValues unused in expressions: keys: {:x}",
    )


def test_unused_expression_attribute_name(ddb, table):
    expect_error(
        lambda: ddb.update_item(
            TableName=table,
            Key={"pk": {"S": "a"}},
            UpdateExpression="SET v = :v",
            ExpressionAttributeNames={"#unused": "zz"},
            ExpressionAttributeValues={":v": {"S": "x"}},
        ),
        "ValidationException",
        "Value provided in ExpressionAttributeNames unused in expressions: keys: {#unused}",
    )


def test_unused_name_in_query(ddb, table):
    expect_error(
        lambda: ddb.query(
            TableName=table,
            KeyConditionExpression="pk = :p",
            ExpressionAttributeValues={":p": {"S": "a"}},
            ExpressionAttributeNames={"#n": "x"},
        ),
        "ValidationException",
        "Value provided in ExpressionAttributeNames unused in expressions: keys: {#n}",
    )


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


def test_empty_expression_attribute_values(ddb, table):
    expect_error(
        lambda: ddb.put_item(
            TableName=table, Item={"pk": {"S": "a"}}, ConditionExpression="attribute_not_exists(pk)", ExpressionAttributeValues={}
        ),
        "ValidationException",
        "ExpressionAttributeValues must not be empty",
    )


def test_empty_expression_attribute_names(ddb, table):
    expect_error(
        lambda: ddb.put_item(
            TableName=table, Item={"pk": {"S": "a"}}, ConditionExpression="attribute_not_exists(pk)", ExpressionAttributeNames={}
        ),
        "ValidationException",
        "ExpressionAttributeNames must not be empty",
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
