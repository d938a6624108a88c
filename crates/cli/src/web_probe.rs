//! Whether a load's endpoint is a local `dynaburst serve`, whose web view
//! shows the load as it happens: one GET of its probe (`/dynaburst.json`),
//! answered only by `serve`.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::time::Duration;

/// How long the probe waits to connect and for the answer.
const PROBE_TIMEOUT: Duration = Duration::from_millis(500);
/// Most bytes of the probe's answer read.
const PROBE_MAX_BYTES: u64 = 4096;

/// The web view's address when `endpoint` is an `http://` URL of this
/// machine (localhost or a loopback address) served by `dynaburst serve`.
pub async fn page_of(endpoint: Option<&str>) -> Option<String> {
    let base = endpoint?.strip_prefix("http://")?.trim_end_matches('/').to_string();
    tokio::task::spawn_blocking(move || probe(&base)).await.ok().flatten()
}

fn probe(base: &str) -> Option<String> {
    let hostport = base.split('/').next()?;
    let addr: SocketAddr = hostport.to_socket_addrs().ok()?.find(|a| a.ip().is_loopback())?;
    let mut stream = TcpStream::connect_timeout(&addr, PROBE_TIMEOUT).ok()?;
    stream.set_read_timeout(Some(PROBE_TIMEOUT)).ok()?;
    stream.set_write_timeout(Some(PROBE_TIMEOUT)).ok()?;
    let path = dynaburst_server::web::PROBE_PATH;
    write!(stream, "GET {path} HTTP/1.1\r\nHost: {hostport}\r\nConnection: close\r\n\r\n").ok()?;
    // Whatever arrived before the server closed, the bound or the timeout.
    let mut answer = Vec::new();
    let _ = stream.take(PROBE_MAX_BYTES).read_to_end(&mut answer);
    String::from_utf8_lossy(&answer).contains(r#""server":"dynaburst""#).then(|| format!("http://{hostport}/"))
}
