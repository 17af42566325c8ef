//! What the lanes' smoke tests share.

use std::time::{Duration, Instant};

/// Runs a lane with tiny timing, `run`, and checks that it stayed tiny:
/// `limit` is far above its time on the 2-core dev machine, so that it
/// catches tiny timing grown into real timing without failing a loaded
/// machine.
pub fn tiny_lane<T>(limit: Duration, run: impl FnOnce() -> T) -> T {
    let started = Instant::now();
    let result = run();
    let took = started.elapsed();
    assert!(took < limit, "the tiny lane took {took:?}");
    result
}
