//! How large a batch a worker takes from the inject queue depends on what
//! the batch overtakes: `inject_batch_cap` while local work waits, half the
//! local ring while the worker has nothing of its own (`scheduler/worker.rs`,
//! step 1). Read through the batch counters on one worker, where the order
//! of events is fixed.

use std::sync::mpsc;

use weft::runtime::Builder;

#[test]
fn a_worker_with_nothing_of_its_own_takes_more_than_the_check_cap() {
    const TASKS: u64 = 1_024;
    const CAP: u64 = 8;
    let rt = Builder::new_multi_thread()
        .worker_threads(1)
        .inject_batch_cap(CAP as usize)
        .build()
        .unwrap();
    // Hold the only worker inside one poll while the outside queue fills.
    let (started_tx, started_rx) = mpsc::channel();
    let (release_tx, release_rx) = mpsc::channel::<()>();
    let blocker = rt.spawn(async move {
        started_tx.send(()).unwrap();
        release_rx.recv().unwrap();
    });
    started_rx.recv().unwrap();
    let before = rt.handle().metrics();
    let joins: Vec<_> = (0..TASKS).map(|_| rt.spawn(async {})).collect();
    release_tx.send(()).unwrap();
    rt.block_on(async move {
        blocker.await.unwrap();
        for join in joins {
            join.await.unwrap();
        }
    });
    let delta = rt.handle().metrics().total.delta(&before.total);
    assert_eq!(
        delta.inject_tasks, TASKS,
        "every outside task came in a batch"
    );
    // With every batch capped at CAP this would be TASKS / CAP = 128
    // batches. Once the blocker returns, the ring is empty and the batch is
    // up to 128 tasks; the periodic checks in between take CAP each.
    assert!(
        delta.inject_batches <= TASKS / (2 * CAP),
        "{} batches for {TASKS} tasks: a dry worker kept to the check cap of {CAP}",
        delta.inject_batches
    );
}
