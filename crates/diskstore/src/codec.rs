//! The on-disk encodings of items and table metadata, in a compact binary
//! form of our own (length-prefixed fields, a version byte in front of
//! metadata; keys use the engine's ordered encoding,
//! `store::encode_store_key`). Decoding never panics: stored bytes that do
//! not decode are `StoreError::Corrupt`.

use dynaburst_engine::index::{IndexDef, IndexKind, IndexProjection, IndexSchema};
use dynaburst_engine::store::{StoreError, TableMeta};
use dynaburst_engine::stream::{StreamSetting, StreamViewType};
use dynaburst_engine::{
    BillingMode, KeyAttr, KeySchema, Policies, PolicyDocument, PolicySlot, TableClass, TableClassSetting,
    TableSettings, ThroughputChanges, TimeToLive,
};
use dynaburst_model::{AttributeValue, Item, Millis, Number, ScalarType};

/// Version of the metadata encoding (the first byte of every catalog value).
/// The catalog entry's format. 2 added, at the end, deletion protection,
/// the table class and the encryption key; 3 added, after them, each GSI's
/// on-demand maxima and warm throughput; 4, after those, the resource-based
/// policies; 5, after those, each GSI's throughput changes (when its
/// provisioned units were last raised and lowered, and how often lowered
/// that day). An entry of an older version reads
/// with none of what later ones added, and an entry without any of it is
/// still written in the oldest version that holds it all, so that a build
/// from before reads it.
const META_VERSION: u8 = 5;
const META_VERSION_4: u8 = 4;
const META_VERSION_3: u8 = 3;
const META_VERSION_2: u8 = 2;
const META_VERSION_1: u8 = 1;
/// Deepest nesting of lists and maps decoded (DynamoDB allows 32).
const MAX_DEPTH: usize = 64;

/// Appends fields to a byte buffer.
#[derive(Default)]
pub struct Writer {
    pub buf: Vec<u8>,
}

impl Writer {
    pub(crate) fn u8(&mut self, v: u8) {
        self.buf.push(v);
    }

    /// LEB128.
    pub(crate) fn uint(&mut self, mut v: u64) {
        while v >= 0x80 {
            self.buf.push((v as u8) | 0x80);
            v >>= 7;
        }
        self.buf.push(v as u8);
    }

    pub(crate) fn bytes(&mut self, b: &[u8]) {
        self.uint(b.len() as u64);
        self.buf.extend_from_slice(b);
    }

    pub(crate) fn str(&mut self, s: &str) {
        self.bytes(s.as_bytes());
    }

    pub(crate) fn bool(&mut self, b: bool) {
        self.u8(b as u8);
    }

    pub(crate) fn millis(&mut self, m: Millis) {
        self.uint(m.0);
    }

    pub(crate) fn opt_millis(&mut self, m: Option<Millis>) {
        match m {
            Some(m) => {
                self.u8(1);
                self.millis(m);
            }
            None => self.u8(0),
        }
    }

    pub(crate) fn number(&mut self, n: &Number) {
        self.str(&n.to_string());
    }
}

/// Reads fields back; every read fails with `Corrupt` past the end.
pub struct Reader<'a> {
    buf: &'a [u8],
    what: &'static str,
}

impl<'a> Reader<'a> {
    pub fn new(buf: &'a [u8], what: &'static str) -> Reader<'a> {
        Reader { buf, what }
    }

    pub(crate) fn corrupt(&self) -> StoreError {
        StoreError::Corrupt { what: self.what }
    }

    pub(crate) fn u8(&mut self) -> Result<u8, StoreError> {
        let (&first, rest) = self.buf.split_first().ok_or_else(|| self.corrupt())?;
        self.buf = rest;
        Ok(first)
    }

    pub(crate) fn uint(&mut self) -> Result<u64, StoreError> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let b = self.u8()?;
            v |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err(self.corrupt())
    }

    pub(crate) fn len(&mut self) -> Result<usize, StoreError> {
        let n = self.uint()?;
        // A length can never exceed what is left.
        usize::try_from(n).ok().filter(|n| *n <= self.buf.len()).ok_or_else(|| self.corrupt())
    }

    pub(crate) fn bytes(&mut self) -> Result<&'a [u8], StoreError> {
        let n = self.len()?;
        let (b, rest) = self.buf.split_at(n);
        self.buf = rest;
        Ok(b)
    }

    pub(crate) fn string(&mut self) -> Result<String, StoreError> {
        let b = self.bytes()?;
        String::from_utf8(b.to_vec()).map_err(|_| self.corrupt())
    }

    pub(crate) fn bool(&mut self) -> Result<bool, StoreError> {
        match self.u8()? {
            0 => Ok(false),
            1 => Ok(true),
            _ => Err(self.corrupt()),
        }
    }

    pub(crate) fn millis(&mut self) -> Result<Millis, StoreError> {
        Ok(Millis(self.uint()?))
    }

    pub(crate) fn opt_millis(&mut self) -> Result<Option<Millis>, StoreError> {
        Ok(if self.bool()? { Some(self.millis()?) } else { None })
    }

    pub(crate) fn number(&mut self) -> Result<Number, StoreError> {
        let s = self.string()?;
        Number::parse(&s).map_err(|_| self.corrupt())
    }

    /// Fails unless every byte was read.
    pub(crate) fn end(&self) -> Result<(), StoreError> {
        if self.buf.is_empty() {
            Ok(())
        } else {
            Err(self.corrupt())
        }
    }
}

// ---- items ----

const T_S: u8 = 0;
const T_N: u8 = 1;
const T_B: u8 = 2;
const T_BOOL: u8 = 3;
const T_NULL: u8 = 4;
const T_SS: u8 = 5;
const T_NS: u8 = 6;
const T_BS: u8 = 7;
const T_L: u8 = 8;
const T_M: u8 = 9;

/// A string, number or binary with its tag (values and keys alike).
fn write_scalar_value(w: &mut Writer, tag: u8, text: &str, bytes: &[u8]) {
    w.u8(tag);
    match tag {
        T_B => w.bytes(bytes),
        _ => w.str(text),
    }
}

fn write_value(w: &mut Writer, v: &AttributeValue) {
    match v {
        AttributeValue::S(s) => write_scalar_value(w, T_S, s, &[]),
        AttributeValue::N(n) => write_scalar_value(w, T_N, &n.to_string(), &[]),
        AttributeValue::B(b) => write_scalar_value(w, T_B, "", b),
        AttributeValue::Bool(b) => {
            w.u8(T_BOOL);
            w.bool(*b);
        }
        AttributeValue::Null => w.u8(T_NULL),
        AttributeValue::Ss(ss) => {
            w.u8(T_SS);
            w.uint(ss.len() as u64);
            ss.iter().for_each(|s| w.str(s));
        }
        AttributeValue::Ns(ns) => {
            w.u8(T_NS);
            w.uint(ns.len() as u64);
            ns.iter().for_each(|n| w.number(n));
        }
        AttributeValue::Bs(bs) => {
            w.u8(T_BS);
            w.uint(bs.len() as u64);
            bs.iter().for_each(|b| w.bytes(b));
        }
        AttributeValue::L(l) => {
            w.u8(T_L);
            w.uint(l.len() as u64);
            l.iter().for_each(|v| write_value(w, v));
        }
        AttributeValue::M(m) => {
            w.u8(T_M);
            write_map(w, m);
        }
    }
}

fn write_map(w: &mut Writer, m: &Item) {
    w.uint(m.len() as u64);
    for (k, v) in m {
        w.str(k);
        write_value(w, v);
    }
}

/// A count of elements that must each take at least one byte.
fn count(r: &mut Reader<'_>) -> Result<usize, StoreError> {
    r.len()
}

fn read_value(r: &mut Reader<'_>, depth: usize) -> Result<AttributeValue, StoreError> {
    if depth > MAX_DEPTH {
        return Err(r.corrupt());
    }
    Ok(match r.u8()? {
        T_S => AttributeValue::S(r.string()?),
        T_N => AttributeValue::N(r.number()?),
        T_B => AttributeValue::B(r.bytes()?.to_vec()),
        T_BOOL => AttributeValue::Bool(r.bool()?),
        T_NULL => AttributeValue::Null,
        T_SS => AttributeValue::Ss((0..count(r)?).map(|_| r.string()).collect::<Result<_, _>>()?),
        T_NS => AttributeValue::Ns((0..count(r)?).map(|_| r.number()).collect::<Result<_, _>>()?),
        T_BS => AttributeValue::Bs((0..count(r)?).map(|_| r.bytes().map(<[u8]>::to_vec)).collect::<Result<_, _>>()?),
        T_L => AttributeValue::L((0..count(r)?).map(|_| read_value(r, depth + 1)).collect::<Result<_, _>>()?),
        T_M => AttributeValue::M(read_map(r, depth + 1)?),
        _ => return Err(r.corrupt()),
    })
}

fn read_map(r: &mut Reader<'_>, depth: usize) -> Result<Item, StoreError> {
    let mut m = Item::new();
    for _ in 0..count(r)? {
        let k = r.string()?;
        let v = read_value(r, depth)?;
        m.insert(k, v);
    }
    Ok(m)
}

/// An item's stored bytes.
pub fn encode_item(item: &Item) -> Vec<u8> {
    let mut w = Writer { buf: Vec::with_capacity(256) };
    write_map(&mut w, item);
    w.buf
}

/// An item from its stored bytes.
pub fn decode_item(bytes: &[u8]) -> Result<Item, StoreError> {
    let mut r = Reader::new(bytes, "item");
    let item = read_map(&mut r, 0)?;
    r.end()?;
    Ok(item)
}

/// An item as the file stores it: its DynamoDB size (so that the file's
/// running counts need no decoding), then [`encode_item`].
pub fn encode_stored(item: &Item) -> Vec<u8> {
    let mut w = Writer { buf: Vec::with_capacity(256) };
    w.uint(dynaburst_model::item_size(item) as u64);
    write_map(&mut w, item);
    w.buf
}

/// The DynamoDB size an [`encode_stored`] value starts with.
pub fn stored_size(bytes: &[u8]) -> Result<u64, StoreError> {
    Reader::new(bytes, "item").uint()
}

/// The item of an [`encode_stored`] value.
pub fn decode_stored(bytes: &[u8]) -> Result<Item, StoreError> {
    let mut r = Reader::new(bytes, "item");
    r.uint()?;
    decode_item(r.buf)
}

// ---- table metadata ----

fn write_scalar(w: &mut Writer, t: ScalarType) {
    w.u8(match t {
        ScalarType::S => 0,
        ScalarType::N => 1,
        ScalarType::B => 2,
    });
}

fn read_scalar(r: &mut Reader<'_>) -> Result<ScalarType, StoreError> {
    Ok(match r.u8()? {
        0 => ScalarType::S,
        1 => ScalarType::N,
        2 => ScalarType::B,
        _ => return Err(r.corrupt()),
    })
}

fn write_attr(w: &mut Writer, a: &KeyAttr) {
    w.str(&a.name);
    write_scalar(w, a.ty);
}

fn read_attr(r: &mut Reader<'_>) -> Result<KeyAttr, StoreError> {
    Ok(KeyAttr { name: r.string()?, ty: read_scalar(r)? })
}

fn write_attrs(w: &mut Writer, attrs: &[KeyAttr]) {
    w.uint(attrs.len() as u64);
    attrs.iter().for_each(|a| write_attr(w, a));
}

fn read_attrs(r: &mut Reader<'_>) -> Result<Vec<KeyAttr>, StoreError> {
    (0..count(r)?).map(|_| read_attr(r)).collect()
}

fn write_pair(w: &mut Writer, p: Option<(u64, u64)>) {
    match p {
        Some((a, b)) => {
            w.u8(1);
            w.uint(a);
            w.uint(b);
        }
        None => w.u8(0),
    }
}

fn read_pair(r: &mut Reader<'_>) -> Result<Option<(u64, u64)>, StoreError> {
    Ok(if r.bool()? { Some((r.uint()?, r.uint()?)) } else { None })
}

fn write_changes(w: &mut Writer, c: &ThroughputChanges) {
    let ThroughputChanges { last_increase, last_decrease, decreases_today } = c;
    w.opt_millis(*last_increase);
    w.opt_millis(*last_decrease);
    w.uint(*decreases_today);
}

fn read_changes(r: &mut Reader<'_>) -> Result<ThroughputChanges, StoreError> {
    Ok(ThroughputChanges { last_increase: r.opt_millis()?, last_decrease: r.opt_millis()?, decreases_today: r.uint()? })
}

fn write_settings(w: &mut Writer, s: &TableSettings) {
    // Destructured so that a new setting cannot be forgotten here.
    let TableSettings {
        billing,
        changes,
        last_pay_per_request_switch,
        ttl,
        stream,
        on_demand_max,
        warm,
        // Written at the end of the entry (version 2): `write_tail`.
        deletion_protection: _,
        table_class: _,
        sse_kms_key: _,
        // After it (version 3): `encode_meta`.
        policies: _,
    } = s;
    write_pair(
        w,
        match billing {
            BillingMode::PayPerRequest => None,
            BillingMode::Provisioned { read, write } => Some((*read, *write)),
        },
    );
    write_changes(w, changes);
    w.opt_millis(*last_pay_per_request_switch);
    match ttl {
        Some(TimeToLive { attribute, enabled, changed_at }) => {
            w.u8(1);
            w.str(attribute);
            w.bool(*enabled);
            w.millis(*changed_at);
        }
        None => w.u8(0),
    }
    match stream {
        Some(StreamSetting { enabled, view, label }) => {
            w.u8(1);
            w.bool(*enabled);
            w.u8(match view {
                StreamViewType::KeysOnly => 0,
                StreamViewType::NewImage => 1,
                StreamViewType::OldImage => 2,
                StreamViewType::NewAndOldImages => 3,
            });
            w.str(label);
        }
        None => w.u8(0),
    }
    // -1 (no maximum) kept as its two's-complement bits.
    write_pair(w, on_demand_max.map(|(r, wr)| (r as u64, wr as u64)));
    write_pair(w, *warm);
}

fn read_settings(r: &mut Reader<'_>) -> Result<TableSettings, StoreError> {
    let billing = match read_pair(r)? {
        None => BillingMode::PayPerRequest,
        Some((read, write)) => BillingMode::Provisioned { read, write },
    };
    let changes = read_changes(r)?;
    let last_pay_per_request_switch = r.opt_millis()?;
    let ttl = if r.bool()? {
        Some(TimeToLive { attribute: r.string()?, enabled: r.bool()?, changed_at: r.millis()? })
    } else {
        None
    };
    let stream = if r.bool()? {
        let enabled = r.bool()?;
        let view = match r.u8()? {
            0 => StreamViewType::KeysOnly,
            1 => StreamViewType::NewImage,
            2 => StreamViewType::OldImage,
            3 => StreamViewType::NewAndOldImages,
            _ => return Err(r.corrupt()),
        };
        Some(StreamSetting { enabled, view, label: r.string()? })
    } else {
        None
    };
    let on_demand_max = read_pair(r)?.map(|(read, write)| (read as i64, write as i64));
    let warm = read_pair(r)?;
    Ok(TableSettings {
        billing,
        changes,
        last_pay_per_request_switch,
        ttl,
        stream,
        on_demand_max,
        warm,
        deletion_protection: false,
        table_class: None,
        sse_kms_key: None,
        policies: Policies::new(),
    })
}

/// The settings version 2 added, after the tags.
fn write_tail(w: &mut Writer, s: &TableSettings) {
    w.bool(s.deletion_protection);
    match s.table_class {
        Some(TableClassSetting { class, updated_at }) => {
            w.u8(match class {
                TableClass::Standard => 1,
                TableClass::StandardInfrequentAccess => 2,
            });
            w.opt_millis(updated_at);
        }
        None => w.u8(0),
    }
    match &s.sse_kms_key {
        Some(arn) => {
            w.u8(1);
            w.str(arn);
        }
        None => w.u8(0),
    }
}

fn read_tail(r: &mut Reader<'_>, s: &mut TableSettings) -> Result<(), StoreError> {
    s.deletion_protection = r.bool()?;
    s.table_class = match r.u8()? {
        0 => None,
        n @ (1 | 2) => Some(TableClassSetting {
            class: if n == 1 { TableClass::Standard } else { TableClass::StandardInfrequentAccess },
            updated_at: r.opt_millis()?,
        }),
        _ => return Err(r.corrupt()),
    };
    s.sse_kms_key = if r.bool()? { Some(r.string()?) } else { None };
    Ok(())
}

fn write_index(w: &mut Writer, ix: &IndexDef) {
    // The on-demand maxima and warm throughput go in the version 3 tail,
    // the throughput changes in the version 5 one.
    let IndexDef {
        name,
        kind,
        schema,
        projection,
        throughput,
        created_at,
        backfilled_at,
        on_demand_max: _,
        warm: _,
        changes: _,
    } = ix;
    w.str(name);
    w.u8(match kind {
        IndexKind::Global => 0,
        IndexKind::Local => 1,
    });
    write_attrs(w, &schema.hash);
    write_attrs(w, &schema.range);
    match projection {
        IndexProjection::All => w.u8(0),
        IndexProjection::KeysOnly => w.u8(1),
        IndexProjection::Include(names) => {
            w.u8(2);
            w.uint(names.len() as u64);
            names.iter().for_each(|n| w.str(n));
        }
    }
    write_pair(w, *throughput);
    w.millis(*created_at);
    w.opt_millis(*backfilled_at);
}

fn read_index(r: &mut Reader<'_>) -> Result<IndexDef, StoreError> {
    let name = r.string()?;
    let kind = match r.u8()? {
        0 => IndexKind::Global,
        1 => IndexKind::Local,
        _ => return Err(r.corrupt()),
    };
    let schema = IndexSchema { hash: read_attrs(r)?, range: read_attrs(r)? };
    let projection = match r.u8()? {
        0 => IndexProjection::All,
        1 => IndexProjection::KeysOnly,
        2 => IndexProjection::Include((0..count(r)?).map(|_| r.string()).collect::<Result<_, _>>()?),
        _ => return Err(r.corrupt()),
    };
    Ok(IndexDef {
        name,
        kind,
        schema,
        projection,
        throughput: read_pair(r)?,
        created_at: r.millis()?,
        backfilled_at: r.opt_millis()?,
        on_demand_max: None,
        warm: None,
        changes: ThroughputChanges::default(),
    })
}

/// A catalog entry's stored bytes: the table's storage id, then its
/// metadata.
pub fn encode_meta(id: u64, meta: &TableMeta) -> Vec<u8> {
    let TableMeta {
        name,
        table_id,
        region,
        account_id,
        key_schema,
        attribute_definitions,
        settings,
        created_at,
        indexes,
        tags,
    } = meta;
    let index_changes = indexes.iter().any(|ix| ix.changes != ThroughputChanges::default());
    let policies = index_changes || !settings.policies.is_empty();
    let index_limits = policies || indexes.iter().any(|ix| ix.on_demand_max.is_some() || ix.warm.is_some());
    let tail = index_limits
        || settings.deletion_protection
        || settings.table_class.is_some()
        || settings.sse_kms_key.is_some();
    let mut w = Writer::default();
    w.u8(match (index_changes, policies, index_limits, tail) {
        (true, _, _, _) => META_VERSION,
        (false, true, _, _) => META_VERSION_4,
        (false, false, true, _) => META_VERSION_3,
        (false, false, false, true) => META_VERSION_2,
        (false, false, false, false) => META_VERSION_1,
    });
    w.uint(id);
    w.str(name);
    w.str(table_id);
    w.str(region);
    w.str(account_id);
    write_attr(&mut w, &key_schema.hash);
    write_attrs(&mut w, key_schema.range.as_slice());
    w.uint(attribute_definitions.len() as u64);
    for (n, t) in attribute_definitions {
        w.str(n);
        write_scalar(&mut w, *t);
    }
    write_settings(&mut w, settings);
    w.millis(*created_at);
    w.uint(indexes.len() as u64);
    indexes.iter().for_each(|ix| write_index(&mut w, ix));
    w.uint(tags.len() as u64);
    for (k, v) in tags {
        w.str(k);
        w.str(v);
    }
    if tail {
        write_tail(&mut w, settings);
    }
    if index_limits {
        for ix in indexes {
            write_pair(&mut w, ix.on_demand_max.map(|(r, wr)| (r as u64, wr as u64)));
            write_pair(&mut w, ix.warm);
        }
    }
    if policies {
        w.uint(settings.policies.len() as u64);
        for (slot, PolicySlot { document, revision }) in &settings.policies {
            w.str(slot);
            match document {
                Some(PolicyDocument { text, version_implicit }) => {
                    w.bool(true);
                    w.str(text);
                    w.bool(*version_implicit);
                }
                None => w.bool(false),
            }
            w.uint(*revision);
        }
    }
    if index_changes {
        indexes.iter().for_each(|ix| write_changes(&mut w, &ix.changes));
    }
    w.buf
}

/// A catalog entry from its stored bytes: (storage id, metadata).
pub fn decode_meta(bytes: &[u8]) -> Result<(u64, TableMeta), StoreError> {
    let mut r = Reader::new(bytes, "table metadata");
    let version = r.u8()?;
    if !(META_VERSION_1..=META_VERSION).contains(&version) {
        return Err(r.corrupt());
    }
    let id = r.uint()?;
    let name = r.string()?;
    let table_id = r.string()?;
    let region = r.string()?;
    let account_id = r.string()?;
    let hash = read_attr(&mut r)?;
    let mut range = read_attrs(&mut r)?;
    if range.len() > 1 {
        return Err(r.corrupt());
    }
    let key_schema = KeySchema { hash, range: range.pop() };
    let attribute_definitions =
        (0..count(&mut r)?).map(|_| Ok((r.string()?, read_scalar(&mut r)?))).collect::<Result<_, StoreError>>()?;
    let mut settings = read_settings(&mut r)?;
    let created_at = r.millis()?;
    let mut indexes: Vec<IndexDef> = (0..count(&mut r)?).map(|_| read_index(&mut r)).collect::<Result<_, _>>()?;
    let tags = (0..count(&mut r)?).map(|_| Ok((r.string()?, r.string()?))).collect::<Result<_, StoreError>>()?;
    if version >= META_VERSION_2 {
        read_tail(&mut r, &mut settings)?;
    }
    if version >= META_VERSION_3 {
        for ix in &mut indexes {
            ix.on_demand_max = read_pair(&mut r)?.map(|(read, write)| (read as i64, write as i64));
            ix.warm = read_pair(&mut r)?;
        }
    }
    if version >= META_VERSION_4 {
        for _ in 0..count(&mut r)? {
            let slot = r.string()?;
            let document =
                if r.bool()? { Some(PolicyDocument { text: r.string()?, version_implicit: r.bool()? }) } else { None };
            settings.policies.insert(slot, PolicySlot { document, revision: r.uint()? });
        }
    }
    if version >= META_VERSION {
        for ix in &mut indexes {
            ix.changes = read_changes(&mut r)?;
        }
    }
    r.end()?;
    let meta = TableMeta {
        name,
        table_id,
        region,
        account_id,
        key_schema,
        attribute_definitions,
        settings,
        created_at,
        indexes,
        tags,
    };
    Ok((id, meta))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn n(s: &str) -> Number {
        Number::parse(s).unwrap()
    }

    fn every_kind_of_value() -> Item {
        let mut inner = BTreeMap::new();
        inner.insert("deep".to_string(), AttributeValue::L(vec![AttributeValue::Null, AttributeValue::Bool(false)]));
        let mut item = Item::new();
        item.insert("s".into(), AttributeValue::S("héllo".into()));
        item.insert("n".into(), AttributeValue::N(n("-1.5E-100")));
        item.insert("big".into(), AttributeValue::N(n("9.9999999999999999999999999999999999999E+125")));
        item.insert("b".into(), AttributeValue::B(vec![0, 255, 7]));
        item.insert("t".into(), AttributeValue::Bool(true));
        item.insert("null".into(), AttributeValue::Null);
        item.insert("ss".into(), AttributeValue::Ss(vec!["a".into(), "b".into()]));
        item.insert("ns".into(), AttributeValue::Ns(vec![n("1"), n("0.25")]));
        item.insert("bs".into(), AttributeValue::Bs(vec![vec![1], vec![]]));
        item.insert("m".into(), AttributeValue::M(inner));
        item.insert("".into(), AttributeValue::L(vec![]));
        item
    }

    #[test]
    fn items_of_every_type_round_trip() {
        let item = every_kind_of_value();
        assert_eq!(decode_item(&encode_item(&item)).unwrap(), item);
        let stored = encode_stored(&item);
        assert_eq!(decode_stored(&stored).unwrap(), item);
        assert_eq!(stored_size(&stored).unwrap(), dynaburst_model::item_size(&item) as u64);
        assert_eq!(decode_item(&encode_item(&Item::new())).unwrap(), Item::new());
    }

    fn full_meta() -> TableMeta {
        let attr = |name: &str, ty| KeyAttr { name: name.into(), ty };
        TableMeta {
            name: "t.1-x".into(),
            table_id: "abc".into(),
            region: "eu-west-1".into(),
            account_id: "123456789012".into(),
            key_schema: KeySchema { hash: attr("pk", ScalarType::S), range: Some(attr("sk", ScalarType::N)) },
            attribute_definitions: vec![("pk".into(), ScalarType::S), ("sk".into(), ScalarType::N)],
            settings: TableSettings {
                billing: BillingMode::Provisioned { read: 7, write: 9 },
                changes: ThroughputChanges { last_increase: Some(Millis(11)), last_decrease: None, decreases_today: 3 },
                last_pay_per_request_switch: Some(Millis(13)),
                ttl: Some(TimeToLive { attribute: "exp".into(), enabled: true, changed_at: Millis(17) }),
                stream: Some(StreamSetting {
                    enabled: false,
                    view: StreamViewType::NewAndOldImages,
                    label: "2026-11-24T00:00:00.000".into(),
                }),
                on_demand_max: Some((-1, 50)),
                warm: Some((15_000, 6_000)),
                deletion_protection: true,
                table_class: Some(TableClassSetting {
                    class: TableClass::StandardInfrequentAccess,
                    updated_at: Some(Millis(29)),
                }),
                sse_kms_key: Some("arn:aws:kms:eu-west-1:123456789012:key/k".into()),
                policies: Policies::from([
                    (
                        String::new(),
                        PolicySlot {
                            document: Some(PolicyDocument {
                                text: "{\"Version\":\"2008-10-17\"}".into(),
                                version_implicit: true,
                            }),
                            revision: 1_791_506_149_206,
                        },
                    ),
                    ("2026-11-24T00:00:00.000".into(), PolicySlot { document: None, revision: 31 }),
                ]),
            },
            created_at: Millis(1_700_000_000_000),
            indexes: vec![
                IndexDef {
                    name: "g".into(),
                    kind: IndexKind::Global,
                    schema: IndexSchema {
                        hash: vec![attr("a", ScalarType::S), attr("b", ScalarType::N)],
                        range: vec![attr("c", ScalarType::B)],
                    },
                    projection: IndexProjection::Include(vec!["x".into(), "y".into()]),
                    throughput: Some((5, 6)),
                    on_demand_max: Some((-1, 70)),
                    warm: Some((20_000, 8_000)),
                    changes: ThroughputChanges {
                        last_increase: Some(Millis(37)),
                        last_decrease: Some(Millis(41)),
                        decreases_today: 2,
                    },
                    created_at: Millis(19),
                    backfilled_at: Some(Millis(23)),
                },
                IndexDef {
                    name: "l".into(),
                    kind: IndexKind::Local,
                    schema: IndexSchema {
                        hash: vec![attr("pk", ScalarType::S)],
                        range: vec![attr("z", ScalarType::S)],
                    },
                    projection: IndexProjection::KeysOnly,
                    throughput: None,
                    on_demand_max: None,
                    warm: None,
                    changes: ThroughputChanges::default(),
                    created_at: Millis(29),
                    backfilled_at: None,
                },
            ],
            tags: vec![("k".into(), "v".into()), ("a".into(), "".into())],
        }
    }

    #[test]
    fn metadata_with_every_setting_round_trips() {
        let meta = full_meta();
        assert_eq!(decode_meta(&encode_meta(42, &meta)).unwrap(), (42, meta));
    }

    /// `encode_meta(7, ..)` of `full_meta()` without the settings version 2
    /// added, as the build before them (2ac60e0) wrote it.
    const V1_ENTRY: &str = "010705742e312d78036162630965752d776573742d310c31323334353637383930313202706b000102736b010202706b0002736b01010709010b0003010d0103657870011101000317323032362d31312d32345430303a30303a30302e30303001ffffffffffffffffff0132019875f02e80d095ffbc31020167000201610001620101016302020201780179010506130117016c010102706b0001017a0001001d0002016b0176016100";

    fn v1_entry() -> Vec<u8> {
        (0..V1_ENTRY.len()).step_by(2).map(|i| u8::from_str_radix(&V1_ENTRY[i..i + 2], 16).unwrap()).collect()
    }

    /// `full_meta()` without what versions 2 and 3 added.
    fn version_1_meta() -> TableMeta {
        let mut meta = version_2_meta();
        meta.settings.deletion_protection = false;
        meta.settings.table_class = None;
        meta.settings.sse_kms_key = None;
        meta
    }

    /// `full_meta()` without what versions 3 and 4 added.
    fn version_2_meta() -> TableMeta {
        let mut meta = version_3_meta();
        for ix in &mut meta.indexes {
            (ix.on_demand_max, ix.warm) = (None, None);
        }
        meta
    }

    /// `full_meta()` without what versions 4 and 5 added.
    fn version_3_meta() -> TableMeta {
        let mut meta = version_4_meta();
        meta.settings.policies.clear();
        meta
    }

    /// `full_meta()` without what version 5 added.
    fn version_4_meta() -> TableMeta {
        let mut meta = full_meta();
        for ix in &mut meta.indexes {
            ix.changes = ThroughputChanges::default();
        }
        meta
    }

    #[test]
    fn each_version_reads_and_an_entry_is_written_in_the_oldest_version_that_holds_it() {
        assert_eq!(decode_meta(&v1_entry()).unwrap(), (7, version_1_meta()));
        assert_eq!(encode_meta(7, &version_1_meta()), v1_entry(), "an older build reads what this one writes");
        let v2 = encode_meta(7, &version_2_meta());
        assert_eq!(v2[0], 2);
        assert_eq!(decode_meta(&v2).unwrap(), (7, version_2_meta()));
        // Version 2's bytes and then each index's maxima and warm throughput.
        let v3 = encode_meta(7, &version_3_meta());
        assert_eq!((v3[0], &v3[1..v2.len()]), (3, &v2[1..]));
        assert_eq!(decode_meta(&v3).unwrap(), (7, version_3_meta()));
        // Version 3's bytes and then the policies.
        let v4 = encode_meta(7, &version_4_meta());
        assert_eq!((v4[0], &v4[1..v3.len()]), (4, &v3[1..]));
        assert_eq!(decode_meta(&v4).unwrap(), (7, version_4_meta()));
        // Version 4's bytes and then each index's throughput changes.
        let v5 = encode_meta(7, &full_meta());
        assert_eq!((v5[0], &v5[1..v4.len()]), (5, &v4[1..]));
        assert_eq!(decode_meta(&v5).unwrap(), (7, full_meta()));
        // A version this build does not know is refused, not misread.
        for unknown in [0, 6] {
            let mut bytes = v5.clone();
            bytes[0] = unknown;
            assert_eq!(decode_meta(&bytes).unwrap_err(), StoreError::Corrupt { what: "table metadata" });
        }
    }

    /// An entry whose only news is a GSI's throughput changes: version 5,
    /// with the sections of versions 2 to 4 empty.
    #[test]
    fn an_entry_with_only_gsi_changes_is_version_5() {
        let mut meta = version_1_meta();
        meta.indexes[0].changes =
            ThroughputChanges { last_increase: None, last_decrease: Some(Millis(43)), decreases_today: 1 };
        let bytes = encode_meta(9, &meta);
        assert_eq!(bytes[0], 5);
        assert_eq!(decode_meta(&bytes).unwrap(), (9, meta));
    }

    #[test]
    fn truncated_or_padded_bytes_are_corrupt_not_a_panic() {
        let meta = encode_meta(1, &full_meta());
        for cut in 0..meta.len() {
            assert!(decode_meta(&meta[..cut]).is_err(), "cut at {cut}");
        }
        let mut padded = meta.clone();
        padded.push(0);
        assert_eq!(decode_meta(&padded).unwrap_err(), StoreError::Corrupt { what: "table metadata" });
        let item = encode_item(&every_kind_of_value());
        for cut in 0..item.len() {
            assert!(decode_item(&item[..cut]).is_err(), "cut at {cut}");
        }
        // A length larger than the input, and runaway nesting.
        assert!(decode_item(&[0xff, 0xff, 0xff, 0xff, 0x0f]).is_err());
        let mut deep = vec![1, 0, T_L];
        for _ in 0..100 {
            deep.extend_from_slice(&[1, T_L]);
        }
        assert_eq!(decode_item(&deep).unwrap_err(), StoreError::Corrupt { what: "item" });
    }
}
