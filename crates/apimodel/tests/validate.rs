//! Each message form with the exact text the reference records (the S-number
//! of /work/shared/reference/dynamodb-api-surface.md, or the suite that
//! asserts it today).

use dynaburst_apimodel::{validate, validate_with, Invalid, Options, Service};
use serde_json::{json, Value};

fn ddb(op: &str, body: Value) -> Result<(), Invalid> {
    validate(Service::DynamoDb, op, &body)
}

fn serialization(op: &str, body: Value) -> String {
    match ddb(op, body) {
        Err(Invalid::Serialization { message }) => message,
        other => panic!("expected a SerializationException, got {other:?}"),
    }
}

fn validation(op: &str, body: Value) -> String {
    match ddb(op, body) {
        Err(Invalid::Validation { message }) => message,
        other => panic!("expected a ValidationException, got {other:?}"),
    }
}

fn one(path_value: &str, rule: &str) -> String {
    format!("1 validation error detected: {path_value} failed to satisfy constraint: {rule}")
}

// ---------------------------------------------------------------- deserialization

#[test]
fn wrong_scalar_types_name_the_token_and_the_java_type() {
    // S92: "cannot", no article.
    assert_eq!(
        serialization("PutItem", json!({"TableName": "t", "Item": {"a": {"N": 123}}})),
        "NUMBER_VALUE cannot be converted to String"
    );
    assert_eq!(
        serialization("Scan", json!({"TableName": "t", "Limit": "5"})),
        "STRING_VALUE cannot be converted to Integer"
    );
    // tests/python/test_protocol.py::test_wrong_json_type_is_serialization_error sends this.
    assert_eq!(serialization("ListTables", json!({"Limit": "five"})), "STRING_VALUE cannot be converted to Integer");
    assert_eq!(
        serialization(
            "CreateTable",
            json!({"TableName": "abc", "ProvisionedThroughput": {"ReadCapacityUnits": "5", "WriteCapacityUnits": 1}})
        ),
        "STRING_VALUE cannot be converted to Long"
    );
    assert_eq!(
        serialization("DescribeTable", json!({"TableName": 34.56})),
        "DECIMAL_VALUE cannot be converted to String"
    );
    assert_eq!(serialization("DescribeTable", json!({"TableName": true})), "TRUE_VALUE cannot be converted to String");
    assert_eq!(
        serialization("Scan", json!({"TableName": "t", "Limit": false})),
        "FALSE_VALUE cannot be converted to Integer"
    );
}

#[test]
fn containers_in_the_wrong_place() {
    // S93.
    assert_eq!(
        serialization("DescribeTable", json!({"TableName": {}})),
        "Start of structure or map found where not expected"
    );
    assert_eq!(
        serialization("DescribeTable", json!({"TableName": ["t"]})),
        "Unrecognized collection type class java.lang.String"
    );
    assert_eq!(
        serialization("Scan", json!({"TableName": "t", "Limit": [1]})),
        "Unrecognized collection type class java.lang.Integer"
    );
    assert_eq!(serialization("CreateTable", json!({"TableName": "abc", "KeySchema": "x"})), "Unexpected field type");
    assert_eq!(
        serialization("CreateTable", json!({"TableName": "abc", "KeySchema": {}})),
        "Start of structure or map found where not expected"
    );
    assert_eq!(
        serialization("CreateTable", json!({"TableName": "abc", "KeySchema": ["x"]})),
        "Unexpected value type in payload"
    );
    assert_eq!(
        serialization("CreateTable", json!({"TableName": "abc", "ProvisionedThroughput": 5})),
        "Unexpected field type"
    );
    assert_eq!(
        serialization("CreateTable", json!({"TableName": "abc", "ProvisionedThroughput": []})),
        "Unrecognized collection type class com.amazonaws.dynamodb.v20120810.ProvisionedThroughput"
    );
    assert_eq!(serialization("PutItem", json!({"TableName": "t", "Item": "x"})), "Unexpected field type");
    assert_eq!(
        serialization("PutItem", json!({"TableName": "t", "Item": []})),
        "Unrecognized collection type java.util.Map<java.lang.String, com.amazonaws.dynamodb.v20120810.AttributeValue>"
    );
    assert_eq!(
        serialization("PutItem", json!({"TableName": "t", "Item": {"a": "x"}})),
        "Unexpected value type in payload"
    );
    assert_eq!(
        serialization("PutItem", json!({"TableName": "t", "Item": {"a": {"L": [{"SS": ["x", 1]}]}}})),
        "NUMBER_VALUE cannot be converted to String"
    );
}

#[test]
fn blobs_must_be_base64() {
    // S93, including DynamoDB's "dectected".
    let put = |b: Value| serialization("PutItem", json!({"TableName": "t", "Item": {"a": {"B": b}}}));
    assert_eq!(put(json!(23)), "only base-64-encoded strings are convertible to bytes");
    assert_eq!(put(json!(true)), "only base-64-encoded strings are convertible to bytes");
    assert_eq!(put(json!([])), "Unrecognized collection type class java.nio.ByteBuffer");
    assert_eq!(put(json!({})), "Start of structure or map found where not expected");
    assert_eq!(put(json!("23456")), "Base64 encoded length is expected a multiple of 4 bytes but found: 5");
    assert_eq!(put(json!("=+/=")), "Invalid last non-pad Base64 character dectected");
    assert_eq!(put(json!("+/+=")), "Invalid last non-pad Base64 character dectected");
    assert_eq!(
        ddb("PutItem", json!({"TableName": "abc", "Item": {"a": {"B": "AAE="}, "b": {"BS": ["", "AA=="]}}})),
        Ok(())
    );
}

#[test]
fn booleans_accept_their_strings() {
    // S94.
    let get = |c: Value| ddb("GetItem", json!({"TableName": "abc", "Key": {"k": {"S": "a"}}, "ConsistentRead": c}));
    for ok in ["true", "false", "1", "0", "yes", "no", "TRUE"] {
        assert_eq!(get(json!(ok)), Ok(()), "{ok}");
    }
    let err = |message: &str| Err(Invalid::Serialization { message: message.into() });
    assert_eq!(get(json!("23")), err("Unexpected token received from parser"));
    assert_eq!(get(json!(23)), err("NUMBER_VALUE cannot be converted to Boolean"));
    assert_eq!(get(json!(34.56)), err("DECIMAL_VALUE cannot be converted to Boolean"));
    assert_eq!(get(json!([])), err("Unrecognized collection type class java.lang.Boolean"));
    assert_eq!(dynaburst_apimodel::boolean_value(&json!("Yes")), Some(true));
    assert_eq!(dynaburst_apimodel::boolean_value(&json!("0")), Some(false));
    assert_eq!(dynaburst_apimodel::boolean_value(&json!("maybe")), None);
}

#[test]
fn unknown_members_and_nulls_are_ignored() {
    // S85 step 5 only looks at the model's members.
    assert_eq!(ddb("DescribeTable", json!({"TableName": "abc", "Bogus": {"x": [1]}})), Ok(()));
    assert_eq!(ddb("Scan", json!({"TableName": "abc", "Limit": null})), Ok(()));
}

#[test]
fn deserialization_comes_before_constraints() {
    // S85: the type error wins over the bad Limit and the missing Key.
    assert_eq!(
        serialization("GetItem", json!({"TableName": "", "ConsistentRead": 5})),
        "NUMBER_VALUE cannot be converted to Boolean"
    );
}

#[test]
fn a_body_that_is_not_an_object() {
    assert_eq!(serialization("ListTables", json!([1])), "Start of structure or map found where not expected");
}

// ---------------------------------------------------------------- constraints

#[test]
fn messages_the_suites_assert_today() {
    // tests/python/test_validation.py::test_scan_limit_zero (S90's Scan form).
    assert_eq!(
        validation("Scan", json!({"TableName": "abc", "Limit": 0})),
        one("Value '0' at 'limit'", "Member must have value greater than or equal to 1")
    );
    // tests/python/test_tables.py list_tables limits.
    assert_eq!(
        validation("ListTables", json!({"Limit": 101})),
        one("Value '101' at 'limit'", "Member must have value less than or equal to 100")
    );
    assert_eq!(
        validation("ListTables", json!({"Limit": 0})),
        one("Value '0' at 'limit'", "Member must have value greater than or equal to 1")
    );
    // tests/python/test_validation.py::test_invalid_select_value (enum in DynamoDB's order, S88).
    assert_eq!(
        validation("Scan", json!({"TableName": "abc", "Select": "EVERYTHING"})),
        one(
            "Value 'EVERYTHING' at 'select'",
            "Member must satisfy enum value set: [SPECIFIC_ATTRIBUTES, COUNT, ALL_ATTRIBUTES, ALL_PROJECTED_ATTRIBUTES]"
        )
    );
    // tests/python/test_items.py (ReturnValues GARBAGE).
    assert_eq!(
        validation("PutItem", json!({"TableName": "abc", "Item": {"k": {"S": "a"}}, "ReturnValues": "GARBAGE"})),
        one(
            "Value 'GARBAGE' at 'returnValues'",
            "Member must satisfy enum value set: [ALL_NEW, UPDATED_OLD, ALL_OLD, NONE, UPDATED_NEW]"
        )
    );
    // tests/python/test_transactions.py::test_client_request_token_too_long.
    let token = "x".repeat(37);
    let put = json!({"Put": {"TableName": "abc", "Item": {"k": {"S": "a"}}}});
    assert_eq!(
        validation("TransactWriteItems", json!({"TransactItems": [put], "ClientRequestToken": token})),
        one(&format!("Value '{token}' at 'clientRequestToken'"), "Member must have length less than or equal to 36")
    );
    // tests/python/test_batch.py empty RequestItems, both batch operations.
    for op in ["BatchWriteItem", "BatchGetItem"] {
        assert_eq!(
            validation(op, json!({"RequestItems": {}})),
            one("Value '{}' at 'requestItems'", "Member must have length greater than or equal to 1")
        );
    }
    // tests/python/test_batch.py::test_batch_write_26_items_one_table checks both ends.
    let puts: Vec<Value> = (0..26).map(|i| json!({"PutRequest": {"Item": {"k": {"S": format!("i{i}")}}}})).collect();
    // The value is summarised as crates/wire summarises it today.
    assert_eq!(
        validation("BatchWriteItem", json!({"RequestItems": {"abc": puts}})),
        one(
            "Value '{abc=[26 write requests]}' at 'requestItems'",
            "Map value must satisfy constraint: \
             [Member must have length less than or equal to 25, Member must have length greater than or equal to 1]"
        )
    );
    // tests/python/test_transactions.py (101 actions), both transaction operations.
    let puts: Vec<Value> =
        (0..101).map(|i| json!({"Put": {"TableName": "abc", "Item": {"k": {"S": format!("{i}")}}}})).collect();
    assert_eq!(
        validation("TransactWriteItems", json!({"TransactItems": puts})),
        one("Value '[101 items]' at 'transactItems'", "Member must have length less than or equal to 100")
    );
    let gets: Vec<Value> =
        (0..101).map(|i| json!({"Get": {"TableName": "abc", "Key": {"k": {"S": format!("{i}")}}}})).collect();
    assert_eq!(
        validation("TransactGetItems", json!({"TransactItems": gets})),
        one("Value '[101 items]' at 'transactItems'", "Member must have length less than or equal to 100")
    );
}

#[test]
fn table_name_rules() {
    // S91 (PutItem), with TableName now a TableArn member (S163).
    let put = |name: Value| validation("PutItem", json!({"TableName": name, "Item": {"k": {"S": "a"}}}));
    assert_eq!(put(json!("")), one("Value '' at 'tableName'", "Member must have length greater than or equal to 1"));
    let long = "a".repeat(256);
    assert_eq!(
        put(json!(long)),
        one(&format!("Value '{long}' at 'tableName'"), "Member must have length less than or equal to 255")
    );
    assert_eq!(
        put(json!("bad table!@#")),
        one("Value 'bad table!@#' at 'tableName'", "Member must satisfy regular expression pattern: [a-zA-Z0-9_.-]+")
    );
    assert_eq!(
        validation("PutItem", json!({"Item": {"k": {"S": "a"}}})),
        one("Value null at 'tableName'", "Member must not be null")
    );
    assert_eq!(
        validation("CreateTable", json!({"TableName": "ab"})),
        one("Value 'ab' at 'tableName'", "Member must have length greater than or equal to 3")
    );
    assert_eq!(
        validation("CreateTable", json!({"KeySchema": []})),
        "The parameter 'TableName' is required but was not present in the request"
    );
    // An ARN is held to the ARN's limits, not the name's.
    let arn = "arn:aws:dynamodb:us-east-1:123456789012:table/My Table";
    assert_eq!(ddb("DescribeTable", json!({"TableName": arn})), Ok(()));
    // A member that takes only ARNs keeps the model's TableArn rules (1 to 1024).
    assert_eq!(ddb("DescribeContinuousBackups", json!({"TableName": "abc"})), Ok(()));
    assert_eq!(ddb("ExportTableToPointInTime", json!({"TableArn": "x", "S3Bucket": "my-bucket"})), Ok(()));
    assert_eq!(
        validation("ExportTableToPointInTime", json!({"TableArn": "", "S3Bucket": "my-bucket"})),
        one("Value '' at 'tableArn'", "Member must have length greater than or equal to 1")
    );
    // S89: pattern then length for the same member.
    assert_eq!(
        validation("DescribeTable", json!({"TableName": "a;"})),
        "2 validation errors detected: \
         Value 'a;' at 'tableName' failed to satisfy constraint: Member must satisfy regular expression pattern: [a-zA-Z0-9_.-]+; \
         Value 'a;' at 'tableName' failed to satisfy constraint: Member must have length greater than or equal to 3"
    );
}

#[test]
fn an_invalid_table_name_stops_the_other_members() {
    // S87.
    assert_eq!(
        validation("PutItem", json!({"TableName": "", "ReturnValues": "INVALID", "Item": {}})),
        one("Value '' at 'tableName'", "Member must have length greater than or equal to 1")
    );
    let message = validation(
        "PutItem",
        json!({"TableName": "abc", "Item": {"pk": {"S": "test"}}, "ReturnConsumedCapacity": "INVALID",
               "ReturnItemCollectionMetrics": "INVALID", "ReturnValues": "INVALID"}),
    );
    assert_eq!(
        message,
        "3 validation errors detected: \
         Value 'INVALID' at 'returnValues' failed to satisfy constraint: Member must satisfy enum value set: [ALL_NEW, UPDATED_OLD, ALL_OLD, NONE, UPDATED_NEW]; \
         Value 'INVALID' at 'returnConsumedCapacity' failed to satisfy constraint: Member must satisfy enum value set: [INDEXES, TOTAL, NONE]; \
         Value 'INVALID' at 'returnItemCollectionMetrics' failed to satisfy constraint: Member must satisfy enum value set: [SIZE, NONE]"
    );
}

#[test]
fn nested_paths_are_lower_camel_with_one_based_members() {
    // S89.
    let body = json!({"TableName": "abc",
        "KeySchema": [{"AttributeName": "a", "KeyType": "HASH"}, {"AttributeName": "b", "KeyType": "SIDEWAYS"}],
        "GlobalSecondaryIndexes": [{"IndexName": "gsi", "KeySchema": [{"AttributeName": "a", "KeyType": "HASH"}],
            "Projection": {"ProjectionType": "SOME"}}]});
    assert_eq!(
        validation("CreateTable", body),
        "2 validation errors detected: \
         Value 'SIDEWAYS' at 'keySchema.2.member.keyType' failed to satisfy constraint: Member must satisfy enum value set: [HASH, RANGE]; \
         Value 'SOME' at 'globalSecondaryIndexes.1.member.projection.projectionType' failed to satisfy constraint: \
         Member must satisfy enum value set: [ALL, INCLUDE, KEYS_ONLY]"
    );
    // Map entries: the key, then `.member` (S89); the operator set in DynamoDB's order.
    let body = json!({"TableName": "abc", "ScanFilter": {"a": {}, "b": {"ComparisonOperator": ""}}});
    assert_eq!(
        validation("Scan", body),
        "2 validation errors detected: \
         Value null at 'scanFilter.a.member.comparisonOperator' failed to satisfy constraint: Member must not be null; \
         Value '' at 'scanFilter.b.member.comparisonOperator' failed to satisfy constraint: Member must satisfy enum value set: \
         [IN, NULL, BETWEEN, LT, NOT_CONTAINS, EQ, GT, NOT_NULL, NE, LE, BEGINS_WITH, GE, CONTAINS]"
    );
    // The write units first, as DynamoDB lists them (ack-api-quirks
    // DDB-TABLE-038: 0/0, -1/-1 and {} all answered so, live 2026-10).
    assert_eq!(
        validation("CreateTable", json!({"TableName": "abc", "ProvisionedThroughput": {"ReadCapacityUnits": 0}})),
        "2 validation errors detected: \
         Value null at 'provisionedThroughput.writeCapacityUnits' failed to satisfy constraint: Member must not be null; \
         Value '0' at 'provisionedThroughput.readCapacityUnits' failed to satisfy constraint: Member must have value greater than or equal to 1"
    );
}

#[test]
fn map_keys_and_values_are_reported_for_the_whole_map() {
    // dynalite's batchWriteItem test against the live service (S88/S89 sources).
    assert_eq!(
        validation("BatchWriteItem", json!({"RequestItems": {"a": []}})),
        "2 validation errors detected: \
         Value '{a=[0 write requests]}' at 'requestItems' failed to satisfy constraint: Map keys must satisfy constraint: \
         [Member must have length less than or equal to 255, Member must have length greater than or equal to 3, \
         Member must satisfy regular expression pattern: [a-zA-Z0-9_.-]+]; \
         Value '{a=[0 write requests]}' at 'requestItems' failed to satisfy constraint: Map value must satisfy constraint: \
         [Member must have length less than or equal to 25, Member must have length greater than or equal to 1]"
    );
    // Inside a map value: the key, `.member`, then the list element.
    assert_eq!(
        validation("BatchWriteItem", json!({"RequestItems": {"abc": [{"PutRequest": {}}]}})),
        one("Value null at 'requestItems.abc.member.1.member.putRequest.item'", "Member must not be null")
    );
}

#[test]
fn query_limit_and_batch_get_keys_use_the_newer_form() {
    // S90.
    let query = json!({"TableName": "abc", "KeyConditionExpression": "pk = :v", "Limit": 0});
    assert_eq!(
        validation("Query", query.clone()),
        one("Value at 'Limit'", "Member must have value greater than or equal to 1")
    );
    assert_eq!(
        validate_with(Service::DynamoDb, "Query", &query, Options { query_limit_quirk: false }),
        Err(Invalid::Validation {
            message: one("Value '0' at 'limit'", "Member must have value greater than or equal to 1")
        })
    );
    let keys: Vec<Value> = (0..101).map(|i| json!({"k": {"S": format!("{i}")}})).collect();
    assert_eq!(
        validation("BatchGetItem", json!({"RequestItems": {"abc": {"Keys": keys}}})),
        one("Value at 'RequestItems.abc.member.Keys'", "Member must have length less than or equal to 100")
    );
}

#[test]
fn streams_operations_are_validated_from_their_own_model() {
    let err = validate(Service::Streams, "GetRecords", &json!({"Limit": 0}));
    assert_eq!(
        err,
        Err(Invalid::Validation {
            message: "2 validation errors detected: \
                Value null at 'shardIterator' failed to satisfy constraint: Member must not be null; \
                Value '0' at 'limit' failed to satisfy constraint: Member must have value greater than or equal to 1"
                .into()
        })
    );
    assert_eq!(
        validate(
            Service::Streams,
            "DescribeStream",
            &json!({"StreamArn": "arn:x:y:z:1234567890123456789012345678901234567890"})
        ),
        Ok(())
    );
}

#[test]
fn unknown_operations_are_refused() {
    assert_eq!(
        validate(Service::DynamoDb, "GetRecords", &json!({})),
        Err(Invalid::UnknownOperation { name: "GetRecords".into() })
    );
}

// ---------------------------------------------------------------- AttributeValue shapes

#[test]
fn attribute_values_need_exactly_one_type() {
    // Texts as crates/wire/src/value.rs and tests/python/test_validation.py have them.
    let empty = "Supplied AttributeValue is empty, must contain exactly one of the supported datatypes";
    let several =
        "Supplied AttributeValue has more than one datatypes set, must contain exactly one of the supported datatypes";
    let put = |item: Value| validation("PutItem", json!({"TableName": "abc", "Item": item}));
    assert_eq!(put(json!({"pk": {"S": "a"}, "x": {}})), empty);
    assert_eq!(put(json!({"pk": {"S": "a"}, "x": {"L": [{"M": {"y": {}}}]}})), empty);
    assert_eq!(put(json!({"pk": {"S": "a"}, "x": {"S": "s", "N": "1"}})), several);
    // An unknown member is not a type; a null one is absent.
    assert_eq!(put(json!({"x": {"a": ""}})), empty);
    assert_eq!(ddb("PutItem", json!({"TableName": "abc", "Item": {"x": {"S": "s", "N": null}}})), Ok(()));
    // tests/python/test_validation.py::test_empty_value_placeholder_value.
    assert_eq!(
        validation(
            "Scan",
            json!({"TableName": "abc", "FilterExpression": "x = :v", "ExpressionAttributeValues": {":v": {}}})
        ),
        format!("ExpressionAttributeValues contains invalid value: {empty} for key :v")
    );
    // dynalite's scan tests against the live service.
    assert_eq!(
        validation("Scan", json!({"TableName": "abc", "ExclusiveStartKey": {"a": {}}})),
        format!("The provided starting key is invalid: {empty}")
    );
}

#[test]
fn constraints_come_before_attribute_value_shapes() {
    // S85: step 7 (constraints) before step 8 (semantic checks).
    assert_eq!(
        validation("PutItem", json!({"TableName": "abc", "Item": {"x": {}}, "ReturnValues": "NO"})),
        one(
            "Value 'NO' at 'returnValues'",
            "Member must satisfy enum value set: [ALL_NEW, UPDATED_OLD, ALL_OLD, NONE, UPDATED_NEW]"
        )
    );
}

#[test]
fn a_valid_request_passes() {
    let body = json!({"TableName": "abc", "Key": {"pk": {"S": "a"}}, "UpdateExpression": "SET #a = :v",
        "ExpressionAttributeNames": {"#a": "x"}, "ExpressionAttributeValues": {":v": {"M": {"n": {"NS": ["1", "2"]}}}},
        "ReturnValues": "ALL_NEW", "ReturnConsumedCapacity": "TOTAL"});
    assert_eq!(ddb("UpdateItem", body), Ok(()));
}

#[test]
fn attribute_names_longer_than_the_model_allows() {
    // AttributeName's model maximum (65535) on map keys, at the top of an
    // item and inside an M value (S89 paths; the rule list as S88/dynalite).
    let long = "k".repeat(65_536);
    let rule = "Map keys must satisfy constraint: [Member must have length less than or equal to 65535]";
    assert_eq!(
        validation("PutItem", json!({"TableName": "abc", "Item": {"a": {"M": {long.clone(): {"S": "v"}}}}})),
        one(&format!("Value '{{{long}={{S=v}}}}' at 'item.a.member.m'"), rule)
    );
    assert_eq!(
        validation("PutItem", json!({"TableName": "abc", "Item": {long.clone(): {"S": "v"}}})),
        one(&format!("Value '{{{long}={{S=v}}}}' at 'item'"), rule)
    );
    let longest = "k".repeat(65_535);
    assert_eq!(ddb("PutItem", json!({"TableName": "abc", "Item": {"a": {"M": {longest: {"S": "v"}}}}})), Ok(()));
}

#[test]
fn a_key_schema_shows_its_elements_as_java_objects() {
    // S5.
    let key = |name: &str, role: &str| json!({"AttributeName": name, "KeyType": role});
    assert_eq!(
        dynaburst_apimodel::value_text("KeySchema", &json!([key("pk", "HASH"), key("sk", "RANGE")])).as_deref(),
        Some("[KeySchemaElement(attributeName=pk, keyType=HASH), KeySchemaElement(attributeName=sk, keyType=RANGE)]")
    );
}
