//! Single-threaded behaviour of the local queue (the concurrent cases are
//! in `loom_tests.rs`).

use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use super::{CAPACITY, Overflow, Pushed, local};

#[derive(Default)]
struct Sink(Mutex<Vec<usize>>);

impl Overflow<usize> for Sink {
    fn push_batch(&self, tasks: impl Iterator<Item = usize>) {
        self.0.lock().unwrap().extend(tasks);
    }
}

#[test]
fn pops_in_fifo_order() {
    let (local, _steal) = local();
    let sink = Sink::default();
    for i in 0..10 {
        assert_eq!(local.push_back(i, &sink), Pushed::Local);
    }
    assert_eq!(local.len(), 10);
    let popped: Vec<_> = std::iter::from_fn(|| local.pop()).collect();
    assert_eq!(popped, (0..10).collect::<Vec<_>>());
    assert!(local.is_empty());
}

#[test]
fn full_queue_moves_older_half_and_new_task_to_overflow() {
    let (local, _steal) = local();
    let sink = Sink::default();
    for i in 0..CAPACITY {
        assert_eq!(local.push_back(i, &sink), Pushed::Local);
    }
    assert_eq!(local.remaining_slots(), 0);
    assert_eq!(local.push_back(CAPACITY, &sink), Pushed::Overflowed);
    let overflowed = sink.0.lock().unwrap().clone();
    let mut expected: Vec<_> = (0..CAPACITY / 2).collect();
    expected.push(CAPACITY);
    assert_eq!(overflowed, expected);
    let rest: Vec<_> = std::iter::from_fn(|| local.pop()).collect();
    assert_eq!(rest, (CAPACITY / 2..CAPACITY).collect::<Vec<_>>());
}

#[test]
fn steal_takes_half_rounded_up_and_returns_one() {
    let (victim, steal) = local();
    let (thief, _) = local();
    let sink = Sink::default();
    for i in 0..7 {
        let _ = victim.push_back(i, &sink);
    }
    let first = steal.steal_into(&thief).expect("something to steal");
    // Half of 7, rounded up, is 4: one returned, three queued at the thief.
    assert_eq!(first, 3);
    assert_eq!(thief.len(), 3);
    assert_eq!(victim.len(), 3);
    let thief_tasks: Vec<_> = std::iter::from_fn(|| thief.pop()).collect();
    assert_eq!(thief_tasks, vec![0, 1, 2]);
    let victim_tasks: Vec<_> = std::iter::from_fn(|| victim.pop()).collect();
    assert_eq!(victim_tasks, vec![4, 5, 6]);
    assert!(steal.steal_into(&thief).is_none(), "nothing left to steal");
}

#[test]
fn steal_refused_when_thief_more_than_half_full() {
    let (victim, steal) = local();
    let (thief, _) = local();
    let sink = Sink::default();
    for i in 0..CAPACITY / 2 + 1 {
        let _ = thief.push_back(i, &sink);
    }
    let _ = victim.push_back(99, &sink);
    assert!(steal.steal_into(&thief).is_none());
    assert_eq!(victim.len(), 1);
}

#[test]
fn batch_push_fills_exactly_the_free_slots() {
    let (local, _steal) = local();
    let free = local.remaining_slots();
    local.push_back_batch(0..free);
    assert_eq!(local.remaining_slots(), 0);
    assert_eq!(local.len(), CAPACITY);
}

#[test]
fn wraps_around_many_times() {
    let (owner, steal) = local();
    let (thief, _) = local();
    let sink = Sink::default();
    let local = owner;
    let mut next = 0usize;
    let mut seen = Vec::new();
    for round in 0..5_000 {
        for _ in 0..(round % 7 + 1) {
            let _ = local.push_back(next, &sink);
            next += 1;
        }
        if round % 3 == 0 {
            seen.extend(steal.steal_into(&thief));
            seen.extend(std::iter::from_fn(|| thief.pop()));
        }
        seen.extend(local.pop());
    }
    seen.extend(std::iter::from_fn(|| local.pop()));
    seen.extend(sink.0.lock().unwrap().drain(..));
    seen.sort_unstable();
    assert_eq!(
        seen,
        (0..next).collect::<Vec<_>>(),
        "every task exactly once"
    );
}

#[test]
fn dropping_the_queue_drops_queued_tasks() {
    static DROPS: AtomicUsize = AtomicUsize::new(0);
    struct Counted;
    impl Drop for Counted {
        fn drop(&mut self) {
            DROPS.fetch_add(1, Ordering::SeqCst);
        }
    }
    struct NoSink;
    impl Overflow<Counted> for NoSink {
        fn push_batch(&self, _: impl Iterator<Item = Counted>) {
            unreachable!("queue never fills here")
        }
    }
    let (local, steal) = local();
    for _ in 0..5 {
        let _ = local.push_back(Counted, &NoSink);
    }
    drop(local.pop());
    assert_eq!(DROPS.load(Ordering::SeqCst), 1);
    drop(local);
    assert_eq!(
        DROPS.load(Ordering::SeqCst),
        1,
        "the stealer still holds the ring"
    );
    drop(steal);
    assert_eq!(DROPS.load(Ordering::SeqCst), 5);
}
