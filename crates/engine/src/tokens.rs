//! The idempotency cache of TransactWriteItems: what a ClientRequestToken
//! answered, for ten minutes.

use std::collections::{HashMap, VecDeque};

use crate::error::EngineError;
use crate::types::{Millis, ReturnCapacity, TransactWriteOutput};
use crate::IDEMPOTENT_REPLAY_READ_UNITS;

/// How long a ClientRequestToken is remembered after its request completes.
pub const IDEMPOTENCY_WINDOW_MS: u64 = 10 * 60 * 1000;
/// Most remembered ClientRequestTokens (oldest are forgotten first).
pub const MAX_REMEMBERED_TOKENS: usize = 100_000;

struct TokenEntry {
    fingerprint: u64,
    completed_at: Millis,
    output: TransactWriteOutput,
}

/// Remembered tokens, bounded by age and by count.
#[derive(Default)]
pub(crate) struct TokenCache {
    entries: HashMap<String, TokenEntry>,
    order: VecDeque<(Millis, String)>,
}

impl TokenCache {
    fn prune(&mut self, now: Millis) {
        while let Some((t, _)) = self.order.front() {
            let expired = now.0.saturating_sub(t.0) > IDEMPOTENCY_WINDOW_MS;
            if !expired && self.order.len() <= MAX_REMEMBERED_TOKENS {
                break;
            }
            if let Some((t, token)) = self.order.pop_front() {
                if self.entries.get(&token).is_some_and(|e| e.completed_at == t) {
                    self.entries.remove(&token);
                }
            }
        }
    }

    /// The answer to a replay of `token`, if it is remembered: the recorded
    /// output read back (2 read units per table, no writes: reference B11;
    /// the API model: "Subsequent calls ... return the number of read
    /// capacity units consumed"), or a mismatch when the parameters differ.
    pub(crate) fn replay(
        &mut self,
        token: &str,
        fingerprint: u64,
        return_capacity: ReturnCapacity,
        now: Millis,
    ) -> Result<Option<TransactWriteOutput>, EngineError> {
        self.prune(now);
        let Some(entry) = self.entries.get(token) else { return Ok(None) };
        if entry.fingerprint != fingerprint {
            return Err(EngineError::IdempotentParameterMismatch);
        }
        let mut output = entry.output.clone();
        for c in &mut output.consumed {
            c.read_units = IDEMPOTENT_REPLAY_READ_UNITS;
            c.write_units = 0.0;
            c.include_table_detail = return_capacity == ReturnCapacity::Indexes;
        }
        if return_capacity == ReturnCapacity::None {
            output.consumed.clear();
        }
        Ok(Some(output))
    }

    /// Remembers what `token` answered (with every table's consumption).
    pub(crate) fn remember(&mut self, token: String, fingerprint: u64, output: TransactWriteOutput, now: Millis) {
        self.order.push_back((now, token.clone()));
        self.entries.insert(token, TokenEntry { fingerprint, completed_at: now, output });
        self.prune(now);
    }
}
