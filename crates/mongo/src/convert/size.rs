//! Documents as BSON bytes, and MongoDB's 16 MiB limit.
//!
//! [`to_raw_document`] encodes a document as compact BSON bytes (one
//! allocation per document, the form held in flight) and refuses one over
//! [`MAX_BSON_DOCUMENT_BYTES`].

use std::fmt;

use bson::{Document, RawDocumentBuf};

/// Largest document MongoDB stores, in BSON bytes.
pub const MAX_BSON_DOCUMENT_BYTES: usize = 16 * 1024 * 1024;

/// Why a document cannot be stored.
#[derive(Debug)]
pub enum DocumentError {
    /// bson cannot encode it (a field name holding a NUL, ...).
    Encode(bson::error::Error),
    /// Its BSON is over [`MAX_BSON_DOCUMENT_BYTES`].
    TooLarge { bytes: usize },
}

impl fmt::Display for DocumentError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DocumentError::Encode(e) => write!(f, "cannot encode the document as BSON: {e}"),
            DocumentError::TooLarge { bytes } => {
                write!(f, "document is {bytes} bytes; MongoDB stores at most {MAX_BSON_DOCUMENT_BYTES} (16 MiB)")
            }
        }
    }
}

impl std::error::Error for DocumentError {}

/// A document as BSON bytes, refused over [`MAX_BSON_DOCUMENT_BYTES`].
pub fn to_raw_document(doc: &Document) -> Result<RawDocumentBuf, DocumentError> {
    let raw = RawDocumentBuf::try_from(doc).map_err(DocumentError::Encode)?;
    check_document_size(raw.as_bytes().len())?;
    Ok(raw)
}

/// Refuses a document of `bytes` BSON bytes over MongoDB's limit.
pub fn check_document_size(bytes: usize) -> Result<(), DocumentError> {
    if bytes > MAX_BSON_DOCUMENT_BYTES {
        return Err(DocumentError::TooLarge { bytes });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::convert::item_to_document;
    use crate::convert::test_support::*;
    use dynaburst_model::{AttributeValue, Item};
    // --- size ------------------------------------------------------------

    #[test]
    fn raw_documents_round_trip() {
        let d = doc(r#"{"_id": {"$oid": "65f1a2b3c4d5e6f708192a3b"}, "n": 9223372036854775808, "s": "x"}"#);
        let raw = to_raw_document(&d).unwrap();
        assert_eq!(Document::try_from(raw.as_ref()).unwrap(), d);
        // {} is 5 bytes: length and terminator.
        assert_eq!(to_raw_document(&Document::new()).unwrap().as_bytes().len(), 5);
    }

    #[test]
    fn documents_over_16_mib_are_refused() {
        assert_eq!(MAX_BSON_DOCUMENT_BYTES, 16_777_216);
        assert!(check_document_size(MAX_BSON_DOCUMENT_BYTES).is_ok());
        assert_eq!(
            check_document_size(MAX_BSON_DOCUMENT_BYTES + 1).unwrap_err().to_string(),
            "document is 16777217 bytes; MongoDB stores at most 16777216 (16 MiB)"
        );
        // {"s": <string>}: 4 (length) + 1 (type) + 2 ("s\0") + 4 (string length) + n + 1 (NUL) + 1 (end).
        let overhead = 13;
        let mut d = Document::new();
        d.insert("s", "x".repeat(MAX_BSON_DOCUMENT_BYTES - overhead));
        assert_eq!(to_raw_document(&d).unwrap().as_bytes().len(), MAX_BSON_DOCUMENT_BYTES);
        d.insert("s", "x".repeat(MAX_BSON_DOCUMENT_BYTES - overhead + 1));
        assert_eq!(
            to_raw_document(&d).unwrap_err().to_string(),
            "document is 16777217 bytes; MongoDB stores at most 16777216 (16 MiB)"
        );
    }

    #[test]
    fn unencodable_documents_are_errors() {
        let mut item = Item::new();
        item.insert("a\0b".into(), AttributeValue::Bool(true));
        let e = to_raw_document(&item_to_document(&item)).unwrap_err().to_string();
        assert!(e.starts_with("cannot encode the document as BSON: "), "{e}");
    }

    #[test]
    fn size_errors_are_typed() {
        assert!(matches!(
            check_document_size(MAX_BSON_DOCUMENT_BYTES + 7),
            Err(DocumentError::TooLarge { bytes }) if bytes == MAX_BSON_DOCUMENT_BYTES + 7
        ));
        let mut item = Item::new();
        item.insert("a\0b".into(), AttributeValue::Bool(true));
        assert!(matches!(to_raw_document(&item_to_document(&item)), Err(DocumentError::Encode(_))));
    }
}
