//! What a `Handle::dump()` costs: N idle tasks (10,000 by default) on a
//! 2-worker runtime, dumped repeatedly from the main thread; the time to
//! take a dump and to format it as text, per 10,000 tasks (median and
//! range over the runs).
//!
//! ```sh
//! cargo run --release -p weft --example dump_cost            # 10,000 tasks, 50 dumps
//! cargo run --release -p weft --example dump_cost -- 100000 20
//! ```

use std::time::{Duration, Instant};

use weft::runtime::{Builder, TaskState};

fn main() {
    let mut args = std::env::args().skip(1);
    let tasks: usize = args
        .next()
        .map_or(10_000, |n| n.parse().expect("tasks: a number"));
    let runs: usize = args
        .next()
        .map_or(50, |n| n.parse().expect("runs: a number"));
    let rt = Builder::new_multi_thread()
        .worker_threads(2)
        .build()
        .expect("runtime");
    let handles: Vec<_> = (0..tasks)
        .map(|i| {
            weft::task::Builder::new()
                .name(if i % 2 == 0 { "even" } else { "odd" })
                .spawn_on(std::future::pending::<()>(), rt.handle())
                .expect("spawn")
        })
        .collect();
    // Every task polled once and idle.
    let start = Instant::now();
    loop {
        let dump = rt.handle().dump();
        let idle = dump
            .tasks()
            .filter(|task| matches!(task.state(), TaskState::Idle { .. }))
            .count();
        if idle == tasks {
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "{idle} of {tasks} idle"
        );
        std::thread::sleep(Duration::from_millis(1));
    }
    let per_10k = |d: Duration| d.as_secs_f64() * 1e6 * 10_000.0 / tasks as f64;
    let mut take = Vec::with_capacity(runs);
    let mut format = Vec::with_capacity(runs);
    let mut bytes = 0;
    for _ in 0..runs {
        let t0 = Instant::now();
        let dump = rt.handle().dump();
        let t1 = Instant::now();
        let text = dump.to_string();
        let t2 = Instant::now();
        assert_eq!(dump.tasks().len(), tasks);
        bytes = text.len();
        take.push(per_10k(t1 - t0));
        format.push(per_10k(t2 - t1));
    }
    let summary = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        format!(
            "median {:.0} us (range {:.0}-{:.0})",
            v[v.len() / 2],
            v[0],
            v[v.len() - 1]
        )
    };
    println!("{tasks} idle tasks, 2 workers, {runs} dumps; per 10,000 tasks:");
    println!("  take a dump:   {}", summary(&mut take));
    println!("  format it:     {}", summary(&mut format));
    println!("  text: {bytes} bytes");
    for handle in handles {
        handle.abort();
    }
}
