//! The MongoDB side of the pipeline: one request is one `insert` (or
//! `update` with upserts) command of many documents, unordered, and its
//! answer is sorted item by item into written, sent again, or rejected.
//!
//! Write errors, by code:
//! - transient (network, elections, shutdowns, write conflicts, time
//!   limits) and rate limiting (16500, Cosmos DB's): sent again;
//! - duplicate key (11000) on insert: our own earlier write when the
//!   stored document equals ours (an answer lost in a dropped connection,
//!   or records between the checkpoint and a crash), so it counts as
//!   written; otherwise the record is rejected with the server's message;
//! - anything else is the document's fault: rejected with the message.

use std::collections::HashMap;
use std::fmt;
use std::time::Duration;

use bson::raw::CString;
use bson::{cstr, doc, Bson, Document, RawArrayBuf, RawDocumentBuf};
use dynaburst_loader::{Limits, Outcome, Sink};
use mongodb::error::{Error, ErrorKind};
use mongodb::{Collection, Database};

/// How long one request may take before it is abandoned and sent again.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(60);
/// Duplicate key.
pub const DUPLICATE_KEY: i32 = 11000;
/// Cosmos DB's "request rate is large".
pub const REQUEST_RATE_TOO_LARGE: i32 = 16500;
/// Server error codes after which the same write may succeed later.
pub const TRANSIENT_CODES: &[i32] = &[
    6,     // HostUnreachable
    7,     // HostNotFound
    50,    // MaxTimeMSExpired
    89,    // NetworkTimeout
    91,    // ShutdownInProgress
    112,   // WriteConflict
    189,   // PrimarySteppedDown
    262,   // ExceededTimeLimit
    9001,  // SocketException
    10107, // NotWritablePrimary
    11600, // InterruptedAtShutdown
    11602, // InterruptedDueToReplStateChange
    13435, // NotPrimaryNoSecondaryOk
    13436, // NotPrimaryOrSecondary
];
/// Codes after which going on cannot help.
pub const FATAL_CODES: &[i32] = &[
    13,   // Unauthorized
    18,   // AuthenticationFailed
    8000, // Atlas: AtlasError (bad credentials)
];

/// Why a command cannot be built from its documents.
#[derive(Debug)]
pub enum CommandError {
    /// `--id-field` cannot be a BSON field name (it holds a NUL).
    IdField(bson::error::Error),
    /// An identifying value cannot be encoded as BSON.
    Id(bson::error::Error),
}

impl fmt::Display for CommandError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CommandError::IdField(e) => write!(f, "--id-field: {e}"),
            CommandError::Id(e) => write!(f, "cannot encode the id: {e}"),
        }
    }
}

impl std::error::Error for CommandError {}

/// How documents are written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MongoMode {
    /// Unordered inserts; a document whose `_id` exists is rejected (or
    /// counted as written when it is the same document).
    Insert,
    /// Replace by `_id` (or `--id-field`), inserting when missing: the
    /// last record of a key wins.
    Upsert,
}

impl MongoMode {
    /// The command's name, for latency percentiles and the report.
    pub fn command(self) -> &'static str {
        match self {
            MongoMode::Insert => "insert",
            MongoMode::Upsert => "update",
        }
    }
}

/// A document ready to send, with the value that identifies it.
#[derive(Debug)]
pub struct MongoItem {
    pub doc: RawDocumentBuf,
    /// `_id` on insert; the `--id-field` value (or `_id`) on upsert.
    pub id: Bson,
}

/// Writes into one collection.
pub struct MongoSink {
    pub database: Database,
    pub collection: Collection<Document>,
    pub name: String,
    pub mode: MongoMode,
    /// The field upserts match on (`_id` unless `--id-field`).
    pub id_field: String,
    pub limits: Limits,
}

impl Sink for MongoSink {
    type Item = MongoItem;

    fn request_name(&self) -> &'static str {
        self.mode.command()
    }

    fn limits(&self) -> Limits {
        self.limits
    }

    async fn write<'a>(&'a self, items: &'a [&'a MongoItem], _token: Option<&'a str>) -> Outcome {
        match tokio::time::timeout(REQUEST_TIMEOUT, self.send(items)).await {
            Ok(outcome) => outcome,
            Err(_) => Outcome::Transient { message: format!("no answer in {} s", REQUEST_TIMEOUT.as_secs()) },
        }
    }
}

impl MongoSink {
    fn command(&self, items: &[&MongoItem]) -> Result<RawDocumentBuf, CommandError> {
        let mut cmd = RawDocumentBuf::new();
        let mut array = RawArrayBuf::new();
        match self.mode {
            MongoMode::Insert => {
                cmd.append(cstr!("insert"), self.name.as_str());
                for item in items {
                    array.push(item.doc.clone());
                }
                cmd.append(cstr!("documents"), array);
            }
            MongoMode::Upsert => {
                cmd.append(cstr!("update"), self.name.as_str());
                let field = CString::try_from(self.id_field.as_str()).map_err(CommandError::IdField)?;
                for item in items {
                    // {field: {$eq: value}}: a value that looks like an
                    // operator or a regular expression matches itself only.
                    let id = bson::RawBson::try_from(item.id.clone()).map_err(CommandError::Id)?;
                    let mut eq = RawDocumentBuf::new();
                    eq.append(cstr!("$eq"), id);
                    let mut filter = RawDocumentBuf::new();
                    filter.append(&field, eq);
                    let mut update = RawDocumentBuf::new();
                    update.append(cstr!("q"), filter);
                    update.append(cstr!("u"), item.doc.clone());
                    update.append(cstr!("upsert"), true);
                    array.push(update);
                }
                cmd.append(cstr!("updates"), array);
            }
        }
        cmd.append(cstr!("ordered"), false);
        Ok(cmd)
    }

    async fn send(&self, items: &[&MongoItem]) -> Outcome {
        let cmd = match self.command(items) {
            Ok(c) => c,
            Err(e) => return Outcome::Invalid { message: e.to_string() },
        };
        let reply = match self.database.run_raw_command(cmd).await {
            Ok(r) => r,
            Err(e) => return classify(&e),
        };
        if let Ok(wce) = reply.get_document("writeConcernError") {
            // The writes may have happened without the durability asked
            // for: send them again (a repeated insert is recognised).
            return Outcome::Transient { message: format!("write concern error: {}", errmsg(wce)) };
        }
        let errors = reply.get_array("writeErrors").map(|a| a.as_slice()).unwrap_or(&[]);
        // The answer must account for every document: n done plus one write
        // error each. A server that stops at the first error (FerretDB's
        // update does, and reports index 0) would otherwise have the rest
        // counted as written: split the request until it does.
        let n = reply.get("n").and_then(as_index).unwrap_or(0);
        if n + errors.len() != items.len() {
            return Outcome::Invalid {
                message: format!(
                    "the server answered for {} of {} documents (n {n}, {} write errors): {}",
                    n + errors.len(),
                    items.len(),
                    errors.len(),
                    errors.first().and_then(|e| e.as_document()).map(errmsg).unwrap_or_default()
                ),
            };
        }
        if errors.is_empty() {
            return Outcome::all_written(0.0);
        }
        let mut unprocessed = Vec::new();
        let mut rejected = Vec::new();
        let mut duplicates: Vec<(usize, String)> = Vec::new();
        for e in errors {
            let Some(e) = e.as_document() else { continue };
            let Some(index) = e.get("index").and_then(as_index).filter(|i| *i < items.len()) else {
                return Outcome::Transient { message: format!("a write error without a valid index: {e}") };
            };
            let code = e.get("code").and_then(as_code).unwrap_or(0);
            let text = errmsg(e);
            // MongoDB's duplicate-key message already starts "E11000 ...".
            let message = if text.starts_with(&format!("E{code}")) { text } else { format!("E{code} {text}") };
            if code == DUPLICATE_KEY && self.mode == MongoMode::Insert {
                duplicates.push((index, message));
            } else if code == REQUEST_RATE_TOO_LARGE || TRANSIENT_CODES.contains(&code) {
                unprocessed.push(index);
            } else {
                rejected.push((index, message));
            }
        }
        if !duplicates.is_empty() {
            match self.stored(items, &duplicates).await {
                Ok(stored) => {
                    for (index, message) in duplicates {
                        let ours = Document::try_from(&items[index].doc).ok();
                        let same = matches!((&ours, stored.get(&index)), (Some(a), Some(b)) if a == b);
                        if !same {
                            rejected.push((index, message));
                        }
                    }
                }
                // Cannot tell yet: send them again.
                Err(_) => unprocessed.extend(duplicates.into_iter().map(|(i, _)| i)),
            }
        }
        Outcome::Written { unprocessed, rejected, units: 0.0 }
    }

    /// The stored documents with the `_id`s of `duplicates`, by index.
    async fn stored(
        &self,
        items: &[&MongoItem],
        duplicates: &[(usize, String)],
    ) -> Result<HashMap<usize, Document>, Error> {
        let ids: Vec<Bson> = duplicates.iter().map(|(i, _)| items[*i].id.clone()).collect();
        // From the primary: a lagging secondary would not have it yet.
        let primary = mongodb::options::SelectionCriteria::ReadPreference(mongodb::options::ReadPreference::Primary);
        let mut cursor = self.collection.find(doc! { "_id": { "$in": ids } }).selection_criteria(primary).await?;
        let mut by_id: Vec<Document> = Vec::with_capacity(duplicates.len());
        while cursor.advance().await? {
            by_id.push(cursor.deserialize_current()?);
        }
        let mut out = HashMap::new();
        for (i, _) in duplicates {
            if let Some(d) = by_id.iter().find(|d| d.get("_id") == Some(&items[*i].id)) {
                out.insert(*i, d.clone());
            }
        }
        Ok(out)
    }
}

/// A whole, non-negative BSON number (an index, a count, a size).
pub(crate) fn as_index(b: &Bson) -> Option<usize> {
    match b {
        Bson::Int32(i) => usize::try_from(*i).ok(),
        Bson::Int64(i) => usize::try_from(*i).ok(),
        Bson::Double(d) if *d >= 0.0 && d.fract() == 0.0 => Some(*d as usize),
        _ => None,
    }
}

fn as_code(b: &Bson) -> Option<i32> {
    match b {
        Bson::Int32(i) => Some(*i),
        Bson::Int64(i) => i32::try_from(*i).ok(),
        Bson::Double(d) => Some(*d as i32),
        _ => None,
    }
}

fn errmsg(d: &Document) -> String {
    d.get_str("errmsg").map(str::to_string).unwrap_or_else(|_| d.to_string())
}

/// Sorts a failed command: network trouble and transient server states are
/// tried again, rate limiting slows the load, bad credentials stop it, and
/// a command refused for what it holds is split to find the bad document.
pub fn classify(e: &Error) -> Outcome {
    let message = e.to_string();
    if e.contains_label("RetryableWriteError") || e.contains_label("TransientTransactionError") {
        return Outcome::Transient { message };
    }
    match e.kind.as_ref() {
        ErrorKind::Command(c) if c.code == REQUEST_RATE_TOO_LARGE => Outcome::Throttled { code: c.code_name.clone() },
        ErrorKind::Command(c) if FATAL_CODES.contains(&c.code) => Outcome::Fatal { message },
        ErrorKind::Command(c) if TRANSIENT_CODES.contains(&c.code) => Outcome::Transient { message },
        ErrorKind::Command(_) => Outcome::Invalid { message },
        ErrorKind::Authentication { .. } => Outcome::Fatal { message },
        ErrorKind::InvalidArgument { .. } => Outcome::Invalid { message },
        _ => Outcome::Transient { message },
    }
}
