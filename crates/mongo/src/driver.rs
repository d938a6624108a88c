//! Connecting to a MongoDB-wire server and running a load through the
//! official driver (the `driver` feature; see the crate's docs).

use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use crate::convert;
use bson::{doc, Bson, Document};
use dynaburst_input::{Format, InputSpec, Reader, Record};
use dynaburst_loader::{
    load_report, open_session, run_pipeline, Limits, LoadError, LoadResult, MongoReport, MongoServerReport, Report,
    SinkItem, Snapshot, TargetReport, TokioClock, Tuning, MAX_CONCURRENCY,
};
use mongodb::options::ClientOptions;
use serde_json::{json, Value};
use tokio::sync::watch;

pub use crate::sink::{MongoItem, MongoMode, MongoSink};

/// Documents per command by default.
pub const DEFAULT_BATCH_SIZE: usize = 1000;
/// Room left in a command for everything but its documents: a command is
/// one BSON document, at most `maxBsonObjectSize` plus 16 KiB.
pub const COMMAND_OVERHEAD_BYTES: usize = 16 * 1024;
/// MongoDB's defaults, used when the server does not say.
pub const DEFAULT_MAX_BSON_OBJECT_SIZE: usize = 16 * 1024 * 1024;
pub const DEFAULT_MAX_WRITE_BATCH_SIZE: usize = 100_000;
/// How long to wait for a server to answer `hello` at the start.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(30);
/// FerretDB v1 stops answering once 100 or more upserts are in flight at
/// once (its SQLite backend holds 100 connections): against it, upsert
/// batch size times requests in flight is kept at or below this.
pub const FERRETDB_MAX_UPSERTS_IN_FLIGHT: usize = 99;

/// What `dynaburst load --target mongodb://...` was asked to do.
#[derive(Clone, Debug)]
pub struct MongoOptions {
    pub input: InputSpec,
    /// The URI as given (passed to the driver untouched).
    pub uri: String,
    /// `--database`; else the URI's path; else `test`.
    pub database: Option<String>,
    pub collection: String,
    pub mode: MongoMode,
    /// `--id-field` (upsert only): match on this field instead of `_id`.
    pub id_field: Option<String>,
    pub batch_size: usize,
    pub tuning: Tuning,
    pub rejects: Option<PathBuf>,
    pub checkpoint: Option<PathBuf>,
    pub resume: bool,
}

/// The URI with any password replaced by `****`.
pub fn redact(uri: &str) -> String {
    let Some((scheme, rest)) = uri.split_once("://") else { return uri.to_string() };
    // The user information ends at the last '@' before the options: a
    // password may hold '/' or '@' when its percent-encoding was forgotten.
    let options = rest.find('?').unwrap_or(rest.len());
    match rest[..options].rfind('@') {
        Some(at) => {
            let (userinfo, after) = (&rest[..at], &rest[at..]);
            let user =
                userinfo.split_once(':').map(|(u, _)| format!("{u}:****")).unwrap_or_else(|| userinfo.to_string());
            format!("{scheme}://{user}{after}")
        }
        None => uri.to_string(),
    }
}

/// The database a load goes to: `--database`, else the URI's path.
pub fn database_name(uri: &str, given: Option<&str>) -> String {
    if let Some(d) = given {
        return d.to_string();
    }
    let path = uri.split_once("://").map(|(_, r)| r).unwrap_or(uri);
    let path = path.split_once('/').map(|(_, p)| p).unwrap_or("");
    let db = path.split(['?', '/']).next().unwrap_or("");
    if db.is_empty() {
        "test".to_string()
    } else {
        db.to_string()
    }
}

fn usage(m: impl Into<String>) -> LoadError {
    LoadError::Usage(m.into())
}

fn check_options(opts: &MongoOptions) -> Result<(), LoadError> {
    if opts.uri.starts_with("mongodb+srv://") {
        return Err(usage(
            "mongodb+srv:// URIs need DNS SRV lookups, which this build leaves out: list the hosts instead (mongodb://host1:27017,host2:27017/?replicaSet=...)",
        ));
    }
    if !opts.uri.starts_with("mongodb://") {
        return Err(usage(format!("--target takes a mongodb:// URI, not {}", redact(&opts.uri))));
    }
    if opts.batch_size == 0 {
        return Err(usage("--batch-size must be at least 1"));
    }
    if opts.collection.is_empty() || opts.collection.contains('$') || opts.collection.contains('\0') {
        return Err(usage(format!("'{}' is not a collection name", opts.collection)));
    }
    if opts.id_field.is_some() && opts.mode != MongoMode::Upsert {
        return Err(usage("--id-field chooses what --mode upsert matches on; inserts always use _id"));
    }
    Ok(())
}

/// Why a record cannot be sent, found before sending it. The record is
/// rejected with this message (the rejects file's `error`).
#[derive(Debug)]
pub enum PrepareError {
    /// A JSON Lines record that is not a valid document.
    Record(convert::RecordError),
    /// A CSV or DynamoDB JSON record that is not a valid item.
    Item(dynaburst_input::RecordError),
    /// Upserting by `--id-field`, and the document lacks that field.
    MissingIdField(String),
    /// The identifying field (`_id` or `--id-field`) holds an array.
    ArrayId(String),
    /// The document cannot be encoded, or is over 16 MiB.
    Document(convert::DocumentError),
}

impl fmt::Display for PrepareError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PrepareError::Record(e) => e.fmt(f),
            PrepareError::Item(e) => e.fmt(f),
            PrepareError::MissingIdField(field) => write!(f, "missing the --id-field {field}"),
            PrepareError::ArrayId(field) => write!(f, "{field} may not be an array"),
            PrepareError::Document(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for PrepareError {}

/// What a record becomes before it is sent, decided once per load.
#[derive(Clone)]
struct Preparer {
    format: Format,
    id_field: Option<String>,
    run_key: u64,
}

impl Preparer {
    /// Converts one record (on the reader thread): JSON Lines from its
    /// text, CSV and DynamoDB JSON from their typed items; a missing
    /// `_id` becomes the record's deterministic ObjectId (from its byte
    /// offset in the input).
    fn prepare(&self, rec: &Record) -> Result<SinkItem<MongoItem>, PrepareError> {
        let mut doc: Document = match self.format {
            Format::JsonLines => convert::json_line_to_document(&rec.raw).map_err(PrepareError::Record)?,
            _ => convert::item_to_document(rec.item.as_ref().map_err(|e| PrepareError::Item(e.clone()))?),
        };
        let id = match &self.id_field {
            // Matching on another field: the server keeps (or makes) _id,
            // since a replacement may not change a stored document's _id.
            Some(field) => doc.get(field).cloned().ok_or_else(|| PrepareError::MissingIdField(field.clone()))?,
            // The record's byte offset, not its line: shards count lines
            // from their own start, offsets are the file's.
            None => convert::ensure_id(&mut doc, self.run_key, rec.offset).clone(),
        };
        if matches!(id, Bson::Array(_)) {
            let field = self.id_field.as_deref().unwrap_or(convert::ID_FIELD);
            return Err(PrepareError::ArrayId(field.to_string()));
        }
        let raw = convert::to_raw_document(&doc).map_err(PrepareError::Document)?;
        let hash = convert::identity_hash(&id);
        let bytes = raw.as_bytes().len();
        // The document's bytes, and the id's (an _id of its own, or a
        // copy of the field's value).
        let held = bytes + id_heap_bytes(&id);
        Ok(SinkItem { partition: hash, slot: hash, units: 0.0, bytes, held, item: MongoItem { doc: raw, id } })
    }
}

/// Heap bytes an identifying value holds (text, bytes, or a document's
/// or array's values, by their approximate size).
fn id_heap_bytes(id: &Bson) -> usize {
    match id {
        Bson::String(s) => s.capacity(),
        Bson::Binary(b) => b.bytes.capacity(),
        Bson::Document(d) => d.iter().map(|(k, v)| k.capacity() + std::mem::size_of::<Bson>() + id_heap_bytes(v)).sum(),
        Bson::Array(a) => a.iter().map(|v| std::mem::size_of::<Bson>() + id_heap_bytes(v)).sum(),
        _ => 0,
    }
}

/// Identifies one input for generated ids: its path, size and modification
/// time, and the target, so the same file into the same collection always
/// gives the same ids (a resumed or repeated load never duplicates a
/// document). Standard input has neither size nor time: the seed stands in.
fn run_key(opts: &MongoOptions, database: &str) -> u64 {
    let target = format!("{database}.{}", opts.collection);
    match &opts.input.path {
        Some(p) => {
            let meta = std::fs::metadata(p).ok();
            let size = meta.as_ref().map(|m| m.len()).unwrap_or(0);
            let mtime = meta
                .and_then(|m| m.modified().ok())
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .map(|d| d.as_nanos())
                .unwrap_or(0);
            let path = std::fs::canonicalize(p).unwrap_or_else(|_| p.clone());
            convert::run_key(&[
                path.to_string_lossy().as_bytes(),
                &size.to_le_bytes(),
                &mtime.to_le_bytes(),
                target.as_bytes(),
            ])
        }
        None => convert::run_key(&[b"-", &opts.tuning.seed.to_le_bytes(), target.as_bytes()]),
    }
}

/// What the server says of itself.
#[derive(Clone, Debug)]
pub struct ServerInfo {
    /// `MongoDB 7.0.2`, `FerretDB v1.24.0`, ...
    pub product: String,
    pub ferretdb: bool,
    pub max_bson_object_size: usize,
    pub max_message_size_bytes: Option<usize>,
    pub max_write_batch_size: usize,
}

fn as_usize(d: &Document, key: &str) -> Option<usize> {
    d.get(key).and_then(crate::sink::as_index)
}

/// Connects and asks the server for its limits and name.
pub async fn connect(uri: &str, database: &str) -> Result<(mongodb::Client, ServerInfo), LoadError> {
    let shown = redact(uri);
    let mut options = ClientOptions::parse(uri).await.map_err(|e| usage(format!("cannot use the URI {shown}: {e}")))?;
    options.app_name.get_or_insert_with(|| "dynaburst".to_string());
    options.server_selection_timeout.get_or_insert(CONNECT_TIMEOUT);
    options.connect_timeout.get_or_insert(CONNECT_TIMEOUT);
    // Enough connections for every request in flight.
    options.max_pool_size.get_or_insert(MAX_CONCURRENCY as u32 + 4);
    let client =
        mongodb::Client::with_options(options).map_err(|e| usage(format!("cannot use the URI {shown}: {e}")))?;
    let db = client.database(database);
    let hello = db
        .run_command(doc! { "hello": 1 })
        .await
        .map_err(|e| LoadError::Table(format!("cannot reach {shown}: {e}: is the server up, and the URI right?")))?;
    let build = db.run_command(doc! { "buildInfo": 1 }).await.unwrap_or_default();
    let version = build.get_str("version").unwrap_or("?").to_string();
    let ferretdb = build.contains_key("ferretdbVersion") || build.contains_key("ferretdb");
    let product = match build.get_str("ferretdbVersion") {
        Ok(v) => format!("FerretDB {v}"),
        Err(_) if ferretdb => format!("FerretDB (MongoDB {version})"),
        Err(_) => format!("MongoDB {version}"),
    };
    let info = ServerInfo {
        product,
        ferretdb,
        max_bson_object_size: as_usize(&hello, "maxBsonObjectSize")
            .or_else(|| as_usize(&build, "maxBsonObjectSize"))
            .unwrap_or(DEFAULT_MAX_BSON_OBJECT_SIZE),
        max_message_size_bytes: as_usize(&hello, "maxMessageSizeBytes"),
        max_write_batch_size: as_usize(&hello, "maxWriteBatchSize").unwrap_or(DEFAULT_MAX_WRITE_BATCH_SIZE),
    };
    Ok((client, info))
}

/// Runs a load into a collection.
pub async fn load(
    opts: MongoOptions,
    progress: watch::Sender<Snapshot>,
    stop: watch::Receiver<bool>,
) -> Result<LoadResult, LoadError> {
    check_options(&opts)?;
    let database = database_name(&opts.uri, opts.database.as_deref());
    let shown = redact(&opts.uri);
    let target = format!("{shown} {database}.{}", opts.collection);
    let mut session =
        open_session(opts.input.clone(), &target, opts.checkpoint.clone(), opts.rejects.clone(), opts.resume)?;
    // Resuming: the ids the interrupted load generated, whatever became of
    // the file's modification time since.
    let id_key = *session.id_key.get_or_insert_with(|| run_key(&opts, &database));
    let (client, server) = connect(&opts.uri, &database).await?;
    let mut notes = Vec::new();
    let mut max_items = opts.batch_size.min(server.max_write_batch_size.max(1));
    if max_items < opts.batch_size {
        notes.push(format!("--batch-size {} lowered to the server's maxWriteBatchSize {max_items}", opts.batch_size));
    }
    let mut max_concurrency = MAX_CONCURRENCY;
    if server.ferretdb && opts.mode == MongoMode::Upsert {
        max_items = max_items.min(FERRETDB_MAX_UPSERTS_IN_FLIGHT);
        max_concurrency = (FERRETDB_MAX_UPSERTS_IN_FLIGHT / max_items).max(1);
        notes.push(format!(
            "FerretDB stops answering with 100 or more upserts in flight: upserts go {max_items} a command, at most {max_concurrency} commands at once"
        ));
    }
    let mut tuning = opts.tuning.clone();
    if let dynaburst_loader::Concurrency::Fixed(n) = tuning.concurrency {
        if n > max_concurrency {
            notes.push(format!("--concurrency {n} lowered to {max_concurrency}"));
            tuning.concurrency = dynaburst_loader::Concurrency::Fixed(max_concurrency);
        }
    }
    let limits = Limits {
        max_items,
        max_bytes: server.max_bson_object_size.saturating_sub(COMMAND_OVERHEAD_BYTES).max(1),
        max_concurrency,
        capacity_units_per_s: None,
    };
    let db = client.database(&database);
    let sink = Arc::new(MongoSink {
        collection: db.collection(&opts.collection),
        database: db,
        name: opts.collection.clone(),
        mode: opts.mode,
        id_field: opts.id_field.clone().unwrap_or_else(|| convert::ID_FIELD.to_string()),
        limits,
    });
    let preparer = Preparer { format: opts.input.format, id_field: opts.id_field.clone(), run_key: id_key };
    let out = run_pipeline(
        sink,
        &session,
        &tuning,
        move |r: &Record| preparer.prepare(r).map_err(|e| e.to_string()),
        progress,
        stop,
        TokioClock,
    )
    .await?;
    let target = MongoReport {
        target: shown,
        database,
        collection: opts.collection.clone(),
        server: MongoServerReport {
            product: server.product.clone(),
            max_bson_object_size: server.max_bson_object_size,
            max_message_size_bytes: server.max_message_size_bytes,
            max_write_batch_size: server.max_write_batch_size,
        },
        batch_size: max_items,
        notes,
    };
    let load = load_report(&session, &tuning, opts.mode.command(), &out);
    Ok(LoadResult::new(&out, Report { target: TargetReport::MongoDb(target), load }))
}

/// `--dry-run`: converts and checks every record (JSON, Extended JSON, the
/// 16 MiB limit, the upsert field) without connecting. What a particular
/// server refuses (`$`-prefixed names on some) shows only in a load.
pub fn dry_run(opts: &MongoOptions) -> Result<Value, LoadError> {
    check_options(opts)?;
    let database = database_name(&opts.uri, opts.database.as_deref());
    let preparer =
        Preparer { format: opts.input.format, id_field: opts.id_field.clone(), run_key: run_key(opts, &database) };
    let reader = Reader::open(opts.input.clone()).map_err(LoadError::Input)?;
    let (mut read, mut valid, mut rejected, mut bytes, mut largest) = (0u64, 0u64, 0u64, 0u64, 0usize);
    let mut problems = Vec::new();
    for rec in reader {
        let rec = rec.map_err(LoadError::Input)?;
        read += 1;
        match preparer.prepare(&rec) {
            Ok(item) => {
                valid += 1;
                bytes += item.bytes as u64;
                largest = largest.max(item.bytes);
            }
            Err(e) => {
                rejected += 1;
                if problems.len() < 20 {
                    problems.push(json!({ "line": rec.line, "error": e.to_string() }));
                }
            }
        }
    }
    Ok(json!({
        "target": redact(&opts.uri),
        "database": database,
        "collection": opts.collection,
        "mode": opts.mode.command(),
        "records": { "read": read, "valid": valid, "rejected": rejected },
        "bson_bytes": bytes,
        "largest_document_bytes": largest,
        "problems": problems,
    }))
}

/// Drops a collection (the bench's clean-up).
pub async fn drop_collection(uri: &str, database: &str, collection: &str) -> Result<(), LoadError> {
    let (client, _) = connect(uri, database).await?;
    client
        .database(database)
        .collection::<Document>(collection)
        .drop()
        .await
        .map_err(|e| LoadError::Table(format!("cannot drop {database}.{collection}: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_never_show_and_the_database_comes_from_the_uri() {
        assert_eq!(redact("mongodb://u:secret@h1:27017,h2/db?tls=true"), "mongodb://u:****@h1:27017,h2/db?tls=true");
        assert_eq!(redact("mongodb://u@h/db"), "mongodb://u@h/db");
        assert_eq!(redact("mongodb://h:1/db"), "mongodb://h:1/db");
        // An @ in the password (percent-encoding forgotten) still hides it.
        assert_eq!(redact("mongodb://u:p@ss@h/db"), "mongodb://u:****@h/db");
        assert_eq!(redact("mongodb://u:pa/ss@h/db?x=1"), "mongodb://u:****@h/db?x=1");
        assert_eq!(database_name("mongodb://h:1/sales?tls=true", None), "sales");
        assert_eq!(database_name("mongodb://h:1/?tls=true", None), "test");
        assert_eq!(database_name("mongodb://h:1", None), "test");
        assert_eq!(database_name("mongodb://h:1/sales", Some("other")), "other");
    }

    fn record(line: u64, raw: &str) -> Record {
        Record {
            line,
            offset: line * 100,
            end: line * 100 + raw.len() as u64 + 1,
            raw: raw.to_string(),
            item: Ok(Default::default()),
        }
    }

    #[test]
    fn records_without_id_get_the_same_id_on_every_run_and_upserts_need_their_field() {
        let p = Preparer { format: Format::JsonLines, id_field: None, run_key: 7 };
        let a = p.prepare(&record(3, r#"{"x": 1}"#)).unwrap();
        let b = p.prepare(&record(3, r#"{"x": 2}"#)).unwrap();
        let c = p.prepare(&record(4, r#"{"x": 1}"#)).unwrap();
        assert_eq!(a.item.id, b.item.id, "same input, same line: same _id");
        assert_ne!(a.item.id, c.item.id);
        assert_eq!(a.slot, b.slot);
        let first = a.item.doc.iter().next().unwrap().unwrap().0.as_str().to_string();
        assert_eq!(first, "_id");
        let given = p.prepare(&record(5, r#"{"_id": 42, "x": 1}"#)).unwrap();
        assert_eq!(given.item.id, Bson::Int32(42));
        let up = Preparer { format: Format::JsonLines, id_field: Some("email".into()), run_key: 7 };
        assert_eq!(up.prepare(&record(6, r#"{"x": 1}"#)).unwrap_err().to_string(), "missing the --id-field email");
        let keyed = up.prepare(&record(7, r#"{"email": "a@b", "x": 1}"#)).unwrap();
        assert_eq!(keyed.item.id, Bson::String("a@b".into()));
        assert!(keyed.item.doc.get("_id").unwrap().is_none(), "upserts by another field leave _id to the server");
        assert_eq!(p.prepare(&record(8, r#"{"_id": [1, 2]}"#)).unwrap_err().to_string(), "_id may not be an array");
        assert!(p.prepare(&record(9, "{not json")).unwrap_err().to_string().starts_with("malformed JSON"));
    }

    #[test]
    fn prepare_errors_are_typed() {
        let p = Preparer { format: Format::JsonLines, id_field: None, run_key: 7 };
        assert!(matches!(p.prepare(&record(1, "[1]")), Err(PrepareError::Record(convert::RecordError::NotAnObject))));
        assert!(matches!(p.prepare(&record(2, r#"{"_id": [1]}"#)), Err(PrepareError::ArrayId(f)) if f == "_id"));
        let up = Preparer { format: Format::JsonLines, id_field: Some("k".into()), run_key: 7 };
        assert!(matches!(up.prepare(&record(3, r#"{"x": 1}"#)), Err(PrepareError::MissingIdField(f)) if f == "k"));
        assert!(matches!(up.prepare(&record(4, r#"{"k": [1]}"#)), Err(PrepareError::ArrayId(f)) if f == "k"));
        let big = format!(r#"{{"s": "{}"}}"#, "x".repeat(convert::MAX_BSON_DOCUMENT_BYTES));
        let e = p.prepare(&record(5, &big)).unwrap_err();
        assert!(matches!(e, PrepareError::Document(convert::DocumentError::TooLarge { .. })), "{e:?}");
        // CSV and DynamoDB JSON records arrive typed; their parse error passes through.
        let csv = Preparer { format: Format::Csv, id_field: None, run_key: 7 };
        let mut rec = record(6, "a,b");
        rec.item = Err(dynaburst_input::RecordError("column age: not a number".into()));
        let e = csv.prepare(&rec).unwrap_err();
        assert_eq!(e.to_string(), "column age: not a number");
        assert!(matches!(e, PrepareError::Item(_)));
    }
}
