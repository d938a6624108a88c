//! The MongoDB conversion fuzz target's body, shared by the AFL binary
//! and replays of saved inputs.

use dynaburst_mongo::convert::{
    check_document_size, ensure_id, id_of, identity_hash, item_to_document, json_line_to_document, number_text_to_bson,
    to_raw_document,
};

/// Runs one input: a selector byte, then text. Selector mod 3: 0, a JSON
/// Lines record (Extended JSON wrappers included) to a document, then its
/// `_id` (generated when absent), identity hash and BSON size; 1, a number
/// literal by the number rule; 2, a DynamoDB JSON item to a document.
pub fn run_mongo(data: &[u8]) {
    let Some((&selector, text)) = data.split_first() else { return };
    let Ok(text) = std::str::from_utf8(text) else { return };
    let doc = match selector % 3 {
        0 => json_line_to_document(text).ok(),
        1 => {
            let _ = number_text_to_bson(text);
            None
        }
        _ => serde_json::from_str::<serde_json::Value>(text)
            .ok()
            .and_then(|v| dynaburst_ddbjson::parse_item(&v).ok())
            .map(|item| item_to_document(&item)),
    };
    let Some(mut doc) = doc else { return };
    let _ = id_of(&doc, Some("a.b")).map(identity_hash);
    let id = ensure_id(&mut doc, 7, u64::from(selector)).clone();
    let _ = identity_hash(&id);
    if let Ok(raw) = to_raw_document(&doc) {
        let _ = check_document_size(raw.as_bytes().len());
    }
}
