//! Why a bench run, or one of its scenarios, failed.

use std::fmt;
use std::path::PathBuf;

use crate::charts::ChartError;

/// A failure of the bench: a scenario's step, a file, the embedded server.
#[derive(Debug)]
pub enum BenchError {
    /// A scenario's step failed: an SDK call, a load, a count that does not
    /// add up. The message says which.
    Scenario(String),
    /// No scenario has this name.
    UnknownScenario { name: String, choices: String },
    /// A file or directory could not be created, written or read.
    Io { action: &'static str, path: PathBuf, source: std::io::Error },
    /// An embedded server or the async runtime could not start.
    Start { what: &'static str, source: std::io::Error },
    /// `dynaburst load` in a child process could not run, or failed.
    ChildLoad { target: String, message: String },
    /// results.json could not be serialized.
    Json(serde_json::Error),
    /// The charts could not be written.
    Charts(ChartError),
}

impl fmt::Display for BenchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BenchError::Scenario(m) => f.write_str(m),
            BenchError::UnknownScenario { name, choices } => {
                write!(f, "unknown scenario {name}: choose from {choices}")
            }
            BenchError::Io { action, path, source } => write!(f, "cannot {action} {}: {source}", path.display()),
            BenchError::Start { what, source } => write!(f, "cannot start {what}: {source}"),
            BenchError::ChildLoad { target, message } => write!(f, "dynaburst load into {target} failed: {message}"),
            BenchError::Json(e) => write!(f, "cannot write results.json: {e}"),
            BenchError::Charts(e) => write!(f, "charts: {e}"),
        }
    }
}

impl std::error::Error for BenchError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            BenchError::Io { source, .. } | BenchError::Start { source, .. } => Some(source),
            BenchError::Json(e) => Some(e),
            BenchError::Charts(e) => Some(e),
            BenchError::Scenario(_) | BenchError::UnknownScenario { .. } | BenchError::ChildLoad { .. } => None,
        }
    }
}

/// The SDK helpers and many steps report a message.
impl From<String> for BenchError {
    fn from(m: String) -> Self {
        BenchError::Scenario(m)
    }
}

impl From<&str> for BenchError {
    fn from(m: &str) -> Self {
        BenchError::Scenario(m.to_string())
    }
}

impl From<ChartError> for BenchError {
    fn from(e: ChartError) -> Self {
        BenchError::Charts(e)
    }
}

impl BenchError {
    /// For `map_err`: `action` ("write", "create", ...) on `path` failed.
    pub fn io(action: &'static str, path: impl Into<PathBuf>) -> impl FnOnce(std::io::Error) -> BenchError {
        let path = path.into();
        move |source| BenchError::Io { action, path, source }
    }
}
