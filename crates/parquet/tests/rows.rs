mod fixture;

use std::path::PathBuf;

use dynaburst_model::{AttributeValue, Item, Number};
use dynaburst_parquet::*;
use fixture::*;

fn temp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("dynaburst-parquet-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

fn n(s: &str) -> AttributeValue {
    AttributeValue::N(Number::parse(s).unwrap())
}

fn s(v: &str) -> AttributeValue {
    AttributeValue::S(v.to_string())
}

fn all(rows: Rows) -> Vec<Row> {
    rows.map(|r| r.unwrap()).collect()
}

fn id(row: &Row) -> String {
    match row.item.as_ref().unwrap().get("id") {
        Some(AttributeValue::S(v)) => v.clone(),
        other => panic!("no id: {other:?}"),
    }
}

#[test]
fn every_type_maps_to_its_attribute_type() {
    let p = temp("every.parquet");
    write(&p, &[every_type()], 1024);
    let rows = all(Rows::open(&p, None, None).unwrap());
    assert_eq!(rows.len(), 3);
    let m = |pairs: Vec<(&str, AttributeValue)>| {
        AttributeValue::M(pairs.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
    };
    let mut expected: Item =
        R0_TEXT.iter().map(|(k, ty, v)| (k.to_string(), if *ty == "N" { n(v) } else { s(v) })).collect();
    expected.extend(
        [
            ("flag", AttributeValue::Bool(true)),
            ("bin", AttributeValue::B(vec![0, 1, 255])),
            ("fixed", AttributeValue::B(vec![9, 8, 7, 6])),
            ("tags", AttributeValue::L(vec![s("a"), AttributeValue::Null, s("b")])),
            ("point", m(vec![("x", n("1.25")), ("labels", AttributeValue::L(vec![n("1"), n("2")]))])),
            ("attrs", m(vec![("a", n("1")), ("b", AttributeValue::Null)])),
        ]
        .map(|(k, v)| (k.to_string(), v)),
    );
    assert_eq!(rows[0].item.as_ref().unwrap(), &expected);
    assert_eq!(rows[0].index, 0);
    // The decimal's text is exact, not a float's.
    let raw: serde_json::Value = serde_json::from_str(&rows[0].raw).unwrap();
    assert_eq!(raw["dec"], serde_json::json!({"N": "12345678901234567890123456789012345678e-10"}));
    assert_eq!(raw["bin"], serde_json::json!({"B": "AAH/"}));
    assert_eq!(raw["attrs"], serde_json::json!({"M": {"a": {"N": "1"}, "b": {"NULL": true}}}));
    // Nulls are left out.
    let only_id: Item = [("id".to_string(), s("r1"))].into_iter().collect();
    assert_eq!(rows[1].item.as_ref().unwrap(), &only_id);
    assert_eq!(rows[1].raw, r#"{"id":{"S":"r1"}}"#);
    // NaN is no number DynamoDB stores: the row is rejected, saying why,
    // and its text shows the value.
    assert_eq!(
        rows[2].item.as_ref().unwrap_err(),
        "column f64: NaN is not a number DynamoDB can store (its numbers are finite)"
    );
    assert_eq!(rows[2].raw, r#"{"id":{"S":"r2"},"f64":{"N":"NaN"}}"#);
}

#[test]
fn many_row_groups_stream_in_bounded_batches() {
    let p = temp("many.parquet");
    let batches: Vec<_> = (0..10).map(|b| numbered(b * 2_000, 2_000, 10)).collect();
    write(&p, &batches, 500);
    let mut rows = Rows::open(&p, None, None).unwrap();
    assert_eq!(rows.total_rows(), 20_000);
    assert_eq!(rows.batch_rows(), MAX_BATCH_ROWS);
    let mut count = 0u64;
    while let Some(row) = rows.next_row().unwrap() {
        assert_eq!(row.index, count);
        assert_eq!(id(&row), format!("p{count}"));
        count += 1;
        assert!(rows.largest_batch() <= MAX_BATCH_ROWS);
    }
    assert_eq!(count, 20_000);
    // Batches run across row groups, never past the bound.
    assert_eq!(rows.largest_batch(), MAX_BATCH_ROWS);
}

#[test]
fn wide_rows_are_read_in_smaller_batches() {
    // 64 KiB rows: a 4 MiB batch holds 64 of them.
    let p = temp("wide.parquet");
    write(&p, &[numbered(0, 300, 64 * 1024)], 200);
    let rows = Rows::open(&p, None, None).unwrap();
    assert!(rows.batch_rows() < 64 && rows.batch_rows() >= 60, "{}", rows.batch_rows());
    let bound = rows.batch_rows();
    let mut rows = rows;
    let mut count = 0;
    while rows.next_row().unwrap().is_some() {
        count += 1;
    }
    assert_eq!(count, 300);
    assert!(rows.largest_batch() <= bound && rows.largest_batch() > 0);
}

#[test]
fn resume_starts_at_the_row_and_shards_split_by_row_group() {
    let p = temp("shards.parquet");
    let batches: Vec<_> = (0..7).map(|b| numbered(b * 1_000, 1_000, 5)).collect();
    // 7,000 rows in row groups of 700: 10 groups.
    write(&p, &batches, 700);
    let rest = all(Rows::open(&p, None, Some(4_321)).unwrap());
    assert_eq!(rest.len(), 7_000 - 4_321);
    assert_eq!((rest[0].index, id(&rest[0])), (4_321, "p4321".to_string()));
    assert_eq!(id(rest.last().unwrap()), "p6999");

    // Three shards: groups 0-2, 3-5, 6-9; together every row once.
    let shards: Vec<Vec<Row>> = (0..3).map(|i| all(Rows::open(&p, Some((i, 3)), None).unwrap())).collect();
    assert_eq!(shards.iter().map(Vec::len).collect::<Vec<_>>(), [2_100, 2_100, 2_800]);
    let indexes: Vec<u64> = shards.iter().flatten().map(|r| r.index).collect();
    assert_eq!(indexes, (0..7_000).collect::<Vec<_>>());
    // A shard resumed inside it ends at its own end.
    let resumed = all(Rows::open(&p, Some((1, 3)), Some(3_000)).unwrap());
    assert_eq!((resumed[0].index, resumed.len()), (3_000, 1_200));
    // Resumed at its end: nothing left.
    assert!(all(Rows::open(&p, Some((1, 3)), Some(4_200)).unwrap()).is_empty());
    // More shards than row groups: some are empty, none overlaps.
    let many: usize = (0..16).map(|i| all(Rows::open(&p, Some((i, 16)), None).unwrap()).len()).sum();
    assert_eq!(many, 7_000);
}

#[test]
fn unmapped_types_and_broken_files_fail_at_open() {
    let p = temp("interval.parquet");
    write(&p, &[unsupported()], 10);
    let err = Rows::open(&p, None, None).err().unwrap().to_string();
    assert_eq!(err, "column span: type Interval(YearMonth) has no DynamoDB attribute type dynaburst maps it to");
    let q = temp("text.parquet");
    std::fs::write(&q, "id,name\n1,a\n").unwrap();
    let err = Rows::open(&q, None, None).err().unwrap().to_string();
    assert!(err.starts_with("not a readable Parquet file: "), "{err}");
}
