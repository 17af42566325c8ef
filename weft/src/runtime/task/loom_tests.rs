//! loom model of the publication check (`TaskMeta::check_published`).
//!
//! A task handed to another thread through a
//! `Relaxed` pointer, with nothing else ordering the two threads, must fail
//! the model (else a model passing says nothing about the queues'
//! orderings). The task is on the cell's test scheduler: no runtime.

use std::ptr::NonNull;

use loom::sync::Arc;
use loom::sync::atomic::{AtomicPtr, Ordering};

use super::schedule::TestScheduler;
use super::{SpawnOptions, Task, new_task};

#[test]
#[should_panic(expected = "Causality violation")]
fn a_task_handed_over_unpublished_fails_the_check() {
    loom::model(|| {
        let scheduler = TestScheduler::new(1);
        let slot = Arc::new(AtomicPtr::<()>::new(std::ptr::null_mut()));
        let spawner = {
            let (slot, scheduler) = (slot.clone(), scheduler.clone());
            loom::thread::spawn(move || {
                let options = SpawnOptions::plain(std::panic::Location::caller());
                let (task, join) = new_task(&scheduler, async {}, options);
                slot.store(task.into_raw().as_ptr(), Ordering::Relaxed);
                join
            })
        };
        let raw = loop {
            if let Some(raw) = NonNull::new(slot.load(Ordering::Relaxed)) {
                break raw;
            }
            loom::thread::yield_now();
        };
        // SAFETY: `raw` came from `Runnable::into_raw` in the spawner,
        // which gave it up; this is the only `from_raw` of it.
        let task = unsafe { Task::from_raw(raw) };
        task.metadata().check_published();
        drop(task);
        drop(spawner.join().unwrap());
    });
}
