#!/usr/bin/env python3
"""Writes the fuzz targets' seed corpora (fuzz/seeds/TARGET/*): small, real
requests and records in the shapes the test suites send. Run it again after
changing it; the files it writes are committed."""

import gzip
import json
import os
import shutil

HERE = os.path.dirname(os.path.abspath(__file__))

# dynaburst_wire::OPERATIONS, then STREAMS_OPERATIONS: a wire input's
# operation byte is an index into this list.
OPERATIONS = [
    "BatchExecuteStatement", "BatchGetItem", "BatchWriteItem", "CreateBackup", "CreateTable", "DeleteBackup",
    "DeleteItem", "DeleteResourcePolicy", "DeleteTable", "DescribeBackup", "DescribeContinuousBackups",
    "DescribeContributorInsights", "DescribeEndpoints", "DescribeLimits", "DescribeTable",
    "DescribeTimeToLive", "ExecuteStatement", "ExecuteTransaction", "GetItem", "GetResourcePolicy",
    "ListBackups", "ListContributorInsights", "ListTables", "ListTagsOfResource", "PutItem",
    "PutResourcePolicy", "Query", "RestoreTableFromBackup", "RestoreTableToPointInTime", "TagResource",
    "Scan", "TransactGetItems", "TransactWriteItems", "UntagResource", "UpdateContinuousBackups",
    "UpdateContributorInsights", "UpdateItem", "UpdateTable", "UpdateTimeToLive",
    "DescribeStream", "GetRecords", "GetShardIterator", "ListStreams",
]

K = {"pk": {"S": "a"}, "sk": {"N": "1"}}
ITEM = {"pk": {"S": "b"}, "sk": {"N": "3"}, "g": {"S": "x"}, "n": {"N": "1.5"}, "lst": {"L": [{"S": "v"}]}}
ARN = "arn:aws:dynamodb:us-east-1:000000000000:table/tab"

POLICY = json.dumps({"Version": "2012-10-17", "Statement": [{"Sid": "r", "Effect": "Allow",
                      "Principal": {"AWS": "111122223333"}, "Action": ["dynamodb:GetItem"], "Resource": ARN}]})

WIRE = {
    "policy": [("PutResourcePolicy", {"ResourceArn": ARN, "Policy": POLICY, "ExpectedRevisionId": "NO_POLICY"}),
               ("GetResourcePolicy", {"ResourceArn": ARN}),
               ("DeleteResourcePolicy", {"ResourceArn": ARN + "/stream/2026-01-01T00:00:00.000"})],
    "put": [("PutItem", {"TableName": "tab", "Item": ITEM})],
    "put-cond": [("PutItem", {"TableName": "tab", "Item": ITEM, "ConditionExpression": "attribute_not_exists(pk)",
                              "ReturnValues": "ALL_OLD", "ReturnConsumedCapacity": "INDEXES"})],
    "get": [("GetItem", {"TableName": "tab", "Key": K, "ProjectionExpression": "#m.k[0], n",
                         "ExpressionAttributeNames": {"#m": "m"}, "ConsistentRead": True})],
    "update": [("UpdateItem", {"TableName": "tab", "Key": K,
                               "UpdateExpression": "SET n = n + :one, #l = list_append(if_not_exists(#l, :e), :e) "
                                                   "REMOVE g ADD s :ss DELETE t :d",
                               "ExpressionAttributeNames": {"#l": "lst"},
                               "ExpressionAttributeValues": {":one": {"N": "1"}, ":e": {"L": []},
                                                             ":ss": {"SS": ["z"]}, ":d": {"SS": ["p"]}},
                               "ReturnValues": "UPDATED_NEW"})],
    "update-legacy": [("UpdateItem", {"TableName": "tab", "Key": K,
                                      "AttributeUpdates": {"n": {"Action": "ADD", "Value": {"N": "2"}}},
                                      "Expected": {"n": {"ComparisonOperator": "GT",
                                                         "AttributeValueList": [{"N": "0"}]}}})],
    "delete": [("DeleteItem", {"TableName": "tab", "Key": K, "ConditionExpression": "size(s) > :z",
                               "ExpressionAttributeValues": {":z": {"N": "0"}}, "ReturnValues": "ALL_OLD"})],
    "query": [("Query", {"TableName": "tab", "KeyConditionExpression": "pk = :p AND sk BETWEEN :a AND :b",
                         "FilterExpression": "contains(s, :q) OR begins_with(g, :x)",
                         "ExpressionAttributeValues": {":p": {"S": "a"}, ":a": {"N": "0"}, ":b": {"N": "9"},
                                                       ":q": {"S": "p"}, ":x": {"S": "x"}},
                         "ScanIndexForward": False, "Limit": 1})],
    "query-gsi": [("Query", {"TableName": "tab", "IndexName": "gsi", "KeyConditionExpression": "g = :g",
                             "ExpressionAttributeValues": {":g": {"S": "x"}}, "Select": "COUNT"})],
    "query-legacy": [("Query", {"TableName": "tab", "KeyConditions": {
        "pk": {"ComparisonOperator": "EQ", "AttributeValueList": [{"S": "a"}]}},
        "QueryFilter": {"n": {"ComparisonOperator": "NOT_NULL"}}})],
    "scan": [("Scan", {"TableName": "tab", "Segment": 0, "TotalSegments": 2, "FilterExpression": "n IN (:a, :b)",
                       "ExpressionAttributeValues": {":a": {"N": "10"}, ":b": {"N": "1E1"}}})],
    "scan-page": [("Scan", {"TableName": "tab", "Limit": 1,
                            "ExclusiveStartKey": {"pk": {"S": "a"}, "sk": {"N": "1"}}})],
    "batch-write": [("BatchWriteItem", {"RequestItems": {
        "tab": [{"PutRequest": {"Item": ITEM}}, {"DeleteRequest": {"Key": K}}],
        "hsh": [{"PutRequest": {"Item": {"id": {"B": "AQID"}}}}]}, "ReturnItemCollectionMetrics": "SIZE"})],
    "batch-get": [("BatchGetItem", {"RequestItems": {"tab": {"Keys": [K, {"pk": {"S": "a"}, "sk": {"N": "2"}}],
                                                           "ProjectionExpression": "pk, b"}}})],
    "transact-write": [("TransactWriteItems", {"TransactItems": [
        {"Put": {"TableName": "tab", "Item": ITEM}},
        {"Update": {"TableName": "tab", "Key": K, "UpdateExpression": "SET n = n - :v",
                    "ConditionExpression": "n >= :v", "ExpressionAttributeValues": {":v": {"N": "3"}}}},
        {"ConditionCheck": {"TableName": "hsh", "Key": {"id": {"B": "AA=="}},
                            "ConditionExpression": "attribute_not_exists(id)"}}],
        "ClientRequestToken": "tok-1"})],
    "transact-get": [("TransactGetItems", {"TransactItems": [{"Get": {"TableName": "tab", "Key": K}}]})],
    "create": [("CreateTable", {"TableName": "new", "AttributeDefinitions": [
        {"AttributeName": "k", "AttributeType": "N"}], "KeySchema": [{"AttributeName": "k", "KeyType": "HASH"}],
        "BillingMode": "PAY_PER_REQUEST", "Tags": [{"Key": "a", "Value": "b"}]}),
               ("PutItem", {"TableName": "new", "Item": {"k": {"N": "-0.5"}}})],
    "update-table": [("UpdateTable", {"TableName": "hsh", "ProvisionedThroughput": {
        "ReadCapacityUnits": 100, "WriteCapacityUnits": 50}})],
    "update-table-gsi": [("UpdateTable", {"TableName": "tab", "AttributeDefinitions": [
        {"AttributeName": "n", "AttributeType": "N"}], "GlobalSecondaryIndexUpdates": [{"Create": {
            "IndexName": "byn", "KeySchema": [{"AttributeName": "n", "KeyType": "HASH"}],
            "Projection": {"ProjectionType": "KEYS_ONLY"}}}]}),
                         ("Scan", {"TableName": "tab", "IndexName": "byn"})],
    "describe-delete": [("DescribeTable", {"TableName": ARN}), ("DeleteTable", {"TableName": "hsh"}),
                        ("ListTables", {"Limit": 1})],
    "ttl": [("UpdateTimeToLive", {"TableName": "tab", "TimeToLiveSpecification": {
        "Enabled": True, "AttributeName": "n"}}), ("DescribeTimeToLive", {"TableName": "tab"})],
    "tags": [("TagResource", {"ResourceArn": ARN, "Tags": [{"Key": "k", "Value": "v"}]}),
             ("ListTagsOfResource", {"ResourceArn": ARN}), ("UntagResource", {"ResourceArn": ARN, "TagKeys": ["k"]})],
    "limits": [("DescribeLimits", {}), ("DescribeEndpoints", {})],
    "partiql": [("ExecuteStatement", {"Statement": "SELECT * FROM \"tab\" WHERE pk = ? AND sk > 0",
                                      "Parameters": [{"S": "a"}]})],
    "partiql-batch": [("BatchExecuteStatement", {"Statements": [
        {"Statement": "INSERT INTO \"tab\" VALUE {'pk': 'c', 'sk': 1}"},
        {"Statement": "UPDATE \"tab\" SET n = n + 1 WHERE pk = 'a' AND sk = 1"}]})],
    "partiql-tx": [("ExecuteTransaction", {"TransactStatements": [
        {"Statement": "DELETE FROM \"tab\" WHERE pk = 'a' AND sk = 2"}]})],
    "streams": [("ListStreams", {"TableName": "tab"}),
                ("DescribeStream", {"StreamArn": ARN + "/stream/2023-11-14T22:13:20.000"})],
    "bad-json": [("PutItem", b'{"TableName": "tab", "Item": {"pk": {"S": ')],
    "bad-type": [("PutItem", {"TableName": "tab", "Item": {"pk": {"N": "1"}, "sk": {"N": "x"}}})],
}

EXPR = {
    # kind byte: 0 condition, 1 filter, 2 key condition, 3 update, 4 projection
    "cond": (0, "attribute_exists(#a) AND NOT (b = :s OR size(c) < :n)"),
    "cond-func": (0, "begins_with(b, :s) AND contains(c, :n) AND attribute_type(a, :s)"),
    "cond-in": (0, "a IN (:n, :z) OR a BETWEEN :z AND :n OR c[0] <> :l"),
    "filter": (1, "#c[1] = :n AND m.x.y >= :b"),
    "key": (2, "#a = :n AND begins_with(b, :s)"),
    "key-between": (2, "a = :n AND #b BETWEEN :s AND :s"),
    "update": (3, "SET a = a + :n, #b = if_not_exists(#b, :s), c = list_append(c, :l) REMOVE x ADD ss :ss"),
    "update-nested": (3, "SET m = :m, m.a = :z - :n REMOVE c[0] DELETE ss :ss"),
    "projection": (4, "a, #b, c[1], m.k"),
}
EXPR_ITEM = {"a": {"N": "5"}, "b": {"S": "text"}, "c": {"L": [{"N": "1"}, {"SS": ["te"]}]},
             "m": {"M": {"x": {"M": {"y": {"B": "AA=="}}}}}, "ss": {"SS": ["x"]}}

NUMBER = {
    "ints": "12 -7", "decimals": "0.5 -0.000001", "exp": "1E-130 9.9999999999999999999999999999999999999E+125",
    "max-digits": "12345678901234567890123456789012345678 -1", "zeros": "000.000 +0", "carry": "99999 1",
    "bad": "1e 12a", "plain": "3.14159",
}

CSV = "pk,sk,n,flag\na,1,1.5,true\n\"b,\"\"q\",2,-3E2,false\nc,3,,\n"
JSONL = '{"pk": "a", "sk": 1, "n": 1.50, "l": [1, "x", null], "m": {"k": true}}\n{"pk": "b", "sk": 2e3}\n'
DDB = json.dumps({"Item": {"pk": {"S": "a"}, "sk": {"N": "1"}, "b": {"B": "AQ=="}, "ns": {"NS": ["1", "2"]}}}) + "\n" + \
    json.dumps({"pk": {"S": "b"}, "sk": {"N": "2"}, "m": {"M": {"x": {"NULL": True}}}}) + "\n"

PARTIQL = {
    # selector: mod 3 is the operation, / 3 mod 4 the number of parameters
    "select": (0, 'SELECT pk, n FROM "tab" WHERE pk = \'a\' AND sk BETWEEN 1 AND 5 ORDER BY sk DESC'),
    "select-index": (0, 'SELECT * FROM "tab"."gsi" WHERE g = \'x\''),
    "select-param": (3, 'SELECT * FROM tab WHERE pk = ? AND contains(s, \'p\')'),
    "insert": (1, 'INSERT INTO "tab" VALUE {\'pk\': \'z\', \'sk\': 1.5, \'l\': [1, \'a\', <<1, 2>>]}'),
    "update": (2, 'UPDATE "tab" SET n = n + 1 SET m.k[0] = 5 REMOVE s WHERE pk = \'a\' AND sk = 1 RETURNING ALL NEW *'),
    "delete": (0, 'DELETE FROM "tab" WHERE pk = \'a\' AND sk = 2 AND attribute_exists(b)'),
    "exists": (2, 'EXISTS(SELECT * FROM "tab" WHERE pk = \'a\' AND sk = 1 AND n > 5)'),
    "params": (9, '/* c */ INSERT INTO "tab" VALUE {\'pk\': ?, \'sk\': ?, \'m\': ?} -- end'),
}

MONGO = {
    # selector mod 3: 0 JSON Lines record, 1 number text, 2 DynamoDB JSON item
    "record": (0, '{"_id": {"$oid": "507f1f77bcf86cd799439011"}, "n": 1.5, "big": 12345678901234567890, '
                  '"d": {"$date": "2024-01-02T03:04:05Z"}, "dec": {"$numberDecimal": "1.10"}, '
                  '"bin": {"$binary": {"base64": "AQI=", "subType": "00"}}, "l": [{"$numberLong": "7"}]}'),
    "record-plain": (0, '{"a": {"b": "x"}, "n": -0, "e": 1e400}'),
    "record-wrappers": (0, '{"r": {"$regularExpression": {"pattern": "^a", "options": "i"}}, '
                           '"t": {"$timestamp": {"t": 1, "i": 2}}, "m": {"$minKey": 1}, "u": {"$undefined": true}}'),
    "number": (1, "123456789012345678901234567890.5e-3"),
    "item": (2, json.dumps({"pk": {"S": "a"}, "n": {"N": "1E+100"}, "b": {"BS": ["AA=="]},
                            "m": {"M": {"l": {"L": [{"BOOL": False}]}}}})),
}


def write(target, name, data):
    d = os.path.join(HERE, target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def main():
    for target in ["wire", "expr", "number", "input", "partiql", "mongo"]:
        shutil.rmtree(os.path.join(HERE, target), ignore_errors=True)
    for name, requests in WIRE.items():
        parts = []
        for op, body in requests:
            raw = body if isinstance(body, bytes) else json.dumps(body, separators=(",", ":")).encode()
            parts.append(bytes([OPERATIONS.index(op)]) + raw)
        write("wire", name, b"\0".join(parts))
    for name, (kind, text) in EXPR.items():
        write("expr", name, bytes([kind]) + text.encode())
    write("expr", "with-item", bytes([0]) + b"m.x.y = :b AND ss = :ss\0" + json.dumps(EXPR_ITEM).encode())
    for name, text in NUMBER.items():
        write("number", name, text.encode())
    # config byte: bits 0-1 format, 2-3 compression, 4 compress here, 5 all strings, 6-7 shard
    write("input", "csv", bytes([0]) + CSV.encode())
    write("input", "csv-strings-shard", bytes([0 | 32 | 64]) + CSV.encode())
    write("input", "jsonl", bytes([1]) + JSONL.encode())
    write("input", "jsonl-shard", bytes([1 | 128]) + JSONL.encode())
    write("input", "ddb", bytes([2]) + DDB.encode())
    write("input", "csv-gzip", bytes([0 | 4 | 16]) + CSV.encode())
    write("input", "jsonl-zstd", bytes([1 | 8 | 16]) + JSONL.encode())
    write("input", "ddb-gzip-raw", bytes([2 | 4]) + gzip.compress(DDB.encode(), mtime=0))
    for name, (selector, text) in PARTIQL.items():
        write("partiql", name, bytes([selector]) + text.encode())
    for name, (selector, text) in MONGO.items():
        write("mongo", name, bytes([selector]) + text.encode())


if __name__ == "__main__":
    main()
