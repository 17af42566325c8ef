//! The stall monitor's view of a worker's polls: many short polls in a
//! row are not one long poll, in every lane. Its own test binary, as
//! `idle_cpu.rs` is: a poll preempted for 10 ms demotes its task, and a
//! machine crowded by the other tests of a binary (`lanes.rs` runs many
//! at once, some spinning on both cores) did that to these microsecond
//! polls (5 runs in 10 beside two CPU hogs); cargo runs test binaries one
//! after another.

use std::time::{Duration, Instant};

use weft::runtime::Builder;
use weft::task::{self, Lane};

/// Many short polls in a row are not one long poll to the monitor, in
/// every lane: each poll ends its watch's number and the next takes a new
/// one (`run_task`'s two paths), so with work always waiting and the only
/// worker never stuck, no stall is seen and no task demoted. (The stall
/// threshold is far above an OS preemption, which a busy machine may give
/// the worker and the monitor would rightly see; a 10 ms preemption inside
/// one of these microsecond polls would demote its task.)
#[test]
fn short_polls_in_a_row_are_not_seen_as_a_stall() {
    for lane in [Lane::Latency, Lane::Batch, Lane::Default] {
        let rt = Builder::new_multi_thread()
            .worker_threads(1)
            .stall_threshold(Duration::from_millis(50))
            .build()
            .unwrap();
        let yielding = || {
            task::Builder::new()
                .lane(lane)
                .spawn_on(
                    async {
                        let start = Instant::now();
                        while start.elapsed() < Duration::from_millis(200) {
                            task::yield_now().await;
                        }
                    },
                    rt.handle(),
                )
                .unwrap()
        };
        let tasks = [yielding(), yielding()];
        rt.block_on(async {
            for task in tasks {
                task.await.unwrap();
            }
        });
        let metrics = rt.handle().metrics();
        assert_eq!(metrics.stalls, 0, "{lane:?}: {metrics:?}");
        // (A default task whose polls are taken for one long poll is
        // demoted when it passes `slow_poll_threshold`, 10 ms, and is
        // polled as `Batch` after: that, not a stall, is what shows the
        // default path's numbering broken.)
        assert_eq!(metrics.total.demotions, 0, "{lane:?}: {metrics:?}");
        assert!(metrics.total.polls > 100, "{lane:?}: {metrics:?}");
    }
}
