//! PartiQL: ExecuteStatement, BatchExecuteStatement and ExecuteTransaction.
//!
//! A statement is parsed by `dynaburst-partiql`, then planned onto the
//! engine's own operations, so that units, conditions and throttling are
//! exactly those of the equivalent calls: a SELECT is a Query when its WHERE
//! pins the partition key with `=`, else a Scan (a GetItem in a batch or a
//! transaction); INSERT is a PutItem with `attribute_not_exists` on the
//! partition key; UPDATE an UpdateItem that requires the item; DELETE a
//! DeleteItem; EXISTS a ConditionCheck. The WHERE clause's other predicates
//! become the filter or the write's condition, rendered as DynamoDB
//! expressions with generated names (`#n0`) and values (`:v0`).

use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};

use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine as _;
use dynaburst_engine::index::IndexKind;
use dynaburst_engine::*;
use dynaburst_model::{AttributeValue, Item, Number};
use dynaburst_partiql::{CompareOp, Expr, IsKind, Path, Returning, Statement, Step, UpdateAction};
use serde_json::{json, Map, Value};

use crate::error::{ApiError, ErrorKind};
use crate::ops::{capacity_json, item_capacity_json, member_list};
use crate::request::{null_member, Req};
use crate::value::{item_to_json, parse_item, parse_value, wrong_json_type};

/// Most statements in one BatchExecuteStatement.
pub const MAX_BATCH_STATEMENTS: usize = 25;
/// Most statements in one ExecuteTransaction.
pub const MAX_TRANSACTION_STATEMENTS: usize = 100;

/// DuplicateItemException's message (S127).
const DUPLICATE_ITEM: &str = "Duplicate primary key exists in table";
/// UPDATE and DELETE without an equality on every key attribute.
const INCOMPLETE_KEY: &str = "Where clause does not contain a mandatory equality on all key attributes";

/// Where a statement runs: its rules differ (S139, S140).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Surface {
    Single,
    Batch,
    Transaction,
}

/// The per-statement options of a request.
struct Options<'a> {
    surface: Surface,
    consistent_read: bool,
    return_capacity: ReturnCapacity,
    return_old_on_failure: bool,
    limit: Option<usize>,
    next_token: Option<&'a str>,
}

/// A statement planned onto one engine operation.
enum Plan {
    /// A Query or Scan; `fingerprint` ties its NextToken to the statement.
    Read {
        input: ReadInput,
        fingerprint: u64,
    },
    /// One Query per partition-key value of an `IN` or an `OR` of
    /// equalities, run in order from `start` (the query a NextToken names)
    /// within the statement's `limit`.
    Reads {
        inputs: Vec<ReadInput>,
        start: usize,
        limit: Option<usize>,
        fingerprint: u64,
    },
    Get(GetItemInput),
    /// INSERT: a conditional PutItem.
    Insert(PutItemInput),
    Update(UpdateItemInput),
    Delete(DeleteItemInput),
    /// EXISTS: a ConditionCheck (transactions only).
    Check {
        table_name: String,
        key: Item,
        condition: String,
        expr: ExprArgs,
    },
}

/// Expression names and values generated while rendering a statement.
#[derive(Clone, Default)]
struct Exprs {
    names: Names,
    values: Values,
    by_name: HashMap<String, String>,
}

impl Exprs {
    fn name(&mut self, attr: &str) -> String {
        if let Some(p) = self.by_name.get(attr) {
            return p.clone();
        }
        let p = format!("#n{}", self.by_name.len());
        self.by_name.insert(attr.to_string(), p.clone());
        self.names.insert(p.clone(), attr.to_string());
        p
    }

    fn value(&mut self, v: AttributeValue) -> String {
        let p = format!(":v{}", self.values.len());
        self.values.insert(p.clone(), v);
        p
    }

    fn path(&mut self, path: &Path) -> String {
        let mut out = String::new();
        for step in &path.0 {
            match step {
                Step::Attr(a) => {
                    if !out.is_empty() {
                        out.push('.');
                    }
                    let n = self.name(a);
                    out.push_str(&n);
                }
                Step::Index(i) => out.push_str(&format!("[{i}]")),
            }
        }
        out
    }

    fn args(self) -> ExprArgs {
        ExprArgs {
            names: (!self.names.is_empty()).then_some(self.names),
            values: (!self.values.is_empty()).then_some(self.values),
        }
    }
}

/// The statement's parameters and the rendering of its expressions.
struct Render<'a> {
    params: &'a [AttributeValue],
    exprs: Exprs,
}

fn unexpected() -> ApiError {
    ApiError::validation(dynaburst_partiql::ParseError::UnexpectedTerm.to_string())
}

impl Render<'_> {
    /// The value of a constant expression (literals and parameters), None
    /// when it reads the item.
    fn constant(&self, e: &Expr) -> Result<Option<AttributeValue>, ApiError> {
        Ok(Some(match e {
            Expr::Str(s) => AttributeValue::S(s.clone()),
            Expr::Num(n) => AttributeValue::N(Number::parse(n).map_err(|e| match e {
                dynaburst_model::NumberError::Invalid => {
                    ApiError::validation(dynaburst_model::invalid_number_message(n))
                }
                other => ApiError::validation(other.to_string()),
            })?),
            Expr::Bool(b) => AttributeValue::Bool(*b),
            Expr::Null => AttributeValue::Null,
            Expr::Param(i) => self.params.get(*i).cloned().ok_or_else(unexpected)?,
            Expr::Tuple(fields) => {
                let mut m = Item::new();
                for (k, v) in fields {
                    let Some(v) = self.constant(v)? else { return Ok(None) };
                    m.insert(k.clone(), v);
                }
                AttributeValue::M(m)
            }
            Expr::List(items) => match self.constants(items)? {
                Some(values) => AttributeValue::L(values),
                None => return Ok(None),
            },
            Expr::Bag(items) => match self.constants(items)? {
                Some(values) => set_of(values)?,
                None => return Ok(None),
            },
            _ => return Ok(None),
        }))
    }

    /// The values of constant expressions, None when one reads the item.
    fn constants(&self, items: &[Expr]) -> Result<Option<Vec<AttributeValue>>, ApiError> {
        let mut out = Vec::with_capacity(items.len());
        for v in items {
            let Some(v) = self.constant(v)? else { return Ok(None) };
            out.push(v);
        }
        Ok(Some(out))
    }

    /// An operand of a condition: a path, `size(path)` or a constant.
    fn operand(&mut self, e: &Expr) -> Result<String, ApiError> {
        match e {
            Expr::Path(p) => Ok(self.exprs.path(p)),
            Expr::Call(f, args) if f == "size" => Ok(format!("size({})", self.call_args(args)?)),
            other => match self.constant(other)? {
                Some(v) => Ok(self.exprs.value(v)),
                None => Err(unexpected()),
            },
        }
    }

    fn call_args(&mut self, args: &[Expr]) -> Result<String, ApiError> {
        let rendered = args.iter().map(|a| self.operand(a)).collect::<Result<Vec<_>, _>>()?;
        Ok(rendered.join(", "))
    }

    /// A condition as a DynamoDB condition expression.
    fn condition(&mut self, e: &Expr) -> Result<String, ApiError> {
        Ok(match e {
            Expr::Compare(op, a, b) => format!("{} {} {}", self.operand(a)?, op.symbol(), self.operand(b)?),
            Expr::Between(a, lo, hi) => {
                format!("{} BETWEEN {} AND {}", self.operand(a)?, self.operand(lo)?, self.operand(hi)?)
            }
            Expr::In(a, items) => format!("{} IN ({})", self.operand(a)?, self.call_args(items)?),
            Expr::And(a, b) => format!("({}) AND ({})", self.condition(a)?, self.condition(b)?),
            Expr::Or(a, b) => format!("({}) OR ({})", self.condition(a)?, self.condition(b)?),
            Expr::Not(a) => format!("NOT ({})", self.condition(a)?),
            Expr::Is { expr, negated, kind } => {
                let Expr::Path(p) = expr.as_ref() else { return Err(unexpected()) };
                let path = self.exprs.path(p);
                let test = match kind {
                    IsKind::Missing => format!("attribute_not_exists({path})"),
                    IsKind::Null => {
                        format!("attribute_type({path}, {})", self.exprs.value(AttributeValue::S("NULL".into())))
                    }
                    IsKind::Type(t) => {
                        format!("attribute_type({path}, {})", self.exprs.value(AttributeValue::S((*t).into())))
                    }
                };
                if *negated {
                    format!("NOT {test}")
                } else {
                    test
                }
            }
            Expr::Call(f, args)
                if matches!(
                    f.as_str(),
                    "begins_with" | "contains" | "attribute_type" | "attribute_exists" | "attribute_not_exists"
                ) =>
            {
                format!("{f}({})", self.call_args(args)?)
            }
            _ => return Err(unexpected()),
        })
    }

    /// The AND of `conds`, None when there are none.
    fn all(&mut self, conds: &[&Expr]) -> Result<Option<String>, ApiError> {
        let parts = conds.iter().map(|c| self.condition(c)).collect::<Result<Vec<_>, _>>()?;
        Ok(match parts.len() {
            0 => None,
            1 => parts.into_iter().next(),
            _ => Some(parts.iter().map(|p| format!("({p})")).collect::<Vec<_>>().join(" AND ")),
        })
    }

    /// The value side of `SET path = e`.
    fn set_value(&mut self, e: &Expr) -> Result<String, ApiError> {
        match e {
            Expr::Arith(plus, a, b) => {
                Ok(format!("{} {} {}", self.set_value(a)?, if *plus { "+" } else { "-" }, self.set_value(b)?))
            }
            Expr::Call(f, args) if f == "list_append" && args.len() == 2 => {
                Ok(format!("list_append({}, {})", self.set_value(&args[0])?, self.set_value(&args[1])?))
            }
            other => self.operand(other),
        }
    }

    /// An UPDATE's actions as an UpdateExpression: `SET x = set_add(x, v)`
    /// is `ADD x v`, `set_delete` is `DELETE`.
    fn update(&mut self, actions: &[UpdateAction]) -> Result<String, ApiError> {
        let (mut set, mut remove, mut add, mut delete) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for action in actions {
            match action {
                UpdateAction::Remove(p) => remove.push(self.exprs.path(p)),
                UpdateAction::Set(p, Expr::Call(f, args)) if f == "set_add" || f == "set_delete" => {
                    let name = f.to_ascii_uppercase();
                    if args.len() != 2 {
                        return Err(ApiError::validation(format!("{name} must have exactly two arguments")));
                    }
                    if args[0] != Expr::Path(p.clone()) {
                        return Err(ApiError::validation(format!(
                            "The first argument to {name} must equal the assignment value"
                        )));
                    }
                    let target = self.exprs.path(p);
                    let v = self.operand(&args[1])?;
                    if f == "set_add" { &mut add } else { &mut delete }.push(format!("{target} {v}"));
                }
                UpdateAction::Set(p, e) => {
                    let target = self.exprs.path(p);
                    set.push(format!("{target} = {}", self.set_value(e)?));
                }
            }
        }
        let mut out = Vec::new();
        for (word, list) in [("SET", set), ("REMOVE", remove), ("ADD", add), ("DELETE", delete)] {
            if !list.is_empty() {
                out.push(format!("{word} {}", list.join(", ")));
            }
        }
        Ok(out.join(" "))
    }
}

/// A set from a bag's values: all strings, all numbers or all binaries.
fn set_of(values: Vec<AttributeValue>) -> Result<AttributeValue, ApiError> {
    let mismatch = || ApiError::validation("A set must contain values of a single type: string, number or binary");
    Ok(match values.first() {
        Some(AttributeValue::S(_)) => AttributeValue::Ss(
            values
                .into_iter()
                .map(|v| if let AttributeValue::S(s) = v { Ok(s) } else { Err(mismatch()) })
                .collect::<Result<_, _>>()?,
        ),
        Some(AttributeValue::N(_)) => AttributeValue::Ns(
            values
                .into_iter()
                .map(|v| if let AttributeValue::N(n) = v { Ok(n) } else { Err(mismatch()) })
                .collect::<Result<_, _>>()?,
        ),
        Some(AttributeValue::B(_)) => AttributeValue::Bs(
            values
                .into_iter()
                .map(|v| if let AttributeValue::B(b) = v { Ok(b) } else { Err(mismatch()) })
                .collect::<Result<_, _>>()?,
        ),
        _ => return Err(mismatch()),
    })
}

/// `attr = constant` (either way round) on a top-level attribute.
fn equality<'e>(render: &Render<'_>, e: &'e Expr) -> Result<Option<(&'e str, AttributeValue)>, ApiError> {
    let Expr::Compare(CompareOp::Eq, a, b) = e else { return Ok(None) };
    for (p, v) in [(a, b), (b, a)] {
        if let Expr::Path(p) = p.as_ref() {
            if let (Some(name), Some(value)) = (p.top_level(), render.constant(v)?) {
                return Ok(Some((name, value)));
            }
        }
    }
    Ok(None)
}

/// The top-level attributes an expression reads.
fn attributes<'e>(e: &'e Expr, out: &mut Vec<&'e str>) {
    match e {
        Expr::Path(p) => {
            if let Some(Step::Attr(a)) = p.0.first() {
                out.push(a);
            }
        }
        Expr::Compare(_, a, b) | Expr::And(a, b) | Expr::Or(a, b) | Expr::Arith(_, a, b) => {
            attributes(a, out);
            attributes(b, out);
        }
        Expr::Between(a, b, c) => {
            for x in [a, b, c] {
                attributes(x, out);
            }
        }
        Expr::In(a, items) => {
            attributes(a, out);
            items.iter().for_each(|i| attributes(i, out));
        }
        Expr::Not(a) => attributes(a, out),
        Expr::Is { expr, .. } => attributes(expr, out),
        Expr::Call(_, items) | Expr::List(items) | Expr::Bag(items) => items.iter().for_each(|i| attributes(i, out)),
        Expr::Tuple(fields) => fields.iter().for_each(|(_, v)| attributes(v, out)),
        Expr::Str(_) | Expr::Num(_) | Expr::Bool(_) | Expr::Null | Expr::Param(_) => {}
    }
}

/// The table's primary key out of a WHERE clause's equalities, and the
/// other conjuncts; None when some key attribute has no equality.
fn split_key<'e>(
    render: &Render<'_>,
    schema: &[(String, KeyRole)],
    condition: &'e Expr,
) -> Result<Option<(Item, Vec<&'e Expr>)>, ApiError> {
    let mut key = Item::new();
    let mut rest = Vec::new();
    for c in condition.conjuncts() {
        match equality(render, c)? {
            Some((name, value)) if schema.iter().any(|(k, _)| k == name) && !key.contains_key(name) => {
                key.insert(name.to_string(), value);
            }
            _ => rest.push(c),
        }
    }
    Ok((key.len() == schema.len()).then_some((key, rest)))
}

fn fingerprint(statement: &str) -> u64 {
    let mut h = DefaultHasher::new();
    statement.hash(&mut h);
    h.finish()
}

/// A NextToken: the statement's fingerprint, the LastEvaluatedKey (none
/// when the next page starts a query afresh), and, for a statement run as
/// several queries, which query the next page starts in; in base64.
fn encode_token(fingerprint: u64, key: Option<&Item>, query: usize) -> String {
    let mut v = json!({"s": fingerprint.to_string()});
    if let Value::Object(m) = &mut v {
        if let Some(k) = key {
            m.insert("k".into(), item_to_json(k));
        }
        if query > 0 {
            m.insert("q".into(), json!(query));
        }
    }
    BASE64.encode(v.to_string())
}

/// A NextToken's LastEvaluatedKey and query (see [`encode_token`]).
fn decode_token(token: &str, fingerprint: u64) -> Result<(Option<Item>, usize), ApiError> {
    let invalid = || ApiError::validation("Invalid NextToken");
    let bytes = BASE64.decode(token).map_err(|_| invalid())?;
    let v: Value = serde_json::from_slice(&bytes).map_err(|_| invalid())?;
    if v["s"].as_str() != Some(fingerprint.to_string().as_str()) {
        return Err(ApiError::validation("The NextToken does not belong to this statement"));
    }
    let key = match v.get("k") {
        Some(k) => Some(parse_item(k).map_err(|_| invalid())?),
        None => None,
    };
    let query = match v.get("q") {
        Some(q) => q.as_u64().and_then(|q| usize::try_from(q).ok()).ok_or_else(invalid)?,
        None => 0,
    };
    Ok((key, query))
}

/// Parses and plans one statement.
fn plan(
    engine: &Engine,
    statement: &str,
    params: &[AttributeValue],
    opts: &Options<'_>,
    now: Millis,
) -> Result<(Plan, String), ApiError> {
    let parsed = dynaburst_partiql::parse(statement).map_err(|e| ApiError::validation(e.to_string()))?;
    if parsed.parameters != params.len() {
        return Err(ApiError::validation("Number of parameters in request and statement don't match."));
    }
    let table_name = parsed.statement.table().to_string();
    let table = engine.describe_table(&table_name, now).map_err(|e| match e {
        // PartiQL's answer names no table (S137).
        EngineError::ResourceNotFound(_) => ApiError::new(ErrorKind::ResourceNotFound, "Requested resource not found"),
        other => other.into(),
    })?;
    let schema = &table.key_schema;
    let hash = schema.first().map(|(n, _)| n.clone()).unwrap_or_default();
    let returning = match &parsed.statement {
        Statement::Update { returning, .. } | Statement::Delete { returning, .. } => returning.is_some(),
        _ => false,
    };
    if returning && opts.surface == Surface::Transaction {
        return Err(ApiError::validation("RETURNING clause is not supported in ExecuteTransaction."));
    }
    let mut r = Render { params, exprs: Exprs::default() };
    let options = |condition: Option<String>, exprs: Exprs, return_values| WriteOptions {
        condition,
        expr: exprs.args(),
        return_values,
        return_capacity: opts.return_capacity,
        return_old_on_condition_failure: opts.return_old_on_failure,
        return_item_collection_metrics: false,
    };
    let plan = match &parsed.statement {
        Statement::Select(s) => {
            let projection =
                s.projection.as_ref().map(|paths| paths.iter().map(|p| r.exprs.path(p)).collect::<Vec<_>>().join(", "));
            if opts.surface == Surface::Transaction && s.index.is_some() {
                return Err(ApiError::validation("Reads on indices are not supported within transactions."));
            }
            if opts.surface != Surface::Single {
                let by_key = match (&s.index, &s.condition) {
                    (None, Some(c)) => split_key(&r, schema, c)?.filter(|(_, rest)| rest.is_empty()),
                    _ => None,
                };
                let Some((key, _)) = by_key else {
                    return Err(ApiError::validation(match opts.surface {
                        Surface::Batch => "Select statements within BatchExecuteStatement must specify the primary key in the where clause.",
                        _ => "Select statements within ExecuteTransaction must specify the primary key in the where clause.",
                    }));
                };
                let names = r.exprs.args().names;
                Plan::Get(GetItemInput {
                    table_name: table_name.clone(),
                    key,
                    projection,
                    names,
                    consistent_read: opts.consistent_read,
                    return_capacity: opts.return_capacity,
                })
            } else {
                let target: Vec<String> = match &s.index {
                    None => schema.iter().map(|(n, _)| n.clone()).collect(),
                    Some(name) => {
                        let def = table
                            .indexes
                            .iter()
                            .map(|i| &i.def)
                            .find(|d| &d.name == name)
                            .ok_or_else(|| ApiError::validation("The table does not have the specified index"))?;
                        if def.schema.hash.len() > 1 || def.schema.range.len() > 1 {
                            return Err(ApiError::validation("PartiQL statements cannot be executed on tables with multi-attribute HASH keys or multi-attribute RANGE keys."));
                        }
                        if opts.consistent_read && def.kind == IndexKind::Global {
                            return Err(ApiError::validation(
                                "Strongly consistent read is not supported on Global Secondary Indexes",
                            ));
                        }
                        def.schema.attrs().map(|a| a.name.clone()).collect()
                    }
                };
                let mut input = ReadInput::scan(table_name.clone());
                input.index_name = s.index.clone();
                let conjuncts = s.condition.as_ref().map(Expr::conjuncts).unwrap_or_default();
                let fp = fingerprint(statement);
                let (token_key, token_query) = match opts.next_token {
                    Some(t) => decode_token(t, fp)?,
                    None => (None, 0),
                };
                if let Some(multi) = multi_query(&mut r, &target, &conjuncts)? {
                    if !s.order_by.is_empty() {
                        return Err(ApiError::validation(
                            "Must have WHERE clause in the statement when using ORDER BY clause.",
                        ));
                    }
                    let base = std::mem::take(&mut r.exprs);
                    let inputs = multi
                        .values
                        .into_iter()
                        .enumerate()
                        .map(|(q, v)| {
                            let mut e = base.clone();
                            let (h, p) = (e.name(&target[0]), e.value(v));
                            let mut input = ReadInput::scan(table_name.clone());
                            input.index_name = s.index.clone();
                            input.key_condition = Some(match &multi.sort {
                                Some(sort) => format!("{h} = {p} AND {sort}"),
                                None => format!("{h} = {p}"),
                            });
                            input.filter = multi.filter.clone();
                            input.projection = projection.clone();
                            input.expr = e.args();
                            input.consistent_read = opts.consistent_read;
                            input.return_capacity = opts.return_capacity;
                            input.exclusive_start_key = if q == token_query { token_key.clone() } else { None };
                            input
                        })
                        .collect();
                    return Ok((
                        Plan::Reads { inputs, start: token_query, limit: opts.limit, fingerprint: fp },
                        table_name,
                    ));
                }
                let (key_condition, filter) = query_condition(&mut r, &target, &conjuncts)?;
                let filter = match (&key_condition, filter) {
                    (Some(_), f) => f,
                    (None, _) => match &s.condition {
                        Some(c) => Some(r.condition(c)?),
                        None => None,
                    },
                };
                if let Some((path, desc)) = s.order_by.first() {
                    let on_sort_key = target.get(1).is_some_and(|sk| path.top_level() == Some(sk));
                    if key_condition.is_none() || !on_sort_key || s.order_by.len() > 1 {
                        return Err(ApiError::validation(
                            "Must have WHERE clause in the statement when using ORDER BY clause.",
                        ));
                    }
                    input.forward = !desc;
                }
                input.key_condition = key_condition;
                input.filter = filter;
                input.projection = projection;
                input.expr = r.exprs.args();
                input.limit = opts.limit;
                input.consistent_read = opts.consistent_read;
                input.return_capacity = opts.return_capacity;
                input.exclusive_start_key = token_key;
                Plan::Read { input, fingerprint: fp }
            }
        }
        Statement::Exists(s) => {
            if opts.surface != Surface::Transaction {
                return Err(ApiError::validation("Unrecognized function: exists"));
            }
            let found = match (&s.index, &s.condition) {
                (None, Some(c)) => split_key(&r, schema, c)?,
                _ => None,
            };
            let Some((key, rest)) = found.filter(|(_, rest)| !rest.is_empty()) else {
                return Err(ApiError::validation("EXISTS() must contain a single item read with additional condition"));
            };
            let condition = r.all(&rest)?.unwrap_or_default();
            Plan::Check { table_name: table_name.clone(), key, condition, expr: r.exprs.args() }
        }
        Statement::Insert { value, .. } => {
            let item = match r.constant(value)? {
                Some(AttributeValue::M(item)) => item,
                _ => return Err(unexpected()),
            };
            let h = r.exprs.name(&hash);
            let condition = Some(format!("attribute_not_exists({h})"));
            Plan::Insert(PutItemInput {
                table_name: table_name.clone(),
                item,
                options: options(condition, r.exprs, ReturnValues::None),
            })
        }
        Statement::Update { actions, condition, returning, .. } => {
            let (key, rest) = split_key(&r, schema, condition)?.ok_or_else(|| ApiError::validation(INCOMPLETE_KEY))?;
            let update = r.update(actions)?;
            let h = r.exprs.name(&hash);
            let mut condition = format!("attribute_exists({h})");
            if let Some(rest) = r.all(&rest)? {
                condition = format!("{condition} AND {rest}");
            }
            let return_values = match returning {
                None => ReturnValues::None,
                Some(Returning::AllOld) => ReturnValues::AllOld,
                Some(Returning::ModifiedOld) => ReturnValues::UpdatedOld,
                Some(Returning::AllNew) => ReturnValues::AllNew,
                Some(Returning::ModifiedNew) => ReturnValues::UpdatedNew,
            };
            Plan::Update(UpdateItemInput {
                table_name: table_name.clone(),
                key,
                update: Some(update),
                options: options(Some(condition), r.exprs, return_values),
                keep_missing: false,
            })
        }
        Statement::Delete { condition, returning, .. } => {
            let (key, rest) = split_key(&r, schema, condition)?.ok_or_else(|| ApiError::validation(INCOMPLETE_KEY))?;
            // A missing item is deleted silently whatever the condition says.
            let condition = match r.all(&rest)? {
                None => None,
                Some(rest) => {
                    let h = r.exprs.name(&hash);
                    Some(format!("attribute_not_exists({h}) OR ({rest})"))
                }
            };
            let return_values = match returning {
                None => ReturnValues::None,
                Some(Returning::AllOld) => ReturnValues::AllOld,
                Some(_) => return Err(ApiError::validation("DELETE supports only RETURNING ALL OLD *")),
            };
            Plan::Delete(DeleteItemInput {
                table_name: table_name.clone(),
                key,
                options: options(condition, r.exprs, return_values),
            })
        }
    };
    Ok((plan, table_name))
}

/// Partition-key values one `IN` takes at most (S126).
pub const MAX_IN_HASH_KEYS: usize = 50;

/// A SELECT run as one Query per partition-key value.
struct MultiQuery {
    values: Vec<AttributeValue>,
    /// The sort-key condition every query shares.
    sort: Option<String>,
    filter: Option<String>,
}

/// The partition-key values a conjunct pins `hash` to: `hash = v`,
/// `hash IN [v, ...]`, or an OR of those; None for anything else.
fn hash_values(r: &Render<'_>, hash: &str, c: &Expr) -> Result<Option<Vec<AttributeValue>>, ApiError> {
    Ok(match c {
        Expr::Or(a, b) => match (hash_values(r, hash, a)?, hash_values(r, hash, b)?) {
            (Some(mut x), Some(y)) => {
                x.extend(y);
                Some(x)
            }
            _ => None,
        },
        Expr::In(a, items) if matches!(a.as_ref(), Expr::Path(p) if p.top_level() == Some(hash)) => {
            r.constants(items)?
        }
        _ => match equality(r, c)? {
            Some((name, v)) if name == hash => Some(vec![v]),
            _ => None,
        },
    })
}

/// A SELECT whose WHERE pins the partition key of `target` to several
/// values (an `IN`, or an OR of equalities; at most
/// [`MAX_IN_HASH_KEYS`]), with at most a sort-key condition beside it and
/// a filter on other attributes: it runs as one Query per value, not a
/// Scan (S126). None otherwise.
fn multi_query(r: &mut Render<'_>, target: &[String], conjuncts: &[&Expr]) -> Result<Option<MultiQuery>, ApiError> {
    let Some(hash) = target.first() else { return Ok(None) };
    let mut found = None;
    for (i, c) in conjuncts.iter().enumerate() {
        if let Some(values) = hash_values(r, hash, c)? {
            found = Some((i, values));
            break;
        }
    }
    let Some((hash_at, found_values)) = found else { return Ok(None) };
    if matches!(conjuncts[hash_at], Expr::Compare(..)) {
        return Ok(None); // one equality: a plain Query
    }
    let mut values: Vec<AttributeValue> = Vec::new();
    for v in found_values {
        if !values.contains(&v) {
            values.push(v);
        }
    }
    if values.len() > MAX_IN_HASH_KEYS {
        return Ok(None);
    }
    let sort = target.get(1);
    let sort_at = (0..conjuncts.len())
        .find(|&i| i != hash_at && sort.is_some_and(|sk| is_sort_key_condition(r, conjuncts[i], sk)));
    let rest: Vec<&Expr> =
        conjuncts.iter().enumerate().filter(|(i, _)| *i != hash_at && Some(*i) != sort_at).map(|(_, c)| *c).collect();
    let mut read = Vec::new();
    rest.iter().for_each(|c| attributes(c, &mut read));
    if read.iter().any(|a| target.iter().any(|k| k == a)) {
        return Ok(None);
    }
    let sort = sort_at.map(|i| r.condition(conjuncts[i])).transpose()?;
    Ok(Some(MultiQuery { values, sort, filter: r.all(&rest)? }))
}

/// A Query's key condition and filter from a SELECT's conjuncts, when one
/// of them is an equality on the partition key of `target` (its key
/// attributes, partition key first); (None, None) for a Scan.
fn query_condition(
    r: &mut Render<'_>,
    target: &[String],
    conjuncts: &[&Expr],
) -> Result<(Option<String>, Option<String>), ApiError> {
    let Some(hash) = target.first() else { return Ok((None, None)) };
    let mut hash_at = None;
    for (i, c) in conjuncts.iter().enumerate() {
        if matches!(equality(r, c)?, Some((name, _)) if name == hash) {
            hash_at = Some(i);
            break;
        }
    }
    let Some(hash_at) = hash_at else { return Ok((None, None)) };
    let sort = target.get(1);
    let mut sort_at = None;
    for (i, c) in conjuncts.iter().enumerate() {
        if i != hash_at && sort.is_some_and(|sk| is_sort_key_condition(r, c, sk)) {
            sort_at = Some(i);
            break;
        }
    }
    let rest: Vec<&Expr> =
        conjuncts.iter().enumerate().filter(|(i, _)| *i != hash_at && Some(*i) != sort_at).map(|(_, c)| *c).collect();
    let mut read = Vec::new();
    rest.iter().for_each(|c| attributes(c, &mut read));
    if read.iter().any(|a| target.iter().any(|k| k == a)) {
        // The filter of a Query may not name key attributes: scan instead.
        return Ok((None, None));
    }
    let mut key = vec![conjuncts[hash_at]];
    key.extend(sort_at.map(|i| conjuncts[i]));
    let key_condition = key.iter().map(|c| r.condition(c)).collect::<Result<Vec<_>, _>>()?.join(" AND ");
    Ok((Some(key_condition), r.all(&rest)?))
}

/// True when `c` is a condition a Query's key condition takes on sort key `sk`.
fn is_sort_key_condition(r: &Render<'_>, c: &Expr, sk: &str) -> bool {
    let on_sk = |e: &Expr| matches!(e, Expr::Path(p) if p.top_level() == Some(sk));
    let constant = |e: &Expr| matches!(r.constant(e), Ok(Some(_)));
    match c {
        Expr::Compare(op, a, b) => *op != CompareOp::Ne && on_sk(a) && constant(b),
        Expr::Between(a, lo, hi) => on_sk(a) && constant(lo) && constant(hi),
        Expr::Call(f, args) => f == "begins_with" && args.len() == 2 && on_sk(&args[0]) && constant(&args[1]),
        _ => false,
    }
}

/// One statement's result.
struct Done {
    items: Vec<Item>,
    last_key: Option<Item>,
    /// Where the next page of a statement run as several queries starts:
    /// the LastEvaluatedKey in it (none: from its start) and the query.
    next: Option<(Option<Item>, usize)>,
    consumed: Option<ConsumedCapacity>,
    fingerprint: u64,
    /// A Query or Scan, whose ConsumedCapacity splits reads and writes
    /// (an item operation's shows CapacityUnits only, S59).
    split: bool,
}

/// Runs a plan outside a transaction.
fn run(engine: &Engine, plan: Plan, now: Millis) -> Result<Done, ApiError> {
    let done =
        |items: Vec<Item>, consumed| Done { items, last_key: None, next: None, consumed, fingerprint: 0, split: false };
    Ok(match plan {
        Plan::Read { input, fingerprint } => {
            let out = engine.read(input, now)?;
            Done {
                items: out.items,
                last_key: out.last_evaluated_key,
                next: None,
                consumed: out.consumed,
                fingerprint,
                split: true,
            }
        }
        Plan::Reads { inputs, start, limit, fingerprint } => {
            let mut items = Vec::new();
            let mut consumed: Vec<ConsumedCapacity> = Vec::new();
            let mut remaining = limit;
            let mut next = None;
            for (q, mut input) in inputs.into_iter().enumerate().skip(start) {
                if remaining == Some(0) {
                    next = Some((None, q));
                    break;
                }
                input.limit = remaining;
                let out = engine.read(input, now)?;
                remaining = remaining.map(|r| r.saturating_sub(out.scanned_count));
                items.extend(out.items);
                if let Some(c) = out.consumed {
                    add_consumed(&mut consumed, c);
                }
                if let Some(key) = out.last_evaluated_key {
                    next = Some((Some(key), q));
                    break;
                }
            }
            Done { items, last_key: None, next, consumed: consumed.into_iter().next(), fingerprint, split: true }
        }
        Plan::Get(input) => {
            let out = engine.get_item(input, now)?;
            done(out.item.into_iter().collect(), out.consumed)
        }
        Plan::Insert(input) => match engine.put_item(input, now) {
            Ok(out) => done(Vec::new(), out.consumed),
            Err(EngineError::ConditionalCheckFailed { .. }) => {
                return Err(ApiError::new(ErrorKind::DuplicateItem, DUPLICATE_ITEM))
            }
            Err(e) => return Err(e.into()),
        },
        Plan::Update(input) => {
            let out = engine.update_item(input, now)?;
            done(out.attributes.into_iter().collect(), out.consumed)
        }
        Plan::Delete(input) => {
            let out = engine.delete_item(input, now)?;
            done(out.attributes.into_iter().collect(), out.consumed)
        }
        Plan::Check { .. } => return Err(ApiError::validation("Unrecognized function: exists")),
    })
}

/// The Parameters member of a statement.
fn parameters(req: &Req<'_>) -> Result<Vec<AttributeValue>, ApiError> {
    match req.get("Parameters") {
        None => Ok(Vec::new()),
        Some(v) => v.as_array().ok_or_else(|| wrong_json_type(v, "List"))?.iter().map(parse_value).collect(),
    }
}

fn items_json(items: &[Item]) -> Value {
    Value::Array(items.iter().map(item_to_json).collect())
}

/// ExecuteStatement.
pub fn execute_statement(engine: &Engine, body: &Value, now: Millis) -> Result<Value, ApiError> {
    let req = Req::new(body)?;
    let statement = req.opt_str("Statement")?.ok_or_else(|| null_member("statement"))?;
    let params = parameters(&req)?;
    let opts = Options {
        surface: Surface::Single,
        consistent_read: req.opt_bool("ConsistentRead")?.unwrap_or(false),
        return_capacity: req.return_capacity()?,
        return_old_on_failure: req.return_old_on_failure()?,
        limit: req.opt_i64("Limit")?.map(|l| l.max(1) as usize),
        next_token: req.opt_str("NextToken")?,
    };
    let (plan, _) = plan(engine, statement, &params, &opts, now)?;
    let out = run(engine, plan, now)?;
    let mut m = Map::new();
    m.insert("Items".into(), items_json(&out.items));
    if let Some(k) = &out.last_key {
        m.insert("NextToken".into(), json!(encode_token(out.fingerprint, Some(k), 0)));
        m.insert("LastEvaluatedKey".into(), item_to_json(k));
    }
    if let Some((key, query)) = &out.next {
        m.insert("NextToken".into(), json!(encode_token(out.fingerprint, key.as_ref(), *query)));
        if let Some(k) = key {
            m.insert("LastEvaluatedKey".into(), item_to_json(k));
        }
    }
    if let Some(c) = &out.consumed {
        let rendered = if out.split { capacity_json(c) } else { item_capacity_json(c) };
        m.insert("ConsumedCapacity".into(), rendered);
    }
    Ok(Value::Object(m))
}

/// Adds `c` to the per-table totals in `all`.
fn add_consumed(all: &mut Vec<ConsumedCapacity>, c: ConsumedCapacity) {
    match all.iter_mut().find(|a| a.table_name == c.table_name) {
        Some(a) => {
            a.read_units += c.read_units;
            a.write_units += c.write_units;
            for i in &c.indexes {
                a.add_index(&i.name, i.global, i.read_units, i.write_units);
            }
        }
        None => all.push(c),
    }
}

/// A per-statement error code of BatchExecuteStatement (S138).
fn batch_code(kind: &ErrorKind) -> &'static str {
    match kind {
        ErrorKind::ConditionalCheckFailed { .. } => "ConditionalCheckFailed",
        ErrorKind::ItemCollectionSizeLimitExceeded => "ItemCollectionSizeLimitExceeded",
        ErrorKind::ProvisionedThroughputExceeded(_) => "ProvisionedThroughputExceeded",
        ErrorKind::Throttling(_) => "ThrottlingError",
        ErrorKind::InternalServerError => "InternalServerError",
        ErrorKind::ResourceNotFound => "ResourceNotFound",
        ErrorKind::AccessDenied => "AccessDenied",
        ErrorKind::DuplicateItem => "DuplicateItem",
        _ => "ValidationError",
    }
}

/// BatchExecuteStatement: every statement runs on its own and answers in
/// its slot; only a malformed request fails as a whole.
pub fn batch_execute_statement(engine: &Engine, body: &Value, now: Millis) -> Result<Value, ApiError> {
    let req = Req::new(body)?;
    let list = member_list(&req, "Statements", "statements", MAX_BATCH_STATEMENTS)?;
    let rc = req.return_capacity()?;
    let mut entries = Vec::with_capacity(list.len());
    for e in list {
        let s = Req::new(e)?;
        let statement = s.opt_str("Statement")?.ok_or_else(|| null_member("statements.member.statement"))?;
        let params = parameters(&s)?;
        let opts = Options {
            surface: Surface::Batch,
            consistent_read: s.opt_bool("ConsistentRead")?.unwrap_or(false),
            return_capacity: rc,
            return_old_on_failure: s.return_old_on_failure()?,
            limit: None,
            next_token: None,
        };
        entries.push(plan(engine, statement, &params, &opts, now));
    }
    let reads = entries.iter().filter(|e| matches!(e, Ok((Plan::Get(_), _)))).count();
    let writes = entries.iter().filter(|e| matches!(e, Ok((p, _)) if !matches!(p, Plan::Get(_)))).count();
    if reads > 0 && writes > 0 {
        return Err(ApiError::validation("Batch must contain either all reads or all writes"));
    }
    let mut responses = Vec::with_capacity(entries.len());
    let mut consumed = Vec::new();
    for entry in entries {
        let (result, table) = match entry {
            Ok((plan, table)) => (run(engine, plan, now), Some(table)),
            Err(e) => (Err(e), None),
        };
        let mut m = Map::new();
        match result {
            Ok(done) => {
                if let Some(item) = done.items.first() {
                    m.insert("Item".into(), item_to_json(item));
                }
                if let Some(c) = done.consumed {
                    add_consumed(&mut consumed, c);
                }
            }
            Err(e) => {
                let mut error = Map::new();
                error.insert("Code".into(), json!(batch_code(&e.kind)));
                error.insert("Message".into(), json!(e.message.unwrap_or_default()));
                if let ErrorKind::ConditionalCheckFailed { item: Some(item) } = &e.kind {
                    error.insert("Item".into(), item_to_json(item));
                }
                if e.kind == ErrorKind::ResourceNotFound {
                    responses.push(json!({"Error": Value::Object(error)}));
                    continue;
                }
                m.insert("Error".into(), Value::Object(error));
            }
        }
        if let Some(t) = table {
            m.insert("TableName".into(), json!(t));
        }
        responses.push(Value::Object(m));
    }
    let mut out = Map::new();
    out.insert("Responses".into(), Value::Array(responses));
    if rc != ReturnCapacity::None {
        out.insert("ConsumedCapacity".into(), Value::Array(consumed.iter().map(item_capacity_json).collect()));
    }
    Ok(Value::Object(out))
}

/// ExecuteTransaction: all reads (a TransactGetItems) or all writes and
/// EXISTS checks (a TransactWriteItems), all or nothing.
pub fn execute_transaction(engine: &Engine, body: &Value, now: Millis) -> Result<Value, ApiError> {
    let req = Req::new(body)?;
    let list = member_list(&req, "TransactStatements", "transactStatements", MAX_TRANSACTION_STATEMENTS)?;
    let rc = req.return_capacity()?;
    let mut plans = Vec::with_capacity(list.len());
    for (i, e) in list.iter().enumerate() {
        let s = Req::new(e)?;
        let statement = s.opt_str("Statement")?.ok_or_else(|| null_member("transactStatements.member.statement"))?;
        let params = parameters(&s)?;
        let opts = Options {
            surface: Surface::Transaction,
            consistent_read: false,
            return_capacity: rc,
            return_old_on_failure: s.return_old_on_failure()?,
            limit: None,
            next_token: None,
        };
        let (p, _) = plan(engine, statement, &params, &opts, now).map_err(|e| match e.kind {
            ErrorKind::Validation => ApiError::validation(format!(
                "Validation failed in TransactStatements[{i}]: {}",
                e.message.unwrap_or_default()
            )),
            _ => e,
        })?;
        plans.push(p);
    }
    let client_token = match req.opt_str("ClientRequestToken")? {
        None => None,
        Some(t) => {
            let mut h = DefaultHasher::new();
            req.get("TransactStatements").map(|v| v.to_string()).hash(&mut h);
            Some((t.to_string(), h.finish()))
        }
    };
    let reads = plans.iter().filter(|p| matches!(p, Plan::Get(_))).count();
    let mut out = Map::new();
    if reads == plans.len() {
        let gets = plans
            .into_iter()
            .filter_map(|p| match p {
                Plan::Get(g) => {
                    Some(TransactGet { table_name: g.table_name, key: g.key, projection: g.projection, names: g.names })
                }
                _ => None,
            })
            .collect();
        let got = engine.transact_get_items(TransactGetInput { gets, return_capacity: rc }, now)?;
        let responses = got
            .items
            .iter()
            .map(|i| match i {
                Some(item) => json!({"Item": item_to_json(item)}),
                None => json!({}),
            })
            .collect();
        out.insert("Responses".into(), Value::Array(responses));
        if rc != ReturnCapacity::None {
            out.insert("ConsumedCapacity".into(), Value::Array(got.consumed.iter().map(capacity_json).collect()));
        }
        return Ok(Value::Object(out));
    }
    let inserts: Vec<bool> = plans.iter().map(|p| matches!(p, Plan::Insert(_))).collect();
    let actions = plans
        .into_iter()
        .map(transact_action)
        .collect::<Option<Vec<_>>>()
        .ok_or_else(|| ApiError::validation("Transaction must contain either all reads or all writes"))?;
    let result = engine.transact_write_items(
        TransactWriteInput { actions, client_token, return_capacity: rc, return_item_collection_metrics: false },
        now,
    );
    let written = match result {
        Ok(w) => w,
        Err(EngineError::TransactionCanceled { mut reasons }) => {
            // A refused INSERT is a duplicate item, not a failed condition.
            for (reason, insert) in reasons.iter_mut().zip(&inserts) {
                if *insert && reason.code == "ConditionalCheckFailed" {
                    reason.code = "DuplicateItem";
                    reason.message = Some(DUPLICATE_ITEM.to_string());
                    reason.item = None;
                }
            }
            return Err(EngineError::TransactionCanceled { reasons }.into());
        }
        Err(e) => return Err(e.into()),
    };
    if rc != ReturnCapacity::None {
        out.insert("ConsumedCapacity".into(), Value::Array(written.consumed.iter().map(capacity_json).collect()));
    }
    Ok(Value::Object(out))
}

/// A write plan as a TransactWriteItems action; None for a read.
fn transact_action(plan: Plan) -> Option<TransactAction> {
    let action = |table_name, op, o: WriteOptions| TransactAction {
        table_name,
        op,
        condition: o.condition,
        expr: o.expr,
        return_old_on_failure: o.return_old_on_condition_failure,
    };
    Some(match plan {
        Plan::Insert(p) => action(p.table_name, TransactOp::Put { item: p.item }, p.options),
        Plan::Update(u) => {
            action(u.table_name, TransactOp::Update { key: u.key, update: u.update.unwrap_or_default() }, u.options)
        }
        Plan::Delete(d) => action(d.table_name, TransactOp::Delete { key: d.key }, d.options),
        Plan::Check { table_name, key, condition, expr } => TransactAction {
            table_name,
            op: TransactOp::ConditionCheck { key },
            condition: Some(condition),
            expr,
            return_old_on_failure: false,
        },
        Plan::Get(_) | Plan::Read { .. } | Plan::Reads { .. } => return None,
    })
}
