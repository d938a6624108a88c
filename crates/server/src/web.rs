//! The live web view: a page at `/` for a browser (a GET whose Accept
//! header asks for HTML; API clients and health checks still get
//! DynamoDB's answers), its script and style, all compiled into the binary,
//! and a probe that tells `dynaburst load` it is talking to `serve`. The
//! page polls `/metrics.json?since=` once a second and draws its charts
//! with its own SVG code (`web/app.js`).

use hyper::header::HeaderValue;

/// The page.
pub const INDEX_HTML: &str = include_str!("../web/index.html");
/// The page's script: polling and the SVG charts.
pub const APP_JS: &str = include_str!("../web/app.js");
/// The page's style.
pub const APP_CSS: &str = include_str!("../web/app.css");
/// Path of the probe that identifies the server as `dynaburst serve`.
pub const PROBE_PATH: &str = "/dynaburst.json";
/// The probe's answer: the server, its version and where the page is.
pub const PROBE_BODY: &str =
    concat!(r#"{"server":"dynaburst","version":""#, env!("CARGO_PKG_VERSION"), r#"","page":"/"}"#);

/// A file the server serves to browsers.
#[derive(Debug, PartialEq, Eq)]
pub struct Asset {
    pub content_type: &'static str,
    pub body: &'static str,
}

/// The asset a GET of `path` asks for, if any: the page only when the
/// Accept header names text/html (a browser), so that `GET /` from other
/// clients keeps DynamoDB's health answer.
pub fn asset(path: &str, accept: Option<&HeaderValue>) -> Option<Asset> {
    let wants_html = accept.and_then(|a| a.to_str().ok()).is_some_and(|a| a.contains("text/html"));
    match path {
        "/" | "/index.html" if wants_html => Some(Asset { content_type: "text/html; charset=utf-8", body: INDEX_HTML }),
        "/app.js" => Some(Asset { content_type: "text/javascript; charset=utf-8", body: APP_JS }),
        "/app.css" => Some(Asset { content_type: "text/css; charset=utf-8", body: APP_CSS }),
        PROBE_PATH => Some(Asset { content_type: "application/json", body: PROBE_BODY }),
        _ => None,
    }
}
