//! `dynaburst serve` inside the bench process, on a free 127.0.0.1 port,
//! spoken to over real HTTP.

use std::sync::Arc;
use std::thread::JoinHandle;

use dynaburst_engine::{Engine, EngineConfig};
use dynaburst_server::latency::LatencyModel;
use dynaburst_server::Server;

/// A running embedded server; stopped when dropped.
pub struct Embedded {
    pub url: String,
    /// The engine behind `url` (its home region's), for what the bench's
    /// HTTP client cannot ask of it (a table with GSIs).
    pub engine: Arc<Engine>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl Embedded {
    /// Starts a server (`capacity`: the capacity model on) answering after
    /// `latency`'s delays, its request ids drawn from `seed`.
    pub fn start(capacity: bool, latency: LatencyModel, seed: u64) -> std::io::Result<Embedded> {
        let mut config = EngineConfig::local();
        if !capacity {
            config.capacity = None;
        }
        let engine = Arc::new(Engine::new(config));
        let server = Arc::new(Server::new(engine.clone(), seed).with_latency(latency));
        let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()?;
        // Bound here without entering the runtime, so that a scenario
        // (itself async) can start a server of its own.
        let std_listener = std::net::TcpListener::bind("127.0.0.1:0")?;
        std_listener.set_nonblocking(true)?;
        let url = format!("http://{}", std_listener.local_addr()?);
        let listener = {
            let _entered = runtime.enter();
            tokio::net::TcpListener::from_std(std_listener)?
        };
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let thread = std::thread::Builder::new().name("dynaburst-embedded".into()).spawn(move || {
            runtime.block_on(async move {
                let _ = dynaburst_server::serve(listener, server, async {
                    let _ = rx.await;
                })
                .await;
            });
        })?;
        Ok(Embedded { url, engine, stop: Some(tx), thread: Some(thread) })
    }
}

impl Drop for Embedded {
    fn drop(&mut self) {
        if let Some(tx) = self.stop.take() {
            let _ = tx.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
