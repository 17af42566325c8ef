//! loom models of a `JoinHandle` racing its task: completion against
//! `abort` (then `.await`), against a wake from outside, and against the
//! handle being dropped (detach).
//!
//! The task is a real weft task cell (`spawn_on`: the real `TaskMeta`,
//! `TaskFuture`, schedule function and registry) on the cell's test
//! scheduler (`runtime/task/schedule/test_scheduler.rs`), not on a runtime:
//! a "runner" thread plays the worker, taking the task's `Runnable` from
//! the test scheduler's queue and running it; wakes go through weft's
//! schedule function and the `Schedule` seam into that queue.
//!
//! # What is asserted
//!
//! - The task's future is dropped exactly once, and so is its output if it
//!   produced one (whoever ends up with it: the awaiter, or async-task when
//!   the handle was detached or the task was closed while running).
//! - `abort` then `.await` gives `Ok(output)` or a cancelled error, never
//!   hangs; `Ok` only if the future completed, and always `Ok` if the task
//!   had completed before `abort` was called (the output is kept).
//! - An aborted task is never polled once the abort is visible, except to
//!   finish the poll that was running: a task that had not started is
//!   never polled.
//! - A detached task (handle dropped) still runs to completion.
//!
//! # What loom checks here, and what it does not
//!
//! async-task's state word and awaiter slot are `std` atomics, not loom
//! ones. loom runs one thread at a time and switches only at loom
//! operations, so each async-task transition runs as one step; and loom's
//! partial-order reduction only tries other orders of operations on a
//! shared *loom* object, so two sides racing on async-task's state alone
//! would be tried in one order. Each side therefore touches a shared
//! `RacePoint` (a loom atomic) at both ends of its part: the task's poll,
//! the abort, the drop of the handle, the wake, the await. loom then tries
//! every order of those edges: an abort or a detach lands before the
//! task's poll, inside it (the task is running), or after it completed.
//!
//! So these models check weft's side (the `JoinHandle` state machine in
//! `join.rs`, the task wrapper and the schedule function in
//! `runtime/task/mod.rs`, the registry) against every order in which async-task's transitions can
//! *start*, but they cannot find a bug inside async-task's own lock-free
//! transitions or its memory orderings, which are async-task's to test;
//! nor the multi-thread scheduler's queues and wake rules, which the
//! scheduler's own models check (`runtime/scheduler/**/loom_tests.rs`).
//! The `JoinHandle`'s cell (`cell.rs`) locks a loom mutex; in these
//! models no two threads use the same handle at once (the models of
//! `join_set/loom_tests.rs` race an `AbortHandle` against the owner).
//!
//! # Bound
//!
//! `LOOM_MAX_PREEMPTIONS=3` (CI's setting): every interleaving with up to
//! three forced preemptions, which is every order of the two or three
//! threads' few operations in these models.
//!
//! Run: `RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS=3 cargo test -p weft --lib --release --target-dir target/loom join`

use std::future::Future;
use std::pin::{Pin, pin};
use std::sync::Mutex as StdMutex;
use std::task::{Context, Poll, Waker};

use loom::sync::Arc;
use loom::thread;

use crate::runtime::loom_support::spawn_on;
use crate::runtime::loom_support::{
    Count, DropProbe, RacePoint, TestScheduler, block_on, realign_registry_round_robin,
};
use crate::runtime::task::JoinError;

const WORKERS: usize = 1;

#[derive(Clone, Default)]
struct Log {
    polls: Count,
    completions: Count,
    future_drops: Count,
    output_drops: Count,
    /// Set by the runner once a `run` that completed the task returned:
    /// async-task has then marked the task completed.
    completed_runs: Count,
}

/// The task's output: counts its own drops.
struct Output(usize, #[allow(dead_code)] DropProbe);

/// Pending `yields` times (waking itself, as `yield_now` does), or until
/// woken from outside if `wait_for_wake`; then ready.
struct Job {
    yields: usize,
    wait_for_wake: Option<std::sync::Arc<StdMutex<Option<Waker>>>>,
    log: Log,
    race: RacePoint,
    _drop: DropProbe,
}

impl Job {
    fn new(yields: usize, log: &Log, race: &RacePoint) -> Job {
        Job {
            yields,
            wait_for_wake: None,
            log: log.clone(),
            race: race.clone(),
            _drop: DropProbe(log.future_drops.clone()),
        }
    }
}

impl Future for Job {
    type Output = Output;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Output> {
        // Switch points at both ends of the poll, on the object the other
        // side touches too: an abort or a drop can land before, during or
        // after the poll (see `RacePoint`).
        // The poll is counted before the first switch point, so a thread
        // that reads the count knows whether the poll had begun.
        let polls_before = self.log.polls.get();
        self.log.polls.incr();
        self.race.touch();
        let poll = self.poll_inner(polls_before, cx);
        self.race.touch();
        poll
    }
}

impl Job {
    fn poll_inner(&mut self, polls_before: usize, cx: &mut Context<'_>) -> Poll<Output> {
        if let Some(slot) = self.wait_for_wake.take() {
            *slot.lock().unwrap() = Some(cx.waker().clone());
            return Poll::Pending;
        }
        if polls_before < self.yields {
            cx.waker().wake_by_ref();
            return Poll::Pending;
        }
        self.log.completions.incr();
        Poll::Ready(Output(7, DropProbe(self.log.output_drops.clone())))
    }
}

/// Takes the task's `Runnable` from the queue, if there, and runs it.
fn run_queued(scheduler: &TestScheduler, log: &Log) -> bool {
    match scheduler.pop() {
        Some(task) => {
            task.run();
            if log.completions.get() > 0 {
                log.completed_runs.incr();
            }
            true
        }
        None => false,
    }
}

/// A thread that runs queued tasks until none is left. Each poll but the
/// last re-queues the task (its wake, made while it runs, goes to the
/// queue), so it runs until nothing is queued.
fn spawn_runner(scheduler: &Arc<TestScheduler>, log: &Log) -> thread::JoinHandle<()> {
    let (scheduler, log) = (scheduler.clone(), log.clone());
    thread::spawn(move || while run_queued(&scheduler, &log) {})
}

/// The checks on a task once every thread is done.
fn assert_accounted(log: &Log, result: Option<Result<Output, JoinError>>) {
    assert_eq!(log.future_drops.get(), 1, "future dropped exactly once");
    match result {
        Some(Ok(output)) => {
            assert_eq!(output.0, 7);
            assert_eq!(log.completions.get(), 1, "Ok without completing");
            drop(output);
        }
        Some(Err(err)) => assert!(err.is_cancelled(), "{err}"),
        None => {}
    }
    assert_eq!(
        log.output_drops.get(),
        log.completions.get(),
        "an output produced is dropped exactly once"
    );
}

fn finish(scheduler: Arc<TestScheduler>) {
    assert!(scheduler.is_empty(), "a Runnable left in the queue");
    drop(scheduler);
    realign_registry_round_robin(WORKERS);
}

/// The runner polls the task (which yields `yields` times before it
/// completes) while another thread aborts it and awaits the handle.
fn abort_races_completion(yields: usize) {
    let scheduler = TestScheduler::new(WORKERS);
    let log = Log::default();
    let race = RacePoint::new();
    let handle = spawn_on(&scheduler, Job::new(yields, &log, &race));
    let runner = spawn_runner(&scheduler, &log);
    let aborter = {
        let log = log.clone();
        thread::spawn(move || {
            race.touch();
            let completed_before = log.completed_runs.get() > 0;
            let polls_at_abort = log.polls.get();
            handle.abort();
            race.touch();
            let result = block_on(handle);
            (completed_before, polls_at_abort, result)
        })
    };
    let (completed_before, polls_at_abort, result) = aborter.join().unwrap();
    runner.join().unwrap();
    if completed_before {
        assert!(
            matches!(result, Ok(Output(7, _))),
            "aborting a completed task keeps its output"
        );
    }
    if polls_at_abort == 0 {
        assert_eq!(
            log.polls.get(),
            0,
            "an aborted task that had not started ran"
        );
    } else {
        assert!(
            log.polls.get() <= polls_at_abort + 1,
            "polled again after the abort: {} polls, {polls_at_abort} at abort",
            log.polls.get()
        );
    }
    assert_accounted(&log, Some(result));
    finish(scheduler);
}

#[test]
fn abort_races_completion_in_one_poll() {
    loom::model(|| abort_races_completion(0));
}

#[test]
fn abort_races_a_task_that_yields_then_completes() {
    loom::model(|| abort_races_completion(1));
}

/// The task is idle (polled once, its waker held outside); one thread
/// wakes it while another aborts it. Exactly one `Runnable` results, and
/// running it (as a worker would) either completes the task or drops it.
#[test]
fn abort_races_an_outside_wake() {
    loom::model(|| {
        let scheduler = TestScheduler::new(WORKERS);
        let log = Log::default();
        let race = RacePoint::new();
        let slot = std::sync::Arc::new(StdMutex::new(None));
        let mut job = Job::new(0, &log, &race);
        job.wait_for_wake = Some(slot.clone());
        let handle = std::sync::Arc::new(spawn_on(&scheduler, job));
        assert!(run_queued(&scheduler, &log), "spawned from outside: queued");
        let waker = slot.lock().unwrap().take().expect("first poll stored it");
        let waking = {
            let race = race.clone();
            thread::spawn(move || {
                race.touch();
                waker.wake();
                race.touch();
            })
        };
        let aborting = {
            let handle = handle.clone();
            thread::spawn(move || {
                race.touch();
                handle.abort();
                race.touch();
            })
        };
        waking.join().unwrap();
        aborting.join().unwrap();
        // The worker's part: run what the wake or the abort queued.
        assert!(
            run_queued(&scheduler, &log),
            "the wake or the abort queues the task"
        );
        assert!(!run_queued(&scheduler, &log), "one Runnable only");
        let handle = std::sync::Arc::into_inner(handle).unwrap();
        let mut handle = pin!(handle);
        let result = match handle
            .as_mut()
            .poll(&mut Context::from_waker(Waker::noop()))
        {
            Poll::Ready(result) => result,
            Poll::Pending => panic!("the handle waits after the task was run"),
        };
        assert!(log.polls.get() <= 2);
        assert_accounted(&log, Some(result));
        finish(scheduler);
    });
}

/// The handle is dropped (detaching the task) while the runner polls it:
/// the task still completes, and its output, which nobody will take, is
/// dropped once by the task itself.
#[test]
fn detach_races_completion() {
    loom::model(|| {
        let scheduler = TestScheduler::new(WORKERS);
        let log = Log::default();
        let race = RacePoint::new();
        let handle = spawn_on(&scheduler, Job::new(1, &log, &race));
        let runner = spawn_runner(&scheduler, &log);
        let detacher = thread::spawn(move || {
            race.touch();
            drop(handle);
            race.touch();
        });
        detacher.join().unwrap();
        runner.join().unwrap();
        assert_eq!(
            log.completions.get(),
            1,
            "a detached task runs to completion"
        );
        assert_eq!(log.polls.get(), 2);
        assert_accounted(&log, None);
        finish(scheduler);
    });
}

/// A plain `.await` on another thread while the runner completes the task
/// after a yield: the awaiter is woken and gets the output.
#[test]
fn await_races_completion() {
    loom::model(|| {
        let scheduler = TestScheduler::new(WORKERS);
        let log = Log::default();
        let race = RacePoint::new();
        let handle = spawn_on(&scheduler, Job::new(1, &log, &race));
        let runner = spawn_runner(&scheduler, &log);
        let awaiter = thread::spawn(move || {
            race.touch();
            block_on(handle)
        });
        let result = awaiter.join().unwrap();
        runner.join().unwrap();
        assert!(
            matches!(result, Ok(Output(7, _))),
            "awaiting gives the output"
        );
        assert_accounted(&log, Some(result));
        finish(scheduler);
    });
}
