//! The resource-based policy operations (PutResourcePolicy,
//! GetResourcePolicy, DeleteResourcePolicy) and CreateTable's
//! ResourcePolicy: the document is checked and made canonical here (it is
//! JSON); the engine keeps it and answers the revision rules
//! (`dynaburst_engine::policy`).
//!
//! What DynamoDB checks and how it rewrites a document, as recorded from
//! the live service (ack-api-quirks DDB-TABLE-207 to -213, -351 to -356):
//! at most [`MAX_POLICY_BYTES`] bytes as sent; valid JSON; a non-empty
//! Statement (an object is a list of one); each statement with a Resource
//! and an object or `"*"` as Principal; unique Sids; action names of the
//! resource's kind (no stream actions in a table's policy); resources of
//! the resource's kind (no stream ARN in a table's policy, no table ARN in
//! a stream's); no Allow to everyone; and no Deny that would lock the
//! caller out of the policy unless ConfirmRemoveSelfResourceAccess. The
//! document is answered minified, keys in IAM's order, a list of one as
//! its element, an account id principal as its root ARN, a missing
//! Version as 2008-10-17, an Effect in its canonical case.

use dynaburst_engine::{Engine, PolicyDocument, PolicyTarget, MAX_POLICY_BYTES};
use dynaburst_model::Millis;
use serde_json::{json, Map, Value};

use crate::error::{ApiError, ErrorKind};
use crate::request::Req;

const INVALID: &str = "One or more parameter values were invalid: ";
/// Version a document without one is shown with.
const DEFAULT_VERSION: &str = "2008-10-17";
/// The actions of a stream (valid in a stream's policy, not a table's).
const STREAM_ACTIONS: [&str; 3] = ["dynamodb:DescribeStream", "dynamodb:GetRecords", "dynamodb:GetShardIterator"];
/// Statement members in the order DynamoDB answers them.
const STATEMENT_ORDER: [&str; 9] =
    ["Sid", "Effect", "Principal", "NotPrincipal", "Action", "NotAction", "Resource", "NotResource", "Condition"];

fn document_error(what: impl std::fmt::Display) -> ApiError {
    ApiError::validation(format!("{INVALID}Invalid policy document: {what}"))
}

/// A list of one as its element; other values as they are.
fn unwrap_single(v: Value) -> Value {
    match v {
        Value::Array(mut list) if list.len() == 1 => list.pop().unwrap_or(Value::Null),
        other => other,
    }
}

/// The strings of a string or a list of strings; None for anything else.
fn strings(v: &Value) -> Option<Vec<&str>> {
    match v {
        Value::String(s) => Some(vec![s.as_str()]),
        Value::Array(list) => list.iter().map(Value::as_str).collect(),
        _ => None,
    }
}

/// `(line, column)` of the value of the `nth` "Principal" member in
/// `text`, both from 1, as DynamoDB's syntax errors give it.
fn principal_position(text: &str, nth: usize) -> (usize, usize) {
    let Some((at, _)) = text.match_indices("\"Principal\"").nth(nth) else { return (1, 1) };
    let after = &text[at + "\"Principal\"".len()..];
    let skip = after.find(|c: char| !(c.is_whitespace() || c == ':')).unwrap_or(0);
    let offset = at + "\"Principal\"".len() + skip;
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, column)
}

/// A Principal (or NotPrincipal) in canonical form.
fn canonical_principal(v: &Value, text: &str, nth: usize) -> Result<Value, ApiError> {
    match v {
        Value::String(s) if s == "*" => Ok(Value::String(s.clone())),
        Value::Object(m) => {
            let mut out = Map::new();
            for (kind, value) in m {
                let Some(list) = strings(value) else {
                    let (line, column) = principal_position(text, nth);
                    return Err(document_error(format!("Syntax error at position ({line},{column})")));
                };
                if list.is_empty() || (kind == "AWS" && !list.iter().all(|p| aws_principal(p))) {
                    return Err(ApiError::validation(format!("{INVALID}Invalid principal in policy document.")));
                }
                let mut seen: Vec<String> = Vec::new();
                for p in list {
                    let p = if kind == "AWS" && p.len() == 12 && p.bytes().all(|b| b.is_ascii_digit()) {
                        format!("arn:aws:iam::{p}:root")
                    } else {
                        p.to_string()
                    };
                    if !seen.contains(&p) {
                        seen.push(p);
                    }
                }
                out.insert(kind.clone(), unwrap_single(json!(seen)));
            }
            Ok(Value::Object(out))
        }
        _ => {
            let (line, column) = principal_position(text, nth);
            Err(document_error(format!("Syntax error at position ({line},{column})")))
        }
    }
}

/// An AWS principal of a valid form: everyone, an account id, or an IAM or
/// STS ARN.
fn aws_principal(p: &str) -> bool {
    p == "*"
        || (p.len() == 12 && p.bytes().all(|b| b.is_ascii_digit()))
        || p.starts_with("arn:aws:iam::")
        || p.starts_with("arn:aws:sts::")
}

/// Condition keys that bound who an Allow to everyone reaches (AWS's Block
/// Public Access rules for resource-based policies): with one of them, and
/// no wildcard in its values, the grant is not unbounded.
const BOUNDING_CONDITION_KEYS: [&str; 9] = [
    "aws:principalaccount",
    "aws:principalarn",
    "aws:principalorgid",
    "aws:sourcevpce",
    "aws:sourcevpc",
    "aws:sourceaccount",
    "aws:sourcearn",
    "aws:userid",
    "aws:principalisawsservice",
];

fn bounded_by_condition(condition: Option<&Value>) -> bool {
    let Some(Value::Object(operators)) = condition else { return false };
    operators.values().any(|keys| {
        keys.as_object().is_some_and(|keys| {
            keys.iter().any(|(key, values)| {
                BOUNDING_CONDITION_KEYS.contains(&key.to_ascii_lowercase().as_str())
                    && strings(values)
                        .is_some_and(|v| !v.is_empty() && v.iter().all(|v| !v.contains('*') && !v.contains('?')))
            })
        })
    })
}

/// A Condition: operators mapping keys to a value or a list of values.
fn valid_condition(condition: &Value) -> bool {
    let scalar = |v: &Value| matches!(v, Value::String(_) | Value::Number(_) | Value::Bool(_));
    condition.as_object().is_some_and(|operators| {
        operators.values().all(|keys| {
            keys.as_object().is_some_and(|keys| {
                keys.values().all(|v| scalar(v) || v.as_array().is_some_and(|l| l.iter().all(scalar)))
            })
        })
    })
}

/// Whether `principal` is everyone, or this account.
fn covers_caller(principal: &Value, account: &str) -> bool {
    match principal {
        Value::String(s) => s == "*",
        Value::Object(m) => m
            .get("AWS")
            .and_then(strings)
            .is_some_and(|list| list.iter().any(|p| *p == "*" || *p == format!("arn:aws:iam::{account}:root"))),
        _ => false,
    }
}

/// IAM's wildcard match (`*` any run, `?` one character), ignoring case.
fn matches_action(pattern: &str, action: &str) -> bool {
    let (p, a): (Vec<char>, Vec<char>) =
        (pattern.to_ascii_lowercase().chars().collect(), action.to_ascii_lowercase().chars().collect());
    // Bounded: one pass over the pattern for each position of the action.
    let mut reach = vec![false; a.len() + 1];
    reach[0] = true;
    for pc in p {
        let mut next = vec![false; a.len() + 1];
        for i in 0..=a.len() {
            if !reach[i] {
                continue;
            }
            match pc {
                '*' => next[i..].iter_mut().for_each(|r| *r = true),
                '?' if i < a.len() => next[i + 1] = true,
                c if i < a.len() && a[i] == c => next[i + 1] = true,
                _ => {}
            }
        }
        reach = next;
    }
    reach[a.len()]
}

/// The resource part of an ARN (after `arn:partition:service:region:account:`).
fn relative_id(arn: &str) -> Option<&str> {
    let rest = arn.strip_prefix("arn:")?;
    let parts: Vec<&str> = rest.splitn(5, ':').collect();
    match parts.as_slice() {
        [_, "dynamodb", _, _, resource] => Some(resource),
        _ => None,
    }
}

/// A policy document, checked and made canonical, for a table's slot or a
/// stream's (`stream`), whose ARN is `arn`. `confirm` is
/// ConfirmRemoveSelfResourceAccess (None: no check that the caller keeps
/// access, as for CreateTable's ResourcePolicy).
pub(crate) fn canonical_document(
    text: &str,
    stream: bool,
    confirm: Option<bool>,
    arn: &str,
    account: &str,
) -> Result<PolicyDocument, ApiError> {
    if text.len() > MAX_POLICY_BYTES {
        return Err(ApiError::validation(format!("{INVALID}Maximum policy size of {MAX_POLICY_BYTES} bytes exceeded")));
    }
    let invalid_json = || document_error("This policy contains invalid Json");
    let parsed: Value = serde_json::from_str(text).map_err(|_| invalid_json())?;
    let Value::Object(mut top) = parsed else { return Err(invalid_json()) };
    let version_implicit = !top.contains_key("Version");
    let version = top.remove("Version").unwrap_or_else(|| json!(DEFAULT_VERSION));
    let statements = match top.remove("Statement") {
        Some(Value::Array(list)) => list,
        Some(one @ Value::Object(_)) => vec![one],
        Some(_) | None => return Err(document_error("Could not parse the policy: Statement is empty!")),
    };
    if statements.is_empty() {
        return Err(document_error("Could not parse the policy: Statement is empty!"));
    }
    let mut out_statements = Vec::with_capacity(statements.len());
    let mut sids: Vec<String> = Vec::new();
    let mut bad_actions: Vec<String> = Vec::new();
    let mut principals_seen = 0;
    let mut unbounded = false;
    let mut locks_out = false;
    for statement in statements {
        let Value::Object(mut s) = statement else { return Err(invalid_json()) };
        if let Some(sid) = s.get("Sid").and_then(Value::as_str) {
            if sids.iter().any(|x| x == sid) {
                return Err(document_error("The Statement Ids in the policy are not unique"));
            }
            sids.push(sid.to_string());
        }
        if !s.contains_key("Resource") && !s.contains_key("NotResource") {
            return Err(document_error("Missing required field Resource"));
        }
        let effect = match s.get("Effect").and_then(Value::as_str) {
            Some(e) if e.eq_ignore_ascii_case("allow") => "Allow",
            Some(e) if e.eq_ignore_ascii_case("deny") => "Deny",
            Some(e) => return Err(document_error(format!("Invalid effect: {e}"))),
            None => return Err(document_error("Missing required field Effect")),
        };
        s.insert("Effect".into(), json!(effect));
        for member in ["Principal", "NotPrincipal"] {
            if let Some(p) = s.get(member) {
                let canonical = canonical_principal(p, text, principals_seen)?;
                principals_seen += 1;
                s.insert(member.into(), canonical);
            }
        }
        // Resources of the resource's kind.
        for member in ["Resource", "NotResource"] {
            let Some(list) = s.get(member).map(|v| strings(v).ok_or_else(invalid_json)).transpose()? else {
                continue;
            };
            for resource in list {
                if let Some(relative) = relative_id(resource) {
                    if relative.starts_with("table/") && relative.contains("/stream/") != stream {
                        return Err(document_error(format!(
                            "The relative-id \"{relative}\" is invalid for ARN \"{resource}\""
                        )));
                    }
                }
            }
        }
        if s.get("NotAction").is_some_and(|v| strings(v).is_none())
            || s.get("Condition").is_some_and(|c| !valid_condition(c))
        {
            return Err(invalid_json());
        }
        // Actions of the resource's kind.
        if let Some(v) = s.get("Action") {
            let actions = strings(v).ok_or_else(invalid_json)?;
            for action in actions {
                let is_stream_action = STREAM_ACTIONS.iter().any(|a| a.eq_ignore_ascii_case(action));
                let dynamodb = action.get(..9).is_some_and(|p| p.eq_ignore_ascii_case("dynamodb:"));
                let wildcard = action.contains('*') || action.contains('?');
                let wrong_kind = if stream { dynamodb && !wildcard && !is_stream_action } else { is_stream_action };
                if wrong_kind {
                    bad_actions.push(format!("\"{action}\""));
                }
            }
        }
        let everyone = |p: Option<&Value>| {
            p.is_some_and(|p| {
                p.as_str() == Some("*") || p.get("AWS").and_then(strings).is_some_and(|list| list.contains(&"*"))
            })
        };
        if effect == "Allow" && everyone(s.get("Principal")) && !bounded_by_condition(s.get("Condition")) {
            unbounded = true;
        }
        // A Deny, for everyone or this account, without conditions, of
        // PutResourcePolicy: the caller could never change the policy again.
        let denies_put = match (s.get("Action"), s.get("NotAction")) {
            (Some(a), _) => {
                strings(a).is_some_and(|l| l.iter().any(|p| matches_action(p, "dynamodb:PutResourcePolicy")))
            }
            (None, Some(n)) => {
                strings(n).is_some_and(|l| !l.iter().any(|p| matches_action(p, "dynamodb:PutResourcePolicy")))
            }
            (None, None) => false,
        };
        let this_resource = match (s.get("Resource"), s.get("NotResource")) {
            (Some(r), _) => strings(r).is_some_and(|l| l.iter().any(|p| matches_action(p, arn))),
            (None, Some(n)) => strings(n).is_some_and(|l| !l.iter().any(|p| matches_action(p, arn))),
            (None, None) => false,
        };
        if effect == "Deny"
            && denies_put
            && this_resource
            && !s.contains_key("Condition")
            && s.get("Principal").is_some_and(|p| covers_caller(p, account))
        {
            locks_out = true;
        }
        let mut ordered: Vec<(String, Value)> = Vec::new();
        for key in STATEMENT_ORDER {
            if let Some(v) = s.remove(key) {
                let v = match key {
                    "Action" | "NotAction" | "Resource" | "NotResource" => unwrap_single(v),
                    "Condition" => match v {
                        Value::Object(ops) => Value::Object(
                            ops.into_iter()
                                .map(|(op, m)| match m {
                                    Value::Object(keys) => (
                                        op,
                                        Value::Object(keys.into_iter().map(|(k, v)| (k, unwrap_single(v))).collect()),
                                    ),
                                    other => (op, other),
                                })
                                .collect(),
                        ),
                        other => other,
                    },
                    _ => v,
                };
                ordered.push((key.to_string(), v));
            }
        }
        // Members IAM does not name are kept, after the ones it does.
        ordered.extend(s);
        out_statements.push(ordered);
    }
    if !bad_actions.is_empty() {
        return Err(document_error(format!("The following action names are invalid: {}", bad_actions.join(", "))));
    }
    if unbounded {
        return Err(ApiError::validation(
            "Resource-based policy grants unbounded access in one or more elements. Please revise the policy to ensure least-privilege form of access",
        ));
    }
    if locks_out && confirm == Some(false) {
        return Err(ApiError::new(
            ErrorKind::AccessDenied,
            "The new resource policy will not allow you to update the resource policy in the future.",
        ));
    }
    // Rendered by hand: keys in IAM's order, whatever serde_json's map keeps.
    let mut rendered = String::from("{\"Version\":");
    rendered.push_str(&version.to_string());
    if let Some(id) = top.remove("Id") {
        rendered.push_str(",\"Id\":");
        rendered.push_str(&id.to_string());
    }
    rendered.push_str(",\"Statement\":[");
    for (i, statement) in out_statements.iter().enumerate() {
        if i > 0 {
            rendered.push(',');
        }
        rendered.push('{');
        for (j, (key, value)) in statement.iter().enumerate() {
            if j > 0 {
                rendered.push(',');
            }
            rendered.push_str(&json!(key).to_string());
            rendered.push(':');
            rendered.push_str(&value.to_string());
        }
        rendered.push('}');
    }
    rendered.push(']');
    for (key, value) in top {
        rendered.push(',');
        rendered.push_str(&json!(key).to_string());
        rendered.push(':');
        rendered.push_str(&value.to_string());
    }
    rendered.push('}');
    Ok(PolicyDocument { text: rendered, version_implicit })
}

/// CreateTable's ResourcePolicy, checked as a table's (None when absent).
pub(crate) fn create_table_policy(
    engine: &Engine,
    req: &Req<'_>,
    table: &str,
) -> Result<Option<PolicyDocument>, ApiError> {
    let config = engine.config();
    let arn = format!("arn:aws:dynamodb:{}:{}:table/{table}", config.region, config.account_id);
    match req.opt_str("ResourcePolicy")? {
        Some(text) => Ok(Some(canonical_document(text, false, None, &arn, &config.account_id)?)),
        None => Ok(None),
    }
}

/// PutResourcePolicy: `{"RevisionId"}`.
pub(crate) fn put(engine: &Engine, body: &Value, now: Millis) -> Result<Value, ApiError> {
    let req = Req::new(body)?;
    let arn = req.opt_str("ResourceArn")?.unwrap_or_default();
    let target = engine.policy_target(arn)?;
    let confirm = req.opt_bool("ConfirmRemoveSelfResourceAccess")?.unwrap_or(false);
    let text = req.opt_str("Policy")?.unwrap_or_default();
    let stream = matches!(target, PolicyTarget::Stream { .. });
    let document = canonical_document(text, stream, Some(confirm), arn, &engine.config().account_id)?;
    let revision = engine.put_resource_policy(&target, document, req.opt_str("ExpectedRevisionId")?, now)?;
    Ok(json!({ "RevisionId": revision }))
}

/// GetResourcePolicy: `{"Policy", "RevisionId"}`.
pub(crate) fn get(engine: &Engine, body: &Value, now: Millis) -> Result<Value, ApiError> {
    let req = Req::new(body)?;
    let arn = req.opt_str("ResourceArn")?.unwrap_or_default();
    let target = engine.policy_target(arn)?;
    let (policy, revision) = engine.get_resource_policy(arn, &target, now)?;
    Ok(json!({ "Policy": policy, "RevisionId": revision }))
}

/// DeleteResourcePolicy: `{"RevisionId"}` of the policy removed, `{}` when
/// there was none (DDB-TABLE-205).
pub(crate) fn delete(engine: &Engine, body: &Value, now: Millis) -> Result<Value, ApiError> {
    let req = Req::new(body)?;
    let arn = req.opt_str("ResourceArn")?.unwrap_or_default();
    let target = engine.policy_target(arn)?;
    Ok(match engine.delete_resource_policy(&target, req.opt_str("ExpectedRevisionId")?, now)? {
        Some(revision) => json!({ "RevisionId": revision }),
        None => json!({}),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const ACCOUNT: &str = "000000000000";
    const TABLE: &str = "arn:aws:dynamodb:us-east-1:000000000000:table/t";

    fn canonical(text: &str) -> String {
        canonical_document(text, false, Some(false), TABLE, ACCOUNT).unwrap().text
    }

    fn refusal(text: &str, stream: bool) -> String {
        canonical_document(text, stream, Some(false), TABLE, ACCOUNT).unwrap_err().message.unwrap_or_default()
    }

    #[test]
    fn documents_are_answered_in_dynamodbs_canonical_form() {
        // DDB-TABLE-208: minified, IAM's key order, lists of one unwrapped,
        // an account id as its root ARN.
        let sent = r#"{ "Statement": [ { "Resource": ["arn:aws:dynamodb:us-west-2:111122223333:table/t"],
            "Action": ["dynamodb:GetItem"], "Principal": {"AWS": ["111122223333", "arn:aws:iam::111122223333:root"]},
            "Effect": "allow", "Sid": "AllowRead" } ], "Version": "2012-10-17" }"#;
        assert_eq!(
            canonical(sent),
            r#"{"Version":"2012-10-17","Statement":[{"Sid":"AllowRead","Effect":"Allow","Principal":{"AWS":"arn:aws:iam::111122223333:root"},"Action":"dynamodb:GetItem","Resource":"arn:aws:dynamodb:us-west-2:111122223333:table/t"}]}"#
        );
        // A statement object is a list of one; no Version is 2008-10-17 (and
        // not the same document as one that names it); longer lists stay.
        let bare = canonical_document(
            r#"{"Statement":{"Effect":"Deny","Principal":{"AWS":"111122223333"},"Action":["dynamodb:GetItem","dynamodb:GetItem"],"Resource":"*"}}"#,
            false,
            Some(false),
            TABLE,
            ACCOUNT,
        )
        .unwrap();
        assert!(bare.version_implicit);
        assert_eq!(
            bare.text,
            r#"{"Version":"2008-10-17","Statement":[{"Effect":"Deny","Principal":{"AWS":"arn:aws:iam::111122223333:root"},"Action":["dynamodb:GetItem","dynamodb:GetItem"],"Resource":"*"}]}"#
        );
        // The canonical form is its own canonical form.
        assert_eq!(canonical(&bare.text), bare.text);
    }

    #[test]
    fn bad_documents_are_refused_with_dynamodbs_texts() {
        let p = "One or more parameter values were invalid: Invalid policy document: ";
        let allow = |principal: &str, action: &str, resource: &str| {
            format!(
                r#"{{"Version":"2012-10-17","Statement":[{{"Effect":"Allow","Principal":{principal},"Action":"{action}","Resource":"{resource}"}}]}}"#
            )
        };
        let root = r#"{"AWS":"111122223333"}"#;
        let table = "arn:aws:dynamodb:us-east-1:000000000000:table/t";
        let stream = "arn:aws:dynamodb:us-east-1:000000000000:table/t/stream/2026-10-09T00:29:04.041";
        assert_eq!(refusal("{not json", false), format!("{p}This policy contains invalid Json"));
        assert_eq!(refusal("", false), format!("{p}This policy contains invalid Json"));
        assert_eq!(
            refusal(r#"{"Version":"2012-10-17","Statement":[]}"#, false),
            format!("{p}Could not parse the policy: Statement is empty!")
        );
        assert_eq!(
            refusal(r#"{"Statement":[{"Effect":"Allow","Principal":{"AWS":"1"},"Action":"dynamodb:GetItem"}]}"#, false),
            format!("{p}Missing required field Resource")
        );
        let twice = r#"{"Statement":[{"Sid":"a","Effect":"Allow","Principal":{"AWS":"111122223333"},"Action":"dynamodb:GetItem","Resource":"*"},{"Sid":"a","Effect":"Allow","Principal":{"AWS":"111122223333"},"Action":"dynamodb:PutItem","Resource":"*"}]}"#;
        assert_eq!(refusal(twice, false), format!("{p}The Statement Ids in the policy are not unique"));
        assert_eq!(
            refusal(&allow(r#""111122223333""#, "dynamodb:GetItem", table), false),
            format!("{p}Syntax error at position (1,68)")
        );
        let readers = r#"{"Statement":[{"Effect":"Allow","Principal":{"AWS":"111122223333"},"Action":["dynamodb:GetRecords","dynamodb:DescribeStream"],"Resource":"*"}]}"#;
        assert_eq!(
            refusal(readers, false),
            format!("{p}The following action names are invalid: \"dynamodb:GetRecords\", \"dynamodb:DescribeStream\"")
        );
        assert!(
            canonical_document(readers, true, Some(false), TABLE, ACCOUNT).is_ok(),
            "stream actions suit a stream's policy"
        );
        assert_eq!(
            refusal(&allow(root, "dynamodb:GetItem", stream), false),
            format!("{p}The relative-id \"table/t/stream/2026-10-09T00:29:04.041\" is invalid for ARN \"{stream}\"")
        );
        assert_eq!(
            refusal(&allow(root, "dynamodb:GetRecords", table), true),
            format!("{p}The relative-id \"table/t\" is invalid for ARN \"{table}\"")
        );
        assert_eq!(
            refusal(&allow(r#""*""#, "dynamodb:GetItem", table), false),
            "Resource-based policy grants unbounded access in one or more elements. Please revise the policy to ensure least-privilege form of access"
        );
        let padded = format!("{}{}", " ".repeat(MAX_POLICY_BYTES), allow(root, "dynamodb:GetItem", table));
        assert_eq!(
            refusal(&padded, false),
            "One or more parameter values were invalid: Maximum policy size of 20480 bytes exceeded"
        );
        // Whitespace counts, and is not kept.
        let fits = format!("{}{}", " ".repeat(1_000), allow(root, "dynamodb:GetItem", table));
        assert_eq!(canonical(&fits), canonical(&allow(root, "dynamodb:GetItem", table)));
    }

    #[test]
    fn a_deny_that_would_lock_the_caller_out_needs_confirmation() {
        let deny = |action: &str, extra: &str| {
            format!(
                r#"{{"Statement":[{{"Effect":"Deny","Principal":"*","Action":"{action}","Resource":"*"{extra}}}]}}"#
            )
        };
        for action in ["dynamodb:PutResourcePolicy", "dynamodb:*", "*", "dynamodb:put*"] {
            let e = canonical_document(&deny(action, ""), false, Some(false), TABLE, ACCOUNT).unwrap_err();
            assert_eq!(
                (e.kind, e.message.as_deref()),
                (
                    ErrorKind::AccessDenied,
                    Some("The new resource policy will not allow you to update the resource policy in the future.")
                ),
                "{action}"
            );
            assert!(canonical_document(&deny(action, ""), false, Some(true), TABLE, ACCOUNT).is_ok());
        }
        // Not a lock-out: another action, or a condition this server cannot judge.
        assert!(
            canonical_document(&deny("dynamodb:DeleteResourcePolicy", ""), false, Some(false), TABLE, ACCOUNT).is_ok()
        );
        let conditional =
            deny("dynamodb:*", r#","Condition":{"StringEquals":{"aws:PrincipalArn":["arn:aws:iam::1:role/x"]}}"#);
        assert_eq!(
            canonical_document(&conditional, false, Some(false), TABLE, ACCOUNT).unwrap().text,
            r#"{"Version":"2008-10-17","Statement":[{"Effect":"Deny","Principal":"*","Action":"dynamodb:*","Resource":"*","Condition":{"StringEquals":{"aws:PrincipalArn":"arn:aws:iam::1:role/x"}}}]}"#
        );
    }

    #[test]
    fn reviewed_edges_bounded_grants_principal_forms_nested_values_and_the_lock_outs_resource() {
        // An Allow to everyone bounded by a condition on who asks is not unbounded.
        let bounded = r#"{"Statement":[{"Effect":"Allow","Principal":{"AWS":"*"},"Action":"dynamodb:GetItem","Resource":"*","Condition":{"StringEquals":{"aws:SourceVpce":"vpce-1"}}}]}"#;
        assert!(canonical_document(bounded, false, Some(false), TABLE, ACCOUNT).is_ok());
        let wildcard = bounded.replace("vpce-1", "vpce-*");
        assert!(refusal(&wildcard, false).starts_with("Resource-based policy grants unbounded access"));
        // Principals of no valid form.
        for principal in [r#"{"AWS":"1"}"#, r#"{"AWS":[]}"#] {
            let text = format!(
                r#"{{"Statement":[{{"Effect":"Allow","Principal":{principal},"Action":"dynamodb:GetItem","Resource":"*"}}]}}"#
            );
            assert_eq!(
                refusal(&text, false),
                "One or more parameter values were invalid: Invalid principal in policy document."
            );
        }
        // Nested lists are not values: refused, so the canonical form stays a fixpoint.
        let p = "One or more parameter values were invalid: Invalid policy document: ";
        for member in [
            r#""NotAction":[["dynamodb:GetItem"]]"#,
            r#""Action":"dynamodb:GetItem","Condition":{"StringEquals":{"k":[["v"]]}}"#,
        ] {
            let text = format!(r#"{{"Statement":[{{"Effect":"Deny","Principal":"*",{member},"Resource":"*"}}]}}"#);
            assert_eq!(refusal(&text, false), format!("{p}This policy contains invalid Json"), "{member}");
        }
        // A Deny on another table's ARN cannot lock the caller out of this one.
        let other = r#"{"Statement":[{"Effect":"Deny","Principal":"*","Action":"dynamodb:*","Resource":"arn:aws:dynamodb:us-east-1:000000000000:table/other"}]}"#;
        assert!(canonical_document(other, false, Some(false), TABLE, ACCOUNT).is_ok());
        let this = other.replace("table/other", "table/*");
        assert!(canonical_document(&this, false, Some(false), TABLE, ACCOUNT).is_err());
        // CreateTable's policy is not checked for a lock-out (no confirmation to give).
        assert!(canonical_document(&this, false, None, TABLE, ACCOUNT).is_ok());
    }

    #[test]
    fn wildcards_match_as_iam_matches_them() {
        assert!(matches_action("dynamodb:*", "dynamodb:PutResourcePolicy"));
        assert!(matches_action("DynamoDB:Put*Policy", "dynamodb:PutResourcePolicy"));
        assert!(matches_action("dynamodb:PutResourcePolic?", "dynamodb:PutResourcePolicy"));
        assert!(!matches_action("dynamodb:Get*", "dynamodb:PutResourcePolicy"));
        assert!(!matches_action("dynamodb:PutResourcePolicy?", "dynamodb:PutResourcePolicy"));
    }
}
