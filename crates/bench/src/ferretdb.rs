//! A FerretDB (a MongoDB-wire server on SQLite) that `bench` starts and
//! stops itself, so `bench all` makes seed 001's DocumentDB comparison
//! against a MongoDB-compatible database, like for like.
//!
//! The binary is `$DYNABURST_FERRETDB`, else the one `scripts/install-ferretdb`
//! caches (`$DYNABURST_CACHE`, default `~/.cache/dynaburst`), else the one
//! that script builds when run from the repository (as `scripts/test` does).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::error::BenchError;

/// The FerretDB version `scripts/install-ferretdb` builds.
pub const FERRETDB_VERSION: &str = "v1.24.0";
/// How long FerretDB may take to answer its first ping.
const STARTUP_TIMEOUT: Duration = Duration::from_secs(30);
/// Between two readiness probes.
const PROBE_INTERVAL: Duration = Duration::from_millis(100);
/// The install script, relative to the repository root (the working directory).
const INSTALL_SCRIPT: &str = "scripts/install-ferretdb";

/// A running FerretDB; killed when dropped.
pub struct FerretDb {
    pub uri: String,
    child: tokio::process::Child,
    dir: PathBuf,
}

/// The ferretdb binary, building it with the install script when neither
/// the environment nor the cache has one.
pub async fn binary() -> Result<PathBuf, BenchError> {
    if let Some(p) = std::env::var_os("DYNABURST_FERRETDB") {
        return Ok(PathBuf::from(p));
    }
    let cache = match std::env::var_os("DYNABURST_CACHE") {
        Some(c) => PathBuf::from(c),
        None => PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".cache/dynaburst"),
    };
    let cached = cache.join(format!("ferretdb-{FERRETDB_VERSION}")).join("ferretdb");
    if cached.is_file() {
        return Ok(cached);
    }
    if !Path::new(INSTALL_SCRIPT).is_file() {
        return Err(BenchError::Scenario(format!(
            "no FerretDB: set DYNABURST_FERRETDB to a ferretdb binary, or run bench from the repository root so that {INSTALL_SCRIPT} can build one (it needs Go >= 1.22)"
        )));
    }
    let out = tokio::process::Command::new(INSTALL_SCRIPT)
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::inherit())
        .output()
        .await
        .map_err(|e| BenchError::Scenario(format!("cannot run {INSTALL_SCRIPT}: {e}")))?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    match (out.status.success(), stdout.lines().last()) {
        (true, Some(path)) if !path.trim().is_empty() => Ok(PathBuf::from(path.trim())),
        _ => Err(BenchError::Scenario(format!("{INSTALL_SCRIPT} failed ({})", out.status))),
    }
}

/// A free port on 127.0.0.1 (free when asked; FerretDB binds it next).
fn free_port() -> Result<u16, BenchError> {
    let l = std::net::TcpListener::bind("127.0.0.1:0")
        .map_err(|source| BenchError::Start { what: "a port for FerretDB", source })?;
    l.local_addr().map(|a| a.port()).map_err(|source| BenchError::Start { what: "a port for FerretDB", source })
}

impl FerretDb {
    /// Starts FerretDB with its SQLite files in a fresh directory under
    /// `parent`, and returns once it answers a ping.
    pub async fn start(parent: &Path) -> Result<FerretDb, BenchError> {
        let binary = binary().await?;
        let dir = parent.join(format!(".ferretdb-{}", std::process::id()));
        let data = dir.join("data");
        std::fs::create_dir_all(&data).map_err(BenchError::io("create", &data))?;
        let (port, debug_port) = (free_port()?, free_port()?);
        let log_path = dir.join("ferretdb.log");
        let log = std::fs::File::create(&log_path).map_err(BenchError::io("create", &log_path))?;
        let log2 = log.try_clone().map_err(BenchError::io("open", &log_path))?;
        let child = tokio::process::Command::new(&binary)
            .arg("--handler=sqlite")
            .arg(format!("--sqlite-url=file:{}/", data.display()))
            .arg(format!("--listen-addr=127.0.0.1:{port}"))
            .arg(format!("--debug-addr=127.0.0.1:{debug_port}"))
            .arg(format!("--state-dir={}", dir.display()))
            .args(["--telemetry=disable", "--log-level=warn"])
            .stdin(std::process::Stdio::null())
            .stdout(log)
            .stderr(log2)
            .kill_on_drop(true)
            .spawn()
            .map_err(|source| BenchError::Start { what: "FerretDB", source })?;
        let mut server =
            FerretDb { uri: format!("mongodb://127.0.0.1:{port}/bench?directConnection=true"), child, dir };
        server.wait_ready(&log_path).await?;
        Ok(server)
    }

    async fn wait_ready(&mut self, log_path: &Path) -> Result<(), BenchError> {
        let deadline = Instant::now() + STARTUP_TIMEOUT;
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                let log = std::fs::read_to_string(log_path).unwrap_or_default();
                return Err(BenchError::Scenario(format!("FerretDB exited at start-up ({status}): {log}")));
            }
            if dynaburst_mongo::connect(&self.uri, "bench").await.is_ok() {
                return Ok(());
            }
            if Instant::now() > deadline {
                return Err(BenchError::Scenario(format!(
                    "FerretDB did not answer on {} within {} s",
                    self.uri,
                    STARTUP_TIMEOUT.as_secs()
                )));
            }
            tokio::time::sleep(PROBE_INTERVAL).await;
        }
    }

    /// Kills FerretDB, waits for it and removes its files.
    pub async fn stop(mut self) {
        let _ = self.child.kill().await;
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
