//! A directory in DynamoDB's export-to-S3 layout as input.

use std::io::Write;
use std::path::{Path, PathBuf};

use dynaburst_input::*;
use dynaburst_model::AttributeValue;

fn fresh_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("dynaburst-export-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn gz(path: &Path, text: &str) {
    let mut e = flate2::write::GzEncoder::new(std::fs::File::create(path).unwrap(), flate2::Compression::fast());
    e.write_all(text.as_bytes()).unwrap();
    e.finish().unwrap();
}

fn line(id: u32) -> String {
    format!("{{\"Item\":{{\"id\":{{\"N\":\"{id}\"}},\"b\":{{\"B\":\"AAE=\"}},\"s\":{{\"SS\":[\"x\",\"y\"]}}}}}}")
}

fn spec(path: PathBuf) -> InputSpec {
    let (format, compression) = detect(&path);
    InputSpec::file(path, format.expect("a directory is DynamoDB JSON"), compression)
}

fn ids(spec: InputSpec) -> Vec<(u64, String)> {
    Reader::open(spec)
        .unwrap()
        .map(|r| {
            let r = r.unwrap();
            let item = r.item.unwrap_or_else(|e| panic!("{e} in {:?}", r.raw));
            assert_eq!(item["b"], AttributeValue::B(vec![0, 1]));
            (r.line, item["id"].as_n().unwrap().to_string())
        })
        .collect()
}

/// An export as DynamoDB writes it: `AWSDynamoDB/<ExportId>/` with the
/// manifests, data files named by full S3 keys, one file empty (an empty
/// partition) and one without a final line break.
fn write_export(name: &str) -> (PathBuf, Vec<String>) {
    let top = fresh_dir(name);
    let root = top.join("AWSDynamoDB").join("01234567890123-abcdefgh");
    std::fs::create_dir_all(root.join("data")).unwrap();
    let files = ["zq3.json.gz", "a7k.json.gz", "empty.json.gz", "m2x.json.gz"];
    let mut expected = Vec::new();
    let mut manifest = String::new();
    let mut next = 0;
    for (f, count) in files.iter().zip([40u32, 25, 0, 30]) {
        let mut text = String::new();
        for _ in 0..count {
            text.push_str(&line(next));
            text.push('\n');
            expected.push(next.to_string());
            next += 1;
        }
        if *f == "a7k.json.gz" {
            text.pop();
        }
        gz(&root.join("data").join(f), &text);
        manifest.push_str(&format!(
            "{{\"itemCount\":{count},\"md5Checksum\":\"x\",\"etag\":\"y\",\"dataFileS3Key\":\"AWSDynamoDB/01234567890123-abcdefgh/data/{f}\"}}\n"
        ));
    }
    std::fs::write(root.join("manifest-files.json"), manifest).unwrap();
    std::fs::write(root.join("manifest-summary.json"), "{\"version\":\"2020-06-30\",\"itemCount\":95}").unwrap();
    (top, expected)
}

#[test]
fn an_export_directory_reads_every_data_file_in_the_manifests_order() {
    let (top, expected) = write_export("order");
    let got = ids(spec(top.clone()));
    assert_eq!(got.iter().map(|(_, id)| id.clone()).collect::<Vec<_>>(), expected);
    // Lines count through the files, as one stream.
    assert_eq!(got.iter().map(|(l, _)| *l).collect::<Vec<_>>(), (1..=95).collect::<Vec<u64>>());
    // The export's own directory works as well as its parent.
    let root = top.join("AWSDynamoDB").join("01234567890123-abcdefgh");
    assert_eq!(ids(spec(root)).len(), 95);
}

#[test]
fn an_export_directory_resumes_at_a_checkpointed_offset() {
    let (top, expected) = write_export("resume");
    let records: Vec<Record> = Reader::open(spec(top.clone())).unwrap().map(|r| r.unwrap()).collect();
    // Resume at the 50th record (inside the second file) as a checkpoint would.
    let at = &records[50];
    let mut s = spec(top);
    s.resume_at = Some((at.offset, at.line));
    let got = ids(s);
    assert_eq!(got.iter().map(|(_, id)| id.clone()).collect::<Vec<_>>(), expected[50..].to_vec());
    assert_eq!(got[0].0, 51);
}

#[test]
fn an_export_directory_without_manifest_reads_data_files_by_name_and_refuses_shards() {
    let d = fresh_dir("bare");
    std::fs::create_dir_all(d.join("data")).unwrap();
    gz(&d.join("data").join("b.json.gz"), &format!("{}\n", line(2)));
    gz(&d.join("data").join("a.json.gz"), &format!("{}\n{}\n", line(0), line(1)));
    let got: Vec<String> = ids(spec(d.clone())).into_iter().map(|(_, id)| id).collect();
    assert_eq!(got, ["0", "1", "2"]);
    let mut s = spec(d);
    s.shard = Some((0, 2));
    let err = Reader::open(s).err().unwrap().to_string();
    assert!(err.contains("is an export directory"), "{err}");
}

#[test]
fn a_directory_that_is_no_export_and_a_missing_data_file_are_said() {
    let d = fresh_dir("none");
    let err = Reader::open(spec(d.clone())).err().unwrap().to_string();
    assert!(err.contains("not a DynamoDB export"), "{err}");
    std::fs::write(d.join("manifest-files.json"), "{\"itemCount\":1,\"dataFileS3Key\":\"x/data/gone.json.gz\"}\n")
        .unwrap();
    let err = Reader::open(spec(d)).err().unwrap().to_string();
    assert!(err.contains("gone.json.gz") && err.contains("missing"), "{err}");
}
