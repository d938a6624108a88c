//! The pipeline's one way to read time: a clock it is given.
//!
//! [`TokioClock`] reads tokio's clock, which a test (or a simulated load)
//! can pause and advance (`tokio::time::pause`, `start_paused`): then the
//! pipeline, its backoffs, checkpoints and stall timeout all run in virtual
//! time, deterministically. Nothing in the pipeline reads the wall clock
//! except through a `Clock`.

use std::future::Future;

use tokio::time::Instant;

/// A source of time and of timed waits.
pub trait Clock: Clone + Send + Sync + 'static {
    /// The time now.
    fn now(&self) -> Instant;

    /// Waits until `deadline`.
    fn sleep_until(&self, deadline: Instant) -> impl Future<Output = ()> + Send;

    /// True for virtual time: reading the input takes no time, so the
    /// pipeline waits for its reader without letting time pass (tokio's
    /// paused clock would otherwise jump ahead to the next timer while the
    /// reader thread works, and a simulated load would be as slow as this
    /// machine parses, not as the target writes).
    fn input_is_instant(&self) -> bool {
        false
    }
}

/// tokio's clock: real time, or virtual time when tokio's time is paused.
#[derive(Clone, Copy, Debug, Default)]
pub struct TokioClock;

impl Clock for TokioClock {
    #[allow(clippy::disallowed_methods)] // the seam itself
    fn now(&self) -> Instant {
        Instant::now()
    }

    fn sleep_until(&self, deadline: Instant) -> impl Future<Output = ()> + Send {
        tokio::time::sleep_until(deadline)
    }
}

/// tokio's paused clock (`tokio::time::pause`, `start_paused`), for tests
/// and simulated loads: the same readings as [`TokioClock`], and the input
/// is read in no time.
#[derive(Clone, Copy, Debug, Default)]
pub struct VirtualClock;

impl Clock for VirtualClock {
    #[allow(clippy::disallowed_methods)] // the seam itself
    fn now(&self) -> Instant {
        Instant::now()
    }

    fn sleep_until(&self, deadline: Instant) -> impl Future<Output = ()> + Send {
        tokio::time::sleep_until(deadline)
    }

    fn input_is_instant(&self) -> bool {
        true
    }
}
