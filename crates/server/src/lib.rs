//! The HTTP/1.1 server that speaks DynamoDB's protocol.
//!
//! Architecture invariant: this is the only server-side crate that knows
//! HTTP. It reads its [`Clock`] once per request and hands `now` to the wire
//! layer; it never interprets DynamoDB JSON itself (the wire layer's
//! [`Outcome`](dynaburst_wire::Outcome) says what it needs). Request ids and
//! modelled service times are drawn from seeded generators.

pub mod clock;
pub mod latency;
mod metrics;
pub mod sigv4;
pub mod web;

use std::convert::Infallible;
use std::future::Future;
use std::io;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use dynaburst_engine::store::{RegionStorage, Storage};
use dynaburst_engine::{Engine, EngineConfig, EngineError};
use dynaburst_model::Millis;
use dynaburst_rng::Rng;
use dynaburst_wire::{
    ApiError, CONTENT_TYPE as JSON_CONTENT_TYPE, CONTENT_TYPES, STREAMS_TARGET_PREFIX, TARGET_PREFIX,
};
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Body;
use hyper::header::{HeaderValue, CONTENT_LENGTH, CONTENT_TYPE};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;

pub use clock::{Clock, Instant, ManualClock, SystemClock};
pub use metrics::{metrics_json, prometheus_text, MetricsDoc};

/// Largest request body DynamoDB accepts: 16 MB. Larger ones get 413.
pub const MAX_REQUEST_BYTES: usize = 16 * 1024 * 1024;
/// How long shutdown waits for requests in flight before giving up.
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);
/// Length of a request id, as AWS makes them.
pub const REQUEST_ID_LEN: usize = 52;
/// DynamoDB's health answer to a GET, which load balancers and curl users see.
pub const HEALTH_ANSWER: &[u8] = b"healthy: dynamodb.us-east-1.amazonaws.com ";

/// Default of [`Limits::max_connections`].
pub const DEFAULT_MAX_CONNECTIONS: usize = 4096;
/// Default of [`Limits::header_timeout`].
pub const DEFAULT_HEADER_TIMEOUT: Duration = Duration::from_secs(30);
/// Default of [`Limits::body_timeout`].
pub const DEFAULT_BODY_TIMEOUT: Duration = Duration::from_secs(60);
/// How long a connection over the limit gets to take its 503 answer.
const REFUSAL_GRACE: Duration = Duration::from_secs(1);
/// Bytes of a refused connection's request read (and dropped) before it
/// is closed, so that the close does not reset the answer away.
const REFUSAL_DRAIN_BYTES: usize = 64 * 1024;
/// Refusals answered at once; a connection past these is closed unanswered.
const MAX_REFUSALS_IN_FLIGHT: usize = 256;

/// What one client may hold of the server.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Open connections at once; one more is answered 503
    /// ServiceUnavailableException and closed.
    pub max_connections: usize,
    /// Time from a connection's (or the previous answer's) start to a
    /// request's complete headers; past it the connection is closed.
    pub header_timeout: Duration,
    /// Time to receive a request's whole body once its headers are in;
    /// past it the answer is 408 RequestTimeoutException.
    pub body_timeout: Duration,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_connections: DEFAULT_MAX_CONNECTIONS,
            header_timeout: DEFAULT_HEADER_TIMEOUT,
            body_timeout: DEFAULT_BODY_TIMEOUT,
        }
    }
}

/// Shared state of a running server.
pub struct Server {
    /// The engine of the region the server was started for; requests signed
    /// for another region go to that region's engine (S166).
    engine: Arc<Engine>,
    others: std::sync::RwLock<std::collections::BTreeMap<String, Arc<Engine>>>,
    request_ids: RequestIds,
    latency: Option<latency::LatencyModel>,
    clock: Arc<dyn Clock>,
    /// Time between two sweeps of the TTL expirer; zero for none.
    ttl_interval: Duration,
    /// Set over durable storage: every answer waits until what the
    /// request wrote (and everything written before it) is on disk.
    durability: Option<dynaburst_diskstore::Durability>,
    /// Set over durable storage: the storage every region's tables live
    /// in (the home region's unmarked, see [`RegionStorage`]).
    storage: Option<Arc<dyn Storage>>,
    /// Set by `--credentials`: every request's SigV4 signature is verified
    /// against these keys. None accepts any signature.
    credentials: Option<sigv4::Credentials>,
    limits: Limits,
}

impl Server {
    /// A server over `engine` on the wall clock; `seed` decides its request ids.
    pub fn new(engine: Arc<Engine>, seed: u64) -> Server {
        Server {
            engine,
            others: Default::default(),
            request_ids: RequestIds::new(seed),
            latency: None,
            clock: Arc::new(SystemClock::new()),
            ttl_interval: Duration::ZERO,
            durability: None,
            storage: None,
            credentials: None,
            limits: Limits::default(),
        }
    }

    /// Serves within `limits` instead of the defaults.
    pub fn with_limits(mut self, limits: Limits) -> Server {
        self.limits = limits;
        self
    }

    /// Verifies every request's SigV4 signature against `credentials`.
    pub fn with_credentials(mut self, credentials: sigv4::Credentials) -> Server {
        self.credentials = Some(credentials);
        self
    }

    /// Answers each request only once the writes before its answer are on
    /// disk (the engine's storage is `durability`'s).
    pub fn with_durability(mut self, durability: dynaburst_diskstore::Durability) -> Server {
        self.durability = Some(durability);
        self
    }

    /// Keeps the tables of every region but the home one in `storage`
    /// too (the home engine's storage must be `storage` seen through
    /// [`RegionStorage`] for the home region): opens now the regions
    /// whose tables `storage` holds, at `now`, and a region seen later
    /// on it. Without it, the other regions' tables live in memory.
    pub fn with_storage(mut self, storage: Arc<dyn Storage>, now: Millis) -> Result<Server, EngineError> {
        let home = self.engine.config().region.clone();
        let mut others = std::collections::BTreeMap::new();
        for region in RegionStorage::other_regions(storage.as_ref())? {
            let engine = open_region(&self.engine, &storage, &home, &region, now)?;
            others.insert(region, Arc::new(engine));
        }
        self.others = std::sync::RwLock::new(others);
        self.storage = Some(storage);
        Ok(self)
    }

    /// Answers each request after a delay drawn from `model`.
    pub fn with_latency(mut self, model: latency::LatencyModel) -> Server {
        self.latency = (!model.is_none()).then_some(model);
        self
    }

    /// Takes time from `clock` instead of the wall clock.
    pub fn with_clock(mut self, clock: Arc<dyn Clock>) -> Server {
        self.clock = clock;
        self
    }

    /// Sweeps every region's tables for expired items every `interval`
    /// while serving (zero: never).
    pub fn with_ttl_interval(mut self, interval: Duration) -> Server {
        self.ttl_interval = interval;
        self
    }

    /// One sweep of the TTL expirer over every region, at the server's now.
    pub fn expire(&self) -> usize {
        let now = self.clock.now().millis();
        // A failed sweep (storage) leaves the items for the next one.
        self.engines().iter().map(|e| e.expire(now).unwrap_or(0)).sum()
    }

    /// The engine of the server's own region.
    pub fn engine(&self) -> &Arc<Engine> {
        &self.engine
    }

    /// The engine of `region` (the credential scope's region of a signed
    /// request): tables are separate per region, as in DynamoDB. A region
    /// seen for the first time gets an engine with the server's settings,
    /// over the server's durable storage if it has one (else in memory);
    /// at most [`MAX_REGIONS`] regions are served.
    pub fn engine_for(&self, region: Option<&str>) -> Result<Arc<Engine>, ApiError> {
        let home = &self.engine.config().region;
        let Some(region) = region.filter(|r| *r != home.as_str()) else { return Ok(self.engine.clone()) };
        if let Some(e) = self.others.read().unwrap_or_else(|p| p.into_inner()).get(region) {
            return Ok(e.clone());
        }
        if !is_region_name(region) {
            return Err(ApiError::unrecognized_client(format!(
                "The security token included in the request is invalid: unknown region '{region}'"
            )));
        }
        let mut others = self.others.write().unwrap_or_else(|p| p.into_inner());
        if others.len() + 1 >= MAX_REGIONS && !others.contains_key(region) {
            return Err(ApiError::unrecognized_client(format!(
                "dynaburst serves at most {MAX_REGIONS} regions; sign requests for one of the regions in use"
            )));
        }
        if let Some(engine) = others.get(region) {
            return Ok(engine.clone());
        }
        let engine = match &self.storage {
            Some(storage) => {
                let now = self.clock.now().millis();
                open_region(&self.engine, storage, home, region, now).map_err(ApiError::from)?
            }
            None => Engine::new(EngineConfig { region: region.to_string(), ..self.engine.config().clone() }),
        };
        let engine = Arc::new(engine);
        others.insert(region.to_string(), engine.clone());
        Ok(engine)
    }

    /// Every region's engine, the server's own first.
    fn engines(&self) -> Vec<Arc<Engine>> {
        let others = self.others.read().unwrap_or_else(|p| p.into_inner());
        std::iter::once(self.engine.clone()).chain(others.values().cloned()).collect()
    }
}

/// The engine of `region`'s tables in `storage`, with `home`'s settings.
fn open_region(
    home: &Engine,
    storage: &Arc<dyn Storage>,
    home_region: &str,
    region: &str,
    now: Millis,
) -> Result<Engine, EngineError> {
    let config = EngineConfig { region: region.to_string(), ..home.config().clone() };
    Engine::open(config, Arc::new(RegionStorage::new(storage.clone(), home_region, region)), now)
}

/// Request ids in the shape AWS uses: [`REQUEST_ID_LEN`] characters of
/// [A-Z0-9], the nth a function of the seed and n alone.
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
        // Counters spread by the golden ratio, so that no two ids draw
        // from overlapping stretches of the generator.
        let mut rng = Rng::new(self.seed ^ n.wrapping_mul(0x9E37_79B9_7F4A_7C15));
        (0..REQUEST_ID_LEN).map(|_| ALPHABET[rng.below(ALPHABET.len() as u64) as usize] as char).collect()
    }
}

fn respond(server: &Server, status: StatusCode, body: Vec<u8>) -> Response<Full<Bytes>> {
    let crc = crc32fast::hash(&body);
    let len = body.len();
    let mut response = Response::new(Full::new(Bytes::from(body)));
    *response.status_mut() = status;
    let headers = response.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static(JSON_CONTENT_TYPE));
    headers.insert(CONTENT_LENGTH, HeaderValue::from(len));
    headers.insert("x-amz-crc32", HeaderValue::from(crc));
    // DynamoDB names itself "Server" on every answer.
    headers.insert(hyper::header::SERVER, HeaderValue::from_static("Server"));
    if let Ok(id) = HeaderValue::from_str(&server.request_ids.next()) {
        headers.insert("x-amzn-requestid", id);
    }
    response
}

/// Why a request body could not be decoded.
enum BodyError {
    /// Larger than [`MAX_REQUEST_BYTES`] once decompressed.
    TooLarge,
    /// An encoding this server does not know, or a body not in it.
    Undecodable(String),
}

/// A request body as the operation reads it: as sent, or gunzipped when
/// its Content-Encoding says gzip (the SDKs' request compression). As
/// DynamoDB does (ScyllaDB's Alternator suite, run against it): several
/// gzip members are read one after the other; an encoding it does not
/// know, a broken or empty gzip body is a 500 and nothing is written.
fn decode_body(headers: &hyper::HeaderMap, body: Bytes) -> Result<Bytes, BodyError> {
    use std::io::Read;
    let Some(encoding) = headers.get(hyper::header::CONTENT_ENCODING) else { return Ok(body) };
    let encoding = encoding.to_str().unwrap_or_default().trim().to_ascii_lowercase();
    match encoding.as_str() {
        "" | "identity" => Ok(body),
        "gzip" => {
            let mut out = Vec::new();
            let limit = MAX_REQUEST_BYTES as u64 + 1;
            flate2::read::MultiGzDecoder::new(body.as_ref())
                .take(limit)
                .read_to_end(&mut out)
                .map_err(|e| BodyError::Undecodable(format!("cannot gunzip the request body: {e}")))?;
            if out.len() > MAX_REQUEST_BYTES {
                return Err(BodyError::TooLarge);
            }
            if body.is_empty() {
                return Err(BodyError::Undecodable("the gzip request body is empty".to_string()));
            }
            Ok(Bytes::from(out))
        }
        other => Err(BodyError::Undecodable(format!("unsupported Content-Encoding: {other}"))),
    }
}

/// Waits until every batch queued so far is in the synced log (durable
/// storage only): an answer that reflects them (a request's, or the
/// metrics') leaves after it. The storage's failure as DynamoDB's internal
/// error.
async fn settle(server: &Server) -> Result<(), ApiError> {
    match &server.durability {
        Some(durability) => {
            durability.settle().await.map_err(|e| ApiError::internal(format!("Internal server error: {e}")))
        }
        None => Ok(()),
    }
}

fn text_response(server: &Server, content_type: &'static str, body: Vec<u8>) -> Response<Full<Bytes>> {
    let mut response = respond(server, StatusCode::OK, body);
    response.headers_mut().insert(CONTENT_TYPE, HeaderValue::from_static(content_type));
    response
}

fn error_response(server: &Server, error: ApiError) -> Response<Full<Bytes>> {
    let status = StatusCode::from_u16(error.status()).unwrap_or(StatusCode::BAD_REQUEST);
    respond(server, status, error.body())
}

fn too_large(server: &Server) -> Response<Full<Bytes>> {
    let body = format!("Request body larger than {MAX_REQUEST_BYTES} bytes").into_bytes();
    respond(server, StatusCode::PAYLOAD_TOO_LARGE, body)
}

/// Answers one HTTP request, without sockets: the whole service. Reads the
/// server's clock once; the engine's `now` and the latency model's deadline
/// both come from that reading.
pub async fn handle_request<B>(server: &Server, request: Request<B>) -> Response<Full<Bytes>>
where
    B: Body<Data = Bytes>,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    // CORS (S161): only requests that carry an Origin get the headers.
    let cors = request
        .headers()
        .contains_key(hyper::header::ORIGIN)
        .then(|| Cors::of(request.method() == Method::OPTIONS, request.headers()));
    let mut response = answer(server, request).await;
    if let Some(cors) = cors {
        cors.apply(response.headers_mut());
    }
    response
}

/// The CORS headers a browser's request gets. Only a preflight (OPTIONS)
/// gets a max age and its requested headers and method echoed, whatever
/// headers another method carries (S161; ScyllaDB's Alternator suite, run
/// against DynamoDB: test_cors.py).
struct Cors {
    preflight: bool,
    /// A preflight's Access-Control-Request-Headers and -Method, echoed.
    request_headers: Option<HeaderValue>,
    request_method: Option<HeaderValue>,
}

/// What a browser may read of an answer: what DynamoDB exposes (S161).
const CORS_EXPOSE_HEADERS: &str = "x-amzn-RequestId,x-amzn-ErrorType,x-amzn-ErrorMessage,Date";
/// How long a browser may cache a preflight answer, in seconds.
const CORS_MAX_AGE_SECS: u32 = 172_800;

impl Cors {
    fn of(preflight: bool, headers: &hyper::HeaderMap) -> Cors {
        Cors {
            preflight,
            request_headers: headers.get("access-control-request-headers").cloned(),
            request_method: headers.get("access-control-request-method").cloned(),
        }
    }

    fn apply(self, headers: &mut hyper::HeaderMap) {
        headers.insert("access-control-allow-origin", HeaderValue::from_static("*"));
        headers.insert("access-control-expose-headers", HeaderValue::from_static(CORS_EXPOSE_HEADERS));
        if !self.preflight {
            return;
        }
        headers.insert("access-control-max-age", HeaderValue::from(CORS_MAX_AGE_SECS));
        if let Some(h) = self.request_headers {
            headers.insert("access-control-allow-headers", h);
        }
        if let Some(m) = self.request_method {
            headers.insert("access-control-allow-methods", m);
        }
    }
}

/// The answer to one request, CORS aside.
async fn answer<B>(server: &Server, request: Request<B>) -> Response<Full<Bytes>>
where
    B: Body<Data = Bytes>,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let arrived = server.clock.now();
    if request.method() == Method::OPTIONS {
        // A browser's preflight: an empty 200, the CORS headers added above.
        return respond(server, StatusCode::OK, Vec::new());
    }
    if request.method() == Method::GET {
        let path = request.uri().path();
        if path == "/metrics" {
            let reports: Vec<_> = server.engines().iter().flat_map(|e| e.capacity_reports(arrived.millis())).collect();
            if let Err(e) = settle(server).await {
                return error_response(server, e);
            }
            return text_response(server, "text/plain; version=0.0.4", prometheus_text(&reports).into_bytes());
        }
        if path == "/metrics.json" {
            let since = request
                .uri()
                .query()
                .and_then(|q| q.split('&').find_map(|kv| kv.strip_prefix("since=")))
                .and_then(|v| v.parse::<u64>().ok());
            let reports: Vec<_> =
                server.engines().iter().flat_map(|e| e.capacity_reports_since(arrived.millis(), since)).collect();
            if let Err(e) = settle(server).await {
                return error_response(server, e);
            }
            return text_response(server, "application/json", metrics_json(&reports, since));
        }
        if let Some(asset) = web::asset(path, request.headers().get(hyper::header::ACCEPT)) {
            return text_response(server, asset.content_type, asset.body.as_bytes().to_vec());
        }
        return respond(server, StatusCode::OK, HEALTH_ANSWER.to_vec());
    }
    if request.method() != Method::POST {
        return error_response(server, ApiError::unknown_operation());
    }
    let declared =
        request.headers().get(CONTENT_LENGTH).and_then(|v| v.to_str().ok()).and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > MAX_REQUEST_BYTES as u64) {
        return too_large(server);
    }
    let host = request.headers().get(hyper::header::HOST).and_then(|h| h.to_str().ok()).map(str::to_string);
    let gzip_ok = accepts_gzip(request.headers());
    let Some(authorization) = request.headers().get(hyper::header::AUTHORIZATION) else {
        return error_response(server, ApiError::missing_authentication());
    };
    let region = authorization.to_str().ok().and_then(credential_region).map(str::to_string);
    // DynamoDB's operations, or DynamoDB Streams' on the same endpoint.
    let target = request.headers().get("x-amz-target").and_then(|v| v.to_str().ok());
    let operation = target.and_then(|t| {
        t.strip_prefix(TARGET_PREFIX)
            .map(|op| (false, op.to_string()))
            .or_else(|| t.strip_prefix(STREAMS_TARGET_PREFIX).map(|op| (true, op.to_string())))
    });
    let content_type_ok = request
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|ct| CONTENT_TYPES.iter().any(|ok| ct.starts_with(ok)));
    let Some((streams, operation)) = operation.filter(|_| content_type_ok) else {
        return error_response(server, ApiError::unknown_operation());
    };
    let (parts, body) = request.into_parts();
    let read = tokio::time::timeout(server.limits.body_timeout, Limited::new(body, MAX_REQUEST_BYTES).collect());
    let Ok(read) = read.await else {
        let secs = server.limits.body_timeout.as_secs_f64();
        return error_response(
            server,
            ApiError::request_timeout(format!(
                "The request body did not arrive within {secs} s (serve --body-timeout)"
            )),
        );
    };
    let body = match read {
        Ok(collected) => collected.to_bytes(),
        Err(e) => {
            if e.downcast_ref::<http_body_util::LengthLimitError>().is_some() {
                return too_large(server);
            }
            return error_response(server, ApiError::serialization(format!("cannot read request body: {e}")));
        }
    };
    if let Some(credentials) = &server.credentials {
        let uri = parts.uri.path_and_query().map_or("/", |pq| pq.as_str());
        if let Err(e) = credentials.verify(parts.method.as_str(), uri, &parts.headers, &body, arrived.0) {
            return error_response(server, e);
        }
    }
    // The signature covers the body as sent; the operation reads it decoded.
    let body = match decode_body(&parts.headers, body) {
        Ok(body) => body,
        Err(BodyError::TooLarge) => return too_large(server),
        Err(BodyError::Undecodable(why)) => return error_response(server, ApiError::internal(why)),
    };
    let engine = match server.engine_for(region.as_deref()) {
        Ok(e) => e,
        Err(e) => return error_response(server, e),
    };
    let outcome = if streams {
        dynaburst_wire::handle_streams(&engine, &operation, &body, arrived.millis())
    } else {
        dynaburst_wire::handle(&engine, &operation, &body, arrived.millis(), host.as_deref())
    };
    // Durability: no answer (a write's 200, or a read of what a write
    // left) leaves before the writes it reflects are on disk.
    if let Err(e) = settle(server).await {
        return error_response(server, e);
    }
    if let Some(model) = &server.latency {
        let delay = model.delay(&operation, outcome.items, outcome.cancelled());
        // The modelled service time includes our own processing.
        server.clock.sleep_until(arrived + delay).await;
    }
    match outcome.result {
        Ok(body) if gzip_ok && body.len() >= GZIP_RESPONSE_BYTES => respond_gzipped(server, body),
        Ok(body) => respond(server, StatusCode::OK, body),
        Err(e) => error_response(server, e),
    }
}

/// Smallest answer sent gzipped to a client that accepts gzip (DynamoDB
/// gzips a 5,000-byte GetItem answer for such a client: ScyllaDB's
/// Alternator suite, run against it, test_crc.py; its own threshold is
/// not documented).
const GZIP_RESPONSE_BYTES: usize = 4096;

/// Whether the request's Accept-Encoding names gzip (with a q above 0).
fn accepts_gzip(headers: &hyper::HeaderMap) -> bool {
    headers.get_all(hyper::header::ACCEPT_ENCODING).iter().filter_map(|v| v.to_str().ok()).any(|v| {
        v.split(',').any(|coding| {
            let mut parts = coding.split(';');
            let name = parts.next().unwrap_or_default().trim();
            let refused = parts.any(|p| p.trim().replace(' ', "").eq_ignore_ascii_case("q=0"));
            name.eq_ignore_ascii_case("gzip") && !refused
        })
    })
}

/// A 200 whose body is gzipped, its CRC32 over the bytes sent (as
/// DynamoDB's is: the SDKs check it before decompressing).
fn respond_gzipped(server: &Server, body: Vec<u8>) -> Response<Full<Bytes>> {
    use std::io::Write;
    let mut encoder = flate2::write::GzEncoder::new(Vec::with_capacity(body.len() / 4), flate2::Compression::fast());
    let compressed = encoder.write_all(&body).and_then(|()| encoder.finish());
    match compressed {
        Ok(bytes) => {
            let mut response = respond(server, StatusCode::OK, bytes);
            response.headers_mut().insert(hyper::header::CONTENT_ENCODING, HeaderValue::from_static("gzip"));
            response
        }
        // Writing to memory does not fail; if it did, the plain answer.
        Err(_) => respond(server, StatusCode::OK, body),
    }
}

/// Regions one server serves at most (AWS has about 35).
pub const MAX_REGIONS: usize = 64;

/// The region of a SigV4 Authorization header's credential scope
/// (`Credential=<key>/<date>/<region>/dynamodb/aws4_request`).
fn credential_region(authorization: &str) -> Option<&str> {
    let credential = authorization.split("Credential=").nth(1)?;
    let scope = credential.split([',', ' ']).next()?;
    scope.split('/').nth(2).filter(|r| !r.is_empty())
}

/// A plausible region name: letters, digits and dashes, as `us-east-1`,
/// `eu-central-2` or `localhost`, at most [`MAX_REGION_NAME_LEN`].
fn is_region_name(region: &str) -> bool {
    // Not only AWS's own names: DynamoDB Local takes whatever region a
    // client is configured with ("localhost", "local", "fakeRegion" are
    // common), and the SDKs accept any host-name label. That much, no more.
    (1..=MAX_REGION_NAME_LEN).contains(&region.len()) && region.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
}

/// Longest region name served: a host-name label's 63 characters.
const MAX_REGION_NAME_LEN: usize = 63;

/// Serves connections from `listener` until `shutdown` completes, then
/// stops accepting and waits up to [`SHUTDOWN_GRACE`] for requests in flight.
pub async fn serve(listener: TcpListener, server: Arc<Server>, shutdown: impl Future<Output = ()>) -> io::Result<()> {
    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    let expirer = (!server.ttl_interval.is_zero()).then(|| {
        let server = server.clone();
        tokio::spawn(async move {
            loop {
                let next = server.clock.now() + server.ttl_interval;
                server.clock.sleep_until(next).await;
                server.expire();
            }
        })
    });
    let connections = Arc::new(tokio::sync::Semaphore::new(server.limits.max_connections));
    let refusals = Arc::new(tokio::sync::Semaphore::new(MAX_REFUSALS_IN_FLIGHT));
    let server_limits = server.limits;
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
                let Ok(permit) = connections.clone().try_acquire_owned() else {
                    // Answered 503 while few are; past that, closed.
                    if let Ok(refusing) = refusals.clone().try_acquire_owned() {
                        let max = server.limits.max_connections;
                        tokio::spawn(async move {
                            refuse(stream, max).await;
                            drop(refusing);
                        });
                    }
                    continue;
                };
                let server = server.clone();
                let service = service_fn(move |req| {
                    let server = server.clone();
                    async move { Ok::<_, Infallible>(handle_request(&server, req).await) }
                });
                let conn = http1::Builder::new()
                    .keep_alive(true)
                    .timer(hyper_util::rt::TokioTimer::new())
                    .header_read_timeout(server_limits.header_timeout)
                    .serve_connection(TokioIo::new(stream), service);
                let conn = graceful.watch(conn);
                tokio::spawn(async move {
                    // A client that drops its connection is not an error of ours.
                    let _ = conn.await;
                    drop(permit);
                });
            }
            _ = &mut shutdown => break,
        }
    }
    drop(listener);
    if let Some(task) = expirer {
        task.abort();
    }
    let _ = tokio::time::timeout(SHUTDOWN_GRACE, graceful.shutdown()).await;
    Ok(())
}

/// Answers a connection over [`Limits::max_connections`] with 503
/// ServiceUnavailableException (which SDKs retry) and closes it, within
/// [`REFUSAL_GRACE`].
async fn refuse(mut stream: tokio::net::TcpStream, max: usize) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let error = ApiError::service_unavailable(format!(
        "dynaburst is serving its maximum of {max} connections (serve --max-connections); retry"
    ));
    let body = error.body();
    let head = format!(
        "HTTP/1.1 503 Service Unavailable\r\ncontent-type: {JSON_CONTENT_TYPE}\r\ncontent-length: {}\r\nx-amz-crc32: {}\r\nconnection: close\r\n\r\n",
        body.len(),
        crc32fast::hash(&body)
    );
    let _ = tokio::time::timeout(REFUSAL_GRACE, async {
        stream.write_all(head.as_bytes()).await?;
        stream.write_all(&body).await?;
        stream.shutdown().await?;
        // Read what the client sent, so that closing does not reset the
        // connection before it has read the answer.
        let mut buf = [0u8; 4096];
        let mut drained = 0;
        while drained < REFUSAL_DRAIN_BYTES {
            match stream.read(&mut buf).await? {
                0 => break,
                n => drained += n,
            }
        }
        Ok::<_, io::Error>(())
    })
    .await;
}

#[cfg(test)]
mod tests;
