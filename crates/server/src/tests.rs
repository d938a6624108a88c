//! The service in process: requests in, responses out, no sockets, on a
//! manual clock.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use dynaburst_engine::{Engine, EngineConfig};
use http_body_util::{BodyExt, Full};
use hyper::{Request, Response, StatusCode};
use serde_json::{json, Value};

use super::*;

const START: Instant = Instant(Duration::from_millis(1_700_000_000_250));

fn server(seed: u64) -> (Server, Arc<ManualClock>) {
    let engine = Arc::new(Engine::new(EngineConfig::local()));
    let clock = Arc::new(ManualClock::new(START));
    (Server::new(engine, seed).with_clock(clock.clone()), clock)
}

fn post(target: &str) -> hyper::http::request::Builder {
    Request::builder()
        .method("POST")
        .uri("/")
        .header("authorization", "AWS4-HMAC-SHA256 Credential=x/20260101/us-east-1/dynamodb/aws4_request")
        .header("content-type", "application/x-amz-json-1.0")
        .header("x-amz-target", format!("DynamoDB_20120810.{target}"))
}

fn request(target: &str, body: Value) -> Request<Full<Bytes>> {
    post(target).body(Full::new(Bytes::from(body.to_string()))).unwrap()
}

async fn send(server: &Server, request: Request<Full<Bytes>>) -> (StatusCode, Response<()>, Bytes) {
    let response = handle_request(server, request).await;
    let (parts, body) = response.into_parts();
    let bytes = body.collect().await.unwrap().to_bytes();
    (parts.status, Response::from_parts(parts, ()), bytes)
}

fn error_type(body: &Bytes) -> String {
    let v: Value = serde_json::from_slice(body).unwrap();
    v["__type"].as_str().unwrap().to_string()
}

fn create_table(name: &str) -> Request<Full<Bytes>> {
    request(
        "CreateTable",
        json!({"TableName": name, "AttributeDefinitions": [{"AttributeName": "id", "AttributeType": "S"}],
            "KeySchema": [{"AttributeName": "id", "KeyType": "HASH"}], "BillingMode": "PAY_PER_REQUEST"}),
    )
}

#[tokio::test]
async fn a_request_without_authorization_is_refused() {
    let (server, _) = server(1);
    let mut req = request("ListTables", json!({}));
    req.headers_mut().remove("authorization");
    let (status, _, body) = send(&server, req).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(
        serde_json::from_slice::<Value>(&body).unwrap(),
        json!({"__type": "com.amazon.coral.service#MissingAuthenticationTokenException",
            "message": "Request is missing Authentication Token"})
    );
}

#[tokio::test]
async fn bodies_over_16_mb_get_413_whether_declared_or_not() {
    let (server, _) = server(1);
    let declared = post("PutItem")
        .header("content-length", (MAX_REQUEST_BYTES + 1).to_string())
        .body(Full::new(Bytes::from_static(b"{}")))
        .unwrap();
    let (status, _, body) = send(&server, declared).await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE);
    assert_eq!(body, format!("Request body larger than {MAX_REQUEST_BYTES} bytes"));
    let big = Bytes::from(vec![b' '; MAX_REQUEST_BYTES + 1]);
    let (status, _, _) = send(&server, post("PutItem").body(Full::new(big)).unwrap()).await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE);
}

#[tokio::test]
async fn wrong_content_type_target_or_method_is_an_unknown_operation() {
    let (server, _) = server(1);
    let unknown = "com.amazon.coral.service#UnknownOperationException";
    let mut wrong_type = request("ListTables", json!({}));
    wrong_type.headers_mut().insert("content-type", HeaderValue::from_static("application/json"));
    let (status, _, body) = send(&server, wrong_type).await;
    assert_eq!((status, error_type(&body)), (StatusCode::BAD_REQUEST, unknown.to_string()));
    let mut no_prefix = request("ListTables", json!({}));
    no_prefix.headers_mut().insert("x-amz-target", HeaderValue::from_static("ListTables"));
    let (status, _, body) = send(&server, no_prefix).await;
    assert_eq!((status, error_type(&body)), (StatusCode::BAD_REQUEST, unknown.to_string()));
    let mut put = request("ListTables", json!({}));
    *put.method_mut() = Method::PUT;
    let (status, _, body) = send(&server, put).await;
    assert_eq!((status, error_type(&body)), (StatusCode::BAD_REQUEST, unknown.to_string()));
    let get = Request::builder().uri("/").body(Full::new(Bytes::new())).unwrap();
    let (status, _, body) = send(&server, get).await;
    assert_eq!((status, body), (StatusCode::OK, Bytes::from_static(HEALTH_ANSWER)));
}

#[tokio::test]
async fn answers_carry_crc32_and_request_id_headers() {
    let (server, _) = server(1);
    let (status, response, body) = send(&server, request("ListTables", json!({}))).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(serde_json::from_slice::<Value>(&body).unwrap(), json!({"TableNames": []}));
    let headers = response.headers();
    assert_eq!(headers["content-type"], "application/x-amz-json-1.0");
    assert_eq!(headers["content-length"], body.len().to_string().as_str());
    assert_eq!(headers["x-amz-crc32"], crc32fast::hash(&body).to_string().as_str());
    let id = headers["x-amzn-requestid"].to_str().unwrap();
    assert_eq!(id.len(), REQUEST_ID_LEN);
    assert!(id.bytes().all(|b| b.is_ascii_uppercase() || b.is_ascii_digit()), "{id}");
}

#[tokio::test]
async fn request_ids_are_a_function_of_the_seed() {
    async fn ids(seed: u64) -> Vec<String> {
        let (server, _) = server(seed);
        let mut out = Vec::new();
        for _ in 0..3 {
            let (_, response, _) = send(&server, request("ListTables", json!({}))).await;
            out.push(response.headers()["x-amzn-requestid"].to_str().unwrap().to_string());
        }
        out
    }
    let a = ids(7).await;
    assert_eq!(a, ids(7).await);
    assert_ne!(a, ids(8).await);
    assert_ne!(a[0], a[1]);
    assert_ne!(a[1], a[2]);
}

#[tokio::test]
async fn the_engine_and_the_latency_model_run_on_the_injected_clock() {
    let (plain, clock) = server(1);
    let rtt = plain.with_latency(latency::LatencyModel::new(false, 20.0, 1));
    let (status, _, body) = send(&rtt, create_table("tbl")).await;
    assert_eq!(status, StatusCode::OK);
    // The engine's `now` is the clock's reading on arrival.
    let created = serde_json::from_slice::<Value>(&body).unwrap()["TableDescription"]["CreationDateTime"].clone();
    assert_eq!(created, json!(1_700_000_000.25));
    // The answer waited the round trip, in virtual time.
    assert_eq!(clock.now(), START + Duration::from_millis(20));

    let aws = rtt.with_latency(latency::LatencyModel::new(true, 0.0, 3));
    let before = clock.now();
    let put = request("PutItem", json!({"TableName": "tbl", "Item": {"id": {"S": "a"}}}));
    let (status, _, _) = send(&aws, put).await;
    assert_eq!(status, StatusCode::OK);
    let waited = clock.now().0 - before.0;
    let put_item = latency::SEED_003_PUT_ITEM;
    assert!(
        waited >= Duration::from_secs_f64(put_item.min / 1000.0)
            && waited <= Duration::from_secs_f64(put_item.max / 1000.0),
        "{waited:?} outside seed 003's PutItem range"
    );
    // Same seed, same draw.
    let (again, clock_again) = server(1);
    let again = again.with_latency(latency::LatencyModel::new(true, 0.0, 3));
    send(&again, create_table("tbl")).await;
    let before = clock_again.now();
    send(&again, request("PutItem", json!({"TableName": "tbl", "Item": {"id": {"S": "a"}}}))).await;
    assert_eq!(clock_again.now().0 - before.0, waited);
}

#[tokio::test]
async fn metrics_are_served_as_prometheus_text_and_json() {
    let (server, clock) = server(1);
    send(&server, create_table("tbl")).await;
    send(&server, request("PutItem", json!({"TableName": "tbl", "Item": {"id": {"S": "a"}}}))).await;
    clock.advance(Duration::from_secs(2));
    let get = |path: &str| Request::builder().uri(path).body(Full::new(Bytes::new())).unwrap();
    let (status, response, body) = send(&server, get("/metrics")).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(response.headers()["content-type"], "text/plain; version=0.0.4");
    let text = String::from_utf8(body.to_vec()).unwrap();
    assert!(text.contains("dynaburst_consumed_write_units_total{table=\"tbl\"} 1\n"), "{text}");
    let (_, response, body) = send(&server, get("/metrics.json")).await;
    assert_eq!(response.headers()["content-type"], "application/json");
    let doc: Value = serde_json::from_slice(&body).unwrap();
    let table = &doc["tables"][0];
    assert_eq!(table["table"], "tbl");
    assert_eq!(table["mode"], "on-demand");
    assert_eq!(table["provisioned"], Value::Null);
    assert_eq!(table["totals"]["write_units"], json!(1.0));
    let second = START.millis().0 / 1000;
    assert_eq!(table["seconds"][0]["second"], json!(second));
    assert_eq!(table["seconds"][0]["write_units"], json!(1.0));
    let (_, _, later) = send(&server, get(&format!("/metrics.json?since={}", second + 1))).await;
    let later: Value = serde_json::from_slice(&later).unwrap();
    let seconds: Vec<u64> =
        later["tables"][0]["seconds"].as_array().unwrap().iter().map(|s| s["second"].as_u64().unwrap()).collect();
    assert_eq!(seconds, [second + 1], "only the seconds at or after `since`");
}

fn in_region(region: &str, target: &str, body: Value) -> Request<Full<Bytes>> {
    let mut req = request(target, body);
    let auth = format!(
        "AWS4-HMAC-SHA256 Credential=x/20260101/{region}/dynamodb/aws4_request, SignedHeaders=host, Signature=0"
    );
    req.headers_mut().insert("authorization", auth.parse().unwrap());
    req
}

#[tokio::test]
async fn each_region_of_the_credential_scope_has_its_own_tables() {
    let (server, _) = server(1);
    let mut create = create_table("t-regional");
    create.headers_mut().insert(
        "authorization",
        "AWS4-HMAC-SHA256 Credential=x/20260101/eu-west-1/dynamodb/aws4_request, SignedHeaders=host, Signature=0"
            .parse()
            .unwrap(),
    );
    let (status, _, body) = send(&server, create).await;
    assert_eq!(status, StatusCode::OK, "{body:?}");
    let created: Value = serde_json::from_slice(&body).unwrap();
    let arn = created["TableDescription"]["TableArn"].as_str().unwrap().to_string();
    assert_eq!(arn, "arn:aws:dynamodb:eu-west-1:000000000000:table/t-regional");
    let names = |body: &Bytes| serde_json::from_slice::<Value>(body).unwrap()["TableNames"].clone();
    let (_, _, home) = send(&server, request("ListTables", json!({}))).await;
    assert_eq!(names(&home), json!([]), "us-east-1 does not see eu-west-1's table");
    let (_, _, eu) = send(&server, in_region("eu-west-1", "ListTables", json!({}))).await;
    assert_eq!(names(&eu), json!(["t-regional"]));
    // The table's ARN works as its name, in its own region only.
    let (status, _, _) = send(&server, in_region("eu-west-1", "DescribeTable", json!({"TableName": arn}))).await;
    assert_eq!(status, StatusCode::OK);
    let (status, _, body) = send(&server, request("DescribeTable", json!({"TableName": arn}))).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    let err: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(err["message"], format!("1 validation error detected: Invalid AWS region in '{arn}'"));
    let index_arn = format!("{arn}/index/i");
    let (_, _, body) = send(&server, in_region("eu-west-1", "DescribeTable", json!({"TableName": index_arn}))).await;
    let err: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(err["message"], format!("Invalid TableArn: Invalid ResourceArn provided as input {index_arn}"));
    // A region a DynamoDB Local user configures ("localhost") is served
    // as one: DynamoDB Local takes any.
    let (status, _, body) = send(&server, in_region("localhost", "ListTables", json!({}))).await;
    assert_eq!((status, names(&body)), (StatusCode::OK, json!([])));
    // Not a region: refused, and no engine is made for it.
    for bad in ["Not_A_Region", "x.y", &"a".repeat(64)] {
        let (status, _, body) = send(&server, in_region(bad, "ListTables", json!({}))).await;
        assert_eq!(
            (status, error_type(&body)),
            (StatusCode::BAD_REQUEST, "com.amazon.coral.service#UnrecognizedClientException".to_string()),
            "{bad}"
        );
    }
    assert_eq!(server.engines().len(), 3);
}

#[tokio::test]
async fn browsers_get_cors_headers_and_preflights_are_answered() {
    let (server, _) = server(1);
    let mut req = request("ListTables", json!({}));
    req.headers_mut().insert("origin", "http://localhost:3000".parse().unwrap());
    let (status, response, _) = send(&server, req).await;
    assert_eq!(status, StatusCode::OK);
    let h = response.headers();
    assert_eq!(h["access-control-allow-origin"], "*");
    assert_eq!(h["server"], "Server", "as DynamoDB names itself");
    assert_eq!(h["access-control-expose-headers"], "x-amzn-RequestId,x-amzn-ErrorType,x-amzn-ErrorMessage,Date");
    assert!(!h.contains_key("access-control-max-age"), "only a preflight gets a max age");
    // A POST that carries the preflight's headers is still not a preflight.
    let mut req = request("ListTables", json!({}));
    req.headers_mut().insert("origin", "http://localhost:3000".parse().unwrap());
    req.headers_mut().insert("access-control-request-method", "dog".parse().unwrap());
    req.headers_mut().insert("access-control-request-headers", "cat".parse().unwrap());
    let (_, response, _) = send(&server, req).await;
    let h = response.headers();
    for absent in ["access-control-max-age", "access-control-allow-methods", "access-control-allow-headers"] {
        assert!(!h.contains_key(absent), "{absent} on a POST");
    }
    // An OPTIONS without them still gets the max age.
    let bare = Request::builder()
        .method("OPTIONS")
        .uri("/")
        .header("origin", "http://localhost:3000")
        .body(Full::new(Bytes::new()))
        .unwrap();
    let (_, response, _) = send(&server, bare).await;
    assert_eq!(response.headers()["access-control-max-age"], "172800");
    assert!(!response.headers().contains_key("access-control-allow-methods"));
    let preflight = Request::builder()
        .method("OPTIONS")
        .uri("/")
        .header("origin", "http://localhost:3000")
        .header("access-control-request-method", "POST")
        .header("access-control-request-headers", "content-type,x-amz-target,authorization")
        .body(Full::new(Bytes::new()))
        .unwrap();
    let (status, response, body) = send(&server, preflight).await;
    assert_eq!((status, body.len()), (StatusCode::OK, 0));
    let h = response.headers();
    assert_eq!(h["access-control-allow-methods"], "POST");
    assert_eq!(h["access-control-allow-headers"], "content-type,x-amz-target,authorization");
    assert_eq!(h["access-control-max-age"], "172800");
    // Without an Origin, no CORS headers.
    let (_, response, _) = send(&server, request("ListTables", json!({}))).await;
    assert!(!response.headers().contains_key("access-control-allow-origin"));
}

async fn ok(server: &Server, target: &str, body: Value) -> Value {
    let (status, _, bytes) = send(server, request(target, body)).await;
    assert_eq!(status, StatusCode::OK, "{target}: {bytes:?}");
    serde_json::from_slice(&bytes).unwrap()
}

#[tokio::test]
async fn the_ttl_expirer_deletes_passed_items_and_their_index_entries_in_modelled_time() {
    let (server, clock) = server(1);
    ok(
        &server,
        "CreateTable",
        json!({"TableName": "sessions", "BillingMode": "PAY_PER_REQUEST",
            "AttributeDefinitions": [{"AttributeName": "id", "AttributeType": "S"}, {"AttributeName": "user", "AttributeType": "S"}],
            "KeySchema": [{"AttributeName": "id", "KeyType": "HASH"}],
            "GlobalSecondaryIndexes": [{"IndexName": "by_user", "KeySchema": [{"AttributeName": "user", "KeyType": "HASH"}],
                "Projection": {"ProjectionType": "KEYS_ONLY"}}]}),
    )
    .await;
    let described = ok(&server, "DescribeTimeToLive", json!({"TableName": "sessions"})).await;
    assert_eq!(described, json!({"TimeToLiveDescription": {"TimeToLiveStatus": "DISABLED"}}));
    let spec =
        json!({"TableName": "sessions", "TimeToLiveSpecification": {"Enabled": true, "AttributeName": "expires"}});
    let answer = ok(&server, "UpdateTimeToLive", spec.clone()).await;
    assert_eq!(answer, json!({"TimeToLiveSpecification": {"Enabled": true, "AttributeName": "expires"}}));
    // Asking again for what is already so is refused for that; a real
    // change within the hour is refused by the cool-down.
    let (_, _, again) = send(&server, request("UpdateTimeToLive", spec)).await;
    let again: Value = serde_json::from_slice(&again).unwrap();
    assert_eq!(again["message"], "TimeToLive is already enabled");
    let off =
        json!({"TableName": "sessions", "TimeToLiveSpecification": {"Enabled": false, "AttributeName": "expires"}});
    let (_, _, soon) = send(&server, request("UpdateTimeToLive", off)).await;
    let soon: Value = serde_json::from_slice(&soon).unwrap();
    assert_eq!(soon["message"], "Time to live has been modified multiple times within a fixed interval");
    let now_secs = START.millis().0 / 1000;
    let put = |id: &str, expires: Value| json!({"TableName": "sessions", "Item": {"id": {"S": id}, "user": {"S": "u1"}, "expires": expires}});
    ok(&server, "PutItem", put("past", json!({"N": (now_secs + 10).to_string()}))).await;
    ok(&server, "PutItem", put("later", json!({"N": (now_secs + 3600).to_string()}))).await;
    ok(&server, "PutItem", put("text", json!({"S": (now_secs + 10).to_string()}))).await;
    ok(&server, "PutItem", put("ancient", json!({"N": "1000"}))).await;
    assert_eq!(server.expire(), 0, "nothing has passed yet");
    clock.advance(Duration::from_secs(11));
    assert_eq!(server.expire(), 1);
    let ids = |v: Value| {
        let mut ids: Vec<String> =
            v["Items"].as_array().unwrap().iter().map(|i| i["id"]["S"].as_str().unwrap().to_string()).collect();
        ids.sort();
        ids
    };
    assert_eq!(ids(ok(&server, "Scan", json!({"TableName": "sessions"})).await), ["ancient", "later", "text"]);
    let by_user = json!({"TableName": "sessions", "IndexName": "by_user", "KeyConditionExpression": "#u = :u",
        "ExpressionAttributeNames": {"#u": "user"}, "ExpressionAttributeValues": {":u": {"S": "u1"}}});
    assert_eq!(ids(ok(&server, "Query", by_user).await), ["ancient", "later", "text"], "the index follows");
    let described = ok(&server, "DescribeTimeToLive", json!({"TableName": "sessions"})).await;
    assert_eq!(
        described,
        json!({"TimeToLiveDescription": {"TimeToLiveStatus": "ENABLED", "AttributeName": "expires"}})
    );
}

#[tokio::test]
async fn a_ttl_deletion_is_a_remove_record_by_the_service() {
    let (server, clock) = server(1);
    ok(
        &server,
        "CreateTable",
        json!({"TableName": "carts", "BillingMode": "PAY_PER_REQUEST",
            "AttributeDefinitions": [{"AttributeName": "id", "AttributeType": "S"}],
            "KeySchema": [{"AttributeName": "id", "KeyType": "HASH"}],
            "StreamSpecification": {"StreamEnabled": true, "StreamViewType": "OLD_IMAGE"}}),
    )
    .await;
    ok(
        &server,
        "UpdateTimeToLive",
        json!({"TableName": "carts", "TimeToLiveSpecification": {"Enabled": true, "AttributeName": "ttl"}}),
    )
    .await;
    let expires = (START.millis().0 / 1000 + 1).to_string();
    ok(&server, "PutItem", json!({"TableName": "carts", "Item": {"id": {"S": "c1"}, "ttl": {"N": expires}}})).await;
    ok(&server, "DeleteItem", json!({"TableName": "carts", "Key": {"id": {"S": "c1"}}})).await;
    ok(&server, "PutItem", json!({"TableName": "carts", "Item": {"id": {"S": "c2"}, "ttl": {"N": expires}}})).await;
    clock.advance(Duration::from_secs(2));
    assert_eq!(server.expire(), 1);
    let arn = ok(&server, "DescribeTable", json!({"TableName": "carts"})).await["Table"]["LatestStreamArn"].clone();
    let streams = |target: &str, body: Value| {
        let mut req = request(target, body);
        req.headers_mut().insert("x-amz-target", format!("DynamoDBStreams_20120810.{target}").parse().unwrap());
        req
    };
    let (_, _, body) = send(&server, streams("DescribeStream", json!({"StreamArn": arn}))).await;
    let shards = serde_json::from_slice::<Value>(&body).unwrap()["StreamDescription"]["Shards"].clone();
    // An on-demand table has four partitions, so four shards: read each,
    // then order the records by sequence number (they increase across the
    // stream).
    let mut records = Vec::new();
    let mut iterator = Value::Null;
    for shard in shards.as_array().unwrap() {
        let body = json!({"StreamArn": arn, "ShardId": shard["ShardId"], "ShardIteratorType": "TRIM_HORIZON"});
        let (_, _, body) = send(&server, streams("GetShardIterator", body)).await;
        let it = serde_json::from_slice::<Value>(&body).unwrap()["ShardIterator"].clone();
        let (status, _, body) = send(&server, streams("GetRecords", json!({"ShardIterator": it}))).await;
        assert_eq!(status, StatusCode::OK, "{body:?}");
        let page = serde_json::from_slice::<Value>(&body).unwrap()["Records"].as_array().cloned().unwrap_or_default();
        if !page.is_empty() {
            iterator = it;
        }
        records.extend(page);
    }
    records.sort_by_key(|r| r["dynamodb"]["SequenceNumber"].as_str().unwrap_or_default().to_string());
    let events: Vec<(&str, Value)> = records
        .iter()
        .map(|r| (r["eventName"].as_str().unwrap(), r.get("userIdentity").cloned().unwrap_or(Value::Null)))
        .collect();
    let service = json!({"Type": "Service", "PrincipalId": "dynamodb.amazonaws.com"});
    assert_eq!(
        events,
        [("INSERT", Value::Null), ("REMOVE", Value::Null), ("INSERT", Value::Null), ("REMOVE", service)],
        "only the expirer's delete names the service"
    );
    // An iterator is good for 15 minutes.
    clock.advance(Duration::from_secs(16 * 60));
    let (status, _, body) = send(&server, streams("GetRecords", json!({"ShardIterator": iterator}))).await;
    assert_eq!(
        (status, error_type(&body)),
        (StatusCode::BAD_REQUEST, "com.amazonaws.dynamodb.v20120810#ExpiredIteratorException".to_string())
    );
}

#[tokio::test]
async fn a_gsi_has_its_own_metrics_beside_its_table() {
    let (server, _) = server(1);
    ok(
        &server,
        "CreateTable",
        json!({"TableName": "orders", "BillingMode": "PAY_PER_REQUEST",
            "AttributeDefinitions": [{"AttributeName": "id", "AttributeType": "S"}, {"AttributeName": "status", "AttributeType": "S"}],
            "KeySchema": [{"AttributeName": "id", "KeyType": "HASH"}],
            "GlobalSecondaryIndexes": [{"IndexName": "by_status", "KeySchema": [{"AttributeName": "status", "KeyType": "HASH"}],
                "Projection": {"ProjectionType": "KEYS_ONLY"}}]}),
    )
    .await;
    ok(&server, "PutItem", json!({"TableName": "orders", "Item": {"id": {"S": "a"}, "status": {"S": "open"}}})).await;
    let get = |path: &str| Request::builder().method("GET").uri(path).body(Full::new(Bytes::new())).unwrap();
    let (_, _, text) = send(&server, get("/metrics")).await;
    let text = String::from_utf8(text.to_vec()).unwrap();
    assert!(text.contains("dynaburst_consumed_write_units_total{table=\"orders\"} 1"), "{text}");
    assert!(text.contains("dynaburst_consumed_write_units_total{table=\"orders\",index=\"by_status\"} 1"), "{text}");
    let (_, _, body) = send(&server, get("/metrics.json")).await;
    let doc: Value = serde_json::from_slice(&body).unwrap();
    let names: Vec<(Value, Value)> = doc["tables"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| (t["table"].clone(), t.get("index").cloned().unwrap_or(Value::Null)))
        .collect();
    assert_eq!(names, [(json!("orders"), Value::Null), (json!("orders"), json!("by_status"))]);
}

#[tokio::test]
async fn a_browser_gets_the_web_view_and_api_clients_keep_dynamodbs_answers() {
    let (server, _) = server(1);
    let get = |path: &str, accept: &str| {
        Request::builder().uri(path).header("accept", accept).body(Full::new(Bytes::new())).unwrap()
    };
    let browser = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8";
    let (status, response, body) = send(&server, get("/", browser)).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(response.headers()["content-type"], "text/html; charset=utf-8");
    assert_eq!(body, Bytes::from_static(web::INDEX_HTML.as_bytes()));
    assert!(web::INDEX_HTML.contains(r#"<script src="/app.js"></script>"#));
    // Health checks and API clients (no HTML in Accept) see DynamoDB's answer.
    let (_, _, body) = send(&server, get("/", "*/*")).await;
    assert_eq!(body, Bytes::from_static(HEALTH_ANSWER));
    let (_, response, body) = send(&server, get("/app.js", "*/*")).await;
    assert_eq!(response.headers()["content-type"], "text/javascript; charset=utf-8");
    assert_eq!(body, Bytes::from_static(web::APP_JS.as_bytes()));
    let (_, response, _) = send(&server, get("/app.css", "*/*")).await;
    assert_eq!(response.headers()["content-type"], "text/css; charset=utf-8");
    // The probe that `dynaburst load` asks.
    let (_, _, body) = send(&server, get(web::PROBE_PATH, "*/*")).await;
    let probe: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(probe["server"], "dynaburst");
    assert_eq!(probe["page"], "/");
    // A POST to / with a browser's Accept is still the API.
    let mut post = create_table("web");
    post.headers_mut().insert("accept", hyper::header::HeaderValue::from_static("text/html"));
    let (status, _, body) = send(&server, post).await;
    assert_eq!(status, StatusCode::OK);
    assert!(String::from_utf8_lossy(&body).contains("\"TableName\":\"web\""));
}

#[tokio::test]
async fn metrics_json_has_what_the_web_view_draws() {
    let (server, clock) = server(1);
    send(&server, create_table("tbl")).await;
    for i in 0..5 {
        send(&server, request("PutItem", json!({"TableName": "tbl", "Item": {"id": {"S": format!("k{}", i % 2)}}})))
            .await;
    }
    clock.advance(Duration::from_secs(2));
    let get = Request::builder().uri("/metrics.json").body(Full::new(Bytes::new())).unwrap();
    let (_, _, body) = send(&server, get).await;
    let doc: Value = serde_json::from_slice(&body).unwrap();
    let t = &doc["tables"][0];
    assert_eq!(t["partition_max"], json!({"read": 3000.0, "write": 1000.0}));
    assert_eq!(t["on_demand_ceiling"], json!({"read": 12000.0, "write": 4000.0}));
    assert_eq!(t["item_count"], json!(2));
    assert_eq!(t["partitions"].as_array().unwrap().len(), 4);
    assert_eq!(t["partitions"][0]["start"], json!("0".repeat(32)));
    assert_eq!(t["throttles"], json!([]));
    // k0 written three times, k1 twice; one unit each, weighted 3.
    assert_eq!(
        t["top_keys"]["accessed_partition_keys"],
        json!([{"partition_key": "k0", "count": 9.0}, {"partition_key": "k1", "count": 6.0}])
    );
    assert_eq!(t["top_keys"]["accessed_keys"], json!([]));
}

/// A ListTables request signed by the SDK's signer with `key`/`secret` at
/// `signed_at` (seconds since the epoch).
fn signed_list_tables(key: &str, secret: &str, signed_at: u64) -> Request<Full<Bytes>> {
    use aws_sigv4::http_request::{sign, SignableBody, SignableRequest, SigningSettings};
    let body = b"{}".to_vec();
    let headers = [
        ("host", "localhost:8000"),
        ("content-type", "application/x-amz-json-1.0"),
        ("x-amz-target", "DynamoDB_20120810.ListTables"),
    ];
    let identity = aws_credential_types::Credentials::new(key, secret, None, None, "test").into();
    let params = aws_sigv4::sign::v4::SigningParams::builder()
        .identity(&identity)
        .region("us-east-1")
        .name("dynamodb")
        .time(std::time::UNIX_EPOCH + Duration::from_secs(signed_at))
        .settings(SigningSettings::default())
        .build()
        .unwrap()
        .into();
    let signable = SignableRequest::new("POST", "/", headers.iter().copied(), SignableBody::Bytes(&body)).unwrap();
    let (instructions, _) = sign(signable, &params).unwrap().into_parts();
    let mut builder = Request::builder().method("POST").uri("/");
    for (name, value) in headers {
        builder = builder.header(name, value);
    }
    let mut request = builder.body(Full::new(Bytes::from(body))).unwrap();
    instructions.apply_to_request_http1x(&mut request);
    request
}

#[tokio::test]
async fn signatures_are_checked_against_the_servers_clock_in_virtual_time() {
    let (server, clock) = server(1);
    let credentials = sigv4::Credentials::parse("[a]\naws_access_key_id = AK\naws_secret_access_key = s\n").unwrap();
    let server = server.with_credentials(credentials);
    let signed_at = START.0.as_secs();
    let (status, _, body) = send(&server, signed_list_tables("AK", "s", signed_at)).await;
    assert_eq!(status, StatusCode::OK, "{body:?}");
    let (status, _, body) = send(&server, signed_list_tables("AK", "wrong", signed_at)).await;
    assert_eq!(
        (status, error_type(&body).as_str()),
        (StatusCode::BAD_REQUEST, "com.amazon.coral.service#InvalidSignatureException")
    );
    let (status, _, body) = send(&server, signed_list_tables("NOPE", "s", signed_at)).await;
    assert_eq!(
        (status, error_type(&body).as_str()),
        (StatusCode::BAD_REQUEST, "com.amazon.coral.service#UnrecognizedClientException")
    );
    // Fifteen minutes later the same signing time still passes; a second
    // more and it has expired.
    clock.advance(Duration::from_secs(15 * 60));
    let (status, _, _) = send(&server, signed_list_tables("AK", "s", signed_at)).await;
    assert_eq!(status, StatusCode::OK);
    clock.advance(Duration::from_secs(1));
    let (status, _, body) = send(&server, signed_list_tables("AK", "s", signed_at)).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    let message = serde_json::from_slice::<Value>(&body).unwrap()["message"].as_str().unwrap().to_string();
    assert!(message.starts_with("Signature expired: "), "{message}");
}

fn gzip(parts: &[&[u8]]) -> Vec<u8> {
    use std::io::Write;
    let mut out = Vec::new();
    for part in parts {
        let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        encoder.write_all(part).unwrap();
        out.extend(encoder.finish().unwrap());
    }
    out
}

#[tokio::test]
async fn gzipped_requests_are_read_and_undecodable_ones_write_nothing() {
    let (server, _) = server(1);
    let (status, _, _) = send(&server, create_table("zipped")).await;
    assert_eq!(status, StatusCode::OK);
    let put = |id: &str| json!({"TableName": "zipped", "Item": {"id": {"S": id}}}).to_string();
    let encoded = |encoding: &str, body: Vec<u8>| {
        post("PutItem").header("content-encoding", encoding).body(Full::new(Bytes::from(body))).unwrap()
    };
    // One gzip member, and a body split over two (both DynamoDB reads).
    let (status, _, _) = send(&server, encoded("gzip", gzip(&[put("one").as_bytes()]))).await;
    assert_eq!(status, StatusCode::OK);
    let whole = put("two");
    let (head, tail) = whole.as_bytes().split_at(10);
    let (status, _, _) = send(&server, encoded("gzip", gzip(&[head, tail]))).await;
    assert_eq!(status, StatusCode::OK);
    // An unknown encoding, a plain body called gzip, a cut gzip body and an
    // empty one: 500, as DynamoDB answers, and nothing written.
    let mut cut = gzip(&[put("four").as_bytes()]);
    cut.truncate(cut.len() - 1);
    for (encoding, body) in [
        ("garbage", put("three").into_bytes()),
        ("gzip", put("three").into_bytes()),
        ("gzip", cut),
        ("gzip", Vec::new()),
    ] {
        let (status, _, body) = send(&server, encoded(encoding, body)).await;
        assert_eq!(status, StatusCode::INTERNAL_SERVER_ERROR);
        assert_eq!(error_type(&body), "com.amazonaws.dynamodb.v20120810#InternalServerError");
    }
    let count = ok(&server, "Scan", json!({"TableName": "zipped", "Select": "COUNT"})).await;
    assert_eq!(count["Count"], 2);
}

#[tokio::test]
async fn a_large_answer_is_gzipped_for_a_client_that_accepts_gzip() {
    use std::io::Read;
    let (server, _) = server(1);
    let (status, _, _) = send(&server, create_table("zipped")).await;
    assert_eq!(status, StatusCode::OK);
    let big = "x".repeat(5_000);
    ok(&server, "PutItem", json!({"TableName": "zipped", "Item": {"id": {"S": "a"}, "data": {"S": big}}})).await;
    let get = || json!({"TableName": "zipped", "Key": {"id": {"S": "a"}}}).to_string();
    let asking = |encoding: &str| {
        post("GetItem").header("accept-encoding", encoding).body(Full::new(Bytes::from(get()))).unwrap()
    };
    // Gzipped, its CRC32 over the bytes sent.
    let (status, response, body) = send(&server, asking("gzip, deflate")).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(response.headers()["content-encoding"], "gzip");
    assert_eq!(&body[..2], b"\x1f\x8b");
    assert_eq!(response.headers()["x-amz-crc32"], crc32fast::hash(&body).to_string().as_str());
    let mut plain = String::new();
    flate2::read::GzDecoder::new(&body[..]).read_to_string(&mut plain).unwrap();
    assert_eq!(serde_json::from_str::<Value>(&plain).unwrap()["Item"]["data"]["S"], big.as_str());
    // Not asked for, refused (q=0), or a small answer: plain.
    for encoding in ["identity", "gzip;q=0"] {
        let (_, response, _) = send(&server, asking(encoding)).await;
        assert!(!response.headers().contains_key("content-encoding"), "{encoding}");
    }
    let small = post("ListTables").header("accept-encoding", "gzip").body(Full::new(Bytes::from("{}"))).unwrap();
    let (_, response, _) = send(&server, small).await;
    assert!(!response.headers().contains_key("content-encoding"));
}
