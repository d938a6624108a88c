//! Virtual time for a simulated load: a `Clock` whose time moves only
//! when the runtime it drives has nothing left to run.
//!
//! The simulation runs on a current-thread tokio runtime. Every wait in
//! the pipeline and the sink is a `sleep_until` on this clock; when every
//! task waits (the runtime is about to park its thread), `advance` moves
//! time to the earliest deadline and wakes what waits for it. Reading the
//! input is a task of the same runtime, so it never lets time run ahead.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use dynaburst_loader::Clock;
use parking_lot::Mutex;
use tokio::time::Instant;

#[derive(Default)]
struct State {
    /// Virtual time since `base`.
    now: Duration,
    /// Deadlines of waiting sleeps, earliest first (ids of dropped sleeps
    /// are skipped).
    deadlines: BinaryHeap<Reverse<(Duration, u64)>>,
    wakers: HashMap<u64, (Duration, Waker)>,
    next_id: u64,
}

/// A clock whose time advances only through [`VirtualClock::advance`].
#[derive(Clone)]
pub struct VirtualClock {
    base: Instant,
    state: Arc<Mutex<State>>,
}

impl VirtualClock {
    /// A clock at `base`, the instant virtual time starts from.
    pub fn new(base: Instant) -> VirtualClock {
        VirtualClock { base, state: Arc::new(Mutex::new(State::default())) }
    }

    /// Virtual time since the start.
    pub fn elapsed(&self) -> Duration {
        self.state.lock().now
    }

    /// Moves time to the earliest deadline anything waits for and wakes
    /// every sleep due then. False when nothing waits.
    pub fn advance(&self) -> bool {
        let due: Vec<Waker> = {
            let mut s = self.state.lock();
            let next = loop {
                match s.deadlines.peek() {
                    None => return false,
                    Some(Reverse((_, id))) if !s.wakers.contains_key(id) => {
                        s.deadlines.pop();
                    }
                    Some(Reverse((at, _))) => break *at,
                }
            };
            s.now = s.now.max(next);
            let now = s.now;
            let mut due = Vec::new();
            while let Some(Reverse((at, id))) = s.deadlines.peek().copied() {
                if at > now {
                    break;
                }
                s.deadlines.pop();
                if let Some((_, w)) = s.wakers.remove(&id) {
                    due.push(w);
                }
            }
            due
        };
        for w in due {
            w.wake();
        }
        true
    }
}

impl Clock for VirtualClock {
    fn now(&self) -> Instant {
        self.base + self.state.lock().now
    }

    fn sleep_until(&self, deadline: Instant) -> impl Future<Output = ()> + Send {
        Sleep { clock: self.clone(), at: deadline.saturating_duration_since(self.base), id: None }
    }
}

/// A wait until virtual time `at`.
struct Sleep {
    clock: VirtualClock,
    at: Duration,
    id: Option<u64>,
}

impl Future for Sleep {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let at = self.at;
        let mut s = self.clock.state.lock();
        if s.now >= at {
            if let Some(id) = self.id {
                s.wakers.remove(&id);
            }
            return Poll::Ready(());
        }
        let id = match self.id {
            Some(id) => id,
            None => {
                let id = s.next_id;
                s.next_id += 1;
                s.deadlines.push(Reverse((at, id)));
                id
            }
        };
        s.wakers.insert(id, (at, cx.waker().clone()));
        drop(s);
        self.id = Some(id);
        Poll::Pending
    }
}

impl Drop for Sleep {
    fn drop(&mut self) {
        if let Some(id) = self.id {
            self.clock.state.lock().wakers.remove(&id);
        }
    }
}
