"""TransactWriteItems and TransactGetItems."""

from __future__ import annotations

import uuid

import pytest

from conftest import expect_error, unique_name


def k(v):
    return {"pk": {"S": v}}


def get(ddb, table, key):
    return ddb.get_item(TableName=table, Key=key, ConsistentRead=True).get("Item")


def tx_put(table, item, **kw):
    return {"Put": {"TableName": table, "Item": item, **kw}}


def tx_op(table, key, values=None, **fields):
    """The body of a keyed action; ExpressionAttributeValues only when given."""
    op = {"TableName": table, "Key": key, **fields}
    if values:
        op["ExpressionAttributeValues"] = values
    return op


def tx_update(table, key, expr, values=None, **kw):
    return {"Update": tx_op(table, key, values, UpdateExpression=expr, **kw)}


def tx_delete(table, key, **kw):
    return {"Delete": tx_op(table, key, **kw)}


def tx_check(table, key, cond, values=None, **kw):
    return {"ConditionCheck": tx_op(table, key, values, ConditionExpression=cond, **kw)}


def test_transact_write_all_action_types(ddb, make_table):
    t1, t2 = make_table(), make_table()
    ddb.put_item(TableName=t1, Item={**k("upd"), "n": {"N": "1"}})
    ddb.put_item(TableName=t1, Item={**k("del"), "x": {"S": "x"}})
    ddb.put_item(TableName=t2, Item={**k("guard"), "ok": {"BOOL": True}})
    ddb.transact_write_items(
        TransactItems=[
            tx_put(t1, {**k("new"), "v": {"S": "created"}}),
            tx_update(t1, k("upd"), "SET n = n + :one", {":one": {"N": "1"}}),
            tx_delete(t1, k("del")),
            tx_check(t2, k("guard"), "ok = :t", {":t": {"BOOL": True}}),
        ]
    )
    assert get(ddb, t1, k("new")) == {**k("new"), "v": {"S": "created"}}
    assert get(ddb, t1, k("upd"))["n"] == {"N": "2"}
    assert get(ddb, t1, k("del")) is None
    assert get(ddb, t2, k("guard")) == {**k("guard"), "ok": {"BOOL": True}}


def test_transaction_is_all_or_nothing(ddb, table):
    ddb.put_item(TableName=table, Item={**k("a"), "n": {"N": "1"}})
    ddb.put_item(TableName=table, Item={**k("c"), "n": {"N": "1"}})
    err = expect_error(
        lambda: ddb.transact_write_items(
            TransactItems=[
                tx_put(table, {**k("b"), "n": {"N": "1"}}),
                tx_update(table, k("a"), "SET n = :two", {":two": {"N": "2"}}),
                tx_delete(table, k("c"), ConditionExpression="n = :nine", ExpressionAttributeValues={":nine": {"N": "9"}}),
            ]
        ),
        "TransactionCanceledException",
        "Transaction cancelled, please refer cancellation reasons for specific reasons [None, None, ConditionalCheckFailed]",
    )
    reasons = err.response["CancellationReasons"]
    assert [r["Code"] for r in reasons] == ["None", "None", "ConditionalCheckFailed"]
    assert reasons[2]["Message"] == "The conditional request failed"
    assert "Message" not in reasons[0]
    assert get(ddb, table, k("b")) is None
    assert get(ddb, table, k("a"))["n"] == {"N": "1"}
    assert get(ddb, table, k("c")) is not None


def test_cancellation_reasons_in_request_order(ddb, table):
    ddb.put_item(TableName=table, Item={**k("x"), "n": {"N": "1"}})
    err = expect_error(
        lambda: ddb.transact_write_items(
            TransactItems=[
                tx_check(table, k("x"), "n = :two", {":two": {"N": "2"}}),
                tx_put(table, k("y")),
                tx_put(table, k("z"), ConditionExpression="attribute_exists(pk)"),
                tx_update(table, k("w"), "SET q = :one", {":one": {"N": "1"}}),
            ]
        ),
        "TransactionCanceledException",
        "Transaction cancelled, please refer cancellation reasons for specific reasons "
        "[ConditionalCheckFailed, None, ConditionalCheckFailed, None]",
    )
    assert [r["Code"] for r in err.response["CancellationReasons"]] == [
        "ConditionalCheckFailed",
        "None",
        "ConditionalCheckFailed",
        "None",
    ]
    assert get(ddb, table, k("y")) is None
    assert get(ddb, table, k("w")) is None


def test_cancellation_reason_returns_old_item(ddb, table):
    ddb.put_item(TableName=table, Item={**k("r"), "n": {"N": "1"}, "s": {"S": "keep"}})
    err = expect_error(
        lambda: ddb.transact_write_items(
            TransactItems=[
                tx_put(table, k("other")),
                tx_update(
                    table,
                    k("r"),
                    "SET n = :two",
                    {":two": {"N": "2"}},
                    ConditionExpression="n = :two",
                    ReturnValuesOnConditionCheckFailure="ALL_OLD",
                ),
            ]
        ),
        "TransactionCanceledException",
    )
    reasons = err.response["CancellationReasons"]
    assert reasons[0] == {"Code": "None"}
    assert reasons[1]["Code"] == "ConditionalCheckFailed"
    assert reasons[1]["Item"] == {**k("r"), "n": {"N": "1"}, "s": {"S": "keep"}}


def test_transaction_canceled_wire_body(endpoint, table):
    """The wire body uses "Message" (capital M) and the dynamodb namespace (reference C5)."""
    from conftest import raw_post

    raw_post(endpoint, "DynamoDB_20120810.PutItem", {"TableName": table, "Item": k("w")})
    resp = raw_post(
        endpoint,
        "DynamoDB_20120810.TransactWriteItems",
        {
            "TransactItems": [
                {"ConditionCheck": {"TableName": table, "Key": k("w"), "ConditionExpression": "attribute_not_exists(pk)"}}
            ]
        },
    )
    assert resp.status_code == 400
    body = resp.json()
    assert body["__type"] == "com.amazonaws.dynamodb.v20120810#TransactionCanceledException"
    assert body["Message"] == "Transaction cancelled, please refer cancellation reasons for specific reasons [ConditionalCheckFailed]"
    assert body["CancellationReasons"] == [{"Code": "ConditionalCheckFailed", "Message": "The conditional request failed"}]


@pytest.mark.parametrize(
    "actions",
    [
        pytest.param(
            lambda t: [tx_put(t, {**k("same"), "v": {"S": "1"}}), tx_update(t, k("same"), "SET v = :v", {":v": {"S": "2"}})],
            id="put-and-update",
        ),
        pytest.param(lambda t: [tx_check(t, k("same"), "attribute_not_exists(pk)"), tx_put(t, k("same"))], id="condition-check-and-put"),
    ],
)
def test_multiple_operations_on_one_item(ddb, table, actions):
    expect_error(
        lambda: ddb.transact_write_items(TransactItems=actions(table)),
        "ValidationException",
        "Transaction request cannot include multiple operations on one item",
    )
    assert get(ddb, table, k("same")) is None


def test_same_key_in_different_tables_is_allowed(ddb, make_table):
    t1, t2 = make_table(), make_table()
    ddb.transact_write_items(TransactItems=[tx_put(t1, k("same")), tx_put(t2, k("same"))])
    assert get(ddb, t1, k("same")) == k("same")
    assert get(ddb, t2, k("same")) == k("same")


def test_transaction_missing_table(ddb, table):
    expect_error(
        lambda: ddb.transact_write_items(TransactItems=[tx_put(table, k("a")), tx_put(unique_name("missing"), k("a"))]),
        "ResourceNotFoundException",
        startswith="Requested resource not found",
    )
    assert get(ddb, table, k("a")) is None


def test_transaction_100_actions_allowed(ddb, table):
    ddb.transact_write_items(TransactItems=[tx_put(table, k(f"h{i:03d}")) for i in range(100)])
    assert ddb.scan(TableName=table, Select="COUNT")["Count"] == 100


def test_transaction_items_may_not_pass_4_mb(ddb, table):
    """Alternator's test_transact_write_items_put_5MB / _put_3MB (run against
    DynamoDB): 50 puts of 100 KB are refused, 30 pass; deletes of such
    items pass (the items sent count). The exact text is not recorded; it
    says "size cannot exceed"."""
    blob = "x" * 100_000
    items = lambda n, tag: [  # noqa: E731
        {"Put": {"TableName": table, "Item": {**k(f"{tag}{i:02d}"), "x": {"S": blob}}}} for i in range(n)
    ]
    # 42 items of about 100,010 bytes pass 4 MiB (4,194,304 bytes); 41 do not.
    for n in (42, 50):
        expect_error(
            lambda: ddb.transact_write_items(TransactItems=items(n, "big")),
            "ValidationException",
            "The aggregate size of the items in the transaction cannot exceed 4 MB",
        )
    assert ddb.scan(TableName=table, Select="COUNT")["Count"] == 0
    # Fewer pass (this table's on-demand capacity takes ten such puts).
    ddb.transact_write_items(TransactItems=items(10, "a"))
    ddb.transact_write_items(TransactItems=[{"Delete": {"TableName": table, "Key": k(f"a{i:02d}")}} for i in range(10)])
    assert ddb.scan(TableName=table, Select="COUNT")["Count"] == 0


def test_transaction_more_than_100_actions(ddb, table):
    # Exact live wording is uncertain (reference gap 9); the constraint text is stable.
    expect_error(
        lambda: ddb.transact_write_items(TransactItems=[tx_put(table, k(f"h{i:03d}")) for i in range(101)]),
        "ValidationException",
        contains="Member must have length less than or equal to 100",
    )
    assert ddb.scan(TableName=table, Select="COUNT")["Count"] == 0


# ---------------------------------------------------------------- idempotency


def test_client_request_token_idempotent(ddb, table):
    ddb.put_item(TableName=table, Item={**k("ctr"), "n": {"N": "0"}})
    token = str(uuid.uuid4())
    items = [tx_update(table, k("ctr"), "SET n = n + :one", {":one": {"N": "1"}})]
    ddb.transact_write_items(TransactItems=items, ClientRequestToken=token)
    ddb.transact_write_items(TransactItems=items, ClientRequestToken=token)
    ddb.transact_write_items(TransactItems=items, ClientRequestToken=token)
    assert get(ddb, table, k("ctr"))["n"] == {"N": "1"}
    ddb.transact_write_items(TransactItems=items, ClientRequestToken=str(uuid.uuid4()))
    assert get(ddb, table, k("ctr"))["n"] == {"N": "2"}


def test_client_request_token_repeat_after_condition_would_fail(ddb, table):
    token = str(uuid.uuid4())
    items = [tx_put(table, k("once"), ConditionExpression="attribute_not_exists(pk)")]
    ddb.transact_write_items(TransactItems=items, ClientRequestToken=token)
    # Same token and parameters: the recorded success is returned, the
    # condition is not re-evaluated.
    ddb.transact_write_items(TransactItems=items, ClientRequestToken=token)
    assert get(ddb, table, k("once")) == k("once")


def test_client_request_token_parameter_mismatch(ddb, table):
    token = str(uuid.uuid4())
    ddb.transact_write_items(TransactItems=[tx_put(table, {**k("m"), "v": {"N": "1"}})], ClientRequestToken=token)
    # Exact live message for this exception is not in the reference; the code is.
    expect_error(
        lambda: ddb.transact_write_items(TransactItems=[tx_put(table, {**k("m"), "v": {"N": "2"}})], ClientRequestToken=token),
        "IdempotentParameterMismatchException",
    )
    assert get(ddb, table, k("m"))["v"] == {"N": "1"}


def test_client_request_token_too_long(ddb_raw, table):
    token = "x" * 37
    expect_error(
        lambda: ddb_raw.transact_write_items(TransactItems=[tx_put(table, k("t"))], ClientRequestToken=token),
        "ValidationException",
        f"1 validation error detected: Value '{token}' at 'clientRequestToken' failed to satisfy constraint: "
        "Member must have length less than or equal to 36",
    )


# ---------------------------------------------------------------- TransactGetItems


def test_transact_get_items_in_order(ddb, make_table):
    t1, t2 = make_table(), make_table(hash_key=("id", "N"))
    ddb.put_item(TableName=t1, Item={**k("a"), "v": {"S": "A"}, "w": {"S": "W"}})
    ddb.put_item(TableName=t2, Item={"id": {"N": "1"}, "v": {"S": "one"}})
    resp = ddb.transact_get_items(
        TransactItems=[
            {"Get": {"TableName": t2, "Key": {"id": {"N": "1"}}}},
            {"Get": {"TableName": t1, "Key": k("missing")}},
            {"Get": {"TableName": t1, "Key": k("a"), "ProjectionExpression": "#w", "ExpressionAttributeNames": {"#w": "w"}}},
        ]
    )
    assert resp["Responses"] == [
        {"Item": {"id": {"N": "1"}, "v": {"S": "one"}}},
        {},
        {"Item": {"w": {"S": "W"}}},
    ]


def test_transact_get_missing_table(ddb):
    expect_error(
        lambda: ddb.transact_get_items(TransactItems=[{"Get": {"TableName": unique_name("missing"), "Key": k("a")}}]),
        "ResourceNotFoundException",
        startswith="Requested resource not found",
    )


def test_transact_get_more_than_100(ddb, table):
    expect_error(
        lambda: ddb.transact_get_items(TransactItems=[{"Get": {"TableName": table, "Key": k(str(i))}} for i in range(101)]),
        "ValidationException",
        contains="Member must have length less than or equal to 100",
    )


@pytest.fixture
def indexed(make_table):
    """pk/sk table with GSI gsi1 on g (S)."""
    return make_table(
        range_key=("sk", "S"),
        AttributeDefinitions=[
            {"AttributeName": n, "AttributeType": "S"} for n in ("pk", "sk", "g")
        ],
        GlobalSecondaryIndexes=[
            {"IndexName": "gsi1", "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}], "Projection": {"ProjectionType": "ALL"}}
        ],
    )


def expect_cancelled(ddb, items, reasons):
    """A TransactionCanceledException whose reasons are `reasons`, (code,
    message) pairs, message None for "None"."""
    codes = ", ".join(code for code, _ in reasons)
    err = expect_error(
        lambda: ddb.transact_write_items(TransactItems=items),
        "TransactionCanceledException",
        f"Transaction cancelled, please refer cancellation reasons for specific reasons [{codes}]",
    )
    got = [(r["Code"], r.get("Message")) for r in err.response["CancellationReasons"]]
    assert got == reasons


TYPE_MISMATCH = "One or more parameter values were invalid: Type mismatch for "
SCHEMA_MISMATCH = "The provided key element does not match the schema"


def test_a_wrong_typed_key_cancels_with_a_validation_error_reason(ddb, table, indexed):
    # A wrong-typed table or index key value is the action's ValidationError
    # reason, the other actions "None"; nothing is written.
    expect_cancelled(
        ddb,
        [tx_put(table, k("ok")), tx_put(table, {"pk": {"N": "5"}})],
        [("None", None), ("ValidationError", TYPE_MISMATCH + "key pk expected: S actual: N")],
    )
    expect_cancelled(
        ddb,
        [tx_put(table, {"pk": {"L": [{"S": "x"}]}})],
        [("ValidationError", TYPE_MISMATCH + "key pk expected: S actual: L")],
    )
    for action in (
        tx_update(table, {"pk": {"N": "5"}}, "SET a = :v", {":v": {"S": "x"}}),
        tx_delete(table, {"pk": {"L": [{"S": "x"}]}}),
        tx_check(table, {"pk": {"N": "5"}}, "attribute_not_exists(pk)"),
    ):
        expect_cancelled(ddb, [action], [("ValidationError", SCHEMA_MISMATCH)])
    key = {"pk": {"S": "a"}, "sk": {"S": "b"}}
    index_mismatch = TYPE_MISMATCH + "Index Key g Expected: S Actual: N IndexName: gsi1"
    expect_cancelled(ddb, [tx_put(indexed, {**key, "g": {"N": "5"}})], [("ValidationError", index_mismatch)])
    expect_cancelled(
        ddb, [tx_update(indexed, key, "SET g = :v", {":v": {"N": "5"}})], [("ValidationError", index_mismatch)]
    )
    assert get(ddb, table, k("ok")) is None
    assert get(ddb, indexed, key) is None


def test_an_empty_key_refuses_the_whole_transaction(ddb, table, indexed):
    empty_key = "One or more parameter values are not valid. The AttributeValue for a key attribute cannot contain an empty string value. Key: pk"
    for action in (
        tx_put(table, k("")),
        tx_update(table, k(""), "SET a = :v", {":v": {"S": "x"}}),
        tx_delete(table, k("")),
        tx_check(table, k(""), "attribute_not_exists(pk)"),
    ):
        expect_error(lambda: ddb.transact_write_items(TransactItems=[action]), "ValidationException", empty_key)
    key = {"pk": {"S": "a"}, "sk": {"S": "b"}}
    expect_error(
        lambda: ddb.transact_write_items(TransactItems=[tx_put(indexed, {**key, "g": {"S": ""}})]),
        "ValidationException",
        "One or more parameter values are not valid. A value specified for a secondary index key is not supported. "
        "The AttributeValue for a key attribute cannot contain an empty string value. IndexName: gsi1, IndexKey: g",
    )
    # Written by an update expression, the empty index key has its own text,
    # in a transaction and in UpdateItem alike (S33).
    by_update = (
        "One or more parameter values are not valid. The update expression attempted to update a secondary index "
        "key to a value that is not supported. The AttributeValue for a key attribute cannot contain an empty "
        "string value."
    )
    expect_error(
        lambda: ddb.transact_write_items(TransactItems=[tx_update(indexed, key, "SET g = :v", {":v": {"S": ""}})]),
        "ValidationException",
        by_update,
    )
    expect_error(
        lambda: ddb.update_item(
            TableName=indexed, Key=key, UpdateExpression="SET g = :v", ExpressionAttributeValues={":v": {"S": ""}}
        ),
        "ValidationException",
        by_update,
    )
    assert get(ddb, indexed, key) is None


def test_only_the_first_validation_error_is_reported(ddb, table):
    # DynamoDB stops at the first action that fails validation; the rest
    # are None, with no message (ScyllaDB's Alternator suite, run against
    # DynamoDB: test_transact_write_cancellation_reasons_validationerror).
    err = expect_error(
        lambda: ddb.transact_write_items(
            TransactItems=[
                tx_put(table, {"pk": {"N": "7"}}),
                tx_put(table, {"pk": {"N": "8"}}),
                tx_put(table, k("zz"), ConditionExpression="attribute_exists(pk)"),
            ]
        ),
        "TransactionCanceledException",
        "Transaction cancelled, please refer cancellation reasons for specific reasons [ValidationError, None, None]",
    )
    reasons = err.response["CancellationReasons"]
    assert [r["Code"] for r in reasons] == ["ValidationError", "None", "None"]
    assert reasons[0]["Message"] == "One or more parameter values were invalid: Type mismatch for key pk expected: S actual: N"
    assert "Message" not in reasons[1] and "Message" not in reasons[2]
    assert "Item" not in ddb.get_item(TableName=table, Key=k("zz"))

