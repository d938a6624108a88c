"""ConditionExpression on PutItem / UpdateItem / DeleteItem: every comparator and function."""

from __future__ import annotations

import pytest

from conftest import EVERY_TYPE_ITEM, EVERY_TYPE_KEY, Prefix, expect_error, expect_expr_error, invalid_expression

KEY = EVERY_TYPE_KEY
ITEM = {
    **EVERY_TYPE_ITEM,
    "l": {"L": [{"S": "x"}, {"N": "1"}, {"M": {"q": {"S": "w"}}}]},
    "m": {"M": {"k": {"S": "v"}, "child": {"M": {"deep": {"N": "10"}}}}},
    "name": {"S": "reserved"},
}

VALUES = {
    ":zero": {"N": "0"},
    ":one": {"N": "1"},
    ":two": {"N": "2"},
    ":three": {"N": "3"},
    ":five": {"N": "5"},
    ":six": {"N": "6"},
    ":ten": {"N": "10"},
    ":hello": {"S": "hello"},
    ":hi": {"S": "hi"},
    ":he": {"S": "he"},
    ":lo": {"S": "lo"},
    ":ell": {"S": "ell"},
    ":five_s": {"S": "5"},
    ":a": {"S": "a"},
    ":z": {"S": "z"},
    ":x": {"S": "x"},
    ":v": {"S": "v"},
    ":w": {"S": "w"},
    ":bin": {"B": b"\x01\x02\x03"},
    ":bin_hi": {"B": b"\x01\x02\x04"},
    ":b01": {"B": b"\x01"},
    ":true": {"BOOL": True},
    ":null": {"NULL": True},
    ":T_S": {"S": "S"},
    ":T_N": {"S": "N"},
    ":T_B": {"S": "B"},
    ":T_BOOL": {"S": "BOOL"},
    ":T_NULL": {"S": "NULL"},
    ":T_SS": {"S": "SS"},
    ":T_NS": {"S": "NS"},
    ":T_BS": {"S": "BS"},
    ":T_L": {"S": "L"},
    ":T_M": {"S": "M"},
    ":ss_rev": {"SS": ["b", "a"]},
    ":list": {"L": [{"S": "x"}, {"N": "1"}, {"M": {"q": {"S": "w"}}}]},
    ":map": {"M": {"k": {"S": "v"}, "child": {"M": {"deep": {"N": "10"}}}}},
}


def expect_condition_failed(fn):
    """fn() must fail with ConditionalCheckFailedException and its exact message."""
    return expect_error(fn, "ConditionalCheckFailedException", "The conditional request failed")


@pytest.fixture
def cond_table(ddb, table):
    ddb.put_item(TableName=table, Item=ITEM)
    return table


def holds(ddb, table, expr, names=None):
    """Evaluate `expr` against ITEM by a conditional PutItem of the same item."""
    used = {k: v for k, v in VALUES.items() if k in expr and _token_used(expr, k)}
    kwargs = dict(TableName=table, Item=ITEM, ConditionExpression=expr)
    if used:
        kwargs["ExpressionAttributeValues"] = used
    if names:
        kwargs["ExpressionAttributeNames"] = names
    try:
        ddb.put_item(**kwargs)
        return True
    except ddb.exceptions.ConditionalCheckFailedException as err:
        assert err.response["Error"]["Message"] == "The conditional request failed"
        return False


def _token_used(expr, token):
    import re

    return re.search(re.escape(token) + r"(?![A-Za-z0-9_])", expr) is not None


CASES = {
    'comparators on numbers': [
        ("n = :five", True),
        ("n = :six", False),
        ("n <> :five", False),
        ("n <> :six", True),
        ("n < :six", True),
        ("n < :five", False),
        ("n <= :five", True),
        ("n > :five", False),
        ("n > :one", True),
        ("n >= :five", True),
        ("n >= :six", False),
    ],
    'comparators on strings and binary': [
        ("s = :hello", True),
        ("s < :hi", True),
        ("s > :hi", False),
        ("b = :bin", True),
        ("b < :bin_hi", True),
        ("b > :bin_hi", False),
    ],
    'different types never compare equal / ordered': [
        ("n = :five_s", False),
        ("n <> :five_s", True),
        ("n < :hello", False),
        ("n >= :hello", False),
    ],
    'BOOL, NULL, whole documents and sets': [
        ("t = :true", True),
        ("nul = :null", True),
        ("l = :list", True),
        ("m = :map", True),
        ("ss = :ss_rev", True),
    ],
    'attribute_exists / attribute_not_exists': [
        ("attribute_exists(s)", True),
        ("attribute_exists(nothere)", False),
        ("attribute_not_exists(nothere)", True),
        ("attribute_not_exists(s)", False),
        ("attribute_exists(pk)", True),
    ],
    'attribute_type': [
        ("attribute_type(s, :T_S)", True),
        ("attribute_type(n, :T_N)", True),
        ("attribute_type(b, :T_B)", True),
        ("attribute_type(t, :T_BOOL)", True),
        ("attribute_type(nul, :T_NULL)", True),
        ("attribute_type(ss, :T_SS)", True),
        ("attribute_type(ns, :T_NS)", True),
        ("attribute_type(bs, :T_BS)", True),
        ("attribute_type(l, :T_L)", True),
        ("attribute_type(m, :T_M)", True),
        ("attribute_type(n, :T_S)", False),
        ("attribute_type(nothere, :T_S)", False),
    ],
    'begins_with': [
        ("begins_with(s, :he)", True),
        ("begins_with(s, :lo)", False),
        ("begins_with(b, :b01)", True),
        ("begins_with(n, :five_s)", False),
    ],
    'contains': [
        ("contains(s, :ell)", True),
        ("contains(s, :z)", False),
        ("contains(ss, :a)", True),
        ("contains(ss, :z)", False),
        ("contains(ns, :one)", True),
        ("contains(ns, :three)", False),
        ("contains(bs, :b01)", True),
        ("contains(l, :x)", True),
        ("contains(l, :one)", True),
        ("contains(l, :z)", False),
        ("contains(s, :one)", False),
    ],
    'size': [
        ("size(s) = :five", True),
        ("size(ss) = :two", True),
        ("size(l) = :three", True),
        ("size(m) = :two", True),
        ("size(b) = :three", True),
        ("size(s) > :five", False),
        ("size(nothere) = :zero", False),
        ("n = size(s)", True),
    ],
    'IN / BETWEEN': [
        ("n IN (:one, :five)", True),
        ("n IN (:one, :two)", False),
        ("s IN (:hello)", True),
        ("n BETWEEN :one AND :five", True),
        ("n BETWEEN :five AND :ten", True),
        ("n BETWEEN :six AND :ten", False),
        ("s BETWEEN :he AND :hi", True),
    ],
    'logical operators and precedence': [
        ("NOT n = :one", True),
        ("NOT n = :five", False),
        ("n = :one OR s = :hello", True),
        ("n = :one AND s = :hello", False),
        ("n = :one OR n = :five AND s = :z", False),
        ("(n = :one OR n = :five) AND s = :hello", True),
        ("NOT (n = :one OR s = :z)", True),
        ("NOT attribute_exists(nothere) AND NOT attribute_not_exists(s)", True),
        ("n = :one OR (s = :z OR (t = :true AND nul = :null))", True),
    ],
    'nested paths and list indexes': [
        ("m.k = :v", True),
        ("m.child.deep = :ten", True),
        ("m.child.deep > :ten", False),
        ("attribute_exists(m.child)", True),
        ("attribute_exists(m.nothere)", False),
        ("l[0] = :x", True),
        ("l[1] = :one", True),
        ("l[2].q = :w", True),
        ("attribute_exists(l[5])", False),
        ("attribute_not_exists(l[5])", True),
        ("size(l[2]) = :one", True),
    ],
}

@pytest.mark.parametrize("group", list(CASES))
def test_condition_evaluation(ddb, cond_table, group):
    """Each (expression, expected outcome) pair is evaluated; all mismatches are reported together."""
    wrong = []
    for expr, expected in CASES[group]:
        try:
            got = holds(ddb, cond_table, expr)
        except Exception as exc:  # noqa: BLE001 - reported with the expression
            got = f"error: {exc}"
        if got is not expected:
            wrong.append(f"{expr!r}: expected {expected}, got {got}")
    assert not wrong, "\n".join(wrong)


def test_condition_with_attribute_names(ddb, cond_table):
    assert holds(ddb, cond_table, "#n = :v", names={"#n": "name"}) is False
    assert holds(ddb, cond_table, "#m.#s.#d = :ten", names={"#m": "m", "#s": "child", "#d": "deep"}) is True
    assert holds(ddb, cond_table, "attribute_exists(#n)", names={"#n": "name"}) is True


def test_condition_name_with_dot_via_placeholder(ddb, table):
    ddb.put_item(TableName=table, Item={**KEY, "a.b": {"S": "dotted"}})
    ddb.put_item(
        TableName=table,
        Item={**KEY, "a.b": {"S": "dotted2"}},
        ConditionExpression="#ab = :v",
        ExpressionAttributeNames={"#ab": "a.b"},
        ExpressionAttributeValues={":v": {"S": "dotted"}},
    )
    assert ddb.get_item(TableName=table, Key=KEY)["Item"]["a.b"] == {"S": "dotted2"}


def test_put_if_not_exists_on_new_and_existing(ddb, table):
    ddb.put_item(TableName=table, Item={**KEY, "v": {"N": "1"}}, ConditionExpression="attribute_not_exists(pk)")
    err = expect_condition_failed(
        lambda: ddb.put_item(TableName=table, Item={**KEY, "v": {"N": "2"}}, ConditionExpression="attribute_not_exists(pk)")
    )
    assert err.response["ResponseMetadata"]["HTTPStatusCode"] == 400
    assert "Item" not in err.response
    assert ddb.get_item(TableName=table, Key=KEY, ConsistentRead=True)["Item"]["v"] == {"N": "1"}


def test_condition_on_missing_item(ddb, table):
    expect_condition_failed(lambda: ddb.put_item(TableName=table, Item=KEY, ConditionExpression="attribute_exists(pk)"))
    expect_condition_failed(
        lambda: ddb.put_item(
            TableName=table, Item=KEY, ConditionExpression="n = :one", ExpressionAttributeValues={":one": {"N": "1"}}
        )
    )


def test_update_condition_pass_and_fail(ddb, cond_table):
    # The same conditional increment twice: n is 5 the first time, 6 the second.
    increment_if_five = dict(
        TableName=cond_table,
        Key=KEY,
        UpdateExpression="SET n = n + :one",
        ConditionExpression="n = :five",
        ExpressionAttributeValues={":one": {"N": "1"}, ":five": {"N": "5"}},
    )
    ddb.update_item(**increment_if_five)
    expect_condition_failed(lambda: ddb.update_item(**increment_if_five))
    assert ddb.get_item(TableName=cond_table, Key=KEY, ConsistentRead=True)["Item"]["n"] == {"N": "6"}


def test_update_condition_on_missing_item_does_not_create(ddb, table):
    expect_condition_failed(
        lambda: ddb.update_item(
            TableName=table,
            Key=KEY,
            UpdateExpression="SET v = :one",
            ConditionExpression="attribute_exists(pk)",
            ExpressionAttributeValues={":one": {"N": "1"}},
        )
    )
    assert "Item" not in ddb.get_item(TableName=table, Key=KEY, ConsistentRead=True)


def test_delete_condition_pass_and_fail(ddb, cond_table):
    expect_condition_failed(
        lambda: ddb.delete_item(
            TableName=cond_table, Key=KEY, ConditionExpression="s = :z", ExpressionAttributeValues={":z": {"S": "z"}}
        )
    )
    assert "Item" in ddb.get_item(TableName=cond_table, Key=KEY, ConsistentRead=True)
    ddb.delete_item(
        TableName=cond_table, Key=KEY, ConditionExpression="s = :h", ExpressionAttributeValues={":h": {"S": "hello"}}
    )
    assert "Item" not in ddb.get_item(TableName=cond_table, Key=KEY, ConsistentRead=True)


@pytest.mark.parametrize("op", ["put", "update", "delete"])
def test_return_values_on_condition_check_failure_all_old(ddb, cond_table, op):
    common = dict(
        TableName=cond_table,
        ConditionExpression="n = :one",
        ExpressionAttributeValues={":one": {"N": "1"}},
        ReturnValuesOnConditionCheckFailure="ALL_OLD",
    )
    if op == "put":
        call = lambda: ddb.put_item(Item={**KEY, "n": {"N": "1"}}, **common)  # noqa: E731
    elif op == "update":
        call = lambda: ddb.update_item(Key=KEY, UpdateExpression="SET n = :one", **common)  # noqa: E731
    else:
        call = lambda: ddb.delete_item(Key=KEY, **common)  # noqa: E731
    err = expect_condition_failed(call)
    got = err.response["Item"]
    assert got["n"] == {"N": "5"}
    assert got["s"] == {"S": "hello"}
    assert set(got) == set(ITEM)


@pytest.mark.parametrize(
    "table_fixture, condition, return_values",
    [
        pytest.param("cond_table", "attribute_not_exists(pk)", "NONE", id="NONE-on-existing-item"),
        pytest.param("table", "attribute_exists(pk)", "ALL_OLD", id="ALL_OLD-on-missing-item"),
    ],
)
def test_return_values_on_condition_check_failure_without_item(ddb, request, table_fixture, condition, return_values):
    name = request.getfixturevalue(table_fixture)
    err = expect_condition_failed(
        lambda: ddb.put_item(
            TableName=name, Item=KEY, ConditionExpression=condition, ReturnValuesOnConditionCheckFailure=return_values
        )
    )
    assert "Item" not in err.response


def test_in_with_100_operands_allowed_and_101_rejected(ddb, cond_table):
    values = {f":v{i}": {"N": str(i + 100)} for i in range(101)}
    hundred = ", ".join(f":v{i}" for i in range(100))
    expect_condition_failed(
        lambda: ddb.put_item(
            TableName=cond_table,
            Item=ITEM,
            ConditionExpression=f"n IN ({hundred})",
            ExpressionAttributeValues={k: values[k] for k in list(values)[:100]},
        )
    )
    all101 = ", ".join(f":v{i}" for i in range(101))
    expect_expr_error(
        lambda: ddb.put_item(
            TableName=cond_table, Item=ITEM, ConditionExpression=f"n IN ({all101})", ExpressionAttributeValues=values
        ),
        "Invalid ConditionExpression: The IN operator is provided with too many operands; number of operands: 101",
    )


V = {":v": {"S": "v"}}


def put_with_condition(ddb, table, expr, values=None):
    """PutItem of ITEM with ConditionExpression `expr` (and `values`, if any)."""
    kwargs = dict(TableName=table, Item=ITEM, ConditionExpression=expr)
    if values is not None:
        kwargs["ExpressionAttributeValues"] = values
    return ddb.put_item(**kwargs)


# Expected messages follow "Invalid ConditionExpression: "; of a Prefix only the start is asserted.
@pytest.mark.parametrize(
    "expr, values, message",
    [
        pytest.param("name = :v", V, "Attribute name is a reserved keyword; reserved keyword: name", id="reserved-word"),
        pytest.param(
            "s = :nope", None, "An expression attribute value used in expression is not defined; attribute value: :nope", id="undefined-value"
        ),
        pytest.param(
            "attribute_exists(#nope)",
            None,
            "An expression attribute name used in the document path is not defined; attribute name: #nope",
            id="undefined-name",
        ),
        pytest.param("((s = :v))", V, "The expression has redundant parentheses;", id="redundant-parentheses"),
        pytest.param("nosuchfn(s, :v)", V, "Invalid function name; function: nosuchfn", id="unknown-function"),
        pytest.param("", None, "The expression can not be empty;", id="empty"),
        pytest.param(
            "n BETWEEN :ten AND :one",
            {":ten": {"N": "10"}, ":one": {"N": "1"}},
            Prefix("The BETWEEN operator requires upper bound to be greater than or equal to lower bound"),
            id="between-bounds-reversed",
        ),
        pytest.param(
            "n BETWEEN :one AND :hello",
            {":one": {"N": "1"}, ":hello": {"S": "hello"}},
            Prefix("The BETWEEN operator requires same data type for lower and upper bounds"),
            id="between-bounds-of-different-types",
        ),
        pytest.param(
            "attribute_type(s, :t)",
            {":t": {"S": "XX"}},
            Prefix("Invalid attribute type name found; type: XX, valid types: "),
            id="attribute-type-invalid-type-name",
        ),
        pytest.param(
            "n = n",
            None,
            Prefix("The first operand must be distinct from the remaining operands for this operator or function;"),
            id="operand-not-distinct",
        ),
        pytest.param("s = = :v", V, Prefix("Syntax error; token: "), id="syntax-error"),
    ],
)
def test_condition_expression_error(ddb, cond_table, expr, values, message):
    expect_expr_error(lambda: put_with_condition(ddb, cond_table, expr, values), invalid_expression("ConditionExpression", message))
