//! The HTTP/1.1 server that speaks DynamoDB's protocol.
//!
//! Architecture invariant: this is the only crate that knows HTTP. It reads
//! the wall clock once per request and hands `now` to the wire layer; it
//! never interprets DynamoDB JSON itself.

pub mod latency;
mod metrics;

pub use metrics::metrics_json;

use std::convert::Infallible;
use std::future::Future;
use std::io;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use bytes::Bytes;
use dynaburst_engine::{CapacityReport, Engine, Millis};
use dynaburst_wire::{ApiError, TARGET_PREFIX};
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Incoming;
use hyper::header::{HeaderValue, CONTENT_LENGTH, CONTENT_TYPE};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;

/// Largest request body DynamoDB accepts: 16 MB. Larger ones get 413.
pub const MAX_REQUEST_BYTES: usize = 16 * 1024 * 1024;
/// How long shutdown waits for requests in flight before giving up.
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);
/// The content types DynamoDB's clients send.
pub const CONTENT_TYPES: &[&str] = &["application/x-amz-json-1.0", "application/x-amz-json-1.1"];

/// Shared state of a running server.
pub struct Server {
    engine: Arc<Engine>,
    request_ids: RequestIds,
    latency: Option<latency::LatencyModel>,
}

impl Server {
    /// A server over `engine`.
    pub fn new(engine: Arc<Engine>) -> Server {
        let seed = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_nanos() as u64).unwrap_or(0);
        Server { engine, request_ids: RequestIds::new(seed), latency: None }
    }

    /// Answers each request after a delay drawn from `model`.
    pub fn with_latency(mut self, model: latency::LatencyModel) -> Server {
        self.latency = (!model.is_none()).then_some(model);
        self
    }

    /// The engine behind this server.
    pub fn engine(&self) -> &Arc<Engine> {
        &self.engine
    }
}

/// Request ids in the shape AWS uses: 52 characters of [A-Z0-9].
struct RequestIds {
    seed: u64,
    counter: AtomicU64,
}

impl RequestIds {
    fn new(seed: u64) -> RequestIds {
        RequestIds { seed, counter: AtomicU64::new(0) }
    }

    fn next(&self) -> String {
        const ALPHABET: &[u8; 36] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
        let n = self.counter.fetch_add(1, Ordering::Relaxed);
        let mut state = self.seed ^ n.wrapping_mul(0x9E37_79B9_7F4A_7C15);
        let mut out = String::with_capacity(52);
        for _ in 0..52 {
            // splitmix64 step
            state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^= z >> 31;
            out.push(ALPHABET[(z % 36) as usize] as char);
        }
        out
    }
}

fn now() -> Millis {
    Millis(SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_millis() as u64).unwrap_or(0))
}

fn respond(server: &Server, status: StatusCode, body: Vec<u8>) -> Response<Full<Bytes>> {
    let crc = crc32fast::hash(&body);
    let len = body.len();
    let mut response = Response::new(Full::new(Bytes::from(body)));
    *response.status_mut() = status;
    let headers = response.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/x-amz-json-1.0"));
    headers.insert(CONTENT_LENGTH, HeaderValue::from(len));
    headers.insert("x-amz-crc32", HeaderValue::from(crc));
    if let Ok(id) = HeaderValue::from_str(&server.request_ids.next()) {
        headers.insert("x-amzn-requestid", id);
    }
    response
}

fn text_response(server: &Server, content_type: &'static str, body: Vec<u8>) -> Response<Full<Bytes>> {
    let mut response = respond(server, StatusCode::OK, body);
    response.headers_mut().insert(CONTENT_TYPE, HeaderValue::from_static(content_type));
    response
}

/// The capacity model's metrics in Prometheus' text format: running totals
/// as counters, and the last completed second as gauges.
pub fn prometheus_text(reports: &[CapacityReport]) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    let mut family = |name: &str, kind: &str, help: &str, rows: &mut dyn Iterator<Item = (String, f64)>| {
        let _ = writeln!(out, "# HELP {name} {help}");
        let _ = writeln!(out, "# TYPE {name} {kind}");
        for (labels, value) in rows {
            let _ = writeln!(out, "{name}{{{labels}}} {value}");
        }
    };
    let label = |t: &str| format!("table=\"{}\"", t.replace('\\', "\\\\").replace('"', "\\\""));
    family(
        "dynaburst_consumed_read_units_total",
        "counter",
        "Read units consumed.",
        &mut reports.iter().map(|r| (label(&r.table_name), r.metrics.total_read_units)),
    );
    family(
        "dynaburst_consumed_write_units_total",
        "counter",
        "Write units consumed.",
        &mut reports.iter().map(|r| (label(&r.table_name), r.metrics.total_write_units)),
    );
    family(
        "dynaburst_throttled_requests_total",
        "counter",
        "Requests answered with a throttling error.",
        &mut reports.iter().map(|r| (label(&r.table_name), r.metrics.total_throttled_requests as f64)),
    );
    family(
        "dynaburst_throttled_items_total",
        "counter",
        "Items refused by the capacity model (throttled or unprocessed).",
        &mut reports.iter().map(|r| (label(&r.table_name), r.metrics.total_throttled_items as f64)),
    );
    family(
        "dynaburst_partitions",
        "gauge",
        "Current partition count.",
        &mut reports.iter().map(|r| (label(&r.table_name), r.partitions.len() as f64)),
    );
    family(
        "dynaburst_splits_total",
        "counter",
        "Partition splits since the table was created.",
        &mut reports.iter().map(|r| (label(&r.table_name), r.metrics.splits.len() as f64)),
    );
    family(
        "dynaburst_warm_write_units",
        "gauge",
        "Write units per second the table takes at once.",
        &mut reports.iter().map(|r| (label(&r.table_name), r.warm_throughput.1)),
    );
    family(
        "dynaburst_warm_read_units",
        "gauge",
        "Read units per second the table takes at once.",
        &mut reports.iter().map(|r| (label(&r.table_name), r.warm_throughput.0)),
    );
    let last = |r: &CapacityReport| r.metrics.seconds.back().cloned();
    family(
        "dynaburst_last_second_write_units",
        "gauge",
        "Write units consumed in the last completed second.",
        &mut reports.iter().filter_map(|r| last(r).map(|s| (label(&r.table_name), s.write_units))),
    );
    family(
        "dynaburst_last_second_read_units",
        "gauge",
        "Read units consumed in the last completed second.",
        &mut reports.iter().filter_map(|r| last(r).map(|s| (label(&r.table_name), s.read_units))),
    );
    family(
        "dynaburst_last_second_throttled_items",
        "gauge",
        "Items throttled in the last completed second.",
        &mut reports.iter().filter_map(|r| {
            last(r).map(|s| (label(&r.table_name), (s.throttled_read_items + s.throttled_write_items) as f64))
        }),
    );
    family(
        "dynaburst_partition_last_second_write_units",
        "gauge",
        "Write units per partition in the last completed second.",
        &mut reports.iter().flat_map(|r| {
            let t = label(&r.table_name);
            last(r)
                .map(|s| s.partitions)
                .unwrap_or_default()
                .into_iter()
                .map(move |p| (format!("{t},partition=\"{:032x}\"", p.start), p.write_units))
        }),
    );
    out
}

fn error_response(server: &Server, error: ApiError) -> Response<Full<Bytes>> {
    let status = StatusCode::from_u16(error.status()).unwrap_or(StatusCode::BAD_REQUEST);
    respond(server, status, error.body())
}

fn too_large(server: &Server) -> Response<Full<Bytes>> {
    let body = format!("Request body larger than {MAX_REQUEST_BYTES} bytes").into_bytes();
    respond(server, StatusCode::PAYLOAD_TOO_LARGE, body)
}

/// Answers one HTTP request.
async fn handle(server: Arc<Server>, request: Request<Incoming>) -> Result<Response<Full<Bytes>>, Infallible> {
    let arrived = tokio::time::Instant::now();
    if request.method() == Method::GET {
        let path = request.uri().path();
        if path == "/metrics" {
            let reports = server.engine.capacity_reports(now());
            return Ok(text_response(&server, "text/plain; version=0.0.4", prometheus_text(&reports).into_bytes()));
        }
        if path == "/metrics.json" {
            let since = request
                .uri()
                .query()
                .and_then(|q| q.split('&').find_map(|kv| kv.strip_prefix("since=")))
                .and_then(|v| v.parse::<u64>().ok());
            let reports = server.engine.capacity_reports(now());
            return Ok(text_response(&server, "application/json", metrics_json(&reports, since)));
        }
        // DynamoDB's health answer, which load balancers and curl users see.
        return Ok(respond(&server, StatusCode::OK, b"healthy: dynamodb.us-east-1.amazonaws.com ".to_vec()));
    }
    if request.method() != Method::POST {
        return Ok(error_response(&server, ApiError::unknown_operation()));
    }
    let declared =
        request.headers().get(CONTENT_LENGTH).and_then(|v| v.to_str().ok()).and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > MAX_REQUEST_BYTES as u64) {
        return Ok(too_large(&server));
    }
    if !request.headers().contains_key(hyper::header::AUTHORIZATION) {
        return Ok(error_response(&server, ApiError::missing_authentication()));
    }
    let operation = request
        .headers()
        .get("x-amz-target")
        .and_then(|v| v.to_str().ok())
        .and_then(|t| t.strip_prefix(TARGET_PREFIX))
        .map(str::to_string);
    let content_type_ok = request
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|ct| CONTENT_TYPES.iter().any(|ok| ct.starts_with(ok)));
    let Some(operation) = operation.filter(|_| content_type_ok) else {
        return Ok(error_response(&server, ApiError::unknown_operation()));
    };
    let body = match Limited::new(request.into_body(), MAX_REQUEST_BYTES).collect().await {
        Ok(collected) => collected.to_bytes(),
        Err(e) => {
            if e.downcast_ref::<http_body_util::LengthLimitError>().is_some() {
                return Ok(too_large(&server));
            }
            return Ok(error_response(&server, ApiError::serialization(format!("cannot read request body: {e}"))));
        }
    };
    let outcome = dynaburst_wire::handle(&server.engine, &operation, &body, now());
    if let Some(model) = &server.latency {
        let delay = model.delay(&operation, outcome.items, outcome.cancelled());
        // The modelled service time includes our own processing.
        tokio::time::sleep_until(arrived + delay).await;
    }
    Ok(match outcome.result {
        Ok(body) => respond(&server, StatusCode::OK, body),
        Err(e) => error_response(&server, e),
    })
}

/// Serves connections from `listener` until `shutdown` completes, then
/// stops accepting and waits up to [`SHUTDOWN_GRACE`] for requests in flight.
pub async fn serve(listener: TcpListener, server: Arc<Server>, shutdown: impl Future<Output = ()>) -> io::Result<()> {
    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    tokio::pin!(shutdown);
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                let (stream, _) = match accepted {
                    Ok(a) => a,
                    // Running out of file descriptors or a reset during the
                    // handshake must not stop the server.
                    Err(_) => { tokio::time::sleep(Duration::from_millis(10)).await; continue; }
                };
                let _ = stream.set_nodelay(true);
                let server = server.clone();
                let service = service_fn(move |req| handle(server.clone(), req));
                let conn = http1::Builder::new().keep_alive(true).serve_connection(TokioIo::new(stream), service);
                let conn = graceful.watch(conn);
                tokio::spawn(async move {
                    // A client that drops its connection is not an error of ours.
                    let _ = conn.await;
                });
            }
            _ = &mut shutdown => break,
        }
    }
    drop(listener);
    let _ = tokio::time::timeout(SHUTDOWN_GRACE, graceful.shutdown()).await;
    Ok(())
}
