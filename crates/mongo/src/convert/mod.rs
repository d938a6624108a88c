//! Records to BSON documents, and document identity. Pure functions: no
//! driver, no I/O, no clock.
//!
//! - [`record`]: JSON Lines records, read through [`json`] (a tree that
//!   keeps key order and exact number text), with [`extjson`] for
//!   Extended JSON type wrappers and [`number`] for the number rule;
//! - [`item`]: DynamoDB items (CSV and DynamoDB JSON records);
//! - [`identity`]: which value identifies a document, its hash, and the
//!   deterministic ObjectIds of documents without `_id`;
//! - [`size`]: BSON bytes and the 16 MiB limit.
//!
//! Every failure is a typed error ([`RecordError`], [`DocumentError`])
//! whose `Display` is the message a rejected record shows.

pub mod extjson;
pub mod identity;
pub mod item;
pub mod json;
pub mod number;
pub mod record;
pub mod size;

#[cfg(test)]
mod test_support;

pub use extjson::{Wrapper, WrapperError};
pub use identity::{deterministic_object_id, ensure_id, id_of, identity_hash, run_key, ID_FIELD, OBJECT_ID_LINE_BYTES};
pub use item::item_to_document;
pub use json::Got;
pub use number::{number_text_to_bson, NumberError, MAX_DECIMAL128_DIGITS};
pub use record::{json_line_to_document, FieldPath, RecordError, MAX_NESTING_DEPTH};
pub use size::{check_document_size, to_raw_document, DocumentError, MAX_BSON_DOCUMENT_BYTES};

/// Longest excerpt of an input value quoted in an error message.
const MAX_QUOTED_CHARS: usize = 40;

/// A string quoted, cut to [`MAX_QUOTED_CHARS`] characters.
pub(crate) fn quoted(s: &str) -> String {
    match s.char_indices().nth(MAX_QUOTED_CHARS) {
        Some((cut, _)) => format!("{:?}...", &s[..cut]),
        None => format!("{s:?}"),
    }
}

/// A bare text (a number literal) cut to [`MAX_QUOTED_CHARS`] characters.
pub(crate) fn excerpt(s: &str) -> String {
    match s.char_indices().nth(MAX_QUOTED_CHARS) {
        Some((cut, _)) => format!("{}...", &s[..cut]),
        None => s.to_string(),
    }
}
