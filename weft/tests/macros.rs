//! `#[weft::main]` and `#[weft::test]` at run time: the body runs inside a
//! runtime with the requested number of workers, `start_paused` pauses the
//! clock (and only it does), the function's return type survives the
//! rewrite (`#[should_panic]` too; `#[ignore]` is checked on the expansion,
//! in weft-macros' unit tests, so `--ignored` runs stay green). The
//! compile errors are in `macros_ui.rs`.

use std::error::Error;
use std::time::Duration;

use weft::runtime::Handle;
use weft::time::{Instant, advance, sleep};

#[weft::test(worker_threads = 3)]
async fn worker_threads_sets_the_number_of_workers() {
    assert_eq!(Handle::current().metrics().num_workers, 3);
}

#[weft::test]
async fn without_worker_threads_there_is_one_worker_per_core() {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    assert_eq!(Handle::current().metrics().num_workers, cores);
}

#[weft::test(worker_threads = 2)]
async fn the_body_runs_inside_the_runtime() {
    // `weft::spawn` panics outside a runtime context.
    let spawned: Vec<_> = (0..10u32)
        .map(|i| weft::spawn(async move { i * 2 }))
        .collect();
    let mut sum = 0;
    for handle in spawned {
        sum += handle.await.unwrap();
    }
    assert_eq!(sum, 90);
}

#[weft::test(start_paused = true)]
async fn start_paused_makes_an_hour_long_sleep_instant() {
    let start = Instant::now();
    let wall = std::time::Instant::now();
    sleep(Duration::from_secs(3600)).await;
    assert!(start.elapsed() >= Duration::from_secs(3600));
    // Generous: a loaded CI machine, but nowhere near an hour.
    assert!(
        wall.elapsed() < Duration::from_secs(30),
        "the paused sleep took {:?} of wall time",
        wall.elapsed()
    );
}

#[weft::test(start_paused = true, worker_threads = 1)]
async fn start_paused_lets_the_test_advance_the_clock() {
    let start = Instant::now();
    advance(Duration::from_secs(5)).await;
    assert_eq!(start.elapsed(), Duration::from_secs(5));
}

// `advance` panics unless the clock is paused: so these two show the clock
// runs when `start_paused` is absent or false.
#[weft::test]
#[should_panic(expected = "not paused")]
async fn without_start_paused_the_clock_runs() {
    advance(Duration::from_secs(1)).await;
}

#[weft::test(start_paused = false)]
#[should_panic(expected = "not paused")]
async fn start_paused_false_leaves_the_clock_running() {
    advance(Duration::from_secs(1)).await;
}

#[weft::test]
async fn a_test_may_return_a_result() -> Result<(), Box<dyn Error>> {
    // `?` converts `ParseIntError` into the declared `Box<dyn Error>`.
    let parsed: u32 = "17".parse()?;
    assert_eq!(parsed, 17);
    Ok(())
}

/// A non-`main` function under `#[weft::main]` may take arguments: the body
/// captures them, and each call blocks on a runtime of its own.
#[weft::main(worker_threads = 1)]
async fn add_on_a_runtime(a: u32, b: u32) -> u32 {
    assert_eq!(Handle::current().metrics().num_workers, 1);
    weft::spawn(async move { a + b }).await.unwrap()
}

#[test]
fn weft_main_on_another_function_blocks_on_its_own_runtime() {
    assert_eq!(add_on_a_runtime(40, 2), 42);
    assert!(
        Handle::try_current().is_err(),
        "the runtime outlived the call"
    );
}

/// An `impl Trait` return type, which the expansion cannot name in a `let`.
#[weft::main(worker_threads = 1)]
async fn describe_on_a_runtime(n: u32) -> impl std::fmt::Display {
    format!("{n} on {} worker", Handle::current().metrics().num_workers)
}

#[test]
fn weft_main_keeps_an_impl_trait_return_type() {
    assert_eq!(describe_on_a_runtime(7).to_string(), "7 on 1 worker");
}

/// `-> !` (a server's `main` that never returns): the body runs on its
/// runtime and the function diverges, as under `#[tokio::main]`.
#[weft::main]
async fn serve_for_ever(stop_after: u32) -> ! {
    let mut ticks = 0;
    loop {
        weft::task::yield_now().await;
        ticks += 1;
        if ticks == stop_after {
            panic!("stopped after {ticks} ticks on a runtime");
        }
    }
}

#[test]
fn weft_main_on_a_diverging_function() {
    let stopped = std::panic::catch_unwind(|| serve_for_ever(3)).unwrap_err();
    let message = stopped
        .downcast_ref::<String>()
        .cloned()
        .unwrap_or_default();
    assert_eq!(message, "stopped after 3 ticks on a runtime");
}

#[weft::test(flavor = "current_thread")]
async fn flavor_current_thread_runs_the_body_and_tasks_on_the_test_thread() {
    use weft::runtime::RuntimeFlavor;
    assert_eq!(
        Handle::current().runtime_flavor(),
        RuntimeFlavor::CurrentThread
    );
    let here = std::thread::current().id();
    let there = weft::spawn(async { std::thread::current().id() })
        .await
        .unwrap();
    assert_eq!(here, there);
}

#[weft::test(flavor = "current_thread", start_paused = true)]
async fn start_paused_on_current_thread_makes_an_hour_long_sleep_instant() {
    let start = Instant::now();
    let wall = std::time::Instant::now();
    sleep(Duration::from_secs(3600)).await;
    assert!(start.elapsed() >= Duration::from_secs(3600));
    assert!(wall.elapsed() < Duration::from_secs(30));
}

#[weft::test(flavor = "multi_thread", worker_threads = 2)]
async fn flavor_multi_thread_with_worker_threads() {
    use weft::runtime::RuntimeFlavor;
    assert_eq!(
        Handle::current().runtime_flavor(),
        RuntimeFlavor::MultiThread
    );
    assert_eq!(Handle::current().metrics().num_workers, 2);
}
