//! The seeds' datasets, generated deterministically from a seed: the same
//! seed gives the same bytes on every machine.
//!
//! - `people` (seed 000): id (UUID v4), name, age (two digits), content
//!   (lorem sentences), createdAt, updatedAt (ISO 8601).
//! - `kv-docs` (seed 001): an id and K string fields of about 34 bytes a
//!   pair, like Faker's `pydict(K, value_types="str")` (1 field ≈ 38 B,
//!   10 ≈ 320 B, 100 ≈ 3.4 KB).
//! - `minimal` (seed 002): id and sort, the smallest useful item.
//! - `ip-ranges` (seed 004): contiguous IPv4 ranges from 1.0.0.0 to
//!   223.255.255.255, without gaps or overlaps: netblock, start, end (dotted
//!   and numeric), octet (the first octet, seed 004's partition key) and
//!   metadata.
//!
//! Architecture invariant: pure functions of (dataset, count, fields,
//! seed); no clock, no I/O beyond the writer handed in.

use std::io::{self, Write};

use dynaburst_model::time::UtcTime;
use serde_json::json;

/// The datasets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dataset {
    People,
    KvDocs,
    Minimal,
    IpRanges,
}

impl Dataset {
    /// Parses a dataset name.
    pub fn from_name(name: &str) -> Option<Dataset> {
        match name {
            "people" => Some(Dataset::People),
            "kv-docs" => Some(Dataset::KvDocs),
            "minimal" => Some(Dataset::Minimal),
            "ip-ranges" => Some(Dataset::IpRanges),
            _ => None,
        }
    }

    /// The file format it is written in: CSV for ip-ranges (as seed 004's
    /// file), JSON Lines otherwise.
    pub fn extension(self) -> &'static str {
        match self {
            Dataset::IpRanges => "csv",
            _ => "jsonl",
        }
    }
}

/// The project's one seeded generator (splitmix64): datasets are a function
/// of the seed alone, and stay so because its sequence never changes.
pub use dynaburst_rng::Rng;

/// The draws datasets are made of, on top of [`Rng`].
pub trait Draw {
    /// One of `words`, uniformly.
    fn pick<'a>(&mut self, words: &[&'a str]) -> &'a str;
    /// A version-4 UUID.
    fn uuid(&mut self) -> String;
    /// `n` lower-case ASCII letters.
    fn letters(&mut self, n: usize) -> String;
}

impl Draw for Rng {
    fn pick<'a>(&mut self, words: &[&'a str]) -> &'a str {
        words[self.below(words.len() as u64) as usize]
    }

    fn uuid(&mut self) -> String {
        let (a, b) = (self.next_u64(), self.next_u64());
        let a = (a & 0xFFFF_FFFF_FFFF_0FFF) | 0x0000_0000_0000_4000;
        let b = (b & 0x3FFF_FFFF_FFFF_FFFF) | 0x8000_0000_0000_0000;
        format!(
            "{:08x}-{:04x}-{:04x}-{:04x}-{:012x}",
            a >> 32,
            (a >> 16) & 0xFFFF,
            a & 0xFFFF,
            b >> 48,
            b & 0xFFFF_FFFF_FFFF
        )
    }

    fn letters(&mut self, n: usize) -> String {
        (0..n).map(|_| (b'a' + self.below(26) as u8) as char).collect()
    }
}

const FIRST: &[&str] = &[
    "Ada", "Ben", "Chloe", "Dmitri", "Elena", "Farid", "Grace", "Hiro", "Ines", "Jonas", "Kenji", "Lena", "Mateo",
    "Nora", "Omar", "Priya", "Quinn", "Rosa", "Sven", "Tomoko", "Umar", "Vera", "Wen", "Yusuf", "Zoe",
];
const LAST: &[&str] = &[
    "Abe", "Baker", "Costa", "Dubois", "Eriksen", "Fischer", "Garcia", "Hughes", "Ito", "Jensen", "Kowalski", "Lopez",
    "Moreau", "Nakamura", "Okafor", "Petrov", "Quispe", "Rossi", "Sato", "Tanaka", "Ueda", "Vargas", "Weber", "Xu",
    "Yamada",
];
const LOREM: &[&str] = &[
    "lorem",
    "ipsum",
    "dolor",
    "sit",
    "amet",
    "consectetur",
    "adipiscing",
    "elit",
    "sed",
    "do",
    "eiusmod",
    "tempor",
    "incididunt",
    "ut",
    "labore",
    "et",
    "dolore",
    "magna",
    "aliqua",
    "enim",
    "ad",
    "minim",
    "veniam",
    "quis",
    "nostrud",
    "exercitation",
    "ullamco",
    "laboris",
    "nisi",
    "aliquip",
    "ex",
    "ea",
    "commodo",
    "consequat",
];
const COUNTRIES: &[&str] = &["JP", "US", "DE", "FR", "BR", "IN", "GB", "KR", "AU", "CA", "NL", "SE"];
const OWNERS: &[&str] =
    &["example-isp", "campus-net", "cloud-east", "cloud-west", "telco-one", "research-net", "mobile-co", "hosting-inc"];

fn sentences(rng: &mut Rng) -> String {
    let n = 2 + rng.below(5);
    let mut out = Vec::new();
    for _ in 0..n {
        let words = 4 + rng.below(8);
        let mut s: Vec<&str> = (0..words).map(|_| rng.pick(LOREM)).collect();
        let first = s[0];
        let cap = format!("{}{}", first[..1].to_uppercase(), &first[1..]);
        s[0] = "";
        out.push(format!("{cap}{}.", s.join(" ")));
    }
    out.join(" ")
}

/// An ISO 8601 time within the day before 2026-01-01T00:00:00Z.
fn recent(rng: &mut Rng) -> String {
    let ms = 1_767_225_600_000u64 - rng.below(86_400_000);
    format!("{}Z", UtcTime::from_unix_ms(ms as i64).iso8601_millis())
}

fn dotted(n: u32) -> String {
    format!("{}.{}.{}.{}", n >> 24, (n >> 16) & 255, (n >> 8) & 255, n & 255)
}

/// Writes `count` records of `dataset` (`fields` for kv-docs) to `out`.
pub fn generate(dataset: Dataset, count: u64, fields: usize, seed: u64, out: &mut dyn Write) -> io::Result<()> {
    let mut rng = Rng::new(seed);
    match dataset {
        Dataset::People => {
            for _ in 0..count {
                let v = json!({
                    "id": rng.uuid(),
                    "name": format!("{} {}", rng.pick(FIRST), rng.pick(LAST)),
                    "age": 10 + rng.below(90),
                    "content": sentences(&mut rng),
                    "createdAt": recent(&mut rng),
                    "updatedAt": recent(&mut rng),
                });
                writeln!(out, "{v}")?;
            }
        }
        Dataset::KvDocs => {
            for _ in 0..count {
                let mut m = serde_json::Map::new();
                m.insert("id".into(), json!(rng.uuid()));
                for f in 0..fields {
                    // Faker's pydict: a word key, a 20-letter value.
                    let key = format!("{}{f}", rng.pick(LOREM));
                    m.insert(key, json!(rng.letters(20)));
                }
                writeln!(out, "{}", serde_json::Value::Object(m))?;
            }
        }
        Dataset::Minimal => {
            for i in 0..count {
                writeln!(out, "{{\"id\":\"{i}\",\"sort\":\"SortKeyValue\"}}")?;
            }
        }
        Dataset::IpRanges => {
            writeln!(out, "netblock,start,end,start_num,end_num,octet,metadata")?;
            // Ranges never cross a first-octet boundary (seed 004: a range
            // must stay within one partition-key value for the lookup to
            // work), so the count is spread over the octets 1..=223 and
            // each octet is cut into contiguous ranges.
            let octets = 223u64;
            for o in 1..=octets {
                let here = count / octets + u64::from(o <= count % octets);
                let first = o << 24;
                let last = ((o + 1) << 24) - 1;
                let mut start = first;
                for i in 0..here {
                    // Between half and one and a half times the fair share
                    // of what is left, leaving an address for each range to
                    // come; the last range takes the rest.
                    let remaining = here - i;
                    let left = last - start + 1;
                    let share = left / remaining;
                    let size = if remaining == 1 {
                        left
                    } else {
                        (share / 2 + rng.below(share.max(1))).clamp(1, left - (remaining - 1))
                    };
                    let end = start + size - 1;
                    let (s, e) = (start as u32, end as u32);
                    writeln!(
                        out,
                        "{}-{},{},{},{},{},{},{} {}",
                        dotted(s),
                        dotted(e),
                        dotted(s),
                        dotted(e),
                        s,
                        e,
                        o,
                        rng.pick(OWNERS),
                        rng.pick(COUNTRIES)
                    )?;
                    start = end + 1;
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(d: Dataset, n: u64, fields: usize, seed: u64) -> String {
        let mut v = Vec::new();
        generate(d, n, fields, seed, &mut v).unwrap();
        String::from_utf8(v).unwrap()
    }

    #[test]
    fn deterministic_per_seed() {
        assert_eq!(text(Dataset::People, 50, 0, 1), text(Dataset::People, 50, 0, 1));
        assert_ne!(text(Dataset::People, 50, 0, 1), text(Dataset::People, 50, 0, 2));
    }

    #[test]
    fn kv_doc_sizes_match_seed_001() {
        for (fields, lo, hi) in [(1, 60, 90), (10, 330, 420), (100, 3200, 3800)] {
            let t = text(Dataset::KvDocs, 100, fields, 3);
            let avg = t.len() / 100;
            assert!((lo..=hi).contains(&avg), "{fields} fields: {avg} bytes a line");
        }
    }

    #[test]
    fn ip_ranges_are_contiguous_without_gaps_or_overlaps() {
        let t = text(Dataset::IpRanges, 5000, 0, 9);
        let mut expect_start = 1u64 << 24;
        let mut octets = std::collections::HashSet::new();
        for line in t.lines().skip(1) {
            let cols: Vec<&str> = line.split(',').collect();
            let (s, e): (u64, u64) = (cols[3].parse().unwrap(), cols[4].parse().unwrap());
            assert_eq!(s, expect_start);
            assert!(e >= s);
            assert_eq!(cols[5].parse::<u64>().unwrap(), s >> 24);
            assert_eq!(s >> 24, e >> 24, "a range stays within its first octet: {line}");
            octets.insert(cols[5].to_string());
            expect_start = e + 1;
        }
        assert_eq!(expect_start, 224u64 << 24, "ends at 223.255.255.255");
        assert_eq!(octets.len(), 223, "about 200 partition-key values");
        assert_eq!(t.lines().count(), 5001);
    }

    #[test]
    fn uuids_are_version_4() {
        let u = Rng::new(5).uuid();
        assert_eq!(u.len(), 36);
        assert_eq!(&u[14..15], "4");
        assert!(matches!(&u[19..20], "8" | "9" | "a" | "b"));
    }
}
