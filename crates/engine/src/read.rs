//! Query and Scan: planning a key range from a key condition or a scan
//! segment, walking it a page at a time, and charging the page.

use std::ops::{Bound, ControlFlow};

use dynaburst_capacity::Op;
use dynaburst_expr::{
    parse_condition, parse_key_condition, parse_projection, Condition, ExprKind, KeyOp, Path, Placeholders,
};
use dynaburst_model::{item_size, read_units, AttributeValue, Item, KeyValue};

use crate::engine::{
    check_scalar_keys, consumed, no_expression_args, projected, read_kind, throttled, Engine, MAX_PAGE_BYTES,
};
use crate::error::EngineError;
use crate::index::{IndexDef, IndexKind, IndexProjection};
use crate::store::{index_partition_hash, Direction, IndexKey, PrimarySlot, SortSlot, StoreKey};
use crate::table::{KeyAttr, KeySchema, Table};
use crate::types::*;

/// Conditions a Query on a table's key can carry (partition and sort key).
const TABLE_KEY_PARTS: usize = 2;

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
        let is_query = input.key_condition.is_some();
        // Query wraps some Select errors in the constraint envelope (S48, S51).
        let envelope = if is_query { "1 validation error detected: " } else { "" };
        let select = input.select.unwrap_or(match (&input.projection, &input.index_name) {
            (Some(_), _) => Select::SpecificAttributes,
            (None, Some(_)) => Select::AllProjectedAttributes,
            (None, None) => Select::AllAttributes,
        });
        match select {
            // With both rules broken, the projection is the one reported.
            Select::AllProjectedAttributes if input.projection.is_some() => {
                return Err(EngineError::validation(format!(
                    "{envelope}Cannot specify the ProjectionExpression when choosing to get ALL_PROJECTED_ATTRIBUTES"
                )))
            }
            Select::AllProjectedAttributes if input.index_name.is_none() => {
                return Err(EngineError::validation(format!(
                    "{envelope}ALL_PROJECTED_ATTRIBUTES can be used only when Querying using an IndexName"
                )))
            }
            Select::SpecificAttributes if input.projection.is_none() => {
                return Err(EngineError::validation(format!(
                    "{envelope}Must specify the AttributesToGet or ProjectionExpression when choosing to get SPECIFIC_ATTRIBUTES"
                )))
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
        check_scalar_keys(&table, projection.iter().flatten())?;
        // A Query's filter on the keys it queries is refused as such below
        // (S53); nested paths into any other key attribute here (S34).
        let queried = |name: &str| {
            key_condition.is_some()
                && (table.key_schema.is_key_attribute(name)
                    || input.index_name.as_ref().is_some_and(|ix| {
                        table.index_defs().iter().any(|d| d.name == *ix && d.schema.is_key_attribute(name))
                    }))
        };
        let filter_paths = filter.iter().flat_map(Condition::paths);
        check_scalar_keys(&table, filter_paths.filter(|p| p.top_level_name().is_some_and(|n| !queried(n))))?;
        if let Some(index_name) = &input.index_name {
            let query = IndexRead { key_condition, filter, projection, select, index_name };
            return self.read_index(&table, &input, query, now);
        }
        let schema = &table.key_schema;
        if key_condition.is_some() {
            filter_spares_keys(&filter, |n| schema.is_key_attribute(n))?;
        }
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

        let mut page = Page::new(&input, select, &filter, &projection);
        let mut matched_prefix = false;
        let data = table.data.read();
        data.store.range((bound_ref(&lower), bound_ref(&upper)), direction, &mut |key, item| {
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
            page.visit(key.hash, item, None, item_size(item), || schema.key_item(item))
        })?;
        drop(data);
        let Page { mut out, bytes, failure, read_by_hash, .. } = page;
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
        out.consumed = consumed(input.return_capacity, &input.table_name, units, 0.0);
        Ok(out)
    }
}

/// One page of a Query or Scan being collected: what was read (for the
/// 1 MB limit and the units), what matched, where to resume.
struct Page<'a> {
    filter: &'a Option<Condition>,
    projection: &'a Option<Vec<Path>>,
    limit: usize,
    out: ReadOutput,
    bytes: usize,
    failure: Option<EngineError>,
    /// Bytes read per partition hash, for the capacity model.
    read_by_hash: Vec<(u128, usize)>,
}

impl<'a> Page<'a> {
    fn new(
        input: &ReadInput,
        select: Select,
        filter: &'a Option<Condition>,
        projection: &'a Option<Vec<Path>>,
    ) -> Page<'a> {
        let out = ReadOutput { count_only: select == Select::Count, ..ReadOutput::default() };
        Page {
            filter,
            projection,
            limit: input.limit.unwrap_or(usize::MAX),
            out,
            bytes: 0,
            failure: None,
            read_by_hash: Vec::new(),
        }
    }

    /// Takes one item read (`size` bytes, under partition `hash`); stops
    /// the walk at the limit or the page size, resuming at `position()`.
    /// `item` is what the filter reads; `shown`, when given, what the page
    /// returns of it instead (an index entry whose item was fetched only
    /// for the filter).
    fn visit(
        &mut self,
        hash: u128,
        item: &Item,
        shown: Option<&Item>,
        size: usize,
        position: impl FnOnce() -> Item,
    ) -> ControlFlow<()> {
        self.out.scanned_count += 1;
        self.bytes += size;
        match self.read_by_hash.last_mut() {
            Some((h, b)) if *h == hash => *b += size,
            _ => self.read_by_hash.push((hash, size)),
        }
        let keep = match self.filter {
            Some(f) => match f.evaluate(item) {
                Ok(k) => k,
                Err(e) => {
                    self.failure = Some(e.into());
                    return ControlFlow::Break(());
                }
            },
            None => true,
        };
        if keep {
            self.out.count += 1;
            if !self.out.count_only {
                self.out.items.push(projected(shown.unwrap_or(item), self.projection));
            }
        }
        if self.out.scanned_count >= self.limit || self.bytes >= MAX_PAGE_BYTES {
            self.out.last_evaluated_key = Some(position());
            return ControlFlow::Break(());
        }
        ControlFlow::Continue(())
    }
}

/// The parsed parts of a Query or Scan on an index.
struct IndexRead<'a> {
    key_condition: Option<dynaburst_expr::KeyCondition>,
    filter: Option<Condition>,
    projection: Option<Vec<Path>>,
    select: Select,
    index_name: &'a str,
}

impl Engine {
    /// Query or Scan on a secondary index: its entries, in index-key
    /// order, charged to the GSI (or, for an LSI, to the table).
    fn read_index(
        &self,
        table: &Table,
        input: &ReadInput,
        query: IndexRead<'_>,
        now: Millis,
    ) -> Result<ReadOutput, EngineError> {
        let IndexRead { key_condition, filter, projection, select, index_name } = query;
        let data = table.data.read();
        let Some(position) = data.index_position(index_name) else {
            return Err(EngineError::validation(format!("The table does not have the specified index: {index_name}")));
        };
        let ix = &data.indexes[position];
        let def = &ix.def;
        let global = def.kind == IndexKind::Global;
        if global && input.consistent_read {
            return Err(EngineError::validation("Consistent reads are not supported on global secondary indexes"));
        }
        if !ix.is_active(now) {
            return Err(EngineError::validation(format!(
                "Cannot read from backfilling global secondary index: {index_name}"
            )));
        }
        // ALL_ATTRIBUTES from an index that does not hold them: refused on
        // a GSI; an LSI fetches each item from the table (S49).
        let all_attributes = select == Select::AllAttributes && def.projection != IndexProjection::All;
        if all_attributes && global {
            return Err(EngineError::validation(format!(
                "One or more parameter values were invalid: Select type ALL_ATTRIBUTES is not supported for global secondary index {index_name} because its projection type is not ALL"
            )));
        }
        let schema = &table.key_schema;
        if key_condition.is_some() {
            filter_spares_keys(&filter, |n| def.schema.is_key_attribute(n))?;
        }
        // Attributes asked for (or filtered on) that the index does not
        // hold: a GSI refuses them (S50); an LSI fetches them from the table.
        let wanted = projection.iter().flatten().filter_map(|p| p.top_level_name().map(str::to_string));
        let wanted: Vec<String> = wanted.chain(filter.iter().flat_map(|f| f.top_level_names())).collect();
        let missing = wanted.iter().find(|n| !def.projects(schema, n));
        if let (Some(name), true) = (missing, global) {
            if projection.iter().flatten().any(|p| p.top_level_name() == Some(name.as_str())) {
                return Err(EngineError::validation(format!(
                    "One or more parameter values were invalid: Global secondary index {index_name} does not project the requested attribute {name}"
                )));
            }
        }
        let fetch = all_attributes || (!global && missing.is_some());
        // Fetched for the filter alone: the page still shows the entry.
        let show_entry = fetch
            && !all_attributes
            && projection.iter().flatten().all(|p| p.top_level_name().is_none_or(|n| def.projects(schema, n)));
        let start = input.exclusive_start_key.as_ref().map(|k| def.start_key(schema, k)).transpose()?;
        let (lower, upper, direction, sort_filter) = match key_condition {
            Some(kc) => {
                let plan = plan_index_query(def, kc)?;
                let hash = index_partition_hash(&plan.partition);
                if let Some(s) = &start {
                    if s.partition != plan.partition {
                        return Err(EngineError::validation(
                            "The provided starting key is outside query boundaries based on provided conditions",
                        ));
                    }
                }
                // Bounds: the equal components, then the bounded one, then
                // a sentinel for any components after it (so that a bound
                // on a prefix covers every longer key).
                let open_after = def.schema.range.len() > plan.equal.len();
                let rest = def.schema.range.len().saturating_sub(plan.equal.len() + 1);
                let key = |v: Option<KeyValue>, pad: SortSlot, primary: PrimarySlot| {
                    let mut sort: Vec<SortSlot> = plan.equal.iter().cloned().map(SortSlot::Value).collect();
                    match v {
                        Some(v) => {
                            sort.push(SortSlot::Value(v));
                            if rest > 0 {
                                sort.push(pad);
                            }
                        }
                        None if open_after => sort.push(pad),
                        None => {}
                    }
                    Bound::Included(IndexKey::bound(hash, &plan.partition, sort, primary))
                };
                let (low, high) = (SortSlot::Low, SortSlot::High);
                let (lower, upper) = match plan.sort {
                    Some(SortRange { lower, upper }) => (lower, upper),
                    None => (Bound::Unbounded, Bound::Unbounded),
                };
                let lo = match lower {
                    Bound::Included(v) => key(Some(v), low.clone(), PrimarySlot::Low),
                    Bound::Excluded(v) => key(Some(v), high.clone(), PrimarySlot::High),
                    Bound::Unbounded => key(None, low.clone(), PrimarySlot::Low),
                };
                let hi = match upper {
                    Bound::Included(v) => key(Some(v), high.clone(), PrimarySlot::High),
                    Bound::Excluded(v) => key(Some(v), low, PrimarySlot::Low),
                    Bound::Unbounded => key(None, high, PrimarySlot::High),
                };
                let direction = if input.forward { Direction::Forward } else { Direction::Backward };
                (lo, hi, direction, plan.prefix.map(|p| (plan.equal.len(), p)))
            }
            None => {
                let (lo, hi) = match input.segment {
                    Some((segment, total)) => {
                        let (lo, hi) = segment_bounds(segment, total);
                        if let Some(s) = &start {
                            if s.hash < lo || hi.is_some_and(|h| s.hash >= h) {
                                return Err(EngineError::validation(format!(
                                    "The provided Exclusive start key does not map to the provided segment: {segment}"
                                )));
                            }
                        }
                        (
                            Bound::Included(IndexKey::hash_floor(lo)),
                            hi.map(|h| Bound::Excluded(IndexKey::hash_floor(h))).unwrap_or(Bound::Unbounded),
                        )
                    }
                    None => (Bound::Unbounded, Bound::Unbounded),
                };
                (lo, hi, Direction::Forward, None)
            }
        };
        let (lower, upper) = match (&start, direction) {
            (Some(k), Direction::Forward) => (Bound::Excluded(k.clone()), upper),
            (Some(k), Direction::Backward) => (lower, Bound::Excluded(k.clone())),
            (None, _) => (lower, upper),
        };
        let mut page = Page::new(input, select, &filter, &projection);
        let mut fetched_bytes = 0usize;
        let mut failure = None;
        let mut matched_prefix = false;
        data.index_range(position, index_bound_ref(&lower), index_bound_ref(&upper), direction, &mut |key, entry| {
            if let Some((at, prefix)) = &sort_filter {
                let matches = matches!(key.sort.get(*at), Some(SortSlot::Value(v)) if prefix.is_prefix_of(v));
                if !matches {
                    return if matched_prefix { ControlFlow::Break(()) } else { ControlFlow::Continue(()) };
                }
                matched_prefix = true;
            }
            let size = item_size(entry);
            let whole;
            let item: &Item = if fetch {
                let PrimarySlot::Key(primary) = &key.primary else { return ControlFlow::Continue(()) };
                match data.store.get(primary) {
                    Ok(Some(i)) => {
                        fetched_bytes += item_size(&i);
                        whole = i;
                        &whole
                    }
                    Ok(None) => entry,
                    Err(e) => {
                        failure = Some(EngineError::from(e));
                        return ControlFlow::Break(());
                    }
                }
            } else {
                entry
            };
            let shown = show_entry.then_some(&**entry);
            page.visit(key.hash, item, shown, size, || def.position_of(schema, entry))
        })?;
        let Page { mut out, bytes, failure: page_failure, read_by_hash, .. } = page;
        if let Some(e) = failure.or(page_failure) {
            return Err(e);
        }
        // GSIs are read eventually consistent only; an LSI's fetched items
        // are charged as table reads at the request's consistency (B9).
        let kind = read_kind(input.consistent_read);
        let units = read_units(bytes, kind);
        let fetch_units = if fetched_bytes > 0 { read_units(fetched_bytes, kind) } else { 0.0 };
        let start_hash = read_by_hash.first().map(|(h, _)| *h).unwrap_or(0);
        let admissions: Vec<(u128, f64)> = if bytes == 0 {
            vec![(start_hash, units)]
        } else {
            read_by_hash.iter().map(|(h, b)| (*h, units * *b as f64 / bytes as f64)).collect()
        };
        if global {
            let mut capacity = ix.capacity.lock();
            if let Some(model) = capacity.as_mut() {
                if let Err(t) = model.admit_all(Op::Read, &admissions, now) {
                    model.note_throttled_request(now);
                    return Err(EngineError::Throttled {
                        provisioned: def.throughput.is_some(),
                        reason: crate::write::index_reason(t.reason()),
                        resource: def.arn(&table.arn),
                    });
                }
            }
        } else {
            let mut all = admissions;
            if fetch_units > 0.0 {
                all.push((start_hash, fetch_units));
            }
            throttled(table, now, table.admit_all(Op::Read, &all, now))?;
        }
        let mut consumed = consumed(input.return_capacity, &input.table_name, fetch_units, 0.0);
        if let Some(c) = consumed.as_mut() {
            c.add_index(&def.name, global, units, 0.0);
        }
        out.consumed = consumed;
        Ok(out)
    }
}

/// A Query's FilterExpression may not read the key attributes of the
/// table or index it queries (S53).
fn filter_spares_keys(filter: &Option<Condition>, is_key: impl Fn(&str) -> bool) -> Result<(), EngineError> {
    match filter.iter().flat_map(|f| f.top_level_names()).find(|n| is_key(n)) {
        Some(name) => Err(EngineError::validation(format!(
            "Filter Expression can only contain non-primary key attributes: Primary key attribute: {name}"
        ))),
        None => Ok(()),
    }
}

/// A Query on an index: every partition-key component with `=`, then the
/// sort-key components as a gapless prefix, each with `=` but the last
/// named, which may take any key operator (S24, S25).
struct IndexPlan {
    partition: Vec<KeyValue>,
    equal: Vec<KeyValue>,
    sort: Option<SortRange>,
    prefix: Option<Prefix>,
}

fn plan_index_query(def: &IndexDef, kc: dynaburst_expr::KeyCondition) -> Result<IndexPlan, EngineError> {
    let schema = &def.schema;
    let mut hash: Vec<Option<KeyValue>> = vec![None; schema.hash.len()];
    let mut range: Vec<Option<KeyOp>> = vec![None; schema.range.len()];
    for part in kc.parts {
        if let Some(i) = schema.hash.iter().position(|a| a.name == part.attribute) {
            if hash[i].is_some() {
                return Err(EngineError::validation("KeyConditionExpressions must only contain one condition per key"));
            }
            match &part.op {
                KeyOp::Eq(v) => hash[i] = Some(partition_key(&schema.hash[i], v)?),
                // A multi-attribute partition key names the component (S24).
                _ if schema.hash.len() > 1 => {
                    return Err(EngineError::validation(format!(
                        "HASH key attributes {} must have equality conditions specified in the query",
                        part.attribute
                    )))
                }
                _ => return Err(EngineError::validation("Query key condition not supported")),
            }
        } else if let Some(i) = schema.range.iter().position(|a| a.name == part.attribute) {
            if range[i].is_some() {
                return Err(EngineError::validation("KeyConditionExpressions must only contain one condition per key"));
            }
            range[i] = Some(part.op);
        } else {
            let missing = schema.hash.iter().zip(&hash).find(|(_, v)| v.is_none()).map(|(a, _)| &a.name);
            return Err(EngineError::validation(format!(
                "Query condition missed key schema element: {}",
                missing.unwrap_or(&part.attribute)
            )));
        }
    }
    let mut partition = Vec::with_capacity(hash.len());
    for (attr, v) in schema.hash.iter().zip(hash) {
        match v {
            Some(v) => partition.push(v),
            None => {
                return Err(EngineError::validation(format!(
                    "Query condition missed key schema element: {}",
                    attr.name
                )))
            }
        }
    }
    // The named sort components must be a prefix, `=` on all but the last.
    let last_named = range.iter().rposition(Option::is_some);
    let mut equal = Vec::new();
    let mut sort = None;
    let mut prefix = None;
    if let Some(last) = last_named {
        for (i, (attr, op)) in schema.range.iter().zip(&range).enumerate().take(last + 1) {
            match (op, i == last) {
                (Some(KeyOp::Eq(v)), false) => equal.push(typed_key(attr, v)?),
                (Some(op), true) => {
                    let (r, p) = sort_range(attr, op)?;
                    sort = Some(r);
                    prefix = p;
                }
                _ => {
                    return Err(EngineError::validation(format!(
                        "RANGE key attributes {} must have equality conditions specified in the query because a condition is present on key attribute {}",
                        attr.name, schema.range[last].name
                    )))
                }
            }
        }
    }
    Ok(IndexPlan { partition, equal, sort, prefix })
}

fn index_bound_ref(b: &Bound<IndexKey>) -> Bound<&IndexKey> {
    match b {
        Bound::Included(k) => Bound::Included(k),
        Bound::Excluded(k) => Bound::Excluded(k),
        Bound::Unbounded => Bound::Unbounded,
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

/// A partition-key value of a Query's key condition: typed as the schema
/// says, and no longer than a partition key can be (DynamoDB refuses a
/// longer one in a Query as in a write).
fn partition_key(attr: &KeyAttr, v: &AttributeValue) -> Result<KeyValue, EngineError> {
    let k = typed_key(attr, v)?;
    if k.size_bytes() > crate::table::MAX_PARTITION_KEY_BYTES {
        return Err(EngineError::validation(
            "One or more parameter values were invalid: Size of hashkey has exceeded the maximum size limit of2048 bytes",
        ));
    }
    Ok(k)
}

/// Matches a parsed key condition against the table's key schema.
fn plan_query(schema: &KeySchema, kc: dynaburst_expr::KeyCondition) -> Result<QueryPlan, EngineError> {
    // A table's key has two attributes at most.
    if kc.parts.len() > TABLE_KEY_PARTS {
        return Err(EngineError::validation("Query key condition not supported"));
    }
    let mut partition = None;
    let mut sort = None;
    let mut prefix = None;
    for part in kc.parts {
        if part.attribute == schema.hash.name {
            if partition.is_some() {
                return Err(EngineError::validation("KeyConditionExpressions must only contain one condition per key"));
            }
            match &part.op {
                KeyOp::Eq(v) => partition = Some(partition_key(&schema.hash, v)?),
                _ => return Err(EngineError::validation("Query key condition not supported")),
            }
        } else if let Some(range) = schema.range.as_ref().filter(|r| r.name == part.attribute) {
            if sort.is_some() {
                return Err(EngineError::validation("KeyConditionExpressions must only contain one condition per key"));
            }
            let (r, p) = sort_range(range, &part.op)?;
            sort = Some(r);
            if p.is_some() {
                prefix = p;
            }
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

/// The key range of one sort-key condition (and, for begins_with, the
/// prefix every key in it must carry).
fn sort_range(attr: &KeyAttr, op: &KeyOp) -> Result<(SortRange, Option<Prefix>), EngineError> {
    let range = |lower, upper| SortRange { lower, upper };
    Ok(match op {
        KeyOp::Eq(v) => {
            let k = typed_key(attr, v)?;
            (range(Bound::Included(k.clone()), Bound::Included(k)), None)
        }
        KeyOp::Lt(v) => (range(Bound::Unbounded, Bound::Excluded(typed_key(attr, v)?)), None),
        KeyOp::Le(v) => (range(Bound::Unbounded, Bound::Included(typed_key(attr, v)?)), None),
        KeyOp::Gt(v) => (range(Bound::Excluded(typed_key(attr, v)?), Bound::Unbounded), None),
        KeyOp::Ge(v) => (range(Bound::Included(typed_key(attr, v)?), Bound::Unbounded), None),
        KeyOp::Between(a, b) => {
            let (a, b) = (typed_key(attr, a)?, typed_key(attr, b)?);
            if a > b {
                return Err(EngineError::validation(format!(
                    "Invalid KeyConditionExpression: The BETWEEN operator requires upper bound to be greater than or equal to lower bound; lower bound operand: AttributeValue: {{{}:{}}}, upper bound operand: AttributeValue: {{{}:{}}}",
                    a.key_type().descriptor(), key_text(&a), b.key_type().descriptor(), key_text(&b)
                )));
            }
            (range(Bound::Included(a), Bound::Included(b)), None)
        }
        KeyOp::BeginsWith(v) => {
            let k = typed_key(attr, v)?;
            let p = match &k {
                KeyValue::S(s) => Prefix::S(s.clone()),
                KeyValue::B(b) => Prefix::B(b.clone()),
                KeyValue::N(_) => {
                    return Err(EngineError::validation(
                        "Invalid KeyConditionExpression: Incorrect operand type for operator or function; operator or function: begins_with, operand type: N",
                    ))
                }
            };
            (range(Bound::Included(k), Bound::Unbounded), Some(p))
        }
    })
}

fn key_text(k: &KeyValue) -> String {
    match k {
        KeyValue::S(s) => s.clone(),
        KeyValue::N(n) => n.to_string(),
        KeyValue::B(b) => format!("{b:?}"),
    }
}
