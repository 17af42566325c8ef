//! `pause`, `resume`, `advance`: the test clock (feature `test-util`).

use std::time::Duration;

use super::sleep::current_runtime;

/// Stops the current runtime's clock: [`Instant::now`](super::Instant::now)
/// stands still until [`advance`] moves it or [`resume`] lets it run. While
/// it is paused and every worker is idle (no `block_on` polling either),
/// the clock jumps to the next pending timer at once, so a test that sleeps
/// for an hour finishes immediately.
///
/// # Panics
///
/// Outside a runtime, or if time is already paused.
///
/// ```
/// use std::time::Duration;
/// use weft::time::{Instant, pause, sleep};
///
/// let rt = weft::runtime::Runtime::new().unwrap();
/// rt.block_on(async {
///     pause();
///     let start = Instant::now();
///     let wall = std::time::Instant::now();
///     sleep(Duration::from_secs(3600)).await;
///     assert!(start.elapsed() >= Duration::from_secs(3600));
///     assert!(wall.elapsed() < Duration::from_secs(60));
/// });
/// ```
#[track_caller]
pub fn pause() {
    current_runtime("pause").time.clock.pause();
}

/// Lets a paused clock run again from where it stands.
///
/// # Panics
///
/// Outside a runtime, or if time is not paused.
#[track_caller]
pub fn resume() {
    let shared = current_runtime("resume");
    shared.time.clock.resume();
    // The keeper may be waiting for an auto-advance that will not come.
    shared.poke_timekeeper(crate::runtime::Poke::AnySleeper);
}

/// Moves a paused clock forward by `duration`, fires every timer now due,
/// and yields so the woken tasks get to run.
///
/// # Panics
///
/// Outside a runtime, or if time is not paused (tokio's rule: the clock
/// cannot be moved while it runs).
///
/// ```
/// use std::time::Duration;
/// use weft::time::{Instant, advance, pause};
///
/// let rt = weft::runtime::Runtime::new().unwrap();
/// rt.block_on(async {
///     pause();
///     let start = Instant::now();
///     advance(Duration::from_secs(5)).await;
///     assert_eq!(start.elapsed(), Duration::from_secs(5));
/// });
/// ```
#[track_caller]
pub fn advance(duration: Duration) -> impl Future<Output = ()> {
    let shared = current_runtime("advance");
    let clock = &shared.time.clock;
    assert!(
        clock.is_paused(),
        "`weft::time::advance` called while time is not paused: call `weft::time::pause()` first"
    );
    clock.advance_to(clock.now_ns().saturating_add(duration_ns(duration)));
    shared.fire_all_due_timers();
    crate::task::yield_now()
}

fn duration_ns(duration: Duration) -> u64 {
    u64::try_from(duration.as_nanos()).unwrap_or(u64::MAX)
}
