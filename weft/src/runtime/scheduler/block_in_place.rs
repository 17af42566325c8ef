//! `task::block_in_place`: a task that is about to block its worker says
//! so, and the worker's queued work is handed on before the blocking
//! closure runs (tokio's semantics, weft's mechanism).
//!
//! weft never moves a ring's owner while a poll runs (`worker.rs`), so
//! "handing on" is what the stall monitor does for a stall it found, done
//! at once: the slot is flagged stalled, so other workers, at their next
//! scheduling decision, and spares take its LIFO task and ring through the
//! thieves' side (`Core::rescue_stalled`) and fire its timer wheel
//! (`Wheels::OwnOutsideAndStalled`), and a sleeping worker is woken to do
//! so. The monitor lends a spare if every worker stays busy, as for any
//! stall, once the closure has run `stall_threshold`.
//!
//! The flag is a hint (a relaxed store, as the monitor's): a thief that
//! misses it reaches the same tasks by stealing, and the owner runs them
//! after its poll. When the closure returns, the flag goes down again
//! (the runtime-wide hint too, if no other slot is flagged); the monitor
//! rewrites both at its next sample.

use std::sync::atomic::Ordering;

use crate::runtime::context;

/// Runs `f`, which may block the thread, after handing this worker's queued
/// tasks on. Off a worker (`block_on`'s thread, a blocking-pool thread,
/// outside any runtime) it just runs `f`.
///
/// # Panics
///
/// Inside a current-thread runtime's `block_on` (its future or its tasks),
/// with tokio's message: nothing else could run that runtime's tasks. So
/// too inside a `LocalSet` on a worker (its tasks or its `run_until`), as
/// tokio does: the set's tasks, which only this thread may run, would wait
/// for `f`.
#[track_caller]
pub(crate) fn block_in_place<F: FnOnce() -> R, R>(f: F) -> R {
    if context::is_driving() && crate::runtime::task::local::is_entered() {
        panic!("can call blocking only when running on the multi-threaded runtime");
    }
    let slot = context::with_core(|core| core.map(|core| (core.shared.clone(), core.index)));
    let Some((shared, index)) = slot else {
        let on_current_thread = context::driving() == context::Driving::BlockOn
            && context::with_current(|shared| shared.is_some_and(|s| s.is_current_thread()));
        if on_current_thread {
            panic!("can call blocking only when running on the multi-threaded runtime");
        }
        return f();
    };
    let watch = &shared.remotes[index].watch;
    watch.set_stalled(true);
    shared.any_stalled.store(true, Ordering::Relaxed);
    // A sleeping worker takes the tasks now rather than at its next wake.
    shared.notify_parked(Some(index));
    shared.monitor.worker_woke();
    /// Lowers the flags however `f` ends (it may panic).
    struct Unflag<'a>(&'a crate::runtime::scheduler::Shared, usize);
    impl Drop for Unflag<'_> {
        fn drop(&mut self) {
            let Unflag(shared, index) = *self;
            shared.remotes[index].watch.set_stalled(false);
            if !shared
                .remotes
                .iter()
                .any(|remote| remote.watch.is_stalled())
            {
                shared.any_stalled.store(false, Ordering::Relaxed);
            }
        }
    }
    let _unflag = Unflag(&shared, index);
    f()
}
