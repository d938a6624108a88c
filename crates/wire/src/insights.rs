//! Contributor Insights: UpdateContributorInsights,
//! DescribeContributorInsights and ListContributorInsights over the
//! engine's settings (`dynaburst_engine::insights`). The top keys
//! themselves are in `/metrics.json` and on the web view.

use dynaburst_engine::insights::{InsightsDescription, InsightsMode};
use dynaburst_engine::{Engine, Millis};
use serde_json::{json, Map, Value};

use crate::error::ApiError;
use crate::request::Req;

/// ListContributorInsights' page when MaxResults is not given.
pub const DEFAULT_LIST_RESULTS: usize = 100;

fn mode_of(name: &str) -> Option<InsightsMode> {
    match name {
        "ACCESSED_AND_THROTTLED_KEYS" => Some(InsightsMode::AccessedAndThrottledKeys),
        "THROTTLED_KEYS" => Some(InsightsMode::ThrottledKeys),
        _ => None,
    }
}

/// The members every answer carries: TableName, IndexName (for a GSI),
/// ContributorInsightsStatus and ContributorInsightsMode (once set).
fn summary(d: &InsightsDescription) -> Map<String, Value> {
    let mut out = Map::new();
    out.insert("TableName".into(), json!(d.table_name));
    if let Some(i) = &d.index_name {
        out.insert("IndexName".into(), json!(i));
    }
    out.insert("ContributorInsightsStatus".into(), json!(d.status));
    if let Some(m) = d.mode {
        out.insert("ContributorInsightsMode".into(), json!(m.name()));
    }
    out
}

/// The IndexName of a Contributor Insights request: DynamoDB checks its
/// length with a text of its own, not the shape's (ack-api-quirks
/// DDB-TABLE-457, live 2026-10).
fn index_name<'a>(req: &Req<'a>) -> Result<Option<&'a str>, ApiError> {
    let index = req.opt_str("IndexName")?;
    if index.is_some_and(|i| !(MIN_INDEX_NAME..=MAX_INDEX_NAME).contains(&i.len())) {
        return Err(ApiError::validation(format!(
            "IndexName must be at least {MIN_INDEX_NAME} characters long and at most {MAX_INDEX_NAME} characters long"
        )));
    }
    Ok(index)
}

/// Shortest and longest index name (the model's IndexName).
const MIN_INDEX_NAME: usize = 3;
const MAX_INDEX_NAME: usize = 255;

/// UpdateContributorInsights.
pub fn update(engine: &Engine, body: &Value, now: Millis) -> Result<Value, ApiError> {
    let req = Req::new(body)?;
    let table_name = req.table_name()?;
    let index = index_name(&req)?;
    // The service model has checked the action and the mode are among
    // their enums.
    let enable = req.opt_str("ContributorInsightsAction")? == Some("ENABLE");
    let mode = req.opt_str("ContributorInsightsMode")?.and_then(mode_of);
    let d = engine.update_contributor_insights(&table_name, index, enable, mode, now)?;
    Ok(Value::Object(summary(&d)))
}

/// DescribeContributorInsights.
pub fn describe(engine: &Engine, body: &Value, now: Millis) -> Result<Value, ApiError> {
    let req = Req::new(body)?;
    let table_name = req.table_name()?;
    let d = engine.describe_contributor_insights(&table_name, index_name(&req)?, now)?;
    let mut out = summary(&d);
    if !d.rules.is_empty() {
        out.insert("ContributorInsightsRuleList".into(), json!(d.rules));
    }
    if let Some(t) = d.last_update {
        out.insert("LastUpdateDateTime".into(), json!(t.0 as f64 / 1000.0));
    }
    Ok(Value::Object(out))
}

/// ListContributorInsights: pages of at most MaxResults; NextToken is the
/// position of the next summary.
pub fn list(engine: &Engine, body: &Value, now: Millis) -> Result<Value, ApiError> {
    let req = Req::new(body)?;
    let table_name = match req.opt_str("TableName")? {
        Some(_) => Some(req.table_name()?),
        None => None,
    };
    let limit = match req.opt_i64("MaxResults")? {
        Some(n) if n > 0 => n as usize,
        _ => DEFAULT_LIST_RESULTS,
    };
    let start = match req.opt_str("NextToken")? {
        Some(t) => t.parse::<usize>().map_err(|_| ApiError::validation("Invalid NextToken"))?,
        None => 0,
    };
    let all = engine.list_contributor_insights(table_name.as_deref(), now)?;
    let page: Vec<Value> = all.iter().skip(start).take(limit).map(|d| Value::Object(summary(d))).collect();
    let mut out = Map::new();
    out.insert("ContributorInsightsSummaries".into(), Value::Array(page));
    if start + limit < all.len() {
        out.insert("NextToken".into(), json!((start + limit).to_string()));
    }
    Ok(Value::Object(out))
}
