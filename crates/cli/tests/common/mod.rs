//! What the binary's integration tests share: a `dynaburst serve` child on
//! a free port, and an AWS SDK client for it.
#![allow(dead_code)] // each test file uses its own part

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, Command, Stdio};

use aws_sdk_dynamodb::Client;

pub const BIN: &str = env!("CARGO_BIN_EXE_dynaburst");

/// A `dynaburst serve` child on a free port, killed when dropped.
pub struct Serve {
    child: Child,
    pub url: String,
}

impl Serve {
    /// `dynaburst serve --host 127.0.0.1 --port 0` and `extra`.
    pub fn start(extra: &[&str]) -> Serve {
        let mut child = Command::new(BIN)
            .args(["serve", "--host", "127.0.0.1", "--port", "0"])
            .args(extra)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start dynaburst serve");
        let mut line = String::new();
        BufReader::new(child.stdout.take().expect("stdout")).read_line(&mut line).expect("read the port line");
        let url = line.trim().strip_prefix("dynaburst listening on ").expect("port line").to_string();
        Serve { child, url }
    }

    /// An SDK client for the server.
    pub fn client(&self) -> Client {
        client(&self.url)
    }

    /// `GET /metrics.json`.
    pub fn metrics(&self) -> serde_json::Value {
        let addr = self.url.trim_start_matches("http://");
        let mut s = std::net::TcpStream::connect(addr).expect("connect for metrics");
        write!(s, "GET /metrics.json HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n").expect("send");
        let mut text = String::new();
        s.read_to_string(&mut text).expect("read");
        let body = text.split_once("\r\n\r\n").expect("a body").1;
        serde_json::from_str(body).expect("metrics JSON")
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// An SDK client for the server at `url` (any credentials, us-east-1).
pub fn client(url: &str) -> Client {
    let conf = aws_sdk_dynamodb::Config::builder()
        .behavior_version(aws_sdk_dynamodb::config::BehaviorVersion::latest())
        .region(aws_sdk_dynamodb::config::Region::new("us-east-1"))
        .credentials_provider(aws_sdk_dynamodb::config::Credentials::new("x", "y", None, None, "test"))
        .endpoint_url(url)
        .build();
    Client::from_conf(conf)
}

/// A current-thread runtime for the SDK calls.
pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a runtime")
}
