//! The counters snapshot is exact once the runtime is quiet.

mod common;

#[test]
fn snapshot_totals_match_the_tasks_run() {
    const TASKS: u64 = 20_000;
    let rt = common::rt(4, true);
    let before = rt.handle().metrics();
    let remote: Vec<_> = (0..TASKS / 2).map(|_| rt.spawn(async {})).collect();
    rt.block_on(async move {
        let local = weft::spawn(async {
            let joins: Vec<_> = (0..TASKS / 2).map(|_| weft::spawn(async {})).collect();
            for join in joins {
                join.await.unwrap();
            }
        });
        for join in remote {
            join.await.unwrap();
        }
        local.await.unwrap();
    });
    let after = rt.handle().metrics();
    // +1: the task that spawned the local half was itself a remote spawn.
    assert_eq!(after.spawned_remote - before.spawned_remote, TASKS / 2 + 1);
    let delta = after.total.delta(&before.total);
    assert_eq!(delta.spawned_local, TASKS / 2);
    assert_eq!(after.live_tasks, 0, "every task finished");
    // Each empty task completes in one poll; the spawning task polls at
    // least twice (it waits on its joins).
    assert!(
        delta.polls > TASKS,
        "polls {} for {} tasks",
        delta.polls,
        TASKS + 1
    );
    assert!(
        delta.inject_tasks >= TASKS / 2,
        "remote tasks come through the inject queue"
    );
    assert_eq!(after.workers.len(), 4);
    let summed: u64 = after.workers.iter().map(|w| w.polls).sum();
    assert_eq!(summed, after.total.polls);
}
