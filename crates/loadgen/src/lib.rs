//! A closed-loop HTTP load generator for DynamoDB-compatible servers.
//!
//! `connections` keep-alive HTTP/1.1 connections each send requests back to
//! back (the next one leaves when the previous answer has been read), for a
//! warm-up and then a measured window of fixed length. A request is either
//! a `BatchWriteItem` of `batch_size` puts or a single `PutItem`; every item
//! has a unique key (a nonce drawn from the run's seed, the connection
//! number and a counter) so writes never collide, and about `item_bytes`
//! bytes by DynamoDB's size rules (an `id` string key and a `payload`
//! string). The result ([`LoadResult`]) records the seed, so a run's keys
//! can be made again.
//!
//! Request bodies are built once per connection as a template; each request
//! only overwrites the counter digits in place, so the generator spends its
//! time on the network, not on JSON. Latency goes into an HDR histogram.
//! Every answer must be HTTP 200, and a batch answer must have an empty
//! `UnprocessedItems`: anything else is counted as an error.
//!
//! It signs nothing: the `Authorization` header has SigV4's shape with a
//! fixed signature, which servers that do not verify signatures (DynamoDB
//! Local, dynoxide, dynaburst) accept.

use std::fmt;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use dynaburst_ddbjson::{CONTENT_TYPE, MAX_BATCH_WRITE_ITEMS, MAX_TABLE_NAME, MIN_TABLE_NAME, TARGET_PREFIX};
use dynaburst_model::MAX_ITEM_BYTES;
use dynaburst_rng::Rng;
use hdrhistogram::Histogram;
use http_body_util::{BodyExt, Full};
use hyper::client::conn::http1::{self, SendRequest};
use hyper::header::{HeaderValue, AUTHORIZATION, CONTENT_TYPE as CONTENT_TYPE_HEADER, HOST};
use hyper::{Method, Request, StatusCode, Uri};
use hyper_util::rt::TokioIo;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use tokio::net::TcpStream;

/// `X-Amz-Date` of every request (matches the credential scope below).
pub const AMZ_DATE: &str = "20260101T000000Z";
/// A SigV4-shaped `Authorization` header. The access key is alphanumeric
/// because DynamoDB Local refuses any other.
pub const AUTHORIZATION_VALUE: &str = "AWS4-HMAC-SHA256 \
    Credential=AKIDEXAMPLE/20260101/us-east-1/dynamodb/aws4_request, \
    SignedHeaders=host;x-amz-date;x-amz-target, \
    Signature=5d672d79c15b13162d9279b0855cfba6789a8edb4c82c400e06b5924a6f2b5d7";
/// How long the generator waits for a new table to become ACTIVE.
pub const TABLE_ACTIVE_TIMEOUT: Duration = Duration::from_secs(60);
/// Largest latency the histogram records (longer ones saturate), in µs.
const HISTOGRAM_MAX_MICROS: u64 = 120_000_000;
/// Digits of the per-connection key counter.
const SEQ_DIGITS: usize = 12;
/// Length of an item key: 8 hex digits of nonce, 4 of connection, '-', counter.
const KEY_LEN: usize = 8 + 4 + 1 + SEQ_DIGITS;
/// DynamoDB size of an item before its payload: "id" + key + "payload".
const ITEM_OVERHEAD: usize = 2 + KEY_LEN + 7;
/// Longest error message kept as a sample.
const ERROR_SAMPLE_CHARS: usize = 300;

/// What each request does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// `BatchWriteItem` of `batch_size` put requests.
    Batch,
    /// `PutItem` of one item.
    Put,
}

impl Mode {
    /// The mode's name on the command line and in results.
    pub fn name(self) -> &'static str {
        match self {
            Mode::Batch => "batch",
            Mode::Put => "put",
        }
    }

    fn operation(self) -> &'static str {
        match self {
            Mode::Batch => "BatchWriteItem",
            Mode::Put => "PutItem",
        }
    }
}

/// One load run.
#[derive(Clone, Debug)]
pub struct Config {
    /// `http://host:port` of the server.
    pub endpoint: String,
    pub mode: Mode,
    /// Concurrent keep-alive connections, each one request in flight.
    pub connections: usize,
    /// Items per `BatchWriteItem` (ignored in `put` mode).
    pub batch_size: usize,
    /// Approximate item size by DynamoDB's rules.
    pub item_bytes: usize,
    /// Length of the measured window.
    pub duration: Duration,
    /// Load before the measured window, not counted.
    pub warmup: Duration,
    /// Table to create (if missing) and write to.
    pub table: String,
    /// A request unanswered after this long is an error (and its connection
    /// is replaced).
    pub request_timeout: Duration,
    /// Threads of the generator's runtime; 1 runs everything on one thread,
    /// leaving the other cores to the server.
    pub threads: usize,
    /// Seed of the run's key nonce: runs with different seeds never write
    /// the same keys; the same seed writes the same keys again.
    pub seed: u64,
    /// Global secondary indexes on the table (at most
    /// [`MAX_LOADGEN_GSIS`]): GSI `by_g<i>` is keyed on attribute `g<i>`, which
    /// every item carries with its own key as value (a key of high
    /// cardinality), projected KEYS_ONLY.
    pub gsis: usize,
    /// Requests a second over all connections (an open-loop schedule:
    /// request k is due at k / rate after the start, writes keys of its
    /// own number, and its latency counts from when it was due, so a server
    /// that falls behind shows it); None sends back to back.
    pub rate: Option<f64>,
    /// With a rate: request k writes the keys of request k mod this many,
    /// so a long run overwrites a table of bounded size.
    pub key_space: Option<u64>,
}

/// GSIs a generated table may have (DynamoDB's default quota).
pub const MAX_LOADGEN_GSIS: usize = 20;
/// The highest `--rate`, requests a second.
pub const MAX_RATE: f64 = 10_000_000.0;

/// The open-loop schedule of a run with a rate: hands out each request's
/// due time.
struct Schedule {
    start: Instant,
    interval: Duration,
    next: std::sync::atomic::AtomicU64,
}

impl Schedule {
    /// The next request's number and when it is due.
    fn take(&self) -> (u64, Instant) {
        let k = self.next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        (k, self.start + self.interval.mul_f64(k as f64))
    }
}

impl Config {
    /// The defaults of the benchmark: 16 connections, batches of 25 items
    /// of about 230 bytes, 10 s measured after 2 s of warm-up.
    pub fn new(endpoint: impl Into<String>, mode: Mode, seed: u64) -> Config {
        Config {
            endpoint: endpoint.into(),
            mode,
            connections: 16,
            batch_size: MAX_BATCH_WRITE_ITEMS,
            item_bytes: 230,
            duration: Duration::from_secs(10),
            warmup: Duration::from_secs(2),
            table: "loadgen".to_string(),
            request_timeout: Duration::from_secs(30),
            threads: 1,
            seed,
            gsis: 0,
            rate: None,
            key_space: None,
        }
    }

    /// Items each request writes.
    pub fn items_per_request(&self) -> usize {
        match self.mode {
            Mode::Batch => self.batch_size,
            Mode::Put => 1,
        }
    }

    /// Checks the numbers before anything is sent.
    pub fn validate(&self) -> Result<(), LoadError> {
        let bad = |m: String| Err(LoadError::Config(m));
        if self.connections == 0 || self.connections > 9999 {
            return bad(format!("--connections must be 1..=9999, not {}", self.connections));
        }
        if self.mode == Mode::Batch && !(1..=MAX_BATCH_WRITE_ITEMS).contains(&self.batch_size) {
            return bad(format!(
                "--batch-size must be 1..={MAX_BATCH_WRITE_ITEMS} (DynamoDB's limit), not {}",
                self.batch_size
            ));
        }
        if self.item_bytes <= ITEM_OVERHEAD || self.item_bytes > MAX_ITEM_BYTES {
            return bad(format!(
                "--item-bytes must be {}..={MAX_ITEM_BYTES} (the key alone takes {ITEM_OVERHEAD}), not {}",
                ITEM_OVERHEAD + 1,
                self.item_bytes
            ));
        }
        if self.duration.is_zero() {
            return bad("--duration must be more than 0 seconds".to_string());
        }
        let name_ok = (MIN_TABLE_NAME..=MAX_TABLE_NAME).contains(&self.table.len())
            && self.table.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-' || b == b'.');
        if !name_ok {
            return bad(format!("--table '{}' is not a DynamoDB table name (3-255 of [a-zA-Z0-9_.-])", self.table));
        }
        if let Some(rate) = self.rate {
            if !(rate.is_finite() && rate > 0.0 && rate <= MAX_RATE) {
                return bad(format!("--rate must be more than 0 and at most {MAX_RATE} requests a second, not {rate}"));
            }
        }
        if self.key_space == Some(0) {
            return bad("--key-space must be at least 1 request".to_string());
        }
        if self.key_space.is_some() && self.rate.is_none() {
            return bad("--key-space needs --rate (it numbers the scheduled requests)".to_string());
        }
        if self.threads == 0 {
            return bad("--threads must be at least 1".to_string());
        }
        Endpoint::parse(&self.endpoint)?;
        Ok(())
    }
}

/// Why a run could not be made. A run that was made but saw failed
/// requests is a [`LoadResult`] with `errors > 0`, not a `LoadError`.
#[derive(Debug)]
pub enum LoadError {
    /// The configuration is unusable.
    Config(String),
    /// The server could not be reached.
    Connect(String),
    /// Creating or waiting for the table failed.
    Setup(String),
    /// The async runtime could not start.
    Runtime(std::io::Error),
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LoadError::Config(m) => write!(f, "invalid configuration: {m}"),
            LoadError::Connect(m) => write!(f, "cannot reach the server: {m}"),
            LoadError::Setup(m) => write!(f, "cannot set up the table: {m}"),
            LoadError::Runtime(e) => write!(f, "cannot start the async runtime: {e}"),
        }
    }
}

impl std::error::Error for LoadError {}

/// The outcome of a run: what `dynaburst loadgen --json` prints, one JSON
/// object (read by bench/server/run.sh).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LoadResult {
    pub endpoint: String,
    pub mode: Mode,
    pub connections: usize,
    pub items_per_request: usize,
    /// Size of each item by DynamoDB's rules.
    pub item_bytes: usize,
    /// Request body size, bytes.
    pub request_bytes: usize,
    pub table: String,
    pub warmup_secs: f64,
    /// Length of the measured window.
    pub duration_secs: f64,
    /// Successful requests completed in the measured window.
    pub requests: u64,
    /// Items written by those requests.
    pub items: u64,
    /// Rounded to 2 decimals.
    pub items_per_sec: f64,
    /// Rounded to 2 decimals.
    pub requests_per_sec: f64,
    /// Latency of the measured requests.
    pub latency_ms: Latency,
    /// Failed requests over the whole run, warm-up included: non-200
    /// answers, non-empty UnprocessedItems, timeouts, connection errors.
    pub errors: u64,
    /// Items left in UnprocessedItems over the whole run.
    pub unprocessed_items: u64,
    /// The first error seen, as a sample.
    pub first_error: Option<String>,
    /// CPU time the generator itself used during the measured window, in
    /// seconds (Linux only), to show it was not the bottleneck.
    pub client_cpu_secs: Option<f64>,
    /// CPU time the generator's process used from its start to the end of
    /// the run (setup and warm-up included), in seconds (Linux only).
    pub client_cpu_total_secs: Option<f64>,
    /// Every request succeeded and some were measured.
    pub ok: bool,
    /// The seed of the run's keys.
    pub seed: u64,
}

/// Latency percentiles in milliseconds, rounded to 3 decimals.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Latency {
    pub mean: f64,
    pub p50: f64,
    pub p90: f64,
    pub p99: f64,
    pub max: f64,
}

impl LoadResult {
    /// A readable one-line summary.
    pub fn summary(&self) -> String {
        let l = &self.latency_ms;
        let mut line = format!(
            "{} {}x{}B x{} conn: {:.0} items/s, {:.0} req/s, latency ms p50 {:.2} p90 {:.2} p99 {:.2} max {:.2}, errors {}",
            self.mode.name(),
            self.items_per_request,
            self.item_bytes,
            self.connections,
            self.items_per_sec,
            self.requests_per_sec,
            l.p50,
            l.p90,
            l.p99,
            l.max,
            self.errors,
        );
        if let Some(cpu) = self.client_cpu_secs {
            line.push_str(&format!(", client cpu {:.0}%", 100.0 * cpu / self.duration_secs));
        }
        line.push_str(&format!(", seed {}", self.seed));
        if let Some(e) = &self.first_error {
            line.push_str(&format!(" (first error: {e})"));
        }
        line
    }
}

fn round2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

/// Runs `config` on a runtime of its own (one thread unless
/// `config.threads` says otherwise).
pub fn run_blocking(config: &Config) -> Result<LoadResult, LoadError> {
    config.validate()?;
    let runtime = if config.threads <= 1 {
        tokio::runtime::Builder::new_current_thread().enable_all().build()
    } else {
        tokio::runtime::Builder::new_multi_thread().worker_threads(config.threads).enable_all().build()
    }
    .map_err(LoadError::Runtime)?;
    runtime.block_on(run(config))
}

/// Creates the table if missing, waits for it to be ACTIVE, then runs the
/// load. Must run inside a tokio runtime.
pub async fn run(config: &Config) -> Result<LoadResult, LoadError> {
    config.validate()?;
    let endpoint = Arc::new(Endpoint::resolve(&config.endpoint).await?);
    create_table(&endpoint, &config.table, config.gsis).await?;

    let nonce = key_nonce(config.seed);
    let start = Instant::now();
    let warm_end = start + config.warmup;
    let end = warm_end + config.duration;
    let mut request_bytes = 0;
    let schedule = config.rate.map(|rate| {
        Arc::new(Schedule {
            start,
            interval: Duration::from_secs_f64(1.0 / rate),
            next: std::sync::atomic::AtomicU64::new(0),
        })
    });
    let mut tasks = Vec::with_capacity(config.connections);
    for conn in 0..config.connections {
        // On a schedule, request k writes the same keys whichever
        // connection sends it: a run repeated with its seed rewrites its
        // keys (a soak's table stays the same size).
        let template = Template::new(config, nonce, if schedule.is_some() { 0 } else { conn as u32 });
        request_bytes = template.body.len();
        let endpoint = endpoint.clone();
        let mode = config.mode;
        let timeout = config.request_timeout;
        let window = Window { warm_end, end, schedule: schedule.clone(), key_space: config.key_space };
        tasks.push(tokio::spawn(worker(endpoint, template, mode, timeout, window)));
    }
    let cpu_at_window_start = tokio::spawn(async move {
        tokio::time::sleep_until(warm_end.into()).await;
        process_cpu_secs()
    });

    let mut totals = WorkerStats::new();
    for task in tasks {
        match task.await {
            Ok(stats) => totals.merge(stats),
            Err(e) => totals.error(format!("load task failed: {e}")),
        }
    }
    let cpu_end = process_cpu_secs();
    let cpu_start = cpu_at_window_start.await.ok().flatten();
    let client_cpu_secs = match (cpu_start, cpu_end) {
        (Some(a), Some(b)) => Some((b - a).max(0.0)),
        _ => None,
    };

    let secs = config.duration.as_secs_f64();
    let h = &totals.histogram;
    let ms = |micros: u64| micros as f64 / 1000.0;
    let quantile = |q: f64| if h.is_empty() { 0.0 } else { round3(ms(h.value_at_quantile(q))) };
    Ok(LoadResult {
        endpoint: config.endpoint.clone(),
        mode: config.mode,
        connections: config.connections,
        items_per_request: config.items_per_request(),
        item_bytes: ITEM_OVERHEAD + payload_len(config.item_bytes),
        request_bytes,
        table: config.table.clone(),
        warmup_secs: config.warmup.as_secs_f64(),
        duration_secs: secs,
        requests: totals.requests,
        items: totals.items,
        items_per_sec: round2(totals.items as f64 / secs),
        requests_per_sec: round2(totals.requests as f64 / secs),
        latency_ms: Latency {
            mean: if h.is_empty() { 0.0 } else { round3(h.mean() / 1000.0) },
            p50: quantile(0.50),
            p90: quantile(0.90),
            p99: quantile(0.99),
            max: if h.is_empty() { 0.0 } else { round3(ms(h.max())) },
        },
        errors: totals.errors,
        unprocessed_items: totals.unprocessed_items,
        first_error: totals.first_error,
        client_cpu_secs: client_cpu_secs.map(round3),
        client_cpu_total_secs: cpu_end.map(round3),
        ok: totals.errors == 0 && totals.requests > 0,
        seed: config.seed,
    })
}

/// Where requests go.
struct Endpoint {
    addr: SocketAddr,
    host: HeaderValue,
}

impl Endpoint {
    /// Splits `http://host[:port][/]` into host and port.
    fn parse(endpoint: &str) -> Result<(String, u16, String), LoadError> {
        let bad = |why: &str| LoadError::Config(format!("--endpoint-url '{endpoint}' {why}: pass http://host:port"));
        let uri: Uri = endpoint.parse().map_err(|_| bad("is not a URL"))?;
        if uri.scheme_str() != Some("http") {
            return Err(bad("is not an http:// URL (TLS is not supported)"));
        }
        if !matches!(uri.path(), "" | "/") || uri.query().is_some() {
            return Err(bad("has a path"));
        }
        let authority = uri.authority().ok_or_else(|| bad("has no host"))?;
        let host = authority.host().trim_start_matches('[').trim_end_matches(']').to_string();
        Ok((host, authority.port_u16().unwrap_or(80), authority.as_str().to_string()))
    }

    async fn resolve(endpoint: &str) -> Result<Endpoint, LoadError> {
        let (host, port, authority) = Endpoint::parse(endpoint)?;
        let addr = tokio::net::lookup_host((host.as_str(), port))
            .await
            .map_err(|e| LoadError::Connect(format!("cannot resolve {host}: {e}")))?
            .next()
            .ok_or_else(|| LoadError::Connect(format!("{host} has no address")))?;
        let host =
            HeaderValue::from_str(&authority).map_err(|_| LoadError::Config(format!("bad host '{authority}'")))?;
        Ok(Endpoint { addr, host })
    }

    async fn connect(&self) -> Result<SendRequest<Full<Bytes>>, String> {
        let stream = TcpStream::connect(self.addr).await.map_err(|e| format!("connect to {}: {e}", self.addr))?;
        let _ = stream.set_nodelay(true);
        let (sender, connection) =
            http1::handshake(TokioIo::new(stream)).await.map_err(|e| format!("HTTP handshake: {e}"))?;
        tokio::spawn(async move {
            let _ = connection.await;
        });
        Ok(sender)
    }

    fn request(&self, target: &HeaderValue, body: Bytes) -> Request<Full<Bytes>> {
        let mut request = Request::new(Full::new(body));
        *request.method_mut() = Method::POST;
        *request.uri_mut() = Uri::from_static("/");
        let headers = request.headers_mut();
        headers.insert(HOST, self.host.clone());
        headers.insert(CONTENT_TYPE_HEADER, HeaderValue::from_static(CONTENT_TYPE));
        headers.insert("x-amz-date", HeaderValue::from_static(AMZ_DATE));
        headers.insert(AUTHORIZATION, HeaderValue::from_static(AUTHORIZATION_VALUE));
        headers.insert("x-amz-target", target.clone());
        request
    }
}

/// The `X-Amz-Target` header of an operation.
fn target(operation: &str) -> Result<HeaderValue, LoadError> {
    HeaderValue::from_str(&format!("{TARGET_PREFIX}{operation}"))
        .map_err(|_| LoadError::Config(format!("'{operation}' is not an operation name")))
}

/// Sends one request on `sender` and reads the whole answer.
async fn exchange(
    sender: &mut SendRequest<Full<Bytes>>,
    request: Request<Full<Bytes>>,
) -> Result<(StatusCode, Bytes), String> {
    sender.ready().await.map_err(|e| format!("connection lost: {e}"))?;
    let response = sender.send_request(request).await.map_err(|e| format!("request failed: {e}"))?;
    let status = response.status();
    let body = response.into_body().collect().await.map_err(|e| format!("reading the answer: {e}"))?.to_bytes();
    Ok((status, body))
}

/// One control request on a fresh connection.
async fn control(endpoint: &Endpoint, operation: &str, body: &Value) -> Result<(StatusCode, Value), LoadError> {
    let mut sender = endpoint.connect().await.map_err(LoadError::Connect)?;
    let request = endpoint.request(&target(operation)?, Bytes::from(body.to_string()));
    let (status, bytes) = tokio::time::timeout(Duration::from_secs(30), exchange(&mut sender, request))
        .await
        .map_err(|_| LoadError::Setup(format!("{operation} got no answer in 30 s")))?
        .map_err(LoadError::Connect)?;
    let value = serde_json::from_slice(&bytes).unwrap_or_else(|_| Value::String(snippet(&bytes)));
    Ok((status, value))
}

/// Creates `table` (PAY_PER_REQUEST, hash key `id` S) unless it exists,
/// then waits until DescribeTable says ACTIVE.
async fn create_table(endpoint: &Endpoint, table: &str, gsis: usize) -> Result<(), LoadError> {
    let mut create = json!({
        "TableName": table,
        "AttributeDefinitions": [{"AttributeName": "id", "AttributeType": "S"}],
        "KeySchema": [{"AttributeName": "id", "KeyType": "HASH"}],
        "BillingMode": "PAY_PER_REQUEST",
    });
    if gsis > 0 {
        let names: Vec<String> = (0..gsis.min(MAX_LOADGEN_GSIS)).map(|i| format!("g{i}")).collect();
        let defs = std::iter::once(json!({"AttributeName": "id", "AttributeType": "S"}))
            .chain(names.iter().map(|n| json!({"AttributeName": n, "AttributeType": "S"})))
            .collect::<Vec<_>>();
        let indexes = names
            .iter()
            .map(|n| {
                json!({"IndexName": format!("by_{n}"), "KeySchema": [{"AttributeName": n, "KeyType": "HASH"}],
                    "Projection": {"ProjectionType": "KEYS_ONLY"}})
            })
            .collect::<Vec<_>>();
        create["AttributeDefinitions"] = json!(defs);
        create["GlobalSecondaryIndexes"] = json!(indexes);
    }
    let (status, answer) = control(endpoint, "CreateTable", &create).await?;
    let error_type = answer.get("__type").and_then(Value::as_str).unwrap_or("");
    if status != StatusCode::OK && !error_type.ends_with("ResourceInUseException") {
        return Err(LoadError::Setup(format!("CreateTable answered {status}: {answer}")));
    }
    let deadline = Instant::now() + TABLE_ACTIVE_TIMEOUT;
    loop {
        let (status, answer) = control(endpoint, "DescribeTable", &json!({ "TableName": table })).await?;
        let table_status = answer.pointer("/Table/TableStatus").and_then(Value::as_str);
        if status == StatusCode::OK && table_status == Some("ACTIVE") {
            return Ok(());
        }
        if Instant::now() >= deadline {
            return Err(LoadError::Setup(format!(
                "table '{table}' not ACTIVE after {}s (DescribeTable answered {status}: {answer})",
                TABLE_ACTIVE_TIMEOUT.as_secs()
            )));
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// A connection's request body, rewritten in place for each request.
struct Template {
    body: Vec<u8>,
    /// Where each counter's digits start (the key, and each GSI key).
    counters: Vec<usize>,
    next: u64,
    /// Items each body writes (a counter per item and per GSI key).
    items: usize,
}

fn payload_len(item_bytes: usize) -> usize {
    item_bytes.saturating_sub(ITEM_OVERHEAD).max(1)
}

impl Template {
    fn new(config: &Config, nonce: u32, conn: u32) -> Template {
        let table = serde_json::to_string(&config.table).expect("a string serializes");
        let payload: String = (0..payload_len(config.item_bytes)).map(|i| (b'a' + (i % 26) as u8) as char).collect();
        let key_prefix = format!("{nonce:08x}{:04}-", conn % 10_000);
        let mut body = Vec::new();
        let mut counters = Vec::new();
        let gsis = config.gsis.min(MAX_LOADGEN_GSIS);
        let mut item = |body: &mut Vec<u8>| {
            body.extend_from_slice(br#"{"id":{"S":""#);
            body.extend_from_slice(key_prefix.as_bytes());
            counters.push(body.len());
            body.extend_from_slice(&[b'0'; SEQ_DIGITS]);
            // Each GSI's key repeats the item's key: one entry per item, spread.
            for g in 0..gsis {
                body.extend_from_slice(format!(r#""}},"g{g}":{{"S":""#).as_bytes());
                body.extend_from_slice(key_prefix.as_bytes());
                counters.push(body.len());
                body.extend_from_slice(&[b'0'; SEQ_DIGITS]);
            }
            body.extend_from_slice(br#""},"payload":{"S":""#);
            body.extend_from_slice(payload.as_bytes());
            body.extend_from_slice(br#""}}"#);
        };
        match config.mode {
            Mode::Put => {
                body.extend_from_slice(br#"{"TableName":"#);
                body.extend_from_slice(table.as_bytes());
                body.extend_from_slice(br#","Item":"#);
                item(&mut body);
                body.push(b'}');
            }
            Mode::Batch => {
                body.extend_from_slice(br#"{"RequestItems":{"#);
                body.extend_from_slice(table.as_bytes());
                body.extend_from_slice(b":[");
                for i in 0..config.batch_size {
                    if i > 0 {
                        body.push(b',');
                    }
                    body.extend_from_slice(br#"{"PutRequest":{"Item":"#);
                    item(&mut body);
                    body.extend_from_slice(b"}}");
                }
                body.extend_from_slice(b"]}}");
            }
        }
        Template { body, counters, next: 0, items: config.items_per_request() }
    }

    /// The next body will be that of request `k` (its keys).
    fn seek(&mut self, k: u64) {
        self.next = k.saturating_mul(self.counters.len() as u64);
    }

    /// The next request body, with fresh keys.
    fn next_body(&mut self) -> Bytes {
        for &at in &self.counters {
            write_digits(&mut self.body[at..at + SEQ_DIGITS], self.next);
            self.next += 1;
        }
        Bytes::copy_from_slice(&self.body)
    }
}

/// Writes `n` as decimal digits filling `dst`, zero-padded.
fn write_digits(dst: &mut [u8], mut n: u64) {
    for b in dst.iter_mut().rev() {
        *b = b'0' + (n % 10) as u8;
        n /= 10;
    }
}

/// The key prefix of a run, from its seed, so keys of one run never
/// overwrite those of a run with another seed on the same table.
fn key_nonce(seed: u64) -> u32 {
    (Rng::new(seed).next_u64() >> 32) as u32
}

struct WorkerStats {
    histogram: Histogram<u64>,
    requests: u64,
    items: u64,
    errors: u64,
    unprocessed_items: u64,
    first_error: Option<String>,
}

impl WorkerStats {
    fn new() -> WorkerStats {
        WorkerStats {
            histogram: Histogram::new_with_bounds(1, HISTOGRAM_MAX_MICROS, 3).expect("valid histogram bounds"),
            requests: 0,
            items: 0,
            errors: 0,
            unprocessed_items: 0,
            first_error: None,
        }
    }

    fn error(&mut self, message: String) {
        self.errors += 1;
        if self.first_error.is_none() {
            self.first_error = Some(message);
        }
    }

    fn merge(&mut self, other: WorkerStats) {
        // Same bounds on both sides, so adding cannot fail.
        let _ = self.histogram.add(&other.histogram);
        self.requests += other.requests;
        self.items += other.items;
        self.errors += other.errors;
        self.unprocessed_items += other.unprocessed_items;
        if self.first_error.is_none() {
            self.first_error = other.first_error;
        }
    }
}

/// Checks an answer: HTTP 200, and for a batch an empty UnprocessedItems.
/// On failure, returns the message and the number of unprocessed items.
fn check_answer(mode: Mode, status: StatusCode, body: &[u8]) -> Result<(), (String, u64)> {
    if status != StatusCode::OK {
        return Err((format!("HTTP {}: {}", status.as_u16(), snippet(body)), 0));
    }
    if mode == Mode::Batch {
        let value: Value = serde_json::from_slice(body)
            .map_err(|e| (format!("BatchWriteItem answer is not JSON ({e}): {}", snippet(body)), 0))?;
        match value.get("UnprocessedItems") {
            None | Some(Value::Null) => {}
            Some(Value::Object(tables)) => {
                let left: u64 = tables.values().map(|v| v.as_array().map_or(1, |a| a.len() as u64)).sum();
                if left > 0 {
                    return Err((format!("{left} UnprocessedItems"), left));
                }
            }
            Some(other) => return Err((format!("UnprocessedItems is not an object: {other}"), 0)),
        }
    }
    Ok(())
}

fn snippet(body: &[u8]) -> String {
    String::from_utf8_lossy(body).chars().take(ERROR_SAMPLE_CHARS).collect()
}

/// When a worker sends, and which answers it counts.
struct Window {
    warm_end: Instant,
    end: Instant,
    /// With a rate: the shared schedule.
    schedule: Option<Arc<Schedule>>,
    /// Requests whose keys are reused, in turn.
    key_space: Option<u64>,
}

/// One connection sending requests until `window.end`: back to back, or
/// each when the schedule says.
async fn worker(
    endpoint: Arc<Endpoint>,
    mut template: Template,
    mode: Mode,
    timeout: Duration,
    window: Window,
) -> WorkerStats {
    let Window { warm_end, end, schedule, key_space } = window;
    let mut stats = WorkerStats::new();
    let target = match target(mode.operation()) {
        Ok(t) => t,
        Err(e) => {
            stats.error(e.to_string());
            return stats;
        }
    };
    let items_per_request = template.items as u64;
    let mut sender: Option<SendRequest<Full<Bytes>>> = None;
    loop {
        if Instant::now() >= end {
            break;
        }
        let connection = match sender.as_mut() {
            Some(s) => s,
            None => match endpoint.connect().await {
                Ok(s) => sender.insert(s),
                Err(e) => {
                    stats.error(e);
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
        };
        let due = match schedule.as_ref() {
            Some(schedule) => {
                let (k, due) = schedule.take();
                if due >= end {
                    break;
                }
                template.seek(key_space.map_or(k, |n| k % n));
                tokio::time::sleep_until(due.into()).await;
                Some(due)
            }
            None => None,
        };
        let request = endpoint.request(&target, template.next_body());
        // With a schedule, latency counts from when the request was due.
        let sent = due.unwrap_or_else(Instant::now);
        let outcome = tokio::time::timeout(timeout, exchange(connection, request)).await;
        let done = Instant::now();
        let measured = done >= warm_end && done <= end;
        match outcome {
            Err(_) => {
                stats.error(format!("no answer in {} s", timeout.as_secs_f64()));
                sender = None;
            }
            Ok(Err(e)) => {
                stats.error(e);
                sender = None;
            }
            Ok(Ok((status, body))) => match check_answer(mode, status, &body) {
                Ok(()) => {
                    if measured {
                        let micros = done.duration_since(sent).as_micros().min(u64::MAX as u128) as u64;
                        stats.histogram.saturating_record(micros.max(1));
                        stats.requests += 1;
                        stats.items += items_per_request;
                    }
                }
                Err((message, unprocessed)) => {
                    stats.unprocessed_items += unprocessed;
                    stats.error(message);
                }
            },
        }
    }
    stats
}

/// CPU time (user + system) this process has used, from /proc (Linux).
fn process_cpu_secs() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the parenthesised command name; utime and stime are the
    // 14th and 15th fields of the whole line, in clock ticks (100 per
    // second on Linux).
    let rest = &stat[stat.rfind(')')? + 2..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let utime: u64 = fields.get(11)?.parse().ok()?;
    let stime: u64 = fields.get(12)?.parse().ok()?;
    Some((utime + stime) as f64 / 100.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(mode: Mode) -> Config {
        Config::new("http://127.0.0.1:8000", mode, 9)
    }

    #[test]
    fn batch_bodies_are_json_with_unique_keys_of_the_asked_size() {
        let cfg = config(Mode::Batch);
        let mut t = Template::new(&cfg, 0xdeadbeef, 3);
        let mut keys = std::collections::HashSet::new();
        for _ in 0..3 {
            let v: Value = serde_json::from_slice(&t.next_body()).unwrap();
            let items = v["RequestItems"]["loadgen"].as_array().unwrap();
            assert_eq!(items.len(), 25);
            for it in items {
                let item = &it["PutRequest"]["Item"];
                let id = item["id"]["S"].as_str().unwrap();
                let payload = item["payload"]["S"].as_str().unwrap();
                assert_eq!(2 + id.len() + 7 + payload.len(), 230);
                assert!(keys.insert(id.to_string()), "duplicate key {id}");
            }
        }
        assert_eq!(keys.len(), 75);
    }

    #[test]
    fn put_bodies_are_json() {
        let mut t = Template::new(&config(Mode::Put), 1, 0);
        let a: Value = serde_json::from_slice(&t.next_body()).unwrap();
        let b: Value = serde_json::from_slice(&t.next_body()).unwrap();
        assert_eq!(a["TableName"], "loadgen");
        assert_ne!(a["Item"]["id"], b["Item"]["id"]);
        assert_eq!(b["Item"]["id"]["S"], "000000010000-000000000001");
    }

    #[test]
    fn items_carry_one_distinct_key_per_gsi() {
        let mut cfg = config(Mode::Put);
        cfg.gsis = 2;
        let mut t = Template::new(&cfg, 1, 0);
        let a: Value = serde_json::from_slice(&t.next_body()).unwrap();
        let b: Value = serde_json::from_slice(&t.next_body()).unwrap();
        let keys = |v: &Value| ["id", "g0", "g1"].map(|n| v["Item"][n]["S"].as_str().unwrap().to_string()).to_vec();
        let (ka, kb) = (keys(&a), keys(&b));
        assert_eq!(ka, ["000000010000-000000000000", "000000010000-000000000001", "000000010000-000000000002"]);
        assert_eq!(kb[0], "000000010000-000000000003", "fresh values for every counter of every request");
        assert!(ka.iter().all(|k| !kb.contains(k)));
    }

    #[test]
    fn answers_are_checked() {
        assert!(check_answer(Mode::Batch, StatusCode::OK, br#"{"UnprocessedItems":{}}"#).is_ok());
        let left = check_answer(Mode::Batch, StatusCode::OK, br#"{"UnprocessedItems":{"t":[{},{}]}}"#);
        assert_eq!(left.unwrap_err().1, 2);
        assert!(check_answer(Mode::Put, StatusCode::BAD_REQUEST, b"{}").is_err());
        assert!(check_answer(Mode::Put, StatusCode::OK, b"{}").is_ok());
    }

    #[test]
    fn endpoints_and_numbers_are_validated() {
        assert!(config(Mode::Batch).validate().is_ok());
        assert_eq!(Endpoint::parse("http://localhost:9000/").unwrap().1, 9000);
        assert!(Endpoint::parse("https://x:1").is_err());
        let mut c = config(Mode::Batch);
        c.batch_size = 26;
        assert!(c.validate().is_err());
        let mut c = config(Mode::Put);
        c.item_bytes = 10;
        assert!(c.validate().is_err());
    }

    #[test]
    fn keys_come_from_the_seed() {
        assert_eq!(key_nonce(42), key_nonce(42));
        assert_ne!(key_nonce(42), key_nonce(43));
        let id = |seed| {
            let mut t = Template::new(&Config::new("http://127.0.0.1:8000", Mode::Put, seed), key_nonce(seed), 0);
            let v: Value = serde_json::from_slice(&t.next_body()).unwrap();
            v["Item"]["id"]["S"].as_str().unwrap().to_string()
        };
        assert_eq!(id(5), id(5));
        assert_eq!(id(5), format!("{:08x}0000-000000000000", key_nonce(5)));
        assert_ne!(id(5), id(6));
    }

    #[test]
    fn results_serialize_with_the_field_names_run_sh_reads() {
        let result = LoadResult {
            endpoint: "http://127.0.0.1:8000".to_string(),
            mode: Mode::Batch,
            connections: 16,
            items_per_request: 25,
            item_bytes: 230,
            request_bytes: 7_000,
            table: "bench_batch".to_string(),
            warmup_secs: 2.0,
            duration_secs: 10.0,
            requests: 1_000,
            items: 25_000,
            items_per_sec: 2_500.0,
            requests_per_sec: 100.0,
            latency_ms: Latency { mean: 1.5, p50: 1.25, p90: 2.0, p99: 3.5, max: 9.0 },
            errors: 0,
            unprocessed_items: 0,
            first_error: None,
            client_cpu_secs: Some(0.5),
            client_cpu_total_secs: None,
            ok: true,
            seed: 77,
        };
        let v = serde_json::to_value(&result).unwrap();
        assert_eq!(
            v,
            json!({"endpoint": "http://127.0.0.1:8000", "mode": "batch", "connections": 16, "items_per_request": 25,
                "item_bytes": 230, "request_bytes": 7000, "table": "bench_batch", "warmup_secs": 2.0,
                "duration_secs": 10.0, "requests": 1000, "items": 25000, "items_per_sec": 2500.0,
                "requests_per_sec": 100.0, "latency_ms": {"mean": 1.5, "p50": 1.25, "p90": 2.0, "p99": 3.5, "max": 9.0},
                "errors": 0, "unprocessed_items": 0, "first_error": null, "client_cpu_secs": 0.5,
                "client_cpu_total_secs": null, "ok": true, "seed": 77})
        );
        let back: LoadResult = serde_json::from_value(v).unwrap();
        assert_eq!(back, result);
        assert!(result.summary().ends_with("client cpu 5%, seed 77"), "{}", result.summary());
    }
}
