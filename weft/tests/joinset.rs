//! `JoinSet` and `AbortHandle`: completion order, aborts, drop, shutdown,
//! detach, and destructors that re-enter the runtime while the set or the
//! runtime cancels them.
//!
//! Completion order is checked without timing: each task waits for a
//! oneshot, the test releases them in a chosen order and waits for each to
//! finish (through its `AbortHandle`) before releasing the next.
//! Every test that could hang on a lock runs its body on a thread of its
//! own and fails after a bounded wait instead.

mod common;

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::task::{Context, Poll};
use std::time::Duration;

use common::{DropCounter, WakeCount, on_every_shape, oneshot};
use weft::runtime::{Handle, Runtime};
use weft::task::{AbortHandle, JoinSet};

/// Runs `body` on its own thread; panics if it has not returned within
/// `seconds` (a deadlock), or with its panic.
fn within(seconds: u64, what: &str, body: impl FnOnce() + Send + 'static) {
    let (done, finished) = mpsc::channel();
    let thread = std::thread::spawn(move || {
        body();
        let _ = done.send(());
    });
    match finished.recv_timeout(Duration::from_secs(seconds)) {
        Ok(()) => thread.join().unwrap(),
        Err(mpsc::RecvTimeoutError::Disconnected) => {
            if let Err(panic) = thread.join() {
                std::panic::resume_unwind(panic);
            }
        }
        Err(mpsc::RecvTimeoutError::Timeout) => panic!("{what}: still running after {seconds} s"),
    }
}

/// Waits (bounded) until the task behind `abort` has finished.
fn wait_finished(abort: &AbortHandle) {
    assert!(
        common::wait_until(Duration::from_secs(10), || abort.is_finished()),
        "a task did not finish within 10 s"
    );
}

/// A permutation of `0..n` (a fixed pseudo-random shuffle).
fn shuffled(n: usize) -> Vec<usize> {
    let mut order: Vec<usize> = (0..n).collect();
    let mut state = 0x2545_f491_4f6c_dd1d_u64;
    for i in (1..n).rev() {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        order.swap(i, (state % (i as u64 + 1)) as usize);
    }
    order
}

/// `n` tasks, each waiting for its own oneshot; finished in `order`, each
/// one before the next is released. Returns the order `join_next` gave.
fn finish_in_order(rt: &Runtime, order: &[usize], join_between: bool) -> Vec<usize> {
    let mut set = JoinSet::new();
    let mut senders = Vec::new();
    let mut aborts = Vec::new();
    for i in 0..order.len() {
        let (tx, rx) = oneshot::<()>();
        senders.push(Some(tx));
        aborts.push(set.spawn_on(
            async move {
                rx.await;
                i
            },
            rt.handle(),
        ));
    }
    let mut joined = Vec::new();
    for &i in order {
        senders[i].take().unwrap().send(());
        wait_finished(&aborts[i]);
        if join_between {
            joined.push(rt.block_on(set.join_next()).unwrap().unwrap());
        }
    }
    while let Some(result) = rt.block_on(set.join_next()) {
        joined.push(result.unwrap());
    }
    joined
}

#[test]
fn join_next_returns_results_in_the_order_the_tasks_finished() {
    on_every_shape(|rt| {
        let order = shuffled(100);
        assert_eq!(
            finish_in_order(rt, &order, false),
            order,
            "all finished first"
        );
        let order = shuffled(20);
        assert_eq!(
            finish_in_order(rt, &order, true),
            order,
            "joined one by one"
        );
    });
}

/// Tasks that finish while `join_next` is waiting are returned in their
/// order too: the waiting `join_next` is woken by the first.
#[test]
fn a_waiting_join_next_is_woken_by_the_first_task_to_finish() {
    on_every_shape(|rt| {
        let mut set = JoinSet::new();
        let (slow_tx, slow_rx) = oneshot::<()>();
        let (fast_tx, fast_rx) = oneshot::<()>();
        set.spawn_on(
            async move {
                slow_rx.await;
                "slow"
            },
            rt.handle(),
        );
        set.spawn_on(
            async move {
                fast_rx.await;
                "fast"
            },
            rt.handle(),
        );
        let releaser = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(20));
            fast_tx.send(());
            std::thread::sleep(Duration::from_millis(20));
            slow_tx.send(());
        });
        let first = rt.block_on(set.join_next()).unwrap().unwrap();
        let second = rt.block_on(set.join_next()).unwrap().unwrap();
        releaser.join().unwrap();
        assert_eq!((first, second), ("fast", "slow"));
        assert!(rt.block_on(set.join_next()).is_none());
    });
}

#[test]
fn len_is_empty_and_an_empty_set_joins_to_none() {
    let rt = common::rt(2, true);
    let mut set: JoinSet<u32> = JoinSet::default();
    assert!(set.is_empty());
    assert!(rt.block_on(set.join_next()).is_none());
    assert!(set.try_join_next().is_none());
    for i in 0..5 {
        set.spawn_on(async move { i }, rt.handle());
    }
    assert_eq!((set.len(), set.is_empty()), (5, false));
    assert_eq!(format!("{set:?}"), "JoinSet { len: 5, .. }");
    let (mut sum, mut joined) = (0, 0);
    while let Some(result) = rt.block_on(set.join_next()) {
        sum += result.unwrap();
        joined += 1;
        assert_eq!(set.len(), 5 - joined);
    }
    assert_eq!(sum, 10);
    assert!(set.is_empty());
}

#[test]
fn try_join_next_returns_only_finished_tasks_without_waiting() {
    on_every_shape(|rt| {
        let mut set = JoinSet::new();
        let (tx, rx) = oneshot::<()>();
        let waiting = set.spawn_on(
            async move {
                rx.await;
                1
            },
            rt.handle(),
        );
        let done = set.spawn_on(async { 2 }, rt.handle());
        wait_finished(&done);
        assert_eq!(set.try_join_next().unwrap().unwrap(), 2);
        assert!(set.try_join_next().is_none(), "the other task is waiting");
        tx.send(());
        wait_finished(&waiting);
        assert_eq!(set.try_join_next().unwrap().unwrap(), 1);
        assert!(set.try_join_next().is_none());
        assert!(set.is_empty());
    });
}

#[test]
fn panics_and_aborts_become_join_errors_and_the_rest_complete() {
    on_every_shape(|rt| {
        let mut set = JoinSet::new();
        set.spawn_on(async { panic!("member exploded") }, rt.handle());
        let pending = set.spawn_on(std::future::pending::<u32>(), rt.handle());
        set.spawn_on(async { 7u32 }, rt.handle());
        pending.abort();
        let (mut ok, mut panics, mut cancelled) = (0, 0, 0);
        while let Some(result) = rt.block_on(set.join_next()) {
            match result {
                Ok(value) => ok += value,
                Err(error) if error.is_panic() => {
                    assert!(error.to_string().contains("member exploded"), "{error}");
                    panics += 1;
                }
                Err(error) => {
                    assert!(error.is_cancelled());
                    cancelled += 1;
                }
            }
        }
        assert_eq!((ok, panics, cancelled), (7, 1, 1));
        assert!(pending.is_finished());
    });
}

#[test]
fn abort_all_cancels_what_runs_and_keeps_what_completed() {
    on_every_shape(|rt| {
        let drops = DropCounter::default();
        let mut set = JoinSet::new();
        let done = set.spawn_on(async { Some(1) }, rt.handle());
        wait_finished(&done);
        for _ in 0..50 {
            let tracked = drops.track();
            set.spawn_on(
                async move {
                    let _tracked = tracked;
                    std::future::pending::<Option<u32>>().await
                },
                rt.handle(),
            );
        }
        set.abort_all();
        assert_eq!(set.len(), 51, "aborted tasks stay until joined");
        let (mut outputs, mut cancelled) = (0, 0);
        while let Some(result) = rt.block_on(set.join_next()) {
            match result {
                Ok(value) => outputs += value.unwrap(),
                Err(error) => cancelled += usize::from(error.is_cancelled()),
            }
        }
        assert_eq!((outputs, cancelled), (1, 50));
        assert_eq!(drops.drops(), 50, "each aborted future dropped once");
    });
}

#[test]
fn shutdown_returns_after_every_future_is_dropped() {
    on_every_shape(|rt| {
        let drops = DropCounter::default();
        rt.block_on(async {
            let mut set = JoinSet::new();
            for i in 0..100 {
                let tracked = drops.track();
                set.spawn(async move {
                    let _tracked = tracked;
                    if i % 2 == 0 {
                        std::future::pending::<()>().await;
                    }
                    // Some are running or queued when aborted.
                    weft::task::yield_now().await;
                });
            }
            set.shutdown().await;
            assert!(set.is_empty());
            assert_eq!(drops.drops(), 100, "shutdown returned before a drop");
        });
    });
}

#[test]
fn dropping_the_set_aborts_every_task() {
    on_every_shape(|rt| {
        let drops = DropCounter::default();
        let mut set = JoinSet::new();
        let mut aborts = Vec::new();
        for _ in 0..50 {
            let tracked = drops.track();
            aborts.push(set.spawn_on(
                async move {
                    let _tracked = tracked;
                    std::future::pending::<()>().await
                },
                rt.handle(),
            ));
        }
        drop(set);
        for abort in &aborts {
            wait_finished(abort);
        }
        assert_eq!(drops.drops(), 50);
    });
}

/// The `AbortHandle`s `spawn_on` returned, kept alive, do not keep the
/// outputs once the set is gone: the set's drop drops the outputs of its
/// completed members at once, and `detach_all` leaves each output to be
/// dropped when its task completes.
#[test]
fn abort_handles_do_not_keep_the_outputs_of_a_dropped_or_detached_set() {
    on_every_shape(|rt| {
        let drops = DropCounter::default();
        let mut set = JoinSet::new();
        let aborts: Vec<_> = (0..10)
            .map(|_| {
                let output = drops.track();
                set.spawn_on(async move { output }, rt.handle())
            })
            .collect();
        for abort in &aborts {
            wait_finished(abort);
        }
        assert_eq!(drops.drops(), 0, "the set still holds the outputs");
        drop(set);
        assert_eq!(
            drops.drops(),
            10,
            "the set's drop kept its outputs (their AbortHandles are alive)"
        );

        let drops = DropCounter::default();
        let mut set = JoinSet::new();
        let mut senders = Vec::new();
        let aborts: Vec<_> = (0..10)
            .map(|_| {
                let (tx, rx) = oneshot::<()>();
                senders.push(tx);
                let output = drops.track();
                set.spawn_on(
                    async move {
                        rx.await;
                        output
                    },
                    rt.handle(),
                )
            })
            .collect();
        set.detach_all();
        for tx in senders {
            tx.send(());
        }
        assert!(
            common::wait_until(Duration::from_secs(10), || drops.drops() == 10),
            "{} of 10 outputs of detached tasks dropped (their AbortHandles are alive)",
            drops.drops()
        );
        assert!(aborts.iter().all(AbortHandle::is_finished));
        drop(aborts);
        assert_eq!(drops.drops(), 10);
    });
}

#[test]
fn detach_all_lets_the_tasks_run_on() {
    on_every_shape(|rt| {
        let finished = Arc::new(AtomicUsize::new(0));
        let mut set = JoinSet::new();
        let mut senders = Vec::new();
        for _ in 0..10 {
            let (tx, rx) = oneshot::<()>();
            senders.push(tx);
            let finished = finished.clone();
            set.spawn_on(
                async move {
                    rx.await;
                    finished.fetch_add(1, Ordering::SeqCst);
                },
                rt.handle(),
            );
        }
        set.detach_all();
        assert!(set.is_empty());
        assert!(rt.block_on(set.join_next()).is_none());
        // The set is usable again, and its new members are not confused
        // with the detached ones (which wake their old list).
        set.spawn_on(async {}, rt.handle());
        for tx in senders {
            tx.send(());
        }
        assert!(common::wait_until(Duration::from_secs(10), || {
            finished.load(Ordering::SeqCst) == 10
        }));
        drop(set.spawn_on(async {}, rt.handle()));
        let mut left = 0;
        while rt.block_on(set.join_next()).is_some() {
            left += 1;
        }
        assert_eq!(left, 2);
    });
}

/// A set emptied by `detach_all` takes new members into fresh slots:
/// `detach_all` drops the slots and their free list together, whether the
/// free list was empty (nothing joined before) or not (members joined, so
/// their slots were listed for reuse), and every new member is joined with
/// its own output. Fails with the free list kept by `detach_all`
/// (`self.free.clear()` removed from `JoinSet::empty`): the first spawn
/// after it takes a listed slot past the end of the emptied set and panics
/// (index out of bounds). (Checked by hand: every other test of this
/// file passes that break; none joined a member before a `detach_all` and
/// spawned after it.)
#[test]
fn a_set_reused_after_detach_all_takes_fresh_slots() {
    let rt = common::rt(2, true);
    let finished = Arc::new(AtomicUsize::new(0));
    let mut senders = Vec::new();
    for join_first in [false, true] {
        let mut set = JoinSet::new();
        // Members in slots 0..3 wait to be released (and are detached).
        for _ in 0..3 {
            let (tx, rx) = oneshot::<()>();
            senders.push(tx);
            let finished = finished.clone();
            set.spawn_on(
                async move {
                    rx.await;
                    finished.fetch_add(1, Ordering::SeqCst);
                    usize::MAX
                },
                rt.handle(),
            );
        }
        if join_first {
            // Members in slots 3..6 complete and are joined: the free list
            // holds 3, 4 and 5 when the set is detached.
            for n in 3..6 {
                set.spawn_on(async move { n }, rt.handle());
            }
            let mut joined: Vec<usize> = (0..3)
                .map(|_| rt.block_on(set.join_next()).unwrap().unwrap())
                .collect();
            joined.sort_unstable();
            assert_eq!(joined, [3, 4, 5]);
        }
        assert_eq!(set.len(), 3);
        set.detach_all();
        assert!(set.is_empty());
        for n in 0..8 {
            set.spawn_on(async move { 100 + n }, rt.handle());
        }
        assert_eq!(set.len(), 8, "joined before detach_all: {join_first}");
        let mut joined = Vec::new();
        while let Some(result) = rt.block_on(set.join_next()) {
            joined.push(result.unwrap());
        }
        joined.sort_unstable();
        assert_eq!(
            joined,
            (100..108).collect::<Vec<_>>(),
            "joined before detach_all: {join_first}"
        );
        assert!(set.is_empty());
    }
    // The detached members run on and finish; their wakes reach no set.
    for tx in senders {
        tx.send(());
    }
    assert!(common::wait_until(Duration::from_secs(10), || {
        finished.load(Ordering::SeqCst) == 6
    }));
}

#[test]
fn slots_are_reused_without_confusing_old_wakes() {
    let rt = common::rt(2, true);
    let mut set = JoinSet::new();
    for round in 0..200u32 {
        set.spawn_on(async move { round }, rt.handle());
        set.spawn_on(
            async move {
                weft::task::yield_now().await;
                round
            },
            rt.handle(),
        );
        let a = rt.block_on(set.join_next()).unwrap().unwrap();
        let b = rt.block_on(set.join_next()).unwrap().unwrap();
        assert_eq!((a, b), (round, round));
        assert!(set.is_empty());
    }
}

#[test]
fn spawn_blocking_members_join_with_the_others() {
    let rt = common::rt(2, true);
    let mut set = JoinSet::new();
    set.spawn_blocking_on(|| 1, rt.handle());
    set.spawn_on(async { 10 }, rt.handle());
    rt.block_on(async {
        set.spawn_blocking(|| 100);
        let mut sum = 0;
        while let Some(result) = set.join_next().await {
            sum += result.unwrap();
        }
        assert_eq!(sum, 111);
    });
}

#[test]
fn from_iterator_extend_and_join_all() {
    let rt = common::rt(2, true);
    let mut outputs = rt.block_on(async {
        let mut set: JoinSet<u32> = (0..4).map(|i| async move { i }).collect();
        set.extend((4..8).map(|i| async move { i }));
        assert_eq!(set.len(), 8);
        set.join_all().await
    });
    outputs.sort_unstable();
    assert_eq!(outputs, (0..8).collect::<Vec<_>>());
    let panicked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        rt.block_on(async {
            let mut set = JoinSet::new();
            set.spawn(async { panic!("one member failed") });
            set.spawn(std::future::pending::<()>());
            set.join_all().await
        })
    }));
    let payload = panicked.expect_err("join_all returned past a panic");
    assert_eq!(common::panic_text(&*payload), "one member failed");
}

#[test]
fn abort_handles_from_join_handles_abort_and_outlive_them() {
    on_every_shape(|rt| {
        let drops = DropCounter::default();
        let tracked = drops.track();
        let handle = rt.spawn(async move {
            let _tracked = tracked;
            std::future::pending::<()>().await
        });
        let first = handle.abort_handle();
        let second = handle.abort_handle();
        assert!(!first.is_finished());
        assert_eq!(
            format!("{first:?}"),
            format!("AbortHandle {{ id: {:?}, .. }}", handle.id())
        );
        drop(handle); // detached: the abort handles still reach the task
        std::thread::spawn(move || second.abort()).join().unwrap();
        wait_finished(&first);
        assert_eq!(drops.drops(), 1);

        // After completion: aborting keeps the output.
        let handle = rt.spawn(async { 3 });
        let abort = handle.abort_handle();
        wait_finished(&abort);
        abort.abort();
        assert_eq!(rt.block_on(handle).unwrap(), 3);
    });
}

/// Aborts through `AbortHandle`s on another thread race `join_next` on
/// this one; every member is returned exactly once, and each aborted
/// future is dropped exactly once.
#[test]
fn aborts_from_another_thread_race_join_next() {
    within(60, "aborts racing join_next", || {
        let rt = common::rt(2, true);
        for round in 0..50 {
            let drops = DropCounter::default();
            let mut set = JoinSet::new();
            let mut aborts = Vec::new();
            for i in 0..20u32 {
                let tracked = drops.track();
                aborts.push(set.spawn_on(
                    async move {
                        let _tracked = tracked;
                        if i % 3 == 0 {
                            std::future::pending::<()>().await;
                        }
                        weft::task::yield_now().await;
                        i
                    },
                    rt.handle(),
                ));
            }
            let aborter = std::thread::spawn(move || {
                for abort in aborts.iter().rev() {
                    abort.abort();
                    if round % 2 == 0 {
                        std::thread::yield_now();
                    }
                }
            });
            let mut returned = 0;
            while let Some(result) = rt.block_on(set.join_next()) {
                if let Ok(i) = result {
                    assert_ne!(i % 3, 0, "a pending task completed");
                }
                returned += 1;
            }
            aborter.join().unwrap();
            assert_eq!(returned, 20, "round {round}");
            assert_eq!(drops.drops(), 20, "round {round}");
        }
    });
}

/// What a member's destructor does to the runtime when the set or the
/// runtime cancels it.
struct ReentersOnDrop {
    handle: Handle,
    /// Another member of the same set, aborted from the destructor.
    victim: Arc<Mutex<Option<Arc<AbortHandle>>>>,
    /// This member's own handle: aborting itself from its destructor
    /// re-enters the handle that may be dropping it.
    itself: Arc<Mutex<Option<Arc<AbortHandle>>>>,
    drops: Arc<AtomicUsize>,
}

impl Drop for ReentersOnDrop {
    fn drop(&mut self) {
        // Spawns (refused once the runtime shuts down), aborts another
        // member, reads the metrics: each takes runtime locks.
        drop(self.handle.spawn(async {}));
        drop(self.handle.spawn_blocking(|| {}));
        if let Some(victim) = self.victim.lock().unwrap().take() {
            victim.abort();
        }
        if let Some(itself) = self.itself.lock().unwrap().take() {
            itself.abort();
            let _ = itself.is_finished();
        }
        let _ = self.handle.metrics();
        self.drops.fetch_add(1, Ordering::SeqCst);
    }
}

impl Future for ReentersOnDrop {
    type Output = ();
    fn poll(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<()> {
        Poll::Pending
    }
}

/// A set of `pairs` members whose destructors re-enter the runtime, each
/// aborting its partner; returns the set and the drop count.
fn reentrant_set(rt: &Runtime, pairs: usize) -> (JoinSet<()>, Arc<AtomicUsize>) {
    let drops = Arc::new(AtomicUsize::new(0));
    let mut set = JoinSet::new();
    let member = |set: &mut JoinSet<()>| {
        let victim = Arc::new(Mutex::new(None));
        let itself = Arc::new(Mutex::new(None));
        let abort = Arc::new(set.spawn_on(
            ReentersOnDrop {
                handle: rt.handle().clone(),
                victim: victim.clone(),
                itself: itself.clone(),
                drops: drops.clone(),
            },
            rt.handle(),
        ));
        *itself.lock().unwrap() = Some(abort.clone());
        (abort, victim)
    };
    for _ in 0..pairs {
        let (first, first_victim) = member(&mut set);
        let (second, second_victim) = member(&mut set);
        *first_victim.lock().unwrap() = Some(second);
        *second_victim.lock().unwrap() = Some(first);
    }
    // Every member polled once (registered, idle) before the test cancels.
    std::thread::sleep(Duration::from_millis(20));
    (set, drops)
}

#[test]
fn destructors_that_reenter_the_runtime_during_abort_all_do_not_hang() {
    within(30, "abort_all with re-entrant destructors", || {
        for workers in [1, 2, 4] {
            let rt = common::rt(workers, true);
            let (mut set, drops) = reentrant_set(&rt, 20);
            set.abort_all();
            rt.block_on(async {
                while let Some(result) = set.join_next().await {
                    assert!(result.unwrap_err().is_cancelled());
                }
            });
            assert_eq!(drops.load(Ordering::SeqCst), 40);
        }
    });
}

#[test]
fn destructors_that_reenter_the_runtime_while_the_set_drops_do_not_hang() {
    within(30, "dropping a set with re-entrant destructors", || {
        for workers in [1, 2, 4] {
            let rt = common::rt(workers, true);
            let (set, drops) = reentrant_set(&rt, 20);
            // Dropped inside a task too: its worker runs the aborts.
            let (inner, inner_drops) = reentrant_set(&rt, 20);
            rt.block_on(rt.spawn(async move { drop(inner) })).unwrap();
            drop(set);
            assert!(common::wait_until(Duration::from_secs(10), || {
                drops.load(Ordering::SeqCst) == 40 && inner_drops.load(Ordering::SeqCst) == 40
            }));
        }
    });
}

#[test]
fn destructors_that_reenter_the_runtime_during_its_shutdown_do_not_hang() {
    within(30, "runtime shutdown with re-entrant destructors", || {
        for workers in [1, 2, 4] {
            // The runtime dropped while the set lives, outside it.
            let rt = common::rt(workers, true);
            let (mut set, drops) = reentrant_set(&rt, 20);
            drop(rt);
            assert_eq!(drops.load(Ordering::SeqCst), 40);
            let other = common::rt(1, true);
            other.block_on(async {
                while let Some(result) = set.join_next().await {
                    assert!(result.unwrap_err().is_cancelled());
                }
            });

            // The set inside a task, the runtime shut down with a timeout.
            let rt = common::rt(workers, true);
            let (set, drops) = reentrant_set(&rt, 20);
            drop(rt.spawn(async move {
                let _set = set;
                std::future::pending::<()>().await
            }));
            std::thread::sleep(Duration::from_millis(10));
            rt.shutdown_timeout(Duration::from_secs(5));
            assert!(common::wait_until(Duration::from_secs(10), || {
                drops.load(Ordering::SeqCst) == 40
            }));
        }
    });
}

/// `join_all` resumes a member's panic, but a member that was cancelled has
/// no panic to resume: it panics with the cancellation named instead.
#[test]
fn join_all_names_a_cancelled_member() {
    let rt = common::rt(2, true);
    let panicked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        rt.block_on(async {
            let mut set = JoinSet::new();
            set.spawn(async { 1 });
            set.spawn(std::future::pending::<u32>()).abort();
            set.join_all().await
        })
    }));
    let payload = panicked.expect_err("join_all returned past a cancelled member");
    let text = common::panic_text(&*payload);
    assert!(
        text.starts_with("a task of the JoinSet given to `join_all` failed")
            && text.contains("cancelled"),
        "{text}"
    );
}

/// A `join_next` that moved to another waker (its first future dropped
/// while it waited, a `select!` polling from another task) is woken there:
/// the set wakes the waker it was polled with last, not the first one.
#[test]
fn a_finish_wakes_the_waker_polled_with_last() {
    let rt = common::rt(2, true);
    let mut set = JoinSet::new();
    let (tx, rx) = oneshot::<()>();
    set.spawn_on(
        async move {
            rx.await;
            7
        },
        rt.handle(),
    );
    let (first, last) = (
        Arc::new(WakeCount::default()),
        Arc::new(WakeCount::default()),
    );
    for counter in [&first, &last] {
        let waker = std::task::Waker::from(counter.clone());
        let poll = set.poll_join_next(&mut Context::from_waker(&waker));
        assert!(poll.is_pending(), "the task is waiting for its oneshot");
    }
    tx.send(());
    assert!(
        common::wait_until(Duration::from_secs(10), || last.wakes() > 0),
        "the last waker was never woken"
    );
    assert_eq!(first.wakes(), 0, "the replaced waker was woken");
    assert_eq!(set.try_join_next().unwrap().unwrap(), 7);
}
