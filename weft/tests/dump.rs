//! `Handle::dump`: what it lists (name, spawn file, lane, polls) and the
//! three states, each forced by the test (a worker held inside a poll, a
//! wake while it is held), from inside the runtime and from other threads.

mod common;

use std::sync::mpsc;
use std::time::Duration;

use common::{oneshot, rt_without_stall_monitor, wait_until};
use weft::runtime::{Dump, Handle, TaskInfo, TaskState};
use weft::task::{Builder, Lane};

/// How long a state the test forced may take to show (a loaded machine).
const LIMIT: Duration = Duration::from_secs(20);

fn named<'a>(dump: &'a Dump, name: &str) -> Vec<&'a TaskInfo> {
    dump.tasks()
        .filter(|task| task.name() == Some(name))
        .collect()
}

/// Dumps until `done` holds for the task named `name` (listed once); that
/// task's row. A task is listed only once its first poll has returned.
fn wait_for(handle: &Handle, name: &str, done: impl Fn(&TaskInfo) -> bool) -> TaskInfo {
    let mut found = None;
    let held = wait_until(LIMIT, || {
        let dump = handle.dump();
        let rows = named(&dump, name);
        assert!(rows.len() <= 1, "{name} listed twice:\n{dump}");
        found = rows.first().map(|row| (*row).clone());
        found.as_ref().is_some_and(&done)
    });
    assert!(held, "{name}: never in the awaited state: {found:?}");
    found.unwrap()
}

/// Spawns a task named `name` that holds its worker inside a poll (its
/// second, after one `yield_now`, if `yield_first`) until the returned
/// sender sends; returns once it is inside that poll.
fn hold_a_worker(
    handle: &Handle,
    name: &str,
    yield_first: bool,
) -> (weft::JoinHandle<()>, mpsc::Sender<()>) {
    let (entered_tx, entered) = mpsc::channel();
    let (release, release_rx) = mpsc::channel::<()>();
    let task = Builder::new()
        .name(name)
        .spawn_on(
            async move {
                if yield_first {
                    weft::task::yield_now().await;
                }
                entered_tx.send(()).unwrap();
                release_rx.recv().unwrap();
            },
            handle,
        )
        .unwrap();
    entered.recv_timeout(LIMIT).unwrap();
    (task, release)
}

fn is_idle(task: &TaskInfo) -> bool {
    matches!(task.state(), TaskState::Idle { .. })
}

#[test]
fn a_dump_names_a_task_its_spawn_file_lane_and_polls() {
    let rt = common::rt(2, true);
    let handle = rt.handle().clone();
    let (senders, receivers): (Vec<_>, Vec<_>) = (0..3).map(|_| oneshot::<()>()).unzip();
    let task = Builder::new()
        .name("three-wakes")
        .lane(Lane::Latency)
        .spawn_on(
            async move {
                for rx in receivers {
                    rx.await;
                }
                std::future::pending::<()>().await
            },
            &handle,
        )
        .unwrap();
    // Each wake is one more poll: the task is idle after poll `polls`
    // before the next send.
    for (polls, tx) in (1..).zip(senders) {
        let row = wait_for(&handle, "three-wakes", |row| {
            is_idle(row) && row.polls() >= polls
        });
        assert_eq!(row.polls(), polls, "{row:?}");
        tx.send(());
    }
    let row = wait_for(&handle, "three-wakes", |row| {
        is_idle(row) && row.polls() >= 4
    });
    assert_eq!(row.polls(), 4, "{row:?}");
    assert!(row.location().file().ends_with("tests/dump.rs"), "{row:?}");
    assert_eq!(row.lane(), Lane::Latency);
    // Every latency poll is timed: the busy time is measured, not zero.
    assert!(row.busy() > Duration::ZERO, "{row:?}");
    let text = handle.dump().to_string();
    let line = text
        .lines()
        .find(|line| line.contains("three-wakes"))
        .expect("the task's line");
    assert!(
        line.contains("tests/dump.rs") && line.contains("idle") && line.contains(" Latency "),
        "{text}"
    );
    let debug = format!("{row:?}");
    assert!(
        debug.contains(r#"name: Some("three-wakes")"#)
            && debug.contains("polls: 4")
            && debug.contains("lane: Latency"),
        "{debug}"
    );
    task.abort();
    drop(rt);
}

/// One worker, no stall monitor (no spare thread can run what waits):
/// idle, then running (held inside its second poll, listed once), then a
/// woken task scheduled behind it.
#[test]
fn idle_running_and_scheduled_states() {
    let rt = rt_without_stall_monitor(1);
    let handle = rt.handle().clone();
    let (wake_sleeper, sleeper_rx) = oneshot::<()>();
    let sleeper = Builder::new()
        .name("sleeper")
        .spawn_on(sleeper_rx, &handle)
        .unwrap();
    wait_for(&handle, "sleeper", is_idle);

    // Registered (one `Pending`), then held in its second poll.
    let (runner, release) = hold_a_worker(&handle, "runner", true);
    // The only worker is inside the runner's poll until `release`.
    let dump = handle.dump();
    let runner_row = named(&dump, "runner");
    assert_eq!(runner_row.len(), 1, "listed once:\n{dump}");
    assert!(
        matches!(runner_row[0].state(), TaskState::Running { worker: 0, .. }),
        "{dump}"
    );
    assert_eq!(
        runner_row[0].polls(),
        1,
        "the poll in progress is not counted"
    );
    assert!(is_idle(named(&dump, "sleeper")[0]), "{dump}");

    wake_sleeper.send(());
    let dump = handle.dump();
    assert_eq!(
        named(&dump, "sleeper")[0].state(),
        TaskState::Scheduled,
        "woken, its worker busy:\n{dump}"
    );
    // Sorted by state: running, then scheduled.
    let order: Vec<_> = dump.tasks().filter_map(|task| task.name()).collect();
    assert_eq!(order, ["runner", "sleeper"], "{dump}");

    release.send(()).unwrap();
    rt.block_on(async {
        runner.await.unwrap();
        sleeper.await.unwrap();
    });
    assert!(named(&handle.dump(), "sleeper").is_empty());
}

/// A task in its first poll has no registry entry: the worker's poll watch
/// lists it.
#[test]
fn a_task_in_its_first_poll_is_listed_as_running() {
    let rt = rt_without_stall_monitor(1);
    let (task, release) = hold_a_worker(rt.handle(), "first-poll", false);
    let dump = rt.handle().dump();
    let rows = named(&dump, "first-poll");
    assert_eq!(rows.len(), 1, "{dump}");
    assert!(
        matches!(rows[0].state(), TaskState::Running { .. }),
        "{dump}"
    );
    assert_eq!(rows[0].polls(), 0);
    release.send(()).unwrap();
    rt.block_on(task).unwrap();
}

#[test]
fn a_dump_from_another_os_thread() {
    let rt = common::rt(2, true);
    let task = Builder::new()
        .name("seen-from-afar")
        .spawn_on(std::future::pending::<()>(), rt.handle())
        .unwrap();
    let handle = rt.handle().clone();
    let found = std::thread::spawn(move || {
        wait_for(&handle, "seen-from-afar", is_idle);
        handle.dump().to_string()
    })
    .join()
    .unwrap();
    assert!(found.contains("seen-from-afar"), "{found}");
    // And from inside a task.
    let inside = rt.block_on(async {
        weft::spawn(async { Handle::current().dump() })
            .await
            .unwrap()
    });
    assert_eq!(named(&inside, "seen-from-afar").len(), 1, "{inside}");
    task.abort();
}

#[test]
fn a_dump_of_ten_thousand_idle_tasks() {
    const TASKS: usize = 10_000;
    let rt = common::rt(2, true);
    let handle = rt.handle().clone();
    let tasks: Vec<_> = (0..TASKS)
        .map(|_| {
            Builder::new()
                .name("one-of-many")
                .spawn_on(std::future::pending::<()>(), &handle)
                .unwrap()
        })
        .collect();
    let mut last = None;
    let all_idle = wait_until(LIMIT, || {
        let dump = handle.dump();
        let idle = named(&dump, "one-of-many")
            .into_iter()
            .filter(|task| is_idle(task))
            .count();
        last = Some((idle, dump.tasks().len(), dump.unlisted()));
        idle == TASKS
    });
    assert!(all_idle, "(idle, listed, unlisted): {last:?}");
    let dump = handle.dump();
    assert_eq!(dump.tasks().len(), TASKS);
    assert_eq!(dump.unlisted(), 0);
    let mut ids: Vec<_> = dump.tasks().map(TaskInfo::id).collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), TASKS, "ids are distinct");
    // Longest idle first.
    let idle: Vec<_> = dump
        .tasks()
        .map(|task| match task.state() {
            TaskState::Idle { elapsed } => elapsed,
            other => panic!("{other:?}"),
        })
        .collect();
    assert!(idle.windows(2).all(|pair| pair[0] >= pair[1]));
    assert_eq!(dump.to_string().lines().count(), TASKS + 2);
    for task in tasks {
        task.abort();
    }
    assert!(wait_until(LIMIT, || handle.dump().tasks().len() == 0));
}

/// Tasks spawned and not polled yet are counted, not listed.
#[test]
fn queued_tasks_are_counted_as_unlisted() {
    let rt = rt_without_stall_monitor(1);
    let (blocker, release) = hold_a_worker(rt.handle(), "blocker", false);
    let queued: Vec<_> = (0..5).map(|_| rt.spawn(async {})).collect();
    let dump = rt.handle().dump();
    assert_eq!(dump.tasks().len(), 1, "{dump}");
    assert_eq!(dump.unlisted(), 5, "{dump}");
    release.send(()).unwrap();
    rt.block_on(async move {
        blocker.await.unwrap();
        for task in queued {
            task.await.unwrap();
        }
    });
}

/// Times are measured, not made up: an idle task's idle time covers at
/// least the wait the test made after the task went idle, and a `Latency`
/// task's busy time at least the sleep inside its poll (lower bounds only,
/// which the sleeps guarantee).
#[test]
fn idle_and_busy_times_cover_the_time_spent() {
    const SPENT: Duration = Duration::from_millis(20);
    let rt = common::rt(2, true);
    let handle = rt.handle().clone();
    let task = Builder::new()
        .name("slow-poll")
        .lane(Lane::Latency)
        .spawn_on(
            async {
                weft::task::yield_now().await;
                std::thread::sleep(SPENT);
                std::future::pending::<()>().await
            },
            &handle,
        )
        .unwrap();
    wait_for(&handle, "slow-poll", |row| is_idle(row) && row.polls() >= 2);
    std::thread::sleep(SPENT);
    let row = wait_for(&handle, "slow-poll", is_idle);
    let TaskState::Idle { elapsed } = row.state() else {
        unreachable!("waited for idle")
    };
    assert!(elapsed >= SPENT, "idle for at least {SPENT:?}: {row:?}");
    assert!(row.busy() >= SPENT, "busy for at least {SPENT:?}: {row:?}");
    task.abort();
}
