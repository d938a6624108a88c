//! Parquet through the record reader: positions are rows (resume and
//! shards as the loader uses them), and a record's text is the row as
//! DynamoDB JSON, which reads back as the same item.

#[path = "../../parquet/tests/fixture/mod.rs"]
mod fixture;

use std::path::{Path, PathBuf};

use dynaburst_input::*;
use dynaburst_model::AttributeValue;

fn temp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("dynaburst-input-parquet-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

fn spec(path: &Path) -> InputSpec {
    let (format, compression) = detect(path);
    InputSpec::file(path, format.unwrap(), compression)
}

fn ids(spec: InputSpec) -> Vec<(u64, u64, String)> {
    Reader::open(spec)
        .unwrap()
        .map(|r| {
            let r = r.unwrap();
            let Some(AttributeValue::S(id)) = r.item.unwrap().get("id").cloned() else { panic!("no id") };
            (r.offset, r.line, id)
        })
        .collect()
}

#[test]
fn rows_are_records_whose_text_is_their_dynamodb_json() {
    let p = temp("every.parquet");
    fixture::write(&p, &[fixture::every_type()], 100);
    assert_eq!(detect(&p), (Some(Format::Parquet), Compression::None));
    assert_eq!(Format::from_name("parquet"), Some(Format::Parquet));
    let reader = Reader::open(spec(&p)).unwrap();
    assert_eq!(reader.total_bytes(), Some(3));
    // A rejects file of this input reads its lines as DynamoDB JSON.
    assert_eq!(reader.record_source().format, Format::DynamoDbJson);
    let recs: Vec<Record> = reader.map(|r| r.unwrap()).collect();
    assert_eq!(recs.iter().map(|r| (r.offset, r.end, r.line)).collect::<Vec<_>>(), [(0, 1, 1), (1, 2, 2), (2, 3, 3)]);
    for r in &recs[..2] {
        assert_eq!(parse_ddb_json_line(&r.raw).unwrap(), *r.item.as_ref().unwrap());
    }
    assert_eq!(
        recs[2].item.as_ref().unwrap_err().0,
        "column f64: NaN is not a number DynamoDB can store (its numbers are finite)"
    );
    assert!(recs[2].raw.contains(r#""f64":{"N":"NaN"}"#), "{}", recs[2].raw);
}

#[test]
fn resume_at_a_records_position_and_shards_by_row_group() {
    let p = temp("rows.parquet");
    let batches: Vec<_> = (0..4).map(|b| fixture::numbered(b * 500, 500, 3)).collect();
    fixture::write(&p, &batches, 250);
    let all = ids(spec(&p));
    assert_eq!(all.len(), 2_000);
    // What a checkpoint saves: the first unacknowledged record's offset and line.
    let at = &all[1_234];
    let mut s = spec(&p);
    s.resume_at = Some((at.0, at.1));
    let rest = ids(s);
    assert_eq!(rest[..], all[1_234..]);
    // Shards of whole row groups (8 of 250 rows): together every row once.
    let mut joined = Vec::new();
    for i in 0..3 {
        let mut s = spec(&p);
        s.shard = Some((i, 3));
        joined.extend(ids(s));
    }
    assert_eq!(joined, all);
}

#[test]
fn parquet_needs_an_uncompressed_file() {
    let p = temp("small.parquet");
    fixture::write(&p, &[fixture::numbered(0, 3, 1)], 10);
    let mut s = spec(&p);
    s.path = None;
    let err = Reader::open(s).err().unwrap().to_string();
    assert!(err.starts_with("Parquet is read from a file"), "{err}");
    let mut s = spec(&p);
    s.compression = Compression::Gzip;
    let err = Reader::open(s).err().unwrap().to_string();
    assert!(err.contains("cannot be gzip or zstd compressed as a whole"), "{err}");
}
