"""UpdateExpression semantics and errors: SET / REMOVE / ADD / DELETE."""

from __future__ import annotations

import pytest

from conftest import Prefix, expect_error, expect_expr_error, invalid_expression

KEY = {"pk": {"S": "k"}}


def setup_item(ddb, table, **attrs):
    ddb.put_item(TableName=table, Item={**KEY, **attrs})


def update(ddb, table, expr, values=None, names=None, **kw):
    args = dict(TableName=table, Key=KEY, UpdateExpression=expr, ReturnValues="ALL_NEW", **kw)
    if values:
        args["ExpressionAttributeValues"] = values
    if names:
        args["ExpressionAttributeNames"] = names
    return ddb.update_item(**args).get("Attributes")


def current(ddb, table):
    return ddb.get_item(TableName=table, Key=KEY, ConsistentRead=True).get("Item")


# ---------------------------------------------------------------- SET


def test_set_new_and_existing_attributes(ddb, table):
    setup_item(ddb, table, a={"S": "old"})
    new = update(ddb, table, "SET a = :a, b = :b", {":a": {"S": "new"}, ":b": {"N": "5"}})
    assert new == {**KEY, "a": {"S": "new"}, "b": {"N": "5"}}


def test_set_copy_other_attribute(ddb, table):
    setup_item(ddb, table, a={"M": {"x": {"N": "1"}}})
    new = update(ddb, table, "SET b = a")
    assert new["b"] == {"M": {"x": {"N": "1"}}}


@pytest.mark.parametrize(
    "expr,expected",
    [
        ("SET n = n + :v", "15"),
        ("SET n = n - :v", "5"),
        ("SET n = :v - n", "-5"),
        ("SET n = :v + :v", "10"),
    ],
)
def test_set_arithmetic(ddb, table, expr, expected):
    setup_item(ddb, table, n={"N": "10"})
    assert update(ddb, table, expr, {":v": {"N": "5"}})["n"] == {"N": expected}


def test_set_arithmetic_is_decimal_exact(ddb, table):
    setup_item(ddb, table, n={"N": "0.1"})
    assert update(ddb, table, "SET n = n + :v", {":v": {"N": "0.2"}})["n"] == {"N": "0.3"}


def test_set_arithmetic_38_digits(ddb, table):
    setup_item(ddb, table, n={"N": "99999999999999999999999999999999999998"})
    got = update(ddb, table, "SET n = n + :one", {":one": {"N": "1"}})["n"]
    assert got == {"N": "99999999999999999999999999999999999999"}


def test_set_arithmetic_missing_attribute(ddb, table):
    setup_item(ddb, table)
    expect_error(
        lambda: update(ddb, table, "SET n = n + :v", {":v": {"N": "1"}}),
        "ValidationException",
        "The provided expression refers to an attribute that does not exist in the item",
    )


def test_set_arithmetic_on_string(ddb, table):
    setup_item(ddb, table, n={"S": "ten"})
    expect_error(
        lambda: update(ddb, table, "SET n = n + :v", {":v": {"N": "1"}}),
        "ValidationException",
        "An operand in the update expression has an incorrect data type",
    )
    assert current(ddb, table)["n"] == {"S": "ten"}


def test_if_not_exists_missing_and_present(ddb, table):
    setup_item(ddb, table, present={"N": "1"})
    new = update(
        ddb,
        table,
        "SET present = if_not_exists(present, :d), absent = if_not_exists(absent, :d)",
        {":d": {"N": "99"}},
    )
    assert new["present"] == {"N": "1"}
    assert new["absent"] == {"N": "99"}


def test_if_not_exists_counter_idiom(ddb, table):
    for _ in range(3):
        update(ddb, table, "SET c = if_not_exists(c, :zero) + :one", {":zero": {"N": "0"}, ":one": {"N": "1"}})
    assert current(ddb, table)["c"] == {"N": "3"}


def test_list_append_end_and_front(ddb, table):
    setup_item(ddb, table, l={"L": [{"N": "2"}]})
    update(ddb, table, "SET l = list_append(l, :v)", {":v": {"L": [{"N": "3"}]}})
    new = update(ddb, table, "SET l = list_append(:v, l)", {":v": {"L": [{"N": "1"}]}})
    assert new["l"] == {"L": [{"N": "1"}, {"N": "2"}, {"N": "3"}]}


def test_list_append_with_if_not_exists(ddb, table):
    setup_item(ddb, table)
    new = update(
        ddb, table, "SET l = list_append(if_not_exists(l, :empty), :v)", {":empty": {"L": []}, ":v": {"L": [{"S": "a"}]}}
    )
    assert new["l"] == {"L": [{"S": "a"}]}


def test_list_append_on_non_list_attribute(ddb, table):
    setup_item(ddb, table, l={"S": "not a list"})
    expect_error(
        lambda: update(ddb, table, "SET l = list_append(l, :v)", {":v": {"L": [{"S": "a"}]}}),
        "ValidationException",
        "An operand in the update expression has an incorrect data type",
    )


def test_list_append_with_non_list_value(ddb, table):
    setup_item(ddb, table, l={"L": []})
    expect_expr_error(
        lambda: update(ddb, table, "SET l = list_append(l, :v)", {":v": {"S": "a"}}),
        startswith="Invalid UpdateExpression: Incorrect operand type for operator or function; operator or function: list_append",
    )


def test_set_list_element_by_index(ddb, table):
    setup_item(ddb, table, l={"L": [{"S": "a"}, {"S": "b"}, {"S": "c"}]})
    new = update(ddb, table, "SET l[1] = :v", {":v": {"S": "B"}})
    assert new["l"] == {"L": [{"S": "a"}, {"S": "B"}, {"S": "c"}]}


def test_set_list_index_past_end_appends(ddb, table):
    setup_item(ddb, table, l={"L": [{"S": "a"}]})
    new = update(ddb, table, "SET l[10] = :v", {":v": {"S": "z"}})
    assert new["l"] == {"L": [{"S": "a"}, {"S": "z"}]}


def test_set_nested_map_path(ddb, table):
    setup_item(ddb, table, m={"M": {"a": {"M": {"b": {"N": "1"}}}}})
    new = update(ddb, table, "SET m.a.c = :v, m.a.b = :w", {":v": {"S": "new"}, ":w": {"N": "2"}})
    assert new["m"] == {"M": {"a": {"M": {"b": {"N": "2"}, "c": {"S": "new"}}}}}


def test_set_nested_path_with_names_and_index(ddb, table):
    setup_item(ddb, table, doc={"M": {"items": {"L": [{"M": {"qty": {"N": "1"}}}]}}})
    new = update(
        ddb,
        table,
        "SET #d.#i[0].#q = #d.#i[0].#q + :n",
        {":n": {"N": "4"}},
        {"#d": "doc", "#i": "items", "#q": "qty"},
    )
    assert new["doc"] == {"M": {"items": {"L": [{"M": {"qty": {"N": "5"}}}]}}}


@pytest.mark.parametrize(
    "attrs, expr",
    [
        ({"m": {"M": {}}}, "SET m.x.y = :v"),
        ({}, "SET nothere.x = :v"),
        ({"m": {"M": {"a": {"S": "x"}}}}, "SET m[0] = :v"),
    ],
    ids=["missing-parent", "missing-attribute", "list-index-on-map"],
)
def test_set_invalid_document_path(ddb, table, attrs, expr):
    setup_item(ddb, table, **attrs)
    expect_error(
        lambda: update(ddb, table, expr, {":v": {"S": "v"}}),
        "ValidationException",
        "The document path provided in the update expression is invalid for update",
    )


# ---------------------------------------------------------------- REMOVE


def test_remove_attributes(ddb, table):
    setup_item(ddb, table, a={"S": "1"}, b={"S": "2"}, c={"S": "3"})
    new = update(ddb, table, "REMOVE a, c, notthere")
    assert new == {**KEY, "b": {"S": "2"}}


def test_remove_nested_map_key(ddb, table):
    setup_item(ddb, table, m={"M": {"x": {"N": "1"}, "y": {"N": "2"}}})
    new = update(ddb, table, "REMOVE m.x")
    assert new["m"] == {"M": {"y": {"N": "2"}}}


def test_remove_list_index_shifts(ddb, table):
    setup_item(ddb, table, l={"L": [{"S": "a"}, {"S": "b"}, {"S": "c"}, {"S": "d"}]})
    new = update(ddb, table, "REMOVE l[1], l[3]")
    assert new["l"] == {"L": [{"S": "a"}, {"S": "c"}]}


def test_remove_list_index_past_end_is_noop(ddb, table):
    setup_item(ddb, table, l={"L": [{"S": "a"}]})
    new = update(ddb, table, "REMOVE l[5]")
    assert new["l"] == {"L": [{"S": "a"}]}


def test_set_and_remove_together(ddb, table):
    setup_item(ddb, table, a={"S": "1"}, b={"S": "2"})
    new = update(ddb, table, "SET c = :c REMOVE a", {":c": {"S": "3"}})
    assert new == {**KEY, "b": {"S": "2"}, "c": {"S": "3"}}


# ---------------------------------------------------------------- ADD


def test_add_number_existing_and_missing(ddb, table):
    setup_item(ddb, table, n={"N": "5"})
    new = update(ddb, table, "ADD n :v, fresh :v", {":v": {"N": "-2.5"}})
    assert new["n"] == {"N": "2.5"}
    assert new["fresh"] == {"N": "-2.5"}


def test_add_string_set(ddb, table):
    setup_item(ddb, table, s={"SS": ["a", "b"]})
    new = update(ddb, table, "ADD s :v", {":v": {"SS": ["b", "c"]}})
    assert sorted(new["s"]["SS"]) == ["a", "b", "c"]


def test_add_number_set_creates_and_dedupes(ddb, table):
    setup_item(ddb, table)
    update(ddb, table, "ADD ns :v", {":v": {"NS": ["1", "2"]}})
    new = update(ddb, table, "ADD ns :v", {":v": {"NS": ["2.0", "3"]}})
    assert sorted(new["ns"]["NS"], key=float) == ["1", "2", "3"]


def test_add_binary_set(ddb, table):
    setup_item(ddb, table, bs={"BS": [b"\x01"]})
    new = update(ddb, table, "ADD bs :v", {":v": {"BS": [b"\x02", b"\x01"]}})
    assert sorted(bytes(b) for b in new["bs"]["BS"]) == [b"\x01", b"\x02"]


@pytest.mark.parametrize(
    "existing, operand",
    [({"S": "x"}, {"N": "1"}), ({"SS": ["x"]}, {"NS": ["1"]})],
    ids=["number-to-string", "NS-to-SS"],
)
def test_add_incompatible_type_fails(ddb, table, existing, operand):
    setup_item(ddb, table, s=existing)
    expect_error(
        lambda: update(ddb, table, "ADD s :v", {":v": operand}),
        "ValidationException",
        "An operand in the update expression has an incorrect data type",
    )


def test_delete_from_set(ddb, table):
    setup_item(ddb, table, s={"SS": ["a", "b", "c"]})
    new = update(ddb, table, "DELETE s :v", {":v": {"SS": ["a", "c", "zz"]}})
    assert new["s"] == {"SS": ["b"]}


def test_delete_last_elements_removes_attribute(ddb, table):
    setup_item(ddb, table, s={"NS": ["1", "2"]})
    new = update(ddb, table, "DELETE s :v", {":v": {"NS": ["1", "2"]}})
    assert "s" not in new


def test_delete_from_missing_attribute_is_noop(ddb, table):
    setup_item(ddb, table, other={"S": "o"})
    new = update(ddb, table, "DELETE s :v", {":v": {"SS": ["a"]}})
    assert new == {**KEY, "other": {"S": "o"}}


def test_all_four_clauses(ddb, table):
    setup_item(ddb, table, a={"S": "x"}, n={"N": "1"}, s={"SS": ["p", "q"]}, gone={"S": "bye"})
    new = update(
        ddb,
        table,
        "SET a = :a REMOVE gone ADD n :one DELETE s :p",
        {":a": {"S": "y"}, ":one": {"N": "1"}, ":p": {"SS": ["p"]}},
    )
    assert new == {**KEY, "a": {"S": "y"}, "n": {"N": "2"}, "s": {"SS": ["q"]}}


# ---------------------------------------------------------------- key attributes


@pytest.mark.parametrize(
    "expr,values",
    [
        ("SET pk = :v", {":v": {"S": "other"}}),
        ("REMOVE pk", None),
        ("ADD pk :n", {":n": {"N": "1"}}),
    ],
)
def test_update_hash_key_rejected(ddb, table, expr, values):
    setup_item(ddb, table)
    expect_error(
        lambda: update(ddb, table, expr, values),
        "ValidationException",
        "One or more parameter values were invalid: Cannot update attribute pk. This attribute is part of the key",
    )


def test_update_range_key_rejected(ddb, table_hr):
    key = {"pk": {"S": "k"}, "sk": {"S": "s"}}
    ddb.put_item(TableName=table_hr, Item=key)
    expect_error(
        lambda: ddb.update_item(
            TableName=table_hr, Key=key, UpdateExpression="SET sk = :v", ExpressionAttributeValues={":v": {"S": "t"}}
        ),
        "ValidationException",
        "One or more parameter values were invalid: Cannot update attribute sk. This attribute is part of the key",
    )


# ---------------------------------------------------------------- expression errors


X = {":v": {"S": "x"}}
OVERLAP = "Two document paths overlap with each other; must remove or rewrite one of these paths;"
WRONG_OPERAND = "Incorrect operand type for operator or function; operator: "


# Expected messages follow "Invalid UpdateExpression: "; of a Prefix only the start is asserted.
@pytest.mark.parametrize(
    "expr, values, message",
    [
        pytest.param("SET a = :v REMOVE a", X, OVERLAP + " path one: [a], path two: [a]", id="overlapping-paths"),
        pytest.param("SET m.a = :v, m = :w", {**X, ":w": {"M": {}}}, Prefix(OVERLAP), id="overlapping-parent-and-child-paths"),
        pytest.param("SET a = :v SET b = :v", X, 'The "SET" section can only be used once in an update expression;', id="section-used-twice"),
        pytest.param("SET a = foo(:v)", X, "Invalid function name; function: foo", id="unknown-function"),
        pytest.param(
            "SET a = :missing",
            None,
            "An expression attribute value used in expression is not defined; attribute value: :missing",
            id="undefined-value-placeholder",
        ),
        pytest.param(
            "SET #missing = :v",
            X,
            "An expression attribute name used in the document path is not defined; attribute name: #missing",
            id="undefined-name-placeholder",
        ),
        pytest.param("SET name = :v", X, "Attribute name is a reserved keyword; reserved keyword: name", id="reserved-word"),
        # Live text names the offending token and context.
        pytest.param("SET = :v", X, Prefix("Syntax error; token: "), id="syntax-error"),
        # Live text continues with ", typeSet: ALLOWED_FOR_ADD_OPERAND" / "..._DELETE_OPERAND".
        pytest.param("ADD a :v", X, Prefix(WRONG_OPERAND + "ADD, operand type: STRING"), id="ADD-string-operand"),
        pytest.param("DELETE s :v", {":v": {"N": "1"}}, Prefix(WRONG_OPERAND + "DELETE, operand type: NUMBER"), id="DELETE-number-operand"),
    ],
)
def test_update_expression_error(ddb, table, expr, values, message):
    expect_expr_error(lambda: update(ddb, table, expr, values), invalid_expression("UpdateExpression", message))


def test_empty_update_expression(ddb, table):
    expect_expr_error(
        lambda: ddb.update_item(TableName=table, Key=KEY, UpdateExpression=""),
        "Invalid UpdateExpression: The expression can not be empty;",
    )


def test_failed_update_leaves_item_unchanged(ddb, table):
    setup_item(ddb, table, a={"N": "1"}, s={"S": "str"})
    expect_error(
        lambda: update(ddb, table, "SET a = :two ADD s :one", {":two": {"N": "2"}, ":one": {"N": "1"}}),
        "ValidationException",
        "An operand in the update expression has an incorrect data type",
    )
    assert current(ddb, table) == {**KEY, "a": {"N": "1"}, "s": {"S": "str"}}


WHOLE = {"a": {"N": "1"}, "s": {"SS": ["x", "y"]}, "b": {"M": {"c": {"N": "2"}}}}


@pytest.mark.parametrize(
    "expr, values, left",
    [
        ("REMOVE a", None, {"s": WHOLE["s"], "b": WHOLE["b"]}),
        ("REMOVE a, b.c", None, {"s": WHOLE["s"], "b": {"M": {}}}),
        ("DELETE s :v", {":v": {"SS": ["x"]}}, {"a": WHOLE["a"], "s": {"SS": ["y"]}, "b": WHOLE["b"]}),
    ],
)
def test_an_update_that_only_removes_does_not_create_a_missing_item(ddb, table, expr, values, left):
    # ScyllaDB's Alternator suite, run against DynamoDB: test_item.py::
    # test_update_item_non_existent, test_returnvalues.py (ALL_NEW).
    key = {"pk": {"S": "missing"}}
    kw = {"ExpressionAttributeValues": values} if values else {}
    out = ddb.update_item(TableName=table, Key=key, UpdateExpression=expr, ReturnValues="ALL_NEW", **kw)
    assert "Attributes" not in out
    assert "Item" not in ddb.get_item(TableName=table, Key=key, ConsistentRead=True)
    # Nor inside a transaction.
    ddb.transact_write_items(TransactItems=[{"Update": {"TableName": table, "Key": key, "UpdateExpression": expr, **kw}}])
    assert "Item" not in ddb.get_item(TableName=table, Key=key, ConsistentRead=True)
    # On an item that exists it removes, and the item stays.
    ddb.put_item(TableName=table, Item={**key, **WHOLE})
    out = ddb.update_item(TableName=table, Key=key, UpdateExpression=expr, ReturnValues="ALL_NEW", **kw)
    assert out["Attributes"] == {**key, **left}


def test_an_update_that_sets_adds_or_names_nothing_creates_a_missing_item(ddb, table):
    for n, kw in enumerate(
        [
            {"UpdateExpression": "SET a = :v", "ExpressionAttributeValues": {":v": {"N": "1"}}},
            {"UpdateExpression": "ADD n :v", "ExpressionAttributeValues": {":v": {"N": "1"}}},
            {"UpdateExpression": "SET a = :v REMOVE b", "ExpressionAttributeValues": {":v": {"N": "1"}}},
            {},
        ]
    ):
        key = {"pk": {"S": f"created-{n}"}}
        ddb.update_item(TableName=table, Key=key, **kw)
        assert ddb.get_item(TableName=table, Key=key, ConsistentRead=True)["Item"]["pk"] == key["pk"], kw

