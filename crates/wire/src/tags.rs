//! The tag operations (TagResource, UntagResource, ListTagsOfResource) and
//! CreateTable's Tags.
//!
//! DynamoDB's shape validation does not look inside a tag (the model's
//! `Tag` and `TagKeyString`, see `dynaburst_apimodel`): the operations
//! check every tag themselves, in order, and refuse the whole request at
//! the first bad one, with texts of their own (captured from the live
//! service in October 2026: ack-api-quirks DDB-TABLE-107, -110, -372 and
//! -457). The limit on the number of tags is the engine's, checked on the
//! set after the change.

use dynaburst_engine::Engine;
use serde_json::{json, Value};

use crate::error::ApiError;
use crate::request::Req;
use crate::value::wrong_json_type;

/// Longest tag key, in characters (S145).
pub const MAX_TAG_KEY: usize = 128;
/// Longest tag value, in characters (S145).
pub const MAX_TAG_VALUE: usize = 256;
/// Prefix of the keys AWS keeps for itself.
const AWS_PREFIX: &str = "aws:";

/// Letters and digits of any script, separators (space, no-break space,
/// ideographic space; not tab or newline) and `+ - = . _ : / @`: AWS's tag
/// pattern `[\p{L}\p{Z}\p{N}_.:/=+\-@]*` (DDB-TABLE-372 accepted `ключ`,
/// `café`, `表`, NBSP and U+3000 and refused emoji, `%`, `,`, quotes and
/// brackets).
fn legal(text: &str) -> bool {
    text.chars().all(|c| c.is_alphanumeric() || (c.is_whitespace() && !c.is_control()) || "+-=._:/@".contains(c))
}

fn shown(text: Option<&str>) -> &str {
    text.unwrap_or("null")
}

fn key_error(key: Option<&str>) -> Option<ApiError> {
    let bad = match key {
        None => true,
        Some(k) => k.is_empty() || k.chars().count() > MAX_TAG_KEY || !legal(k),
    };
    bad.then(|| ApiError::validation(format!("The Tag Key provided is invalid, Key: {}", shown(key))))
}

/// Keys AWS keeps for itself, in any letter case, are not the user's to
/// set or remove (ack-api-quirks DDB-TABLE-107, -110).
fn aws_prefix_error(key: &str) -> Option<ApiError> {
    key.get(..AWS_PREFIX.len())
        .is_some_and(|p| p.eq_ignore_ascii_case(AWS_PREFIX))
        .then(|| ApiError::validation(format!("Tag Key cannot be prefixed with aws:, Key: {key}")))
}

/// A Tags list (CreateTable, TagResource), checked tag by tag; None when
/// the member is absent.
pub(crate) fn parse_tags(req: &Req<'_>) -> Result<Option<Vec<(String, String)>>, ApiError> {
    let Some(v) = req.get("Tags") else { return Ok(None) };
    let list = v.as_array().ok_or_else(|| wrong_json_type(v, "List"))?;
    let mut tags: Vec<(String, String)> = Vec::with_capacity(list.len());
    for e in list {
        let t = Req::new(e)?;
        let key = t.opt_str("Key")?;
        let value = t.opt_str("Value")?;
        if let Some(error) = key_error(key) {
            return Err(error);
        }
        let key = key.unwrap_or_default();
        if let Some(error) = aws_prefix_error(key) {
            return Err(error);
        }
        match value {
            Some(v) if v.chars().count() <= MAX_TAG_VALUE && legal(v) => {}
            _ => {
                return Err(ApiError::validation(format!("The Tag Value provided is invalid, Value: {}", shown(value))))
            }
        }
        tags.push((key.to_string(), value.unwrap_or_default().to_string()));
    }
    let mut seen = std::collections::HashSet::with_capacity(tags.len());
    if let Some((key, _)) = tags.iter().find(|(k, _)| !seen.insert(k.as_str())) {
        return Err(ApiError::validation(format!(
            "Duplicate Tag Keys provided as input: Duplicate Tag Key found {key}"
        )));
    }
    Ok(Some(tags))
}

/// TagResource.
pub fn tag_resource(engine: &Engine, body: &Value) -> Result<Value, ApiError> {
    let req = Req::new(body)?;
    // The service model has checked ResourceArn and Tags are there.
    let arn = req.opt_str("ResourceArn")?.unwrap_or_default();
    let tags = parse_tags(&req)?.unwrap_or_default();
    if tags.is_empty() {
        return Err(ApiError::validation("Atleast one Tag needs to be provided as Input."));
    }
    engine.tag_resource(arn, &tags)?;
    Ok(json!({}))
}

/// UntagResource.
pub fn untag_resource(engine: &Engine, body: &Value) -> Result<Value, ApiError> {
    let req = Req::new(body)?;
    let arn = req.opt_str("ResourceArn")?.unwrap_or_default();
    let keys = match req.get("TagKeys") {
        None => Vec::new(),
        Some(v) => v
            .as_array()
            .ok_or_else(|| wrong_json_type(v, "List"))?
            .iter()
            .map(|k| k.as_str().map(str::to_string).ok_or_else(|| wrong_json_type(k, "String")))
            .collect::<Result<Vec<_>, _>>()?,
    };
    if keys.is_empty() {
        return Err(ApiError::validation("Atleast one Tag Key needs to be provided as Input."));
    }
    if keys.len() > dynaburst_engine::MAX_TAGS {
        return Err(ApiError::validation(dynaburst_engine::TOO_MANY_TAGS));
    }
    if let Some(error) = keys.iter().find_map(|k| key_error(Some(k)).or_else(|| aws_prefix_error(k))) {
        return Err(error);
    }
    engine.untag_resource(arn, &keys)?;
    Ok(json!({}))
}

/// ListTagsOfResource.
pub fn list_tags_of_resource(engine: &Engine, body: &Value) -> Result<Value, ApiError> {
    let req = Req::new(body)?;
    let arn = req.opt_str("ResourceArn")?.unwrap_or_default();
    let tags = engine.list_tags(arn)?;
    Ok(json!({ "Tags": tags.iter().map(|(k, v)| json!({"Key": k, "Value": v})).collect::<Vec<_>>() }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tags(body: Value) -> Result<Option<Vec<(String, String)>>, ApiError> {
        parse_tags(&Req::new(&body).expect("object"))
    }

    fn message(r: Result<Option<Vec<(String, String)>>, ApiError>) -> String {
        r.expect_err("refused").message.unwrap_or_default()
    }

    #[test]
    fn tags_are_checked_one_by_one_with_dynamodbs_texts() {
        let long_key = "k".repeat(MAX_TAG_KEY + 1);
        assert_eq!(
            message(tags(json!({"Tags": [{"Key": "a", "Value": "1"}, {"Key": long_key, "Value": "2"}]}))),
            format!("The Tag Key provided is invalid, Key: {long_key}")
        );
        assert_eq!(message(tags(json!({"Tags": [{"Value": "1"}]}))), "The Tag Key provided is invalid, Key: null");
        assert_eq!(
            message(tags(json!({"Tags": [{"Key": "", "Value": "1"}]}))),
            "The Tag Key provided is invalid, Key: "
        );
        assert_eq!(message(tags(json!({"Tags": [{"Key": "a"}]}))), "The Tag Value provided is invalid, Value: null");
        assert_eq!(
            message(tags(json!({"Tags": [{"Key": "a", "Value": "100%"}]}))),
            "The Tag Value provided is invalid, Value: 100%"
        );
        assert_eq!(
            message(tags(json!({"Tags": [{"Key": "a#b", "Value": "x"}]}))),
            "The Tag Key provided is invalid, Key: a#b"
        );
        assert_eq!(
            message(tags(json!({"Tags": [{"Key": "ok", "Value": "1"}, {"Key": "aws:zzz", "Value": "1"}]}))),
            "Tag Key cannot be prefixed with aws:, Key: aws:zzz"
        );
        assert_eq!(
            message(tags(json!({"Tags": [{"Key": "AWS:Name", "Value": "1"}]}))),
            "Tag Key cannot be prefixed with aws:, Key: AWS:Name"
        );
        assert_eq!(
            message(tags(json!({"Tags": [{"Key": "dup", "Value": "1"}, {"Key": "dup", "Value": "2"}]}))),
            "Duplicate Tag Keys provided as input: Duplicate Tag Key found dup"
        );
        // A per-tag fault is reported before a duplicate that comes earlier.
        assert_eq!(
            message(tags(json!({"Tags": [{"Key": "d", "Value": "1"}, {"Key": "d", "Value": "2"}, {"Key": "e"}]}))),
            "The Tag Value provided is invalid, Value: null"
        );
    }

    #[test]
    fn the_longest_and_the_unusual_legal_tags_pass() {
        let key = "k".repeat(MAX_TAG_KEY);
        let value = "v".repeat(MAX_TAG_VALUE);
        let got = tags(json!({"Tags": [
            {"Key": key, "Value": value},
            {"Key": "ключ café 表\u{a0}\u{3000}", "Value": "a+b-c=d.e_f:g/h@i"},
            {"Key": "empty", "Value": ""},
        ]}))
        .expect("accepted")
        .expect("present");
        assert_eq!(got.len(), 3);
        assert_eq!(got[2], ("empty".to_string(), String::new()));
        assert!(tags(json!({})).expect("accepted").is_none());
        assert_eq!(
            message(tags(json!({"Tags": [{"Key": "tab\there", "Value": "1"}]}))),
            "The Tag Key provided is invalid, Key: tab\there"
        );
        assert_eq!(
            message(tags(json!({"Tags": [{"Key": "k", "Value": "🔑"}]}))),
            "The Tag Value provided is invalid, Value: 🔑"
        );
    }
}
