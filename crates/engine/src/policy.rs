//! Resource-based policies: PutResourcePolicy, GetResourcePolicy,
//! DeleteResourcePolicy and CreateTable's ResourcePolicy, as DynamoDB
//! answers them today (ack-api-quirks DDB-TABLE-205 to -214, -233, -246,
//! -347, -444, -445; moto's tests run against AWS for the texts of
//! PolicyNotFoundException).
//!
//! A table has one policy slot, and each of its streams one of its own.
//! The wire layer checks and canonicalises a document (it is JSON); the
//! engine keeps it with the table's settings (so it is in the catalog and
//! survives a restart), and answers the revision rules:
//! - a RevisionId is the epoch milliseconds of the change that made it;
//! - putting an equivalent document again changes nothing and answers the
//!   same RevisionId;
//! - ExpectedRevisionId must name the current revision (`NO_POLICY`: none);
//! - after an effective change (a new document, or a deletion) the slot
//!   takes no other change for [`POLICY_COOLDOWN_MS`] (ThrottlingException);
//!   a deletion leaves its revision as the slot's for that long.
//!
//! Policies are kept and shown, not enforced: this server has no principals.

use std::collections::BTreeMap;

use dynaburst_model::time::UtcTime;
use dynaburst_model::Millis;

use crate::control::{invalid, not_an_arn, Arn};
use crate::engine::Engine;
use crate::error::EngineError;
use crate::table::Table;

/// How long a policy slot takes no other change after one (DDB-TABLE-206,
/// -464: "modified within the previous 15000 milliseconds").
pub const POLICY_COOLDOWN_MS: u64 = 15_000;
/// Largest policy document, in bytes, whitespace included (DDB-TABLE-211).
pub const MAX_POLICY_BYTES: usize = 20_480;
/// ExpectedRevisionId for "only if the resource has no policy".
pub const NO_POLICY: &str = "NO_POLICY";
/// The key of the table's own slot in [`Policies`] (a stream's is its label).
pub const TABLE_SLOT: &str = "";

/// A policy document as the wire layer made it: canonical JSON text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PolicyDocument {
    pub text: String,
    /// Sent without a Version: shown as 2008-10-17, but not the same
    /// document as one that names it (DDB-TABLE-354).
    pub version_implicit: bool,
}

/// One slot: its document (None once deleted) and the revision of its last
/// effective change.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PolicySlot {
    pub document: Option<PolicyDocument>,
    pub revision: u64,
}

impl PolicySlot {
    /// Until when the slot takes no other change.
    fn cooling_until(&self) -> u64 {
        self.revision.saturating_add(POLICY_COOLDOWN_MS)
    }

    /// Whether the slot still counts: a document, or a deletion within its
    /// cooldown (a tombstone: DDB-TABLE-205, -246).
    fn live(&self, now: Millis) -> bool {
        self.document.is_some() || now.0 < self.cooling_until()
    }
}

/// A table's policy slots, by [`TABLE_SLOT`] or stream label.
pub type Policies = BTreeMap<String, PolicySlot>;

/// What a policy operation's ResourceArn names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PolicyTarget {
    Table { name: String },
    Stream { name: String, label: String },
}

impl PolicyTarget {
    pub fn table_name(&self) -> &str {
        match self {
            PolicyTarget::Table { name } | PolicyTarget::Stream { name, .. } => name,
        }
    }

    pub fn is_stream(&self) -> bool {
        matches!(self, PolicyTarget::Stream { .. })
    }

    fn slot(&self) -> &str {
        match self {
            PolicyTarget::Table { .. } => TABLE_SLOT,
            PolicyTarget::Stream { label, .. } => label,
        }
    }

    /// How throttling texts name the slot.
    fn subject(&self) -> String {
        match self {
            PolicyTarget::Table { name } => format!("table {name}"),
            PolicyTarget::Stream { label, .. } => format!("stream {label}"),
        }
    }
}

fn not_found(arn: &str) -> EngineError {
    EngineError::PolicyNotFound(format!("Resource-based policy not found for the provided ResourceArn: {arn}"))
}

fn stream_not_found(name: &str, label: &str) -> EngineError {
    EngineError::ResourceNotFound(format!("Requested resource not found: Stream: {label} not found for Table: {name}"))
}

/// The ExpectedRevisionId check, before any other (DDB-TABLE-206): against
/// the slot as it counts now.
fn check_expected(table: &str, slot: Option<&PolicySlot>, expected: Option<&str>) -> Result<(), EngineError> {
    let prefix = "Resource-based policy not found for the provided ResourceArn: ";
    match (expected, slot) {
        (None, _) => Ok(()),
        (Some(NO_POLICY), Some(slot)) if slot.document.is_some() => Err(EngineError::PolicyNotFound(format!(
            "{prefix}Requested policy update expecting none to be present for table {table}, but a policy exists with revision id {}.",
            slot.revision
        ))),
        (Some(NO_POLICY), _) => Ok(()),
        (Some(expected), None) => Err(EngineError::PolicyNotFound(format!(
            "{prefix}Requested update for policy with revision id {expected}, but table {table} has no associated policy."
        ))),
        (Some(expected), Some(slot)) if expected != slot.revision.to_string() => Err(EngineError::PolicyNotFound(format!(
            "{prefix}Requested update for policy with revision id {expected}, but the policy associated to target table {table} has revision id {}.",
            slot.revision
        ))),
        (Some(_), Some(_)) => Ok(()),
    }
}

/// Refuses a change to a slot changed less than [`POLICY_COOLDOWN_MS`] ago.
fn check_cooldown(target: &PolicyTarget, slot: Option<&PolicySlot>, now: Millis) -> Result<(), EngineError> {
    match slot {
        Some(slot) if now.0 < slot.cooling_until() => {
            let after = UtcTime::from_unix_ms(slot.cooling_until() as i64).iso8601_millis();
            Err(EngineError::ControlThrottled(format!(
                "Resource-based policy for {} modified within the previous {POLICY_COOLDOWN_MS} milliseconds. Please try again after {after}Z.",
                target.subject()
            )))
        }
        _ => Ok(()),
    }
}

impl Engine {
    /// The table or stream a policy operation's ResourceArn names, checked
    /// as DynamoDB checks it (DDB-TABLE-212): the form, the account, the
    /// region and partition, and the kind of resource (a table or a
    /// stream). Whether it exists is the operation's to find out.
    pub fn policy_target(&self, arn: &str) -> Result<PolicyTarget, EngineError> {
        if !arn.starts_with("arn:") {
            return Err(not_an_arn(arn));
        }
        let foreign = || invalid(format!("Provided Arn is not a DynamoDB resource arn: {arn}"));
        let elsewhere = || invalid(format!("Invalid resource Arn: {arn}"));
        let parsed = Arn::parse(arn).ok_or_else(foreign)?;
        if parsed.service != "dynamodb" {
            return Err(foreign());
        }
        if parsed.account != self.config.account_id {
            return Err(EngineError::validation(
                "This action is only supported by accounts that match the resource owner\u{2019}s account.",
            ));
        }
        if parsed.partition != "aws" || parsed.region != self.config.region {
            return Err(elsewhere());
        }
        let mut segments = parsed.table_path().ok_or_else(foreign)?;
        let name = segments.next().unwrap_or_default().to_string();
        if name.is_empty() {
            return Err(foreign());
        }
        match (segments.next(), segments.next(), segments.next()) {
            (None, _, _) => Ok(PolicyTarget::Table { name }),
            (Some("stream"), Some(label), None) if !label.is_empty() => {
                Ok(PolicyTarget::Stream { name, label: label.to_string() })
            }
            (Some("backup"), Some(_), _) => Err(foreign()),
            _ => Err(invalid(format!(
                "Invalid resource arn provided, only table or stream is accepted. Provided resource arn: {arn}"
            ))),
        }
    }

    /// The live table `target` names, and whether its stream exists.
    fn policy_table(&self, target: &PolicyTarget) -> Result<std::sync::Arc<Table>, EngineError> {
        let name = target.table_name();
        let table = self.tables.read().get(name).cloned().ok_or_else(|| EngineError::table_not_found_named(name))?;
        if let PolicyTarget::Stream { label, .. } = target {
            let current = table.settings.lock().stream.as_ref().is_some_and(|s| s.label == *label);
            if !current && !table.data.read().streams.iter().any(|l| l.label == *label) {
                return Err(stream_not_found(name, label));
            }
        }
        Ok(table)
    }

    /// Changes `table`'s policy slots under its settings' lock, saved to the
    /// catalog before memory.
    fn change_policies<R>(
        &self,
        table: &Table,
        change: impl FnOnce(&mut Policies) -> Result<(R, bool), EngineError>,
    ) -> Result<R, EngineError> {
        // The data lock first (the engine's order): the index definitions
        // saved with the policies are the ones in force.
        let data = table.data.read();
        let defs: Vec<_> = data.indexes.iter().map(|i| i.def.clone()).collect();
        let mut guard = table.settings.lock();
        let mut settings = guard.clone();
        let (out, changed) = change(&mut settings.policies)?;
        if changed {
            self.storage.save_table_meta(&table.meta_with(settings.clone(), defs))?;
            *guard = settings;
        }
        Ok(out)
    }

    /// PutResourcePolicy: the RevisionId of the document now in the slot.
    pub fn put_resource_policy(
        &self,
        target: &PolicyTarget,
        document: PolicyDocument,
        expected: Option<&str>,
        now: Millis,
    ) -> Result<String, EngineError> {
        let table = self.policy_table(target)?;
        self.change_policies(&table, |policies| {
            policies.retain(|_, slot| slot.live(now));
            let slot = policies.get(target.slot());
            check_expected(&table.name, slot, expected)?;
            if let Some(slot) = slot.filter(|s| s.document.as_ref() == Some(&document)) {
                return Ok((slot.revision.to_string(), false));
            }
            check_cooldown(target, slot, now)?;
            policies.insert(target.slot().to_string(), PolicySlot { document: Some(document), revision: now.0 });
            Ok((now.0.to_string(), true))
        })
    }

    /// GetResourcePolicy: the document and its RevisionId. A stream of a
    /// deleted table has no policy (DDB-TABLE-214).
    pub fn get_resource_policy(
        &self,
        arn: &str,
        target: &PolicyTarget,
        now: Millis,
    ) -> Result<(String, String), EngineError> {
        let table = match self.policy_table(target) {
            Ok(table) => table,
            Err(e) if target.is_stream() && self.retired_stream_exists(arn, now) => {
                drop(e);
                return Err(not_found(arn));
            }
            Err(e) => return Err(e),
        };
        let settings = table.settings.lock();
        match settings.policies.get(target.slot()).and_then(|s| s.document.as_ref().map(|d| (d, s.revision))) {
            Some((document, revision)) => Ok((document.text.clone(), revision.to_string())),
            None => Err(not_found(arn)),
        }
    }

    /// DeleteResourcePolicy: the RevisionId of the policy removed; within a
    /// deletion's cooldown, the deletion's; None when there was none.
    pub fn delete_resource_policy(
        &self,
        target: &PolicyTarget,
        expected: Option<&str>,
        now: Millis,
    ) -> Result<Option<String>, EngineError> {
        let table = self.policy_table(target)?;
        self.change_policies(&table, |policies| {
            policies.retain(|_, slot| slot.live(now));
            let slot = policies.get(target.slot());
            check_expected(&table.name, slot, expected)?;
            let Some(slot) = slot else { return Ok((None, false)) };
            if slot.document.is_none() {
                return Ok((Some(slot.revision.to_string()), false));
            }
            check_cooldown(target, Some(slot), now)?;
            let removed = slot.revision.to_string();
            policies.insert(target.slot().to_string(), PolicySlot { document: None, revision: now.0 });
            Ok((Some(removed), true))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(text: &str) -> PolicyDocument {
        PolicyDocument { text: text.into(), version_implicit: false }
    }

    #[test]
    fn a_tombstone_counts_for_its_cooldown_only() {
        let slot = PolicySlot { document: None, revision: 1_000 };
        assert!(slot.live(Millis(1_000 + POLICY_COOLDOWN_MS - 1)));
        assert!(!slot.live(Millis(1_000 + POLICY_COOLDOWN_MS)));
        assert!(PolicySlot { document: Some(doc("{}")), revision: 1 }.live(Millis(u64::MAX)));
    }

    #[test]
    fn expected_revisions_are_checked_with_dynamodbs_texts() {
        let held = PolicySlot { document: Some(doc("{}")), revision: 17 };
        let gone = PolicySlot { document: None, revision: 19 };
        let message = |r: Result<(), EngineError>| match r {
            Err(EngineError::PolicyNotFound(m)) => m,
            other => panic!("expected PolicyNotFound, got {other:?}"),
        };
        let p = "Resource-based policy not found for the provided ResourceArn: ";
        assert_eq!(check_expected("t", Some(&held), Some("17")), Ok(()));
        assert_eq!(check_expected("t", None, Some(NO_POLICY)), Ok(()));
        assert_eq!(check_expected("t", Some(&gone), Some(NO_POLICY)), Ok(()));
        assert_eq!(
            message(check_expected("t", Some(&held), Some(NO_POLICY))),
            format!("{p}Requested policy update expecting none to be present for table t, but a policy exists with revision id 17.")
        );
        assert_eq!(
            message(check_expected("t", Some(&held), Some("5"))),
            format!("{p}Requested update for policy with revision id 5, but the policy associated to target table t has revision id 17.")
        );
        assert_eq!(
            message(check_expected("t", Some(&gone), Some("17"))),
            format!("{p}Requested update for policy with revision id 17, but the policy associated to target table t has revision id 19.")
        );
        assert_eq!(
            message(check_expected("t", None, Some("5"))),
            format!("{p}Requested update for policy with revision id 5, but table t has no associated policy.")
        );
    }
}
