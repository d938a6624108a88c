//! `dynaburst dump` against the real `dynaburst serve` binary over real
//! HTTP: every attribute type round-trips through `dump -o - | load -`
//! between two servers and through an export directory; jsonl and csv
//! write every item once; a dump killed with SIGKILL resumes and writes
//! every item exactly once; `--max-rcu` holds in the server's own
//! per-second metrics. And the load side of the same sources: the rejects
//! file a load leaves loads back as it is once its records are fixed, and
//! CSV shards never lose or double a record whose quoted field holds line
//! breaks. Every run is bounded in items and time.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use aws_sdk_dynamodb::primitives::Blob;
use aws_sdk_dynamodb::types::AttributeValue as Av;
use aws_sdk_dynamodb::Client;

mod common;

use common::{Serve, BIN};

/// One dump at a time: they share this machine's cores with the servers.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner())
}

fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("dynaburst-dump-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap()
}

fn run(args: &[&str]) -> Output {
    Command::new(BIN).args(args).output().expect("run dynaburst")
}

fn ok(o: Output) -> Output {
    assert!(o.status.success(), "status {:?}: {}", o.status, String::from_utf8_lossy(&o.stderr));
    o
}

fn create(client: &Client, table: &str) {
    use aws_sdk_dynamodb::types::{AttributeDefinition, BillingMode, KeySchemaElement, KeyType, ScalarAttributeType};
    runtime().block_on(async {
        client
            .create_table()
            .table_name(table)
            .billing_mode(BillingMode::PayPerRequest)
            .key_schema(KeySchemaElement::builder().attribute_name("pk").key_type(KeyType::Hash).build().unwrap())
            .key_schema(KeySchemaElement::builder().attribute_name("sk").key_type(KeyType::Range).build().unwrap())
            .attribute_definitions(
                AttributeDefinition::builder()
                    .attribute_name("pk")
                    .attribute_type(ScalarAttributeType::S)
                    .build()
                    .unwrap(),
            )
            .attribute_definitions(
                AttributeDefinition::builder()
                    .attribute_name("sk")
                    .attribute_type(ScalarAttributeType::N)
                    .build()
                    .unwrap(),
            )
            .send()
            .await
            .expect("create table");
    });
}

/// Item `i` with every attribute type, exact 38-digit decimals, every byte
/// value, and strings with quotes, line breaks and non-ASCII text.
fn every_type(i: u32) -> HashMap<String, Av> {
    let n = |s: &str| Av::N(s.to_string());
    let mut m = HashMap::new();
    m.insert("pk".into(), Av::S(format!("p{}", i % 17)));
    m.insert("sk".into(), n(&format!("{i}.5")));
    m.insert("s".into(), Av::S(format!("line one\n\"quoted\", comma; é ü 日本 {i}")));
    m.insert("n_exact".into(), n("12345678901234567890.123456789012345678"));
    m.insert("n_small".into(), n("-0.000000000000000000000000000000000001"));
    m.insert("n_big".into(), n("9.9999999999999999999999999999999999999E+125"));
    m.insert("b".into(), Av::B(Blob::new((0..=255u8).map(|b| b.wrapping_add(i as u8)).collect::<Vec<u8>>())));
    m.insert("t".into(), Av::Bool(i.is_multiple_of(2)));
    m.insert("nul".into(), Av::Null(true));
    m.insert("ss".into(), Av::Ss(vec!["a".into(), format!("b{i}")]));
    m.insert("ns".into(), Av::Ns(vec!["1".into(), "-2.5".into(), format!("{}.25", i + 10)]));
    m.insert("bs".into(), Av::Bs(vec![Blob::new(vec![0u8]), Blob::new(vec![255u8, i as u8, 7])]));
    m.insert(
        "l".into(),
        Av::L(vec![n("1"), Av::S("x".into()), Av::Null(true), Av::L(vec![Av::Bool(false)]), Av::Ss(vec!["z".into()])]),
    );
    let mut inner = HashMap::new();
    inner.insert(
        "deep".into(),
        Av::M(HashMap::from([("n".to_string(), n("3.14")), ("b".to_string(), Av::B(Blob::new(vec![1, 2])))])),
    );
    inner.insert("empty_list".into(), Av::L(vec![]));
    inner.insert("empty_map".into(), Av::M(HashMap::new()));
    m.insert("m".into(), Av::M(inner));
    m
}

fn put_all(client: &Client, table: &str, items: &[HashMap<String, Av>]) {
    runtime().block_on(async {
        for item in items {
            client.put_item().table_name(table).set_item(Some(item.clone())).send().await.expect("put");
        }
    });
}

/// Every item of `table`, through a plain paged Scan.
fn scan_items(client: &Client, table: &str) -> Vec<HashMap<String, Av>> {
    runtime().block_on(async {
        let mut out = Vec::new();
        let mut start = None;
        for _ in 0..10_000 {
            let page =
                client.scan().table_name(table).set_exclusive_start_key(start.take()).send().await.expect("scan");
            out.extend(page.items().iter().cloned());
            match page.last_evaluated_key() {
                Some(k) if !k.is_empty() => start = Some(k.clone()),
                _ => return out,
            }
        }
        panic!("more than 10,000 pages");
    })
}

/// Every item of `table`, by its key's text.
fn scan_all(client: &Client, table: &str) -> BTreeMap<String, HashMap<String, Av>> {
    scan_items(client, table).into_iter().map(|i| (format!("{:?}/{:?}", i["pk"], i["sk"]), i)).collect()
}

#[test]
fn every_attribute_type_round_trips_through_a_pipe_between_two_servers_and_through_an_export_directory() {
    let _one = serial();
    let (a, b) = (Serve::start(&["--seed", "1"]), Serve::start(&["--seed", "1"]));
    let (ca, cb) = (a.client(), b.client());
    create(&ca, "source");
    let items: Vec<_> = (0..300).map(every_type).collect();
    put_all(&ca, "source", &items);
    let source = scan_all(&ca, "source");
    assert_eq!(source.len(), 300);

    // dump -o - | load - into another server.
    let mut dump = Command::new(BIN)
        .args(["dump", "--table", "source", "--endpoint-url", &a.url, "--format", "ddb-json", "-o", "-"])
        .args(["--segments", "3", "--quiet", "--seed", "3"])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let load = Command::new(BIN)
        .args(["load", "-", "--format", "ddb-json", "--table", "copy", "--endpoint-url", &b.url])
        .args(["--create-table", "--key", "pk:S,sk:N", "--quiet", "--seed", "3"])
        .args(["--checkpoint", dir("pipe").join("cp").to_str().unwrap()])
        .stdin(dump.stdout.take().unwrap())
        .output()
        .unwrap();
    assert!(dump.wait().unwrap().success());
    ok(load);
    assert!(scan_all(&cb, "copy") == source, "the copy on the second server equals the source, value for value");

    // --format ddb-export -o DIR, then load DIR, on the first server.
    let d = dir("export");
    let export = d.join("exp");
    ok(run(&["dump", "--table", "source", "--endpoint-url", &a.url, "--format", "ddb-export", "-o"]
        .iter()
        .copied()
        .chain([export.to_str().unwrap(), "--quiet", "--seed", "3"])
        .collect::<Vec<_>>()));
    for f in ["manifest-summary.json", "manifest-files.json", "_started"] {
        assert!(export.join(f).is_file(), "{f}");
    }
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(export.join("manifest-summary.json")).unwrap()).unwrap();
    assert_eq!(summary["itemCount"], 300);
    assert_eq!(summary["outputFormat"], "DYNAMODB_JSON");
    ok(run(&["load", export.to_str().unwrap(), "--table", "restored", "--endpoint-url", &a.url, "--create-table"]
        .iter()
        .copied()
        .chain(["--key", "pk:S,sk:N", "--quiet", "--seed", "3"])
        .collect::<Vec<_>>()));
    assert!(scan_all(&ca, "restored") == source, "the restored export equals the source");

    // jsonl and csv: every item exactly once (they are not lossless: B
    // becomes base64 text, sets arrays).
    for (format, name) in [("jsonl", "out.jsonl"), ("csv", "out.csv")] {
        let out = d.join(name);
        ok(run(&["dump", "--table", "source", "--endpoint-url", &a.url, "--format", format, "-o"]
            .iter()
            .copied()
            .chain([out.to_str().unwrap(), "--quiet", "--seed", "3"])
            .collect::<Vec<_>>()));
        let text = std::fs::read_to_string(&out).unwrap();
        let mut keys: Vec<String> = if format == "jsonl" {
            text.lines()
                .map(|l| {
                    let v: serde_json::Value = serde_json::from_str(l).unwrap();
                    assert_eq!(v["n_exact"].to_string(), "12345678901234567890.123456789012345678");
                    format!("{}/{}", v["pk"].as_str().unwrap(), v["sk"])
                })
                .collect()
        } else {
            let mut r = csv::ReaderBuilder::new().from_reader(text.as_bytes());
            assert_eq!(&r.headers().unwrap().iter().take(2).collect::<Vec<_>>(), &["pk", "sk"]);
            r.records()
                .map(|rec| {
                    let rec = rec.unwrap();
                    format!("{}/{}", &rec[0], &rec[1])
                })
                .collect()
        };
        keys.sort();
        let before = keys.len();
        keys.dedup();
        assert_eq!((before, keys.len()), (300, 300), "{format}: every item once");
    }
}

/// The report `dump --report` wrote.
fn report(path: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).expect("report written")).expect("report JSON")
}

/// Loads `count` people from `dynaburst gen` into `table`.
fn load_people(serve: &Serve, d: &Path, table: &str, count: u32) {
    let input = d.join(format!("{table}.jsonl"));
    let gen = ok(run(&["gen", "people", "--count", &count.to_string(), "--seed", "1"]));
    std::fs::write(&input, gen.stdout).unwrap();
    ok(run(&["load", input.to_str().unwrap(), "--table", table, "--endpoint-url", &serve.url]
        .iter()
        .copied()
        .chain(["--create-table", "--key", "id:S", "--quiet", "--seed", "1"])
        .collect::<Vec<_>>()));
}

/// The `id` of every line of a DynamoDB JSON dump.
fn dumped_ids(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l:?}"));
            v["Item"]["id"]["S"].as_str().unwrap().to_string()
        })
        .collect()
}

#[test]
fn a_dump_killed_with_sigkill_resumes_and_writes_every_item_exactly_once() {
    let _one = serial();
    let serve = Serve::start(&["--seed", "1"]);
    let d = dir("resume");
    load_people(&serve, &d, "people", 3_000);
    let out = d.join("people.ddb.json");
    let checkpoint = d.join("people.ddb.json.dump-checkpoint.json");
    let args = |extra: &[&str]| -> Vec<String> {
        ["dump", "--table", "people", "--endpoint-url", &serve.url, "-o", out.to_str().unwrap()]
            .iter()
            .chain(["--max-rcu", "25", "--segments", "4", "--quiet", "--seed", "5"].iter())
            .chain(extra.iter())
            .map(|s| s.to_string())
            .collect()
    };
    let mut child = Command::new(BIN).args(args(&[])).spawn().unwrap();
    // Kill it once a checkpoint holds some items but not all.
    let deadline = Instant::now() + Duration::from_secs(60);
    let saved = loop {
        assert!(Instant::now() < deadline, "no partial checkpoint within 60 s");
        if let Ok(text) = std::fs::read_to_string(&checkpoint) {
            let c: serde_json::Value = serde_json::from_str(&text).unwrap();
            let items: u64 = c["segments"].as_array().unwrap().iter().map(|s| s["items"].as_u64().unwrap()).sum();
            if items > 0 {
                assert_eq!(c["complete"], false, "killed before the end");
                break items;
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(saved < 3_000, "{saved}");
    // A new dump over an unfinished one is refused with the way out.
    let again = run(&args(&[]).iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(again.status.code(), Some(64));
    assert!(
        String::from_utf8_lossy(&again.stderr).contains("pass --resume"),
        "{}",
        String::from_utf8_lossy(&again.stderr)
    );
    let rep = d.join("report.json");
    ok(run(&args(&["--resume", "--report", rep.to_str().unwrap()]).iter().map(String::as_str).collect::<Vec<_>>()));
    let r = report(&rep);
    assert_eq!(r["resumed"], true);
    assert_eq!(r["items_total"], 3_000);
    assert!(r["items"].as_u64().unwrap() <= 3_000 - saved, "{r}");
    let mut ids = dumped_ids(&out);
    assert_eq!(ids.len(), 3_000, "every item, none twice");
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), 3_000);
    let expected: Vec<String> = {
        let mut v: Vec<String> = scan_all_ids(&serve.client(), "people");
        v.sort();
        v
    };
    assert!(ids == expected, "the dump holds exactly the table's items");
}

fn scan_all_ids(client: &Client, table: &str) -> Vec<String> {
    scan_items(client, table).iter().map(|i| i["id"].as_s().unwrap().clone()).collect()
}

#[test]
fn max_rcu_holds_in_every_second_the_server_counts() {
    let _one = serial();
    let serve = Serve::start(&["--seed", "1"]);
    let d = dir("pace");
    load_people(&serve, &d, "paced", 2_000);
    let before = serve.metrics();
    let seconds_before = table_seconds(&before, "paced").len();
    let rep = d.join("report.json");
    ok(run(&[
        "dump",
        "--table",
        "paced",
        "--endpoint-url",
        &serve.url,
        "-o",
        d.join("out.ddb.json").to_str().unwrap(),
    ]
    .iter()
    .copied()
    .chain(["--max-rcu", "20", "--segments", "4", "--quiet", "--seed", "2", "--report", rep.to_str().unwrap()])
    .collect::<Vec<_>>()));
    // Let the server close the dump's last second.
    std::thread::sleep(Duration::from_millis(1_100));
    let r = report(&rep);
    assert_eq!(r["items"], 2_000);
    let units = r["read_units"].as_f64().unwrap();
    assert!(units > 60.0, "enough reads to span several seconds: {units}");
    let seconds = table_seconds(&serve.metrics(), "paced");
    let reads: Vec<f64> = seconds[seconds_before..].iter().map(|s| s["read_units"].as_f64().unwrap()).collect();
    let counted: f64 = reads.iter().sum();
    assert!((counted - units).abs() < 1e-6, "the server counted what the dump reports: {counted} vs {units}");
    let busiest = reads.iter().copied().fold(0.0, f64::max);
    // A second's budget, plus the estimate error of the pages in flight.
    assert!(busiest <= 20.0 * 1.25, "busiest second {busiest} RCU at --max-rcu 20: {reads:?}");
    assert!(reads.iter().filter(|u| **u > 0.0).count() >= (units / 20.0).floor() as usize, "{reads:?}");
}

/// The per-second rows of `table` in `/metrics.json`.
fn table_seconds(metrics: &serde_json::Value, table: &str) -> Vec<serde_json::Value> {
    metrics["tables"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["table"] == table && t.get("index").is_none())
        .map(|t| t["seconds"].as_array().unwrap().clone())
        .unwrap_or_default()
}

/// The lines of a rejects file.
fn rejects_lines(path: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(path).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

/// Rewrites each rejects line's record with `fix`.
fn fix_rejects(path: &Path, fix: impl Fn(&str) -> String) {
    let text: String = rejects_lines(path)
        .into_iter()
        .map(|mut v| {
            let fixed = fix(v["record"].as_str().unwrap());
            v["record"] = serde_json::Value::String(fixed);
            format!("{v}\n")
        })
        .collect();
    std::fs::write(path, text).unwrap();
}

#[test]
fn the_rejects_file_loads_back_once_fixed_and_a_new_load_starts_a_new_one() {
    let _one = serial();
    let serve = Serve::start(&["--seed", "1"]);
    let client = serve.client();
    let d = dir("rejects");
    // CSV: a zip column that must stay strings, a quoted field with a line
    // break, a bad number and a short record.
    let csv_path = d.join("people.csv");
    std::fs::write(&csv_path, "id,zip,age,note\n1,02139,42,\"two\nlines\"\n2,10001,x,ok\n3,94110,30\n4,00501,7,fine\n")
        .unwrap();
    let load = |input: &Path, table: &str, extra: &[&str]| {
        Command::new(BIN)
            .arg("load")
            .arg(input)
            .args(["--table", table, "--endpoint-url", &serve.url, "--quiet", "--seed", "4"])
            .args(extra)
            .output()
            .unwrap()
    };
    for _ in 0..2 {
        let out = load(&csv_path, "csvtab", &["--create-table", "--key", "id:N", "--types", "age:N"]);
        assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
        // A new load starts a new rejects file: the second run's file holds
        // its own two rejects, not four.
        let lines = rejects_lines(&d.join("people.csv.rejects.jsonl"));
        assert_eq!(lines.iter().map(|l| l["line"].as_u64().unwrap()).collect::<Vec<_>>(), [4, 5]);
        assert_eq!(lines[0]["format"], "csv");
        assert_eq!(lines[0]["header"], serde_json::json!(["id", "zip", "age", "note"]));
    }
    let rejects = d.join("people.csv.rejects.jsonl");
    fix_rejects(&rejects, |r| {
        r.replace("2,10001,x,ok", "2,10001,5,ok").replace("3,94110,30", "3,94110,30,\"added\nhere\"")
    });
    let out = load(&rejects, "csvtab", &[]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let items = runtime().block_on(async { client.scan().table_name("csvtab").send().await.unwrap() });
    let mut by_id: Vec<_> = items.items().to_vec();
    by_id.sort_by_key(|i| i["id"].as_n().unwrap().parse::<u32>().unwrap());
    let text = |i: usize, k: &str| match &by_id[i][k] {
        Av::S(s) => format!("S {s}"),
        Av::N(n) => format!("N {n}"),
        other => format!("{other:?}"),
    };
    assert_eq!(by_id.len(), 4);
    // Typed as the first load typed them: zip S (not N), age N.
    assert_eq!([text(1, "zip"), text(1, "age"), text(2, "note")], ["S 10001", "N 5", "S added\nhere"]);

    // JSON Lines and DynamoDB JSON: records with the wrong key type.
    let jsonl = d.join("things.jsonl");
    std::fs::write(&jsonl, "{\"id\": 1, \"v\": 1.50}\n{\"id\": \"two\", \"v\": 2}\n{\"id\": 3}\n").unwrap();
    let out = load(&jsonl, "jtab", &["--create-table", "--key", "id:N"]);
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
    let rejects = d.join("things.jsonl.rejects.jsonl");
    assert_eq!(rejects_lines(&rejects).len(), 1);
    fix_rejects(&rejects, |r| r.replace("\"two\"", "2"));
    assert!(load(&rejects, "jtab", &[]).status.success());
    let n = runtime().block_on(async { client.scan().table_name("jtab").send().await.unwrap().count() });
    assert_eq!(n, 3);
    let ddb = d.join("things.ddb.json");
    std::fs::write(&ddb, "{\"Item\": {\"id\": {\"S\": \"x\"}, \"b\": {\"B\": \"AAE=\"}}}\n{\"Item\": {\"id\": {\"N\": \"9\"}, \"b\": {\"B\": \"AAE=\"}}}\n").unwrap();
    let out = load(&ddb, "jtab", &[]);
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
    let rejects = d.join("things.ddb.json.rejects.jsonl");
    assert_eq!(rejects_lines(&rejects)[0]["format"], "ddb-json");
    fix_rejects(&rejects, |r| r.replace("{\"S\": \"x\"}", "{\"N\": \"10\"}"));
    assert!(load(&rejects, "jtab", &[]).status.success());
    let item = runtime()
        .block_on(async { client.get_item().table_name("jtab").key("id", Av::N("10".into())).send().await.unwrap() });
    assert_eq!(item.item().unwrap()["b"], Av::B(Blob::new(vec![0u8, 1])));
}

#[test]
fn csv_shards_load_every_record_once_whatever_the_boundaries() {
    let _one = serial();
    let serve = Serve::start(&["--seed", "1"]);
    let client = serve.client();
    let d = dir("shards");
    // Quoted notes with line breaks, some of their lines looking like
    // records, of many lengths so the shard boundaries fall everywhere.
    let mut text = String::from("id,note\n");
    let mut notes = BTreeMap::new();
    for i in 0..600u32 {
        let note = match i % 3 {
            0 => format!("first\n{i},looks,like,a,record\nthird {}", "y".repeat((i % 23) as usize)),
            1 => format!("plain {}", "z".repeat((i % 11) as usize)),
            _ => format!("{}\n\n\"quoted\"\n", "w".repeat((i % 31) as usize)),
        };
        text.push_str(&format!("{i},\"{}\"\n", note.replace('"', "\"\"")));
        notes.insert(i.to_string(), note);
    }
    let input = d.join("notes.csv");
    std::fs::write(&input, text).unwrap();
    for count in [2u32, 3, 7, 16, 29] {
        let table = format!("shards{count}");
        let mut read = 0;
        for i in 1..=count {
            let rep = d.join(format!("{table}-{i}.json"));
            let out = Command::new(BIN)
                .arg("load")
                .arg(&input)
                .args(["--table", &table, "--endpoint-url", &serve.url, "--quiet", "--seed", "6"])
                .args(["--create-table", "--key", "id:S", "--types", "id:S", "--shard", &format!("{i}/{count}")])
                .args(["--report", rep.to_str().unwrap()])
                .output()
                .unwrap();
            assert!(out.status.success(), "{i}/{count}: {}", String::from_utf8_lossy(&out.stderr));
            let r = report(&rep);
            assert_eq!(r["records"]["read"], r["records"]["written"], "{i}/{count}: {r}");
            read += r["records"]["read"].as_u64().unwrap();
        }
        // No record twice (a doubled one would overwrite itself in the table).
        assert_eq!(read, 600, "{count} shards read 600 records between them");
        let got: BTreeMap<String, String> = scan_items(&client, &table)
            .iter()
            .map(|i| (i["id"].as_s().unwrap().clone(), i["note"].as_s().unwrap().clone()))
            .collect();
        assert!(got == notes, "{count} shards: every record once, whole");
    }
}
