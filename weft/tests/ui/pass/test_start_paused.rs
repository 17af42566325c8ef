// Compiles with every argument `#[weft::test]` takes; an hour-long sleep
// under the paused clock (that it is instant is checked in tests/macros.rs,
// since a trybuild case is built as a binary, where tests do not run).
// The imports are inside the functions: in a binary the tests are
// compiled out, and imports at the top would be unused.
#[weft::test(start_paused = true, worker_threads = 1)]
async fn an_hour_passes_at_once() {
    use std::time::Duration;
    use weft::time::{Instant, sleep};

    let start = Instant::now();
    sleep(Duration::from_secs(3600)).await;
    assert!(start.elapsed() >= Duration::from_secs(3600));
}

#[weft::test]
#[should_panic(expected = "boom")]
async fn panics_reach_the_harness() {
    panic!("boom");
}

fn main() {}
