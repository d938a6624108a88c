//! Query and Scan: planning a key range from a key condition or a scan
//! segment, walking it a page at a time, and charging the page.

use std::ops::{Bound, ControlFlow};

use dynaburst_capacity::Op;
use dynaburst_expr::{parse_condition, parse_key_condition, parse_projection, ExprKind, KeyOp, Placeholders};
use dynaburst_model::{item_size, read_units, AttributeValue, KeyValue};

use crate::engine::{consumed, no_expression_args, projected, read_kind, throttled, Engine, MAX_PAGE_BYTES};
use crate::error::EngineError;
use crate::store::{Direction, SortSlot, StoreKey};
use crate::table::{KeyAttr, KeySchema};
use crate::types::*;

/// Key-space bounds of one hash segment of a parallel Scan.
fn segment_bounds(segment: u32, total: u32) -> (u128, Option<u128>) {
    let width = u128::MAX / u128::from(total);
    let lo = width * u128::from(segment);
    let hi = if segment + 1 == total { None } else { Some(width * u128::from(segment + 1)) };
    (lo, hi)
}

/// The least key with this hash: partition keys are never empty strings,
/// and an empty string sorts before every S, N and B key value.
fn hash_floor(hash: u128) -> StoreKey {
    StoreKey { hash, partition: KeyValue::S(String::new()), sort: SortSlot::Low }
}

impl Engine {
    /// Query (when `key_condition` is set) or Scan.
    pub fn read(&self, input: ReadInput, now: Millis) -> Result<ReadOutput, EngineError> {
        let table = self.table(&input.table_name)?;
        if input.index_name.is_some() {
            return Err(EngineError::validation("dynaburst does not support secondary indexes yet: remove IndexName"));
        }
        let select = input.select.unwrap_or(if input.projection.is_some() {
            Select::SpecificAttributes
        } else {
            Select::AllAttributes
        });
        match select {
            Select::AllProjectedAttributes => {
                return Err(EngineError::validation(
                    "One or more parameter values were invalid: Select type ALL_PROJECTED_ATTRIBUTES is not supported for a table",
                ))
            }
            Select::SpecificAttributes if input.projection.is_none() => {
                return Err(EngineError::validation(
                    "One or more parameter values were invalid: Select type SPECIFIC_ATTRIBUTES requires ProjectionExpression or AttributesToGet",
                ))
            }
            // Live captures: Query wraps this one in the constraint envelope,
            // Scan does not.
            Select::Count if input.projection.is_some() => {
                return Err(EngineError::validation(format!(
                    "{}Cannot specify the ProjectionExpression when choosing to get only the Count",
                    if input.key_condition.is_some() { "1 validation error detected: " } else { "" }
                )))
            }
            Select::AllAttributes if input.projection.is_some() => {
                return Err(EngineError::validation(
                    "One or more parameter values were invalid: Cannot specify the ProjectionExpression when choosing to get ALL_ATTRIBUTES",
                ))
            }
            _ => {}
        }
        if input.key_condition.is_none() && input.filter.is_none() && input.projection.is_none() {
            no_expression_args(&input.expr)?;
        }
        let mut ph = Placeholders::new(input.expr.names.as_ref(), input.expr.values.as_ref());
        let key_condition = input.key_condition.as_deref().map(|k| parse_key_condition(k, &mut ph)).transpose()?;
        let filter = input.filter.as_deref().map(|f| parse_condition(f, ExprKind::Filter, &mut ph)).transpose()?;
        let projection = input.projection.as_deref().map(|p| parse_projection(p, &mut ph)).transpose()?;
        ph.check_all_used()?;
        let schema = &table.key_schema;
        let start_key = input
            .exclusive_start_key
            .as_ref()
            .map(|k| {
                schema.key_of_key(k).map_err(|e| match e {
                    EngineError::Validation(m) => {
                        EngineError::Validation(format!("The provided starting key is invalid: {m}"))
                    }
                    other => other,
                })
            })
            .transpose()?;

        let mut start_hash: u128 = 0;
        // The walk: a key range and a direction, plus (for begins_with)
        // a predicate on the sort key.
        let (lower, upper, direction, sort_filter) = if let Some(kc) = key_condition {
            let plan = plan_query(schema, kc)?;
            let pk = plan.partition;
            let hash = pk.partition_hash();
            start_hash = hash;
            let mk = |sort: SortSlot| StoreKey { hash, partition: pk.clone(), sort };
            let (lo, hi) = match plan.sort {
                None => (Bound::Included(mk(SortSlot::Low)), Bound::Included(mk(SortSlot::High))),
                Some(SortRange { lower, upper, .. }) => (
                    map_bound(lower, |v| mk(SortSlot::Value(v)), mk(SortSlot::Low)),
                    map_bound(upper, |v| mk(SortSlot::Value(v)), mk(SortSlot::High)),
                ),
            };
            let direction = if input.forward { Direction::Forward } else { Direction::Backward };
            if let Some(sk) = &start_key {
                if sk.partition != pk {
                    return Err(EngineError::validation(
                        "The provided starting key is outside query boundaries based on provided conditions",
                    ));
                }
            }
            (lo, hi, direction, plan.prefix)
        } else {
            let (lo, hi) = match input.segment {
                Some((segment, total)) => {
                    let (lo, hi) = segment_bounds(segment, total);
                    start_hash = lo;
                    if let Some(sk) = &start_key {
                        if sk.hash < lo || hi.is_some_and(|h| sk.hash >= h) {
                            return Err(EngineError::validation(format!(
                                "The provided Exclusive start key does not map to the provided segment: {segment}"
                            )));
                        }
                    }
                    (
                        Bound::Included(hash_floor(lo)),
                        hi.map(|h| Bound::Excluded(hash_floor(h))).unwrap_or(Bound::Unbounded),
                    )
                }
                None => (Bound::Unbounded, Bound::Unbounded),
            };
            (lo, hi, Direction::Forward, None)
        };
        let (lower, upper) = match (&start_key, direction) {
            (Some(k), Direction::Forward) => (Bound::Excluded(k.clone()), upper),
            (Some(k), Direction::Backward) => (lower, Bound::Excluded(k.clone())),
            (None, _) => (lower, upper),
        };

        let limit = input.limit.unwrap_or(usize::MAX);
        let count_only = select == Select::Count;
        let mut out = ReadOutput { count_only, ..ReadOutput::default() };
        let mut bytes = 0usize;
        let mut failure: Option<EngineError> = None;
        let mut matched_prefix = false;
        // Bytes read per partition hash, for the capacity model.
        let mut read_by_hash: Vec<(u128, usize)> = Vec::new();
        let data = table.data.read();
        data.store.range(bound_ref(&lower), bound_ref(&upper), direction, &mut |key, item| {
            if let Some(prefix) = &sort_filter {
                let matches = match &key.sort {
                    SortSlot::Value(v) => prefix.is_prefix_of(v),
                    _ => false,
                };
                if !matches {
                    // Matching keys are contiguous: stop once past them.
                    return if matched_prefix { ControlFlow::Break(()) } else { ControlFlow::Continue(()) };
                }
                matched_prefix = true;
            }
            out.scanned_count += 1;
            let size = item_size(item);
            bytes += size;
            match read_by_hash.last_mut() {
                Some((h, b)) if *h == key.hash => *b += size,
                _ => read_by_hash.push((key.hash, size)),
            }
            let keep = match &filter {
                Some(f) => match f.evaluate(item) {
                    Ok(k) => k,
                    Err(e) => {
                        failure = Some(e.into());
                        return ControlFlow::Break(());
                    }
                },
                None => true,
            };
            if keep {
                out.count += 1;
                if !count_only {
                    out.items.push(projected(item, &projection));
                }
            }
            if out.scanned_count >= limit || bytes >= MAX_PAGE_BYTES {
                out.last_evaluated_key = Some(schema.key_item(item));
                return ControlFlow::Break(());
            }
            ControlFlow::Continue(())
        })?;
        drop(data);
        if let Some(e) = failure {
            return Err(e);
        }
        // Units are rounded once on the sum (B8) and charged to the
        // partitions in proportion to what each served. A page the model
        // refuses fails whole (no partial pages).
        let units = read_units(bytes, read_kind(input.consistent_read));
        let admissions: Vec<(u128, f64)> = if bytes == 0 {
            vec![(read_by_hash.first().map(|(h, _)| *h).unwrap_or(start_hash), units)]
        } else {
            read_by_hash.iter().map(|(h, b)| (*h, units * *b as f64 / bytes as f64)).collect()
        };
        throttled(&table, now, table.admit_all(Op::Read, &admissions, now))?;
        out.consumed = consumed(input.return_capacity, &table.name, units, 0.0);
        Ok(out)
    }
}

fn bound_ref(b: &Bound<StoreKey>) -> Bound<&StoreKey> {
    match b {
        Bound::Included(k) => Bound::Included(k),
        Bound::Excluded(k) => Bound::Excluded(k),
        Bound::Unbounded => Bound::Unbounded,
    }
}

fn map_bound(b: Bound<KeyValue>, f: impl Fn(KeyValue) -> StoreKey, open: StoreKey) -> Bound<StoreKey> {
    match b {
        Bound::Included(v) => Bound::Included(f(v)),
        Bound::Excluded(v) => Bound::Excluded(f(v)),
        Bound::Unbounded => Bound::Included(open),
    }
}

/// A begins_with prefix on the sort key.
enum Prefix {
    S(String),
    B(Vec<u8>),
}

impl Prefix {
    fn is_prefix_of(&self, v: &KeyValue) -> bool {
        match (self, v) {
            (Prefix::S(p), KeyValue::S(s)) => s.as_bytes().starts_with(p.as_bytes()),
            (Prefix::B(p), KeyValue::B(b)) => b.starts_with(p),
            _ => false,
        }
    }
}

struct SortRange {
    lower: Bound<KeyValue>,
    upper: Bound<KeyValue>,
}

struct QueryPlan {
    partition: KeyValue,
    sort: Option<SortRange>,
    prefix: Option<Prefix>,
}

fn condition_type_mismatch() -> EngineError {
    EngineError::validation(
        "One or more parameter values were invalid: Condition parameter type does not match schema type",
    )
}

fn typed_key(attr: &KeyAttr, v: &AttributeValue) -> Result<KeyValue, EngineError> {
    match KeyValue::from_attribute(v) {
        Some(k) if k.key_type() == attr.ty => Ok(k),
        _ => Err(condition_type_mismatch()),
    }
}

/// Matches a parsed key condition against the table's key schema.
fn plan_query(schema: &KeySchema, kc: dynaburst_expr::KeyCondition) -> Result<QueryPlan, EngineError> {
    let mut partition = None;
    let mut sort = None;
    let mut prefix = None;
    for part in kc.parts {
        if part.attribute == schema.hash.name {
            if partition.is_some() {
                return Err(EngineError::validation("KeyConditionExpressions must only contain one condition per key"));
            }
            match &part.op {
                KeyOp::Eq(v) => partition = Some(typed_key(&schema.hash, v)?),
                _ => return Err(EngineError::validation("Query key condition not supported")),
            }
        } else if let Some(range) = schema.range.as_ref().filter(|r| r.name == part.attribute) {
            if sort.is_some() {
                return Err(EngineError::validation("KeyConditionExpressions must only contain one condition per key"));
            }
            let (lower, upper) = match &part.op {
                KeyOp::Eq(v) => {
                    let k = typed_key(range, v)?;
                    (Bound::Included(k.clone()), Bound::Included(k))
                }
                KeyOp::Lt(v) => (Bound::Unbounded, Bound::Excluded(typed_key(range, v)?)),
                KeyOp::Le(v) => (Bound::Unbounded, Bound::Included(typed_key(range, v)?)),
                KeyOp::Gt(v) => (Bound::Excluded(typed_key(range, v)?), Bound::Unbounded),
                KeyOp::Ge(v) => (Bound::Included(typed_key(range, v)?), Bound::Unbounded),
                KeyOp::Between(a, b) => {
                    let (a, b) = (typed_key(range, a)?, typed_key(range, b)?);
                    if a > b {
                        return Err(EngineError::validation(format!(
                            "Invalid KeyConditionExpression: The BETWEEN operator requires upper bound to be greater than or equal to lower bound; lower bound operand: AttributeValue: {{{}:{}}}, upper bound operand: AttributeValue: {{{}:{}}}",
                            a.key_type().descriptor(), key_text(&a), b.key_type().descriptor(), key_text(&b)
                        )));
                    }
                    (Bound::Included(a), Bound::Included(b))
                }
                KeyOp::BeginsWith(v) => {
                    let k = typed_key(range, v)?;
                    let p = match &k {
                        KeyValue::S(s) => Prefix::S(s.clone()),
                        KeyValue::B(b) => Prefix::B(b.clone()),
                        KeyValue::N(_) => {
                            return Err(EngineError::validation(
                                "Invalid KeyConditionExpression: Incorrect operand type for operator or function; operator or function: begins_with, operand type: N",
                            ))
                        }
                    };
                    prefix = Some(p);
                    (Bound::Included(k), Bound::Unbounded)
                }
            };
            sort = Some(SortRange { lower, upper });
        } else {
            return Err(EngineError::validation(format!(
                "Query condition missed key schema element: {}",
                if partition.is_none() {
                    &schema.hash.name
                } else {
                    schema.range.as_ref().map(|r| &r.name).unwrap_or(&schema.hash.name)
                }
            )));
        }
    }
    let Some(partition) = partition else {
        return Err(EngineError::validation(format!(
            "Query condition missed key schema element: {}",
            schema.hash.name
        )));
    };
    Ok(QueryPlan { partition, sort, prefix })
}

fn key_text(k: &KeyValue) -> String {
    match k {
        KeyValue::S(s) => s.clone(),
        KeyValue::N(n) => n.to_string(),
        KeyValue::B(b) => format!("{b:?}"),
    }
}
