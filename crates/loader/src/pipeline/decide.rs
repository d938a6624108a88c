//! What to do with a request's answer: retry, split, reject or stop.
//!
//! A pure function of the answer, the job and a few facts about the load:
//! no tokio, no I/O, no clock. The pipeline applies the [`Decision`]
//! (stats, controller, backoff, rejects file).

use std::collections::{HashMap, HashSet};

use super::{POISON_ATTEMPTS, POISON_RESPLIT, SYSTEMIC_REFUSALS, UNPROCESSED_SIGNAL};
use crate::target::Outcome;

/// What the decision needs to know of the job that was sent.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct JobFacts {
    /// Items in the request.
    pub items: usize,
    /// Failed attempts so far.
    pub attempts: u32,
    /// Records written by the whole load when this job last failed
    /// transiently (or when it was split out of a failed request).
    pub written_at_failure: Option<u64>,
    /// Consecutive failures of this one record alone, each after other
    /// records were written since the one before.
    pub strikes: u32,
}

/// What the decision needs to know of the load.
#[derive(Clone, Copy, Debug)]
pub struct LoadFacts<'a> {
    /// Records written so far.
    pub written: u64,
    /// Records read and not yet acknowledged (this job's included).
    pub outstanding: usize,
    /// The sink's requests must be re-sent unchanged (transactions).
    pub idempotent: bool,
    pub refusals: &'a Refusals,
}

/// The run of single records refused with one message and nothing written
/// in between.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Refusals {
    pub message: String,
    pub count: u32,
}

/// What became of one item of an answered request.
#[derive(Clone, Debug, PartialEq)]
pub enum Fate {
    Written,
    /// Refused for what it holds: to the rejects file with this reason.
    Rejected(String),
    /// Not written: send again.
    Again,
}

/// How the answer moves the concurrency controller.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Signal {
    /// A throttle of this severity (0 to 1).
    Throttle(f64),
    /// A normal answer: its latency may still signal queueing.
    Answered,
}

/// What the pipeline does with the job.
#[derive(Clone, Debug, PartialEq)]
pub enum Action {
    /// The request was answered: each item's fate, in request order. Items
    /// `Again` go back, together, after a backoff for `again_attempts`,
    /// with the job's token.
    Answered { fates: Vec<Fate>, written: usize, unprocessed: usize, units: f64, again_attempts: u32, signal: Signal },
    /// Nothing written, the endpoint throttles: slow down, count `code`,
    /// send the whole job again after a backoff for `attempts`, noting the
    /// load's written records at this failure.
    Throttled { code: String, attempts: u32, written_at_failure: u64 },
    /// Send the whole job again, unchanged (same token), after a backoff.
    Retry { attempts: u32, written_at_failure: Option<u64>, strikes: u32 },
    /// Split the job into halves (the first `items / 2` items, then the
    /// rest), each a new job with a new token and `attempts`, marked as
    /// failed at `written_at_failure` (so never merged back). After a
    /// backoff when `backoff` (the halves count as re-sent), else at once.
    Split { attempts: u32, written_at_failure: u64, backoff: bool },
    /// Reject the job's single record with this reason.
    Reject { reason: String },
    /// Reject these items (index, reason); the others are fine and go
    /// again at once as a new job with `attempts`.
    Cancelled { rejected: Vec<(usize, String)>, attempts: u32 },
    /// Stop the load. The job's records stay unacknowledged: below the
    /// checkpoint.
    Stop { reason: String },
}

/// An action, a warning to report once, and the new run of refusals.
#[derive(Clone, Debug, PartialEq)]
pub struct Decision {
    pub action: Action,
    pub warning: Option<String>,
    /// Replaces the load's `Refusals` when set.
    pub refusals: Option<Refusals>,
}

impl Decision {
    fn of(action: Action) -> Decision {
        Decision { action, warning: None, refusals: None }
    }
}

/// Attempts after which a transient failure is reported as a warning.
pub const WARN_ATTEMPTS: u32 = 3;

/// Decides what to do with `outcome`, the answer to `job`.
pub fn decide(outcome: Outcome, job: &JobFacts, load: &LoadFacts<'_>) -> Decision {
    match outcome {
        Outcome::Written { unprocessed, rejected, units } => {
            let total = job.items;
            let left: HashSet<usize> = unprocessed.into_iter().filter(|i| *i < total).collect();
            let mut refused: HashMap<usize, String> =
                rejected.into_iter().filter(|(i, _)| *i < total && !left.contains(i)).collect();
            let fates: Vec<Fate> = (0..total)
                .map(|i| {
                    if left.contains(&i) {
                        Fate::Again
                    } else if let Some(reason) = refused.remove(&i) {
                        Fate::Rejected(reason)
                    } else {
                        Fate::Written
                    }
                })
                .collect();
            let written = fates.iter().filter(|f| **f == Fate::Written).count();
            let fraction = left.len() as f64 / total.max(1) as f64;
            let signal = if fraction > UNPROCESSED_SIGNAL { Signal::Throttle(fraction) } else { Signal::Answered };
            // Progress: unprocessed items start their backoff over.
            let again_attempts = if written > 0 { 0 } else { job.attempts + 1 };
            let refusals = (written > 0).then(|| Refusals { message: load.refusals.message.clone(), count: 0 });
            Decision {
                action: Action::Answered { fates, written, unprocessed: left.len(), units, again_attempts, signal },
                warning: None,
                refusals,
            }
        }
        Outcome::Throttled { code } => {
            // As for unprocessed items: while the load makes progress the
            // throttle paces it (the concurrency controller backs off), and
            // the request's backoff starts over; it grows only while
            // nothing at all is written. Whole requests are refused more
            // often than items left unprocessed, as DynamoDB admits a
            // request whole while a partition has tokens (A39).
            let progressed = job.written_at_failure.is_some_and(|w| load.written > w);
            let attempts = if progressed { 1 } else { job.attempts + 1 };
            Decision::of(Action::Throttled { code, attempts, written_at_failure: load.written })
        }
        Outcome::Transient { message } => transient(message, job, load),
        Outcome::Invalid { message } => invalid(message, job, load),
        Outcome::Cancelled { reasons } => Decision::of(Action::Cancelled {
            rejected: reasons.into_iter().map(|(i, code, message)| (i, format!("{code}: {message}"))).collect(),
            attempts: job.attempts,
        }),
        Outcome::Fatal { message } => Decision::of(Action::Stop { reason: message }),
    }
}

fn transient(message: String, job: &JobFacts, load: &LoadFacts<'_>) -> Decision {
    let attempts = job.attempts + 1;
    // A strike: it failed alone after other records were written since its
    // last failure, or it is the only record left, so there is nothing
    // else to compare with.
    let progressed = job.written_at_failure.is_some_and(|w| load.written > w);
    let alone_in_load = load.outstanding == 1;
    let strikes = if job.items == 1 && (progressed || alone_in_load) { job.strikes + 1 } else { 0 };
    let warning = (attempts >= WARN_ATTEMPTS).then(|| format!("retrying after: {message}"));
    let action = if attempts >= POISON_ATTEMPTS && job.items > 1 && !load.idempotent {
        // A request that keeps failing may hold one record the endpoint
        // cannot take (some drop the connection on it): halve it to find
        // that record. Suspicion is established: each half is split again
        // after `POISON_RESPLIT` more failures, not five.
        Action::Split { attempts: POISON_ATTEMPTS - POISON_RESPLIT, written_at_failure: load.written, backoff: true }
    } else if attempts >= POISON_ATTEMPTS && job.items == 1 && strikes >= POISON_RESPLIT {
        // It fails alone, again and again, while other records are written
        // in between: the record is the cause.
        Action::Reject { reason: format!("failed {attempts} times alone while other records were written: {message}") }
    } else {
        Action::Retry { attempts, written_at_failure: Some(load.written), strikes }
    };
    Decision { action, warning, refusals: None }
}

fn invalid(message: String, job: &JobFacts, load: &LoadFacts<'_>) -> Decision {
    if job.items > 1 {
        // Split to find the bad records; the good ones are written. The
        // halves are marked as failed, so that they are never merged back
        // into the request they came from.
        return Decision::of(Action::Split {
            attempts: job.attempts,
            written_at_failure: job.written_at_failure.unwrap_or(load.written),
            backoff: false,
        });
    }
    // The same refusal for record after record, with nothing written in
    // between (any write resets the run), is a problem with the requests
    // (or the endpoint), not the data: stop rather than reject the rest of
    // the input, whether it starts before the first write or later.
    let count = if load.refusals.message == message { load.refusals.count + 1 } else { 1 };
    let action = if count >= SYSTEMIC_REFUSALS {
        Action::Stop {
            reason: format!("the endpoint refused {SYSTEMIC_REFUSALS} records in a row, each alone, with: {message}"),
        }
    } else {
        Action::Reject { reason: message.clone() }
    };
    Decision { action, warning: None, refusals: Some(Refusals { message, count }) }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(items: usize, attempts: u32) -> JobFacts {
        JobFacts { items, attempts, written_at_failure: None, strikes: 0 }
    }

    fn load(written: u64, outstanding: usize, refusals: &Refusals) -> LoadFacts<'_> {
        LoadFacts { written, outstanding, idempotent: false, refusals }
    }

    fn transient() -> Outcome {
        Outcome::Transient { message: "connection reset".into() }
    }

    #[test]
    fn a_full_answer_writes_everything_and_resets_the_refusals() {
        let r = Refusals { message: "bad".into(), count: 7 };
        let d = decide(Outcome::all_written(25.0), &job(3, 2), &load(10, 50, &r));
        assert_eq!(
            d.action,
            Action::Answered {
                fates: vec![Fate::Written; 3],
                written: 3,
                unprocessed: 0,
                units: 25.0,
                again_attempts: 0,
                signal: Signal::Answered
            }
        );
        assert_eq!(d.refusals, Some(Refusals { message: "bad".into(), count: 0 }));
        assert_eq!(d.warning, None);
    }

    #[test]
    fn unprocessed_items_go_again_and_a_large_fraction_is_a_throttle() {
        let r = Refusals::default();
        // 2 of 4 unprocessed (one index twice, one out of range), one
        // refused: the fraction 0.5 is the throttle's severity.
        let outcome = Outcome::Written {
            unprocessed: vec![1, 3, 3, 9],
            rejected: vec![(2, "too big".into()), (3, "ignored: unprocessed".into())],
            units: 1.0,
        };
        let d = decide(outcome, &job(4, 0), &load(0, 4, &r));
        assert_eq!(
            d.action,
            Action::Answered {
                fates: vec![Fate::Written, Fate::Again, Fate::Rejected("too big".into()), Fate::Again],
                written: 1,
                unprocessed: 2,
                units: 1.0,
                again_attempts: 0,
                signal: Signal::Throttle(0.5)
            }
        );
        // Nothing written: the unprocessed items' backoff grows.
        let d = decide(
            Outcome::Written { unprocessed: vec![0, 1], rejected: vec![], units: 0.0 },
            &job(2, 3),
            &load(0, 2, &r),
        );
        let Action::Answered { again_attempts, written, signal, .. } = d.action else { panic!("{:?}", d.action) };
        assert_eq!((again_attempts, written, signal), (4, 0, Signal::Throttle(1.0)));
        assert_eq!(d.refusals, None);
        // A small fraction is no signal.
        let d = decide(
            Outcome::Written { unprocessed: vec![0], rejected: vec![], units: 0.0 },
            &job(25, 0),
            &load(0, 25, &r),
        );
        let Action::Answered { signal, .. } = d.action else { panic!() };
        assert_eq!(signal, Signal::Answered, "1 of 25 is below {UNPROCESSED_SIGNAL}");
    }

    #[test]
    fn throttled_retries_the_whole_job_one_attempt_later() {
        let r = Refusals::default();
        let d = decide(Outcome::Throttled { code: "ThrottlingException".into() }, &job(25, 2), &load(0, 25, &r));
        let code = "ThrottlingException".to_string();
        assert_eq!(d, Decision::of(Action::Throttled { code: code.clone(), attempts: 3, written_at_failure: 0 }));
        // Throttled again with nothing written since: the backoff grows.
        let again = JobFacts { written_at_failure: Some(0), ..job(25, 3) };
        let d = decide(Outcome::Throttled { code: code.clone() }, &again, &load(0, 25, &r));
        assert_eq!(d, Decision::of(Action::Throttled { code: code.clone(), attempts: 4, written_at_failure: 0 }));
        // Other requests were written since its last throttle: the table
        // is admitting, this one is paced, its backoff starts over.
        let d = decide(Outcome::Throttled { code: code.clone() }, &again, &load(500, 25, &r));
        assert_eq!(d, Decision::of(Action::Throttled { code, attempts: 1, written_at_failure: 500 }));
    }

    #[test]
    fn transient_failures_retry_then_halve_after_five_then_after_two_more() {
        let r = Refusals::default();
        let mut j = job(8, 0);
        for attempt in 1..POISON_ATTEMPTS {
            let d = decide(transient(), &j, &load(100, 8, &r));
            assert_eq!(d.action, Action::Retry { attempts: attempt, written_at_failure: Some(100), strikes: 0 });
            assert_eq!(d.warning.is_some(), attempt >= WARN_ATTEMPTS, "attempt {attempt}");
            j.attempts = attempt;
            j.written_at_failure = Some(100);
        }
        // The fifth failure in a row halves the request.
        let d = decide(transient(), &j, &load(100, 8, &r));
        assert_eq!(d.action, Action::Split { attempts: 3, written_at_failure: 100, backoff: true });
        assert_eq!(d.warning.as_deref(), Some("retrying after: connection reset"));
        // A half fails twice more: halved again.
        let mut half = JobFacts { items: 4, attempts: 3, written_at_failure: Some(100), strikes: 0 };
        let d = decide(transient(), &half, &load(100, 8, &r));
        assert_eq!(d.action, Action::Retry { attempts: 4, written_at_failure: Some(100), strikes: 0 });
        half.attempts = 4;
        let d = decide(transient(), &half, &load(100, 8, &r));
        assert_eq!(d.action, Action::Split { attempts: 3, written_at_failure: 100, backoff: true });
    }

    #[test]
    fn transactions_are_never_split_on_transient_failures() {
        let r = Refusals::default();
        let facts = LoadFacts { written: 0, outstanding: 8, idempotent: true, refusals: &r };
        let d = decide(transient(), &job(8, 9), &facts);
        assert_eq!(d.action, Action::Retry { attempts: 10, written_at_failure: Some(0), strikes: 0 });
    }

    #[test]
    fn a_record_failing_alone_twice_with_others_written_between_is_rejected() {
        let r = Refusals::default();
        // Alone after halving, at attempt 3 with the failure mark at 100.
        let mut j = JobFacts { items: 1, attempts: 3, written_at_failure: Some(100), strikes: 0 };
        // Fails again with others written since: strike one, retried.
        let d = decide(transient(), &j, &load(150, 40, &r));
        assert_eq!(d.action, Action::Retry { attempts: 4, written_at_failure: Some(150), strikes: 1 });
        j = JobFacts { items: 1, attempts: 4, written_at_failure: Some(150), strikes: 1 };
        // Fails with nothing written since: no strike (an outage strikes
        // nobody), retried.
        let d = decide(transient(), &j, &load(150, 40, &r));
        assert_eq!(d.action, Action::Retry { attempts: 5, written_at_failure: Some(150), strikes: 0 });
        // Two strikes in a row at attempt 5 or later: rejected.
        let j = JobFacts { items: 1, attempts: 5, written_at_failure: Some(150), strikes: 1 };
        let d = decide(transient(), &j, &load(200, 40, &r));
        assert_eq!(
            d.action,
            Action::Reject { reason: "failed 6 times alone while other records were written: connection reset".into() }
        );
        // The last record of the load has nothing to compare with: each
        // failure is a strike.
        let j = JobFacts { items: 1, attempts: 5, written_at_failure: Some(200), strikes: 1 };
        let d = decide(transient(), &j, &load(200, 1, &r));
        assert!(matches!(d.action, Action::Reject { .. }), "{:?}", d.action);
    }

    #[test]
    fn an_invalid_batch_is_split_at_once_and_a_single_record_rejected() {
        let r = Refusals::default();
        let invalid = || Outcome::Invalid { message: "ValidationException: bad".into() };
        let d = decide(invalid(), &job(25, 2), &load(40, 25, &r));
        assert_eq!(d.action, Action::Split { attempts: 2, written_at_failure: 40, backoff: false });
        // A half keeps its original mark.
        let half = JobFacts { items: 12, attempts: 2, written_at_failure: Some(30), strikes: 0 };
        let d = decide(invalid(), &half, &load(40, 25, &r));
        assert_eq!(d.action, Action::Split { attempts: 2, written_at_failure: 30, backoff: false });
        let d = decide(invalid(), &job(1, 0), &load(40, 25, &r));
        assert_eq!(d.action, Action::Reject { reason: "ValidationException: bad".into() });
        assert_eq!(d.refusals, Some(Refusals { message: "ValidationException: bad".into(), count: 1 }));
    }

    #[test]
    fn the_same_refusal_twenty_times_in_a_row_stops_the_load_before_or_after_writes() {
        let message = "ValidationException: bad";
        let invalid = || Outcome::Invalid { message: message.into() };
        let r = Refusals { message: message.into(), count: SYSTEMIC_REFUSALS - 1 };
        let d = decide(invalid(), &job(1, 0), &load(0, 25, &r));
        assert!(matches!(&d.action, Action::Stop { reason } if reason.contains("refused 20 records in a row")));
        // After 5,000 records written, a run of 20 refusals with nothing
        // written in between stops the load just the same.
        let d = decide(invalid(), &job(1, 0), &load(5000, 25, &r));
        assert!(matches!(&d.action, Action::Stop { reason } if reason.contains("refused 20 records in a row")));
        // One refusal fewer is only rejected.
        let shorter = Refusals { message: message.into(), count: SYSTEMIC_REFUSALS - 2 };
        let d = decide(invalid(), &job(1, 0), &load(5000, 25, &shorter));
        assert_eq!(d.action, Action::Reject { reason: message.into() });
        // A write resets the run.
        let d = decide(Outcome::all_written(1.0), &job(1, 0), &load(5000, 25, &r));
        assert_eq!(d.refusals, Some(Refusals { message: message.into(), count: 0 }));
        // Another message starts a new run.
        let d = decide(Outcome::Invalid { message: "other".into() }, &job(1, 0), &load(0, 25, &r));
        assert_eq!(d.refusals, Some(Refusals { message: "other".into(), count: 1 }));
    }

    #[test]
    fn a_cancelled_transaction_rejects_its_reasons_and_a_fatal_answer_stops() {
        let r = Refusals::default();
        let outcome = Outcome::Cancelled { reasons: vec![(1, "ConditionalCheckFailed".into(), "no".into())] };
        let d = decide(outcome, &job(3, 1), &load(0, 3, &r));
        assert_eq!(
            d.action,
            Action::Cancelled { rejected: vec![(1, "ConditionalCheckFailed: no".into())], attempts: 1 }
        );
        let d =
            decide(Outcome::Fatal { message: "ResourceNotFoundException: gone".into() }, &job(3, 0), &load(0, 3, &r));
        assert_eq!(d.action, Action::Stop { reason: "ResourceNotFoundException: gone".into() });
    }
}
