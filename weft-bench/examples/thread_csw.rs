//! Which threads context-switch, and how: runs one workload on one runtime
//! and prints each thread's voluntary and involuntary switches per
//! iteration (Linux, from `/proc/self/task/*/status`).
//!
//! ```text
//! cargo run --release -p weft-bench --example thread_csw -- weft spawn_many_local 2 200
//! ```
//! Arguments: runtime (weft|tokio|smol), workload, workers, iterations.

use std::collections::BTreeMap;
use std::fs;

use clap::ValueEnum;
use weft_bench::common::runtimes::{BenchRuntime, RuntimeKind, Smol, Tokio, Tuning, Weft};
use weft_bench::suites::scheduler::workloads::Workload;

/// `(voluntary, involuntary, cpu ticks)` of every live thread, by thread
/// name and id.
fn thread_switches() -> BTreeMap<(String, u32), (u64, u64, u64)> {
    let mut threads = BTreeMap::new();
    for entry in fs::read_dir("/proc/self/task").expect("Linux /proc") {
        let dir = entry.expect("task entry").path();
        let tid: u32 = dir.file_name().unwrap().to_str().unwrap().parse().unwrap();
        let name = fs::read_to_string(dir.join("comm")).unwrap_or_default();
        let status = fs::read_to_string(dir.join("status")).unwrap_or_default();
        let field = |key: &str| {
            status
                .lines()
                .find_map(|l| l.strip_prefix(key))
                .and_then(|v| v.trim().parse::<u64>().ok())
                .unwrap_or(0)
        };
        // utime and stime, fields 14 and 15 of `stat` (after the `(comm)`).
        let stat = fs::read_to_string(dir.join("stat")).unwrap_or_default();
        let after_comm = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
        let fields: Vec<&str> = after_comm.split_whitespace().collect();
        let ticks = |i: usize| {
            fields
                .get(i)
                .and_then(|v| v.parse::<u64>().ok())
                .unwrap_or(0)
        };
        threads.insert(
            (name.trim().to_owned(), tid),
            (
                field("voluntary_ctxt_switches:"),
                field("nonvoluntary_ctxt_switches:"),
                ticks(11) + ticks(12),
            ),
        );
    }
    threads
}

fn probe<R: BenchRuntime>(workload: Workload, workers: usize, iterations: usize) {
    let rt = R::build(workers, Tuning::default()).expect("runtime");
    let mut instance = workload.instantiate(&rt);
    for _ in 0..iterations / 10 + 1 {
        instance.iterate();
    }
    let before = thread_switches();
    let start = std::time::Instant::now();
    for _ in 0..iterations {
        instance.iterate();
    }
    let elapsed = start.elapsed();
    let after = thread_switches();
    let per = iterations as f64;
    println!(
        "{} {} workers={workers}: {:.3} ms/iteration",
        R::KIND.name(),
        workload.name(),
        elapsed.as_secs_f64() * 1e3 / per
    );
    let (mut vol, mut invol) = (0.0, 0.0);
    let wall_ticks = elapsed.as_secs_f64() * 100.0;
    for (key, (v1, i1, t1)) in &after {
        let (v0, i0, t0) = before.get(key).copied().unwrap_or((0, 0, 0));
        let (dv, di) = ((v1 - v0) as f64 / per, (i1 - i0) as f64 / per);
        let cpu = (t1 - t0) as f64 / wall_ticks * 100.0;
        vol += dv;
        invol += di;
        if dv + di >= 0.05 || cpu >= 1.0 {
            println!(
                "  {:<20} {:>6} vol {dv:>8.1}  invol {di:>8.1}  cpu {cpu:>5.0}%",
                key.0, key.1
            );
        }
    }
    println!("  total vol {vol:.1} invol {invol:.1}");
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let kind = RuntimeKind::from_str(&args[0], true).expect("runtime");
    let workload = Workload::from_str(&args[1], true).expect("workload");
    let workers = args.get(2).map_or(2, |s| s.parse().unwrap());
    let iterations = args.get(3).map_or(200, |s| s.parse().unwrap());
    match kind {
        RuntimeKind::Weft => probe::<Weft>(workload, workers, iterations),
        RuntimeKind::Tokio => probe::<Tokio>(workload, workers, iterations),
        RuntimeKind::Smol => probe::<Smol>(workload, workers, iterations),
    }
}
