//! The recorded baselines (`benchmarks/baselines/*.json`) still load, say
//! again what they said (every field written back with its value: the
//! suites' JSON field names are unchanged), and pass `compare` against
//! themselves and each other, as they did when recorded.

use std::fs;
use std::path::{Path, PathBuf};

use serde_json::Value;
use weft_bench::common::compare;
use weft_bench::common::figure::gate::Tolerances;
use weft_bench::common::json::{self, Document};

/// The recorded baselines, oldest first.
fn baselines() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../benchmarks/baselines");
    let mut files: Vec<PathBuf> = fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    assert!(!files.is_empty());
    files
}

/// Where `old` has a field or value that `new` lacks or differs in (`new`
/// may have fields `old` lacks: written since, with their defaults).
fn missing(old: &Value, new: &Value, at: &str) -> Option<String> {
    match (old, new) {
        (Value::Object(old), Value::Object(new)) => old.iter().find_map(|(key, value)| {
            let at = format!("{at}.{key}");
            match new.get(key) {
                Some(new) => missing(value, new, &at),
                // An absent optional field is written back as absent.
                None if value.is_null() => None,
                None => Some(at),
            }
        }),
        (Value::Array(old), Value::Array(new)) if old.len() == new.len() => (old.iter().zip(new))
            .enumerate()
            .find_map(|(i, (old, new))| missing(old, new, &format!("{at}[{i}]"))),
        _ if old == new => None,
        _ => Some(format!("{at}: {old} became {new}")),
    }
}

/// The baselines, and any other documents listed in `WEFT_BENCH_DOCS`
/// (separated by `:`), such as an older build's `--json` of each suite.
fn documents() -> Vec<PathBuf> {
    let extra = std::env::var("WEFT_BENCH_DOCS").unwrap_or_default();
    let extra = extra
        .split(':')
        .filter(|p| !p.is_empty())
        .map(PathBuf::from);
    baselines().into_iter().chain(extra).collect()
}

#[test]
fn documents_read_back_whole() {
    for path in documents() {
        let text = fs::read_to_string(&path).unwrap();
        let document = Document::from_json(&text).unwrap();
        let old: Value = serde_json::from_str(&text).unwrap();
        let new: Value = serde_json::from_str(&document.to_json().unwrap()).unwrap();
        let lost = missing(&old, &new, "");
        assert_eq!(lost, None, "{}", path.display());
    }
}

/// Each passes against itself and a later one; a later one fails against
/// an earlier (its echo rows are missing from the 2026-11-23 baseline).
#[test]
fn baselines_compare_as_when_recorded() {
    let tolerances = Tolerances {
        time_pct: compare::DEFAULT_TOLERANCE_PCT,
        csw_pct: compare::DEFAULT_CSW_TOLERANCE_PCT,
    };
    let documents: Vec<Document> = baselines().iter().map(|p| json::read(p).unwrap()).collect();
    for (b, base) in documents.iter().enumerate() {
        for (n, new) in documents.iter().enumerate() {
            let (text, passed) = compare::check(base, new, tolerances);
            assert_eq!(passed, b <= n, "{b} → {n}: {text}");
            assert!(
                text.contains("scheduler") && text.contains("timers"),
                "{text}"
            );
        }
    }
}
