"""PartiQL: ExecuteStatement, BatchExecuteStatement and ExecuteTransaction.

Messages are DynamoDB's (reference notes, section 6: S121-S144). Where the
live text is not known (the parameter-count message, S132, and the mixed
read/write batch), the test asserts the error code and says so.
"""

from __future__ import annotations

import pytest

from conftest import expect_error


def get(ddb, table, key):
    return ddb.get_item(TableName=table, Key=key, ConsistentRead=True).get("Item")


def s(v):
    return {"S": v}


def n(v):
    return {"N": str(v)}


def q(table):
    """A table name as PartiQL quotes it."""
    return f'"{table}"'


def test_insert_then_select_by_key_with_parameters(ddb, table_hn):
    out = ddb.execute_statement(
        Statement=f"INSERT INTO {q(table_hn)} VALUE {{'pk': ?, 'sk': ?, 'tags': <<'a', 'b'>>, 'm': {{'x': [1, true, null]}}}}",
        Parameters=[s("p"), n(1)],
    )
    assert out["Items"] == []
    assert get(ddb, table_hn, {"pk": s("p"), "sk": n(1)}) == {
        "pk": s("p"),
        "sk": n(1),
        "tags": {"SS": ["a", "b"]},
        "m": {"M": {"x": {"L": [n(1), {"BOOL": True}, {"NULL": True}]}}},
    }
    got = ddb.execute_statement(Statement=f"SELECT * FROM {q(table_hn)} WHERE pk = ? AND sk = 1", Parameters=[s("p")])
    assert [i["pk"] for i in got["Items"]] == [s("p")]
    assert "NextToken" not in got


def test_insert_of_an_existing_key_is_a_duplicate_item(ddb, table):
    ddb.put_item(TableName=table, Item={"pk": s("dup"), "v": n(1)})
    expect_error(
        lambda: ddb.execute_statement(Statement=f"INSERT INTO {q(table)} VALUE {{'pk': 'dup', 'v': 2}}"),
        "DuplicateItemException",
        "Duplicate primary key exists in table",
    )
    assert get(ddb, table, {"pk": s("dup")})["v"] == n(1)


def test_select_projection_filter_and_query_on_sort_key(ddb, table_hn):
    for i in range(6):
        ddb.put_item(TableName=table_hn, Item={"pk": s("a"), "sk": n(i), "odd": {"BOOL": i % 2 == 1}, "x": s(f"x{i}")})
    ddb.put_item(TableName=table_hn, Item={"pk": s("b"), "sk": n(0), "odd": {"BOOL": False}, "x": s("other")})
    out = ddb.execute_statement(
        Statement=f"SELECT sk, x FROM {q(table_hn)} WHERE pk = 'a' AND sk >= 2 AND odd = false ORDER BY sk DESC"
    )
    assert out["Items"] == [{"sk": n(4), "x": s("x4")}, {"sk": n(2), "x": s("x2")}]
    # A predicate on non-key attributes only is a Scan over every item.
    out = ddb.execute_statement(Statement=f"SELECT pk, sk FROM {q(table_hn)} WHERE x = 'other' OR x = 'x5'")
    assert sorted((i["pk"]["S"], i["sk"]["N"]) for i in out["Items"]) == [("a", "5"), ("b", "0")]
    # BETWEEN and begins_with, IS MISSING, size().
    out = ddb.execute_statement(
        Statement=f"SELECT sk FROM {q(table_hn)} WHERE pk = 'a' AND sk BETWEEN 1 AND 3 AND nope IS MISSING AND size(x) = 2"
    )
    assert [i["sk"] for i in out["Items"]] == [n(1), n(2), n(3)]
    out = ddb.execute_statement(Statement=f"SELECT sk FROM {q(table_hn)} WHERE pk = 'a' AND begins_with(x, 'x3')")
    assert out["Items"] == [{"sk": n(3)}]


def test_select_pages_with_limit_and_next_token(ddb, table_hn):
    for i in range(7):
        ddb.put_item(TableName=table_hn, Item={"pk": s("p"), "sk": n(i)})
    statement = f"SELECT sk FROM {q(table_hn)} WHERE pk = 'p'"
    seen, token, pages = [], None, 0
    while True:
        kw = {"NextToken": token} if token else {}
        page = ddb.execute_statement(Statement=statement, Limit=3, ConsistentRead=True, **kw)
        pages += 1
        seen += [int(i["sk"]["N"]) for i in page["Items"]]
        token = page.get("NextToken")
        if not token:
            break
        assert pages < 10
    assert seen == list(range(7))
    assert pages == 3
    # A token belongs to its statement.
    first = ddb.execute_statement(Statement=statement, Limit=2)
    expect_error(
        lambda: ddb.execute_statement(Statement=f"SELECT * FROM {q(table_hn)}", NextToken=first["NextToken"]),
        "ValidationException",
    )


def test_update_set_remove_returning_and_missing_item(ddb, table):
    ddb.put_item(TableName=table, Item={"pk": s("u"), "n": n(1), "gone": s("x"), "l": {"L": [n(1)]}})
    out = ddb.execute_statement(
        Statement=f"UPDATE {q(table)} SET n = n + ? SET l = list_append(l, [2]) REMOVE gone WHERE pk = 'u' RETURNING ALL NEW *",
        Parameters=[n(4)],
    )
    assert out["Items"] == [{"pk": s("u"), "n": n(5), "l": {"L": [n(1), n(2)]}}]
    ddb.execute_statement(Statement=f"UPDATE {q(table)} SET tags = set_add(tags, <<'t'>>) WHERE pk = 'u'")
    assert get(ddb, table, {"pk": s("u")})["tags"] == {"SS": ["t"]}
    # UPDATE never creates an item.
    expect_error(
        lambda: ddb.execute_statement(Statement=f"UPDATE {q(table)} SET n = 1 WHERE pk = 'nobody'"),
        "ConditionalCheckFailedException",
        "The conditional request failed",
    )
    assert get(ddb, table, {"pk": s("nobody")}) is None


def test_update_condition_with_return_values_on_condition_check_failure(ddb, table):
    ddb.put_item(TableName=table, Item={"pk": s("c"), "v": n(1)})
    err = expect_error(
        lambda: ddb.execute_statement(
            Statement=f"UPDATE {q(table)} SET v = 2 WHERE pk = 'c' AND v = 9",
            ReturnValuesOnConditionCheckFailure="ALL_OLD",
        ),
        "ConditionalCheckFailedException",
        "The conditional request failed",
    )
    assert err.response["Item"] == {"pk": s("c"), "v": n(1)}
    ddb.execute_statement(Statement=f"UPDATE {q(table)} SET v = 2 WHERE pk = 'c' AND v = 1")
    assert get(ddb, table, {"pk": s("c")})["v"] == n(2)


def test_delete_with_condition_and_missing_item(ddb, table):
    ddb.put_item(TableName=table, Item={"pk": s("d"), "v": n(1)})
    expect_error(
        lambda: ddb.execute_statement(Statement=f"DELETE FROM {q(table)} WHERE pk = 'd' AND v = 2"),
        "ConditionalCheckFailedException",
        "The conditional request failed",
    )
    out = ddb.execute_statement(Statement=f"DELETE FROM {q(table)} WHERE pk = 'd' AND v = 1 RETURNING ALL OLD *")
    assert out["Items"] == [{"pk": s("d"), "v": n(1)}]
    assert get(ddb, table, {"pk": s("d")}) is None
    # A missing item is deleted silently, even with a condition.
    assert ddb.execute_statement(Statement=f"DELETE FROM {q(table)} WHERE pk = 'd' AND v = 1")["Items"] == []


def test_statement_errors(ddb, table_hr):
    cases = [
        (f"SELECT * FROM {q(table_hr)} WHERE pk = 'a')", "Statement wasn't well formed, can't be processed: Unexpected token after expression"),
        (f"SELECT * FROM {q(table_hr)} WHERE", "Statement wasn't well formed, can't be processed: Unexpected term"),
        (f"SELECT * FROM {q(table_hr)} AS t", "Aliasing is not supported"),
        (f"INSERT INTO {q(table_hr)} VALUE {{'pk': 'a', 'sk': 'b', 's': <<>>}}", "Empty bags are not supported"),
        (f"UPDATE {q(table_hr)} SET v = 1 WHERE pk = 'a'", "Where clause does not contain a mandatory equality on all key attributes"),
        (f"DELETE FROM {q(table_hr)} WHERE sk = 'a'", "Where clause does not contain a mandatory equality on all key attributes"),
        (f'SELECT * FROM {q(table_hr)}."nope"', "The table does not have the specified index"),
        (f"SELECT * FROM {q(table_hr)} # comment", "Statement wasn't well formed, can't be processed: "),
    ]
    for statement, message in cases:
        expect_error(lambda: ddb.execute_statement(Statement=statement), "ValidationException", message)
    expect_error(
        lambda: ddb.execute_statement(Statement='SELECT * FROM "no-such-table"'),
        "ResourceNotFoundException",
        "Requested resource not found",
    )
    # The parameter count must match (the live text is not known, S132).
    expect_error(
        lambda: ddb.execute_statement(Statement=f"SELECT * FROM {q(table_hr)} WHERE pk = ?"), "ValidationException"
    )


def test_select_on_a_gsi_and_its_consistent_read_error(ddb, make_table):
    name = make_table(
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}, {"AttributeName": "g", "AttributeType": "S"}],
        GlobalSecondaryIndexes=[
            {"IndexName": "byg", "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}], "Projection": {"ProjectionType": "ALL"}}
        ],
    )
    for i in range(3):
        ddb.put_item(TableName=name, Item={"pk": s(f"p{i}"), "g": s("G" if i < 2 else "H")})
    out = ddb.execute_statement(Statement=f'SELECT pk FROM {q(name)}."byg" WHERE g = \'G\'')
    assert sorted(i["pk"]["S"] for i in out["Items"]) == ["p0", "p1"]
    expect_error(
        lambda: ddb.execute_statement(Statement=f'SELECT * FROM {q(name)}."byg" WHERE g = \'G\'', ConsistentRead=True),
        "ValidationException",
        "Strongly consistent read is not supported on Global Secondary Indexes",
    )


def test_consumed_capacity_is_that_of_the_equivalent_calls(ddb, table):
    put = ddb.execute_statement(
        Statement=f"INSERT INTO {q(table)} VALUE {{'pk': 'cap', 'v': 1}}", ReturnConsumedCapacity="TOTAL"
    )
    # An INSERT answers as PutItem does (CapacityUnits only, S59), a SELECT as
    # Query does (with the read units apart).
    assert put["ConsumedCapacity"] == {"TableName": table, "CapacityUnits": 1.0}
    read = ddb.execute_statement(
        Statement=f"SELECT * FROM {q(table)} WHERE pk = 'cap'", ConsistentRead=True, ReturnConsumedCapacity="TOTAL"
    )
    assert read["ConsumedCapacity"] == {"TableName": table, "CapacityUnits": 1.0, "ReadCapacityUnits": 1.0}


def test_batch_execute_statement_answers_per_statement(ddb, table, table_hr):
    ddb.put_item(TableName=table, Item={"pk": s("exists"), "v": n(1)})
    out = ddb.batch_execute_statement(
        Statements=[
            {"Statement": f"INSERT INTO {q(table)} VALUE {{'pk': ?, 'v': 1}}", "Parameters": [s(f"b{i}")]}
            for i in range(3)
        ]
        + [
            {"Statement": f"INSERT INTO {q(table)} VALUE {{'pk': 'exists'}}"},
            {"Statement": f"UPDATE {q(table)} SET v = 5 WHERE pk = 'exists' AND v = 7"},
            {"Statement": 'INSERT INTO "no-such-table" VALUE {\'pk\': \'x\'}'},
        ],
    )
    r = out["Responses"]
    assert r[:3] == [{"TableName": table}] * 3
    assert r[3] == {"TableName": table, "Error": {"Code": "DuplicateItem", "Message": "Duplicate primary key exists in table"}}
    assert r[4] == {"TableName": table, "Error": {"Code": "ConditionalCheckFailed", "Message": "The conditional request failed"}}
    assert r[5] == {"Error": {"Code": "ResourceNotFound", "Message": "Requested resource not found"}}
    assert "ConsumedCapacity" not in out
    two = ddb.batch_execute_statement(
        Statements=[{"Statement": f"INSERT INTO {q(table)} VALUE {{'pk': 'c{i}'}}"} for i in range(2)],
        ReturnConsumedCapacity="TOTAL",
    )
    assert two["ConsumedCapacity"] == [{"TableName": table, "CapacityUnits": 2.0}]
    for i in range(3):
        assert get(ddb, table, {"pk": s(f"b{i}")}) == {"pk": s(f"b{i}"), "v": n(1)}
    reads = ddb.batch_execute_statement(
        Statements=[
            {"Statement": f"SELECT v FROM {q(table)} WHERE pk = 'b0'"},
            {"Statement": f"SELECT * FROM {q(table)} WHERE pk = 'absent'"},
            {"Statement": f"SELECT * FROM {q(table_hr)} WHERE pk = 'a'"},
        ]
    )["Responses"]
    assert reads[0] == {"TableName": table, "Item": {"v": n(1)}}
    assert reads[1] == {"TableName": table}
    assert reads[2]["Error"] == {
        "Code": "ValidationError",
        "Message": "Select statements within BatchExecuteStatement must specify the primary key in the where clause.",
    }


def test_batch_limits(ddb_raw, table):
    statement = {"Statement": f"SELECT * FROM {q(table)} WHERE pk = 'a'"}
    expect_error(lambda: ddb_raw.batch_execute_statement(Statements=[statement] * 26), "ValidationException", contains="25")
    expect_error(lambda: ddb_raw.batch_execute_statement(Statements=[]), "ValidationException")


def test_execute_transaction_writes_all_or_nothing(ddb, table):
    ddb.put_item(TableName=table, Item={"pk": s("t-upd"), "n": n(1)})
    ddb.put_item(TableName=table, Item={"pk": s("t-del")})
    ddb.put_item(TableName=table, Item={"pk": s("guard"), "ok": {"BOOL": True}})
    ddb.execute_transaction(
        TransactStatements=[
            {"Statement": f"INSERT INTO {q(table)} VALUE {{'pk': ?}}", "Parameters": [s("t-new")]},
            {"Statement": f"UPDATE {q(table)} SET n = n + 1 WHERE pk = 't-upd'"},
            {"Statement": f"DELETE FROM {q(table)} WHERE pk = 't-del'"},
            {"Statement": f"EXISTS(SELECT * FROM {q(table)} WHERE pk = 'guard' AND ok = true)"},
        ]
    )
    assert get(ddb, table, {"pk": s("t-new")}) == {"pk": s("t-new")}
    assert get(ddb, table, {"pk": s("t-upd")})["n"] == n(2)
    assert get(ddb, table, {"pk": s("t-del")}) is None
    err = expect_error(
        lambda: ddb.execute_transaction(
            TransactStatements=[
                {"Statement": f"UPDATE {q(table)} SET n = 100 WHERE pk = 't-upd'"},
                {"Statement": f"INSERT INTO {q(table)} VALUE {{'pk': 't-new'}}"},
                {"Statement": f"EXISTS(SELECT * FROM {q(table)} WHERE pk = 'guard' AND ok = false)"},
            ]
        ),
        "TransactionCanceledException",
        "Transaction cancelled, please refer cancellation reasons for specific reasons [None, DuplicateItem, ConditionalCheckFailed]",
    )
    assert [r["Code"] for r in err.response["CancellationReasons"]] == ["None", "DuplicateItem", "ConditionalCheckFailed"]
    assert get(ddb, table, {"pk": s("t-upd")})["n"] == n(2)


def test_execute_transaction_reads_and_key_rules(ddb, table):
    ddb.put_item(TableName=table, Item={"pk": s("r1"), "v": n(1)})
    out = ddb.execute_transaction(
        TransactStatements=[
            {"Statement": f"SELECT * FROM {q(table)} WHERE pk = 'r1'"},
            {"Statement": f"SELECT v FROM {q(table)} WHERE pk = ?", "Parameters": [s("r2")]},
        ]
    )
    assert out["Responses"] == [{"Item": {"pk": s("r1"), "v": n(1)}}, {}]
    expect_error(
        lambda: ddb.execute_transaction(
            TransactStatements=[
                {"Statement": f"SELECT * FROM {q(table)} WHERE pk = 'r1'"},
                {"Statement": f"SELECT * FROM {q(table)} WHERE v = 1"},
            ]
        ),
        "ValidationException",
        "Validation failed in TransactStatements[1]: Select statements within ExecuteTransaction must specify the primary key in the where clause.",
    )
    expect_error(
        lambda: ddb.execute_transaction(TransactStatements=[{"Statement": f'SELECT * FROM {q(table)}."idx" WHERE pk = \'r1\''}]),
        "ValidationException",
        "Validation failed in TransactStatements[0]: Reads on indices are not supported within transactions.",
    )
    expect_error(
        lambda: ddb.execute_transaction(
            TransactStatements=[{"Statement": f"DELETE FROM {q(table)} WHERE pk = 'r1' RETURNING ALL OLD *"}]
        ),
        "ValidationException",
        "Validation failed in TransactStatements[0]: RETURNING clause is not supported in ExecuteTransaction.",
    )
    expect_error(
        lambda: ddb.execute_transaction(
            TransactStatements=[{"Statement": f"EXISTS(SELECT * FROM {q(table)} WHERE pk = 'r1')"}]
        ),
        "ValidationException",
        "Validation failed in TransactStatements[0]: EXISTS() must contain a single item read with additional condition",
    )


@pytest.mark.parametrize("statement", ["SELECT * FROM", "INSERT INTO x VALUE", "UPDATE x SET", "DELETE FROM x WHERE (((("])
def test_truncated_statements_are_validation_errors(ddb, statement):
    expect_error(lambda: ddb.execute_statement(Statement=statement), "ValidationException", startswith="Statement wasn't well formed")


def test_select_with_partition_key_in_or_or_runs_queries_not_a_scan(ddb, table_hn):
    """`pk IN [...]` and an OR of `pk =` equalities run as one Query per
    value (S126): ConsumedCapacity is that of the Queries, not of reading
    the whole table; a sort-key condition beside them narrows each Query."""
    for p in "abc":
        for i in range(4):
            ddb.put_item(TableName=table_hn, Item={"pk": s(p), "sk": n(i), "v": s(f"{p}{i}")})
    # Bulk a Scan would have to read: 30 items of about 3 KB.
    for i in range(30):
        ddb.put_item(TableName=table_hn, Item={"pk": s(f"z{i}"), "sk": n(0), "pad": s("x" * 3000)})
    out = ddb.execute_statement(
        Statement=f"SELECT v FROM {q(table_hn)} WHERE pk IN ['a', 'c']",
        ConsistentRead=True,
        ReturnConsumedCapacity="TOTAL",
    )
    assert [i["v"]["S"] for i in out["Items"]] == ["a0", "a1", "a2", "a3", "c0", "c1", "c2", "c3"]
    # Two strongly consistent Queries of four small items: 1 RCU each.
    assert out["ConsumedCapacity"] == {"TableName": table_hn, "CapacityUnits": 2.0, "ReadCapacityUnits": 2.0}
    out = ddb.execute_statement(
        Statement=f"SELECT v FROM {q(table_hn)} WHERE (pk = 'b' OR pk = 'a') AND sk BETWEEN 1 AND 2 AND v <> 'a2'",
        ReturnConsumedCapacity="TOTAL",
    )
    assert [i["v"]["S"] for i in out["Items"]] == ["b1", "b2", "a1"]
    assert out["ConsumedCapacity"] == {"TableName": table_hn, "CapacityUnits": 1.0, "ReadCapacityUnits": 1.0}
    # The same predicate on a non-key attribute is a Scan of every item.
    scan = ddb.execute_statement(
        Statement=f"SELECT v FROM {q(table_hn)} WHERE v = 'a0' OR v = 'c0'",
        ConsistentRead=True,
        ReturnConsumedCapacity="TOTAL",
    )
    assert scan["ConsumedCapacity"]["ReadCapacityUnits"] > 20.0
    # Pages across the queries: Limit counts items read, NextToken resumes
    # inside a query or at the start of the next one.
    statement = f"SELECT v FROM {q(table_hn)} WHERE pk IN ['a', 'b', 'c'] AND sk >= 1"
    seen, token = [], None
    for _ in range(10):  # bounded
        kw = {"NextToken": token} if token else {}
        page = ddb.execute_statement(Statement=statement, Limit=2, ConsistentRead=True, **kw)
        assert len(page["Items"]) <= 2
        seen += [i["v"]["S"] for i in page["Items"]]
        token = page.get("NextToken")
        if not token:
            break
    assert seen == ["a1", "a2", "a3", "b1", "b2", "b3", "c1", "c2", "c3"]
