//! Per-operation costs on weft, tokio and smol (4 workers each), written once
//! over `BenchRuntime`:
//!
//! * `spawn_join_inside`: a task spawns an empty task and awaits it.
//! * `spawn_join_outside`: the bench thread spawns an empty task through the
//!   runtime's handle and `block_on`s its join handle.
//! * `yield`: one task yields once (the runtime's own `yield_now`).
//! * `wake`: one round trip between two tasks over `async-channel`s of
//!   capacity 1: each iteration is two cross-task wakes.
//!
//! The in-task benches time a loop inside one task (`iter_custom`), so the
//! cost of entering the runtime from the bench thread is not in them.
//! Measurement is kept short (1 s per bench) so that `cargo bench -p
//! weft-bench` takes a couple of minutes.

use std::time::{Duration, Instant};

use criterion::{
    BenchmarkGroup, Criterion, criterion_group, criterion_main, measurement::WallTime,
};
use weft_bench::common::runtimes::{BenchRuntime, Smol, Spawner, Tokio, Tuning, Weft};

const WORKERS: usize = 4;

/// Benchmarks `op` on every runtime, as one criterion group.
fn on_every_runtime(c: &mut Criterion, name: &str, op: Op) {
    let mut group = c.benchmark_group(name);
    run_on::<Weft>(&mut group, op);
    run_on::<Tokio>(&mut group, op);
    run_on::<Smol>(&mut group, op);
    group.finish();
}

/// An operation, as a function generic over the runtime's type.
#[derive(Clone, Copy)]
enum Op {
    SpawnJoinInside,
    SpawnJoinOutside,
    Yield,
    Wake,
}

fn run_on<R: BenchRuntime>(group: &mut BenchmarkGroup<'_, WallTime>, op: Op) {
    let rt = R::build(WORKERS, Tuning::default()).expect("runtime builds");
    let spawner = rt.spawner();
    group.bench_function(R::KIND.name(), |b| match op {
        Op::SpawnJoinInside => b.iter_custom(|n| in_task(&rt, spawn_join_loop(spawner.clone(), n))),
        Op::SpawnJoinOutside => b.iter(|| rt.block_on(spawner.spawn(async {}))),
        Op::Yield => b.iter_custom(|n| in_task(&rt, yield_loop::<R::Spawner>(n))),
        Op::Wake => b.iter_custom(|n| in_task(&rt, wake_loop(spawner.clone(), n))),
    });
}

/// Runs `timed` as a task on `rt` and returns the time it measured.
fn in_task<R: BenchRuntime>(
    rt: &R,
    timed: impl Future<Output = Duration> + Send + 'static,
) -> Duration {
    let spawner = rt.spawner();
    rt.block_on(spawner.spawn(timed))
}

async fn spawn_join_loop<S: Spawner>(spawner: S, n: u64) -> Duration {
    let start = Instant::now();
    for _ in 0..n {
        spawner.spawn(async {}).await;
    }
    start.elapsed()
}

async fn yield_loop<S: Spawner>(n: u64) -> Duration {
    let start = Instant::now();
    for _ in 0..n {
        S::yield_now().await;
    }
    start.elapsed()
}

async fn wake_loop<S: Spawner>(spawner: S, n: u64) -> Duration {
    let (ping_tx, ping_rx) = async_channel::bounded::<()>(1);
    let (pong_tx, pong_rx) = async_channel::bounded::<()>(1);
    let echo = spawner.spawn(async move {
        while ping_rx.recv().await.is_ok() {
            pong_tx
                .send(())
                .await
                .expect("the pinger waits for the pong");
        }
    });
    let start = Instant::now();
    for _ in 0..n {
        ping_tx.send(()).await.expect("the echo task is alive");
        pong_rx.recv().await.expect("the echo task answers");
    }
    let elapsed = start.elapsed();
    drop(ping_tx);
    echo.await;
    elapsed
}

fn ops(c: &mut Criterion) {
    on_every_runtime(c, "spawn_join_inside", Op::SpawnJoinInside);
    on_every_runtime(c, "spawn_join_outside", Op::SpawnJoinOutside);
    on_every_runtime(c, "yield", Op::Yield);
    on_every_runtime(c, "wake", Op::Wake);
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(1))
        .sample_size(30);
    targets = ops
}
criterion_main!(benches);
