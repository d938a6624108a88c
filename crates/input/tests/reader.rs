use std::io::Write;
use std::path::PathBuf;

use dynaburst_input::*;
use dynaburst_model::{AttributeValue, Number};

fn temp(name: &str, bytes: &[u8]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("dynaburst-input-{}-{}", std::process::id(), name));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    std::fs::write(&p, bytes).unwrap();
    p
}

fn spec(path: PathBuf, format: Format, compression: Compression) -> InputSpec {
    InputSpec::file(path, format, compression)
}

fn all(spec: InputSpec) -> Vec<Record> {
    Reader::open(spec).unwrap().map(|r| r.unwrap()).collect()
}

fn n(s: &str) -> AttributeValue {
    AttributeValue::N(Number::parse(s).unwrap())
}

#[test]
fn csv_with_quotes_newlines_types_and_empty_cells() {
    let text = "id,name,zip,age,note\n1,\"Smith, Jo\",02134,42,\n2,\"multi\nline \"\"quoted\"\"\",99501,7,x\n3,bad\n";
    let p = temp("a.csv", text.as_bytes());
    let recs = all(spec(p, Format::Csv, Compression::None));
    assert_eq!(recs.len(), 3);
    let a = recs[0].item.as_ref().unwrap();
    assert_eq!(a["id"], n("1"));
    assert_eq!(a["name"], AttributeValue::S("Smith, Jo".into()));
    assert_eq!(a["zip"], AttributeValue::S("02134".into()));
    assert_eq!(a["age"], n("42"));
    assert!(!a.contains_key("note"), "empty cells are left out");
    assert_eq!((recs[0].line, recs[1].line, recs[2].line), (2, 3, 5));
    let b = recs[1].item.as_ref().unwrap();
    assert_eq!(b["name"], AttributeValue::S("multi\nline \"quoted\"".into()));
    assert_eq!(recs[2].item.as_ref().unwrap_err().0, "2 fields, but the header has 5");
    assert_eq!(recs[2].raw, "3,bad");
}

#[test]
fn json_lines_keep_exact_numbers_and_structure() {
    let text = "{\"id\": \"a\", \"big\": 12345678901234567890123456789012345678, \"f\": 1.50, \"m\": {\"l\": [1, true, null]}}\n\n[1]\n{bad\n";
    let p = temp("b.jsonl", text.as_bytes());
    let recs = all(spec(p, Format::JsonLines, Compression::None));
    assert_eq!(recs.len(), 3, "blank lines are skipped");
    let a = recs[0].item.as_ref().unwrap();
    assert_eq!(a["big"], n("12345678901234567890123456789012345678"));
    assert_eq!(a["f"], n("1.5"));
    assert_eq!(
        a["m"],
        AttributeValue::M(
            [("l".to_string(), AttributeValue::L(vec![n("1"), AttributeValue::Bool(true), AttributeValue::Null]))]
                .into()
        )
    );
    assert_eq!(recs[1].item.as_ref().unwrap_err().0, "a JSON Lines record must be an object");
    assert!(recs[2].item.as_ref().unwrap_err().0.starts_with("malformed JSON"));
    assert_eq!(recs[2].line, 4);
}

#[test]
fn dynamodb_json_bare_and_wrapped_gzip_and_zstd() {
    let text = "{\"Item\": {\"pk\": {\"S\": \"a\"}, \"n\": {\"N\": \"1.0\"}}}\n{\"pk\": {\"S\": \"b\"}}\n{\"Item\": {\"S\": \"bare item with an attribute named Item\"}}\n";
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(text.as_bytes()).unwrap();
    let gz_path = temp("c.ddb.json.gz", &gz.finish().unwrap());
    assert_eq!(detect(&gz_path), (Some(Format::DynamoDbJson), Compression::Gzip));
    let zst_path = temp("c.ddb.json.zst", &zstd::encode_all(text.as_bytes(), 3).unwrap());
    assert_eq!(detect(&zst_path), (Some(Format::DynamoDbJson), Compression::Zstd));
    for (path, c) in [(gz_path, Compression::Gzip), (zst_path, Compression::Zstd)] {
        let recs = all(spec(path, Format::DynamoDbJson, c));
        assert_eq!(recs.len(), 3);
        assert_eq!(recs[0].item.as_ref().unwrap()["n"], n("1"));
        assert_eq!(recs[1].item.as_ref().unwrap()["pk"], AttributeValue::S("b".into()));
        assert_eq!(
            recs[2].item.as_ref().unwrap()["Item"],
            AttributeValue::S("bare item with an attribute named Item".into())
        );
    }
}

#[test]
fn shards_cover_every_line_exactly_once() {
    let mut text = String::from("id,v\n");
    for i in 0..1000 {
        text.push_str(&format!("{i},{}\n", "x".repeat(i % 37)));
    }
    let p = temp("d.csv", text.as_bytes());
    for count in [1u64, 2, 3, 7, 16] {
        let mut ids = Vec::new();
        for index in 0..count {
            let mut s = spec(p.clone(), Format::Csv, Compression::None);
            s.shard = Some((index, count));
            for r in all(s) {
                ids.push(r.item.unwrap()["id"].clone());
            }
        }
        let mut sorted: Vec<String> = ids.iter().map(|v| v.as_n().unwrap().to_string()).collect();
        sorted.sort_by_key(|s| s.parse::<u32>().unwrap());
        assert_eq!(sorted, (0..1000).map(|i| i.to_string()).collect::<Vec<_>>(), "{count} shards");
    }
}

#[test]
fn resume_continues_from_a_record_offset_with_its_line_number() {
    let text = "{\"id\": 1}\n{\"id\": 2}\n{\"id\": 3}\n{\"id\": 4}\n";
    for (path, c) in [
        (temp("e.jsonl", text.as_bytes()), Compression::None),
        (temp("e.jsonl.zst", &zstd::encode_all(text.as_bytes(), 3).unwrap()), Compression::Zstd),
    ] {
        let recs = all(spec(path.clone(), Format::JsonLines, c));
        let third = &recs[2];
        let mut s = spec(path, Format::JsonLines, c);
        s.resume_at = Some((third.offset, third.line));
        let rest = all(s);
        assert_eq!(rest.len(), 2);
        assert_eq!(rest[0].line, 3);
        assert_eq!(rest[0].item.as_ref().unwrap()["id"], n("3"));
        assert_eq!(rest[1].offset, recs[3].offset);
    }
}

#[test]
fn shards_of_compressed_input_are_refused_with_advice() {
    let p = temp("f.csv.gz", b"");
    let mut s = spec(p, Format::Csv, Compression::Gzip);
    s.shard = Some((0, 2));
    let err = Reader::open(s).err().unwrap().to_string();
    assert!(err.starts_with("--shard needs an uncompressed file"), "{err}");
}

#[test]
fn csv_shards_never_cut_a_quoted_field_that_holds_line_breaks() {
    // Records whose quoted note spans lines, some of those lines looking
    // like records themselves ("9,fake"), of many lengths, so that shard
    // boundaries fall inside quoted fields, at their line breaks and
    // between records.
    let mut text = String::from("id,note\n");
    let mut expected = Vec::new();
    for i in 0..400 {
        let note = match i % 4 {
            0 => format!("\"line one\n{i},fake,row\nline \"\"three\"\"\""),
            1 => format!("plain {}", "y".repeat(i % 13)),
            2 => format!("\"{}\n\n{}\"", "z".repeat(i % 29), "w".repeat(i % 7)),
            _ => "\"\n\"".to_string(),
        };
        text.push_str(&format!("{i},{note}\n"));
        expected.push(i.to_string());
    }
    let p = temp("g.csv", text.as_bytes());
    let whole: Vec<(u64, String)> =
        all(spec(p.clone(), Format::Csv, Compression::None)).into_iter().map(|r| (r.line, r.raw)).collect();
    assert_eq!(whole.len(), 400);
    for count in (2..=40u64).chain([97]) {
        let mut got: Vec<(u64, String)> = Vec::new();
        let mut ids = Vec::new();
        for index in 0..count {
            let mut s = spec(p.clone(), Format::Csv, Compression::None);
            s.shard = Some((index, count));
            for r in all(s) {
                let item =
                    r.item.as_ref().unwrap_or_else(|e| panic!("{count} shards, shard {index}: {e} in {:?}", r.raw));
                ids.push(item["id"].as_n().unwrap().to_string());
                got.push((r.line, r.raw));
            }
        }
        assert!(got == whole, "{count} shards: every record exactly once, whole, with its line");
        assert_eq!(ids, expected, "{count} shards");
    }
}

#[test]
fn csv_columns_are_typed_per_column_from_the_first_records_and_say_so() {
    // zip: 02139 is not a canonical number, so the whole column is
    // strings (10001 too); age: all numbers; code: a number, then text.
    let text = "id,zip,age,code,empty\na,02139,42,7,\nb,10001,7,x1,\nc,94110,30,12,\n";
    let p = temp("h.csv", text.as_bytes());
    let reader = Reader::open(spec(p.clone(), Format::Csv, Compression::None)).unwrap();
    let types = reader.column_types().unwrap().clone();
    assert_eq!(
        describe_column_types(&types),
        "CSV column types: id S, zip S, age N, code S, empty S (inferred from the first 3 records: N where every \
         value was a canonical number; --types NAME:TYPE overrides)"
    );
    let recs: Vec<Record> = reader.map(|r| r.unwrap()).collect();
    let b = recs[1].item.as_ref().unwrap();
    assert_eq!(b["zip"], AttributeValue::S("10001".into()), "a zip code stays a string in every row");
    assert_eq!(recs[0].item.as_ref().unwrap()["zip"], AttributeValue::S("02139".into()));
    assert_eq!(b["age"], n("7"));
    assert_eq!(recs[0].item.as_ref().unwrap()["code"], AttributeValue::S("7".into()));
    // --types wins and is said as given.
    let mut s = spec(p.clone(), Format::Csv, Compression::None);
    s.types = parse_type_hints("zip:N").unwrap();
    let reader = Reader::open(s).unwrap();
    assert!(describe_column_types(reader.column_types().unwrap()).ends_with("; given by --types: zip N"));
    // Beyond the window, a column typed N that meets text rejects that
    // record, saying how to load it as strings.
    let mut s = spec(p, Format::Csv, Compression::None);
    s.type_window = 1;
    let recs = all(s);
    assert_eq!(recs[0].item.as_ref().unwrap()["code"], n("7"));
    assert_eq!(
        recs[1].item.as_ref().unwrap_err().0,
        "column code: 'x1' is not a number, but every value of code in the first 1 records was, so the column is \
         loaded as numbers: pass --types code:S to load it as strings"
    );
}

#[test]
fn json_lines_shards_number_their_records_with_the_files_line_numbers() {
    let mut text = String::new();
    for i in 0..300 {
        text.push_str(&format!("{{\"id\": {i}, \"pad\": \"{}\"}}\n", "p".repeat(i % 17)));
        if i % 50 == 0 {
            text.push('\n'); // blank lines count as lines too
        }
    }
    let p = temp("i.jsonl", text.as_bytes());
    let whole: Vec<(u64, String)> =
        all(spec(p.clone(), Format::JsonLines, Compression::None)).into_iter().map(|r| (r.line, r.raw)).collect();
    assert_eq!(whole.len(), 300);
    for count in [2u64, 3, 7, 16, 61] {
        let mut got = Vec::new();
        for index in 0..count {
            let mut s = spec(p.clone(), Format::JsonLines, Compression::None);
            s.shard = Some((index, count));
            got.extend(all(s).into_iter().map(|r| (r.line, r.raw)));
        }
        assert!(got == whole, "{count} shards: each record once, with its line number in the file");
    }
}

/// Found by fuzzing (fuzz/results): an unbalanced quote followed by many
/// short lines recounted every quote of the record for each line it added,
/// so a 400 KB file took minutes. Quotes are now counted once per line.
#[test]
fn csv_unbalanced_quote_over_many_lines_reads_in_linear_time() {
    let lines = 500_000;
    let mut text = b"a,b\n1,\"x\n".to_vec();
    text.extend(b"y\n".repeat(lines));
    let p = temp("many-lines.csv", &text);
    let recs = all(spec(p, Format::Csv, Compression::None));
    assert_eq!(recs.len(), 1, "the open quote runs to the end of the file");
    assert_eq!((recs[0].line, recs[0].offset, recs[0].end), (2, 4, text.len() as u64));
    let item = recs[0].item.as_ref().unwrap();
    let AttributeValue::S(b) = &item["b"] else { panic!("b is a string: {item:?}") };
    assert_eq!(b.lines().count(), lines + 1);
}

/// An overlong line is rejected with its start, skipped a buffer at a time
/// (not read into memory whole), and the next record reads as usual.
#[test]
fn overlong_line_is_rejected_and_skipped_to_the_next_record() {
    let long = MAX_LINE_BYTES + 3 * 1024 * 1024;
    let mut text = b"{\"id\": \"".to_vec();
    text.extend(std::iter::repeat_n(b'x', long));
    text.extend(b"\"}\n{\"id\": \"b\"}\n");
    let p = temp("long.jsonl", &text);
    let recs = all(spec(p, Format::JsonLines, Compression::None));
    assert_eq!(recs.len(), 2);
    assert_eq!(recs[0].item.as_ref().unwrap_err().0, format!("line longer than {MAX_LINE_BYTES} bytes"));
    assert_eq!(recs[0].raw.len(), 200);
    assert_eq!((recs[0].offset, recs[0].end), (0, long as u64 + 11));
    assert_eq!((recs[1].line, recs[1].offset), (2, long as u64 + 11));
    assert_eq!(recs[1].item.as_ref().unwrap()["id"], AttributeValue::S("b".into()));
}
