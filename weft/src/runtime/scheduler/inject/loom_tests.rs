//! loom models of the inject queue's batch pop into a worker's ring, racing
//! outside pushes and a thief stealing from that ring.
//!
//! # What is modelled
//!
//! Under loom the inject queue is a `Mutex<VecDeque>` (see `inject.rs`):
//! crossbeam's lock-free injector is crossbeam's to test. What these models
//! check is weft's part around it, with the real code:
//!
//! - the batch size a worker asks for, computed as the worker computes it
//!   (`min(len / workers + 1, cap, remaining_slots + 1)`, see
//!   `Core::take_inject_batch`), so a batch never overwrites ring slots a
//!   thief is still copying out (`remaining_slots` counts from `steal`, not
//!   `real`);
//! - `Local::push_back_batch` writing the batch into the ring and publishing
//!   it with one `Release` store of `tail`, while a thief (`steal_into`)
//!   reads `tail` with `Acquire` and copies the slots out;
//! - the owner's overflow into the inject queue (half the ring, in one
//!   batch) while pushers push and the owner batch-pops.
//!
//! Invariant asserted by every model: each task pushed (from outside, or by
//! the owner into its ring) is obtained exactly once — as the first task of
//! a batch, popped from the owner's ring, stolen by the thief, or drained
//! from the inject queue at the end — never lost, never duplicated; and a
//! batch never returns more than the limit asked for. A slot read before it
//! was published, or written while a thief reads it, is a data race on the
//! slot's `UnsafeCell`, which loom reports as a failure.
//!
//! # Orderings relied on, and why loom can check them
//!
//! `tail` is stored with `Release` after the slots it publishes are written
//! and loaded with `Acquire` by thieves; every change of the ring's `head`
//! is a compare-and-swap (`AcqRel`); the inject queue is a mutex here. None
//! of it rests on `SeqCst`, so loom models these orderings exactly.
//!
//! # Bound
//!
//! `LOOM_MAX_PREEMPTIONS=3` (CI's setting) explores every interleaving with
//! up to three forced preemptions; the ring has 4 slots under loom, so the
//! full ring, the overflow and a thief's half-copy are all reachable.
//!
//! Run: `RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS=3 cargo test -p weft --lib --release --target-dir target/loom inject`

use loom::sync::Arc;
use loom::thread;

use super::{Inject, Stash};
use crate::runtime::scheduler::queue::{self, Local, Steal};

/// The batch limit `Core::take_inject_batch` uses (the same function).
fn batch_limit(inject: &Inject<usize>, local: &Local<usize>, workers: usize, cap: usize) -> usize {
    inject.batch_limit(local, workers, cap)
}

/// One batch pop as a worker does it; records the first task. Returns how
/// many tasks the batch took (0 if the inject queue was empty).
fn take_batch(
    inject: &Inject<usize>,
    owner: &Local<usize>,
    stash: &Stash<usize>,
    workers: usize,
    cap: usize,
    seen: &mut Vec<usize>,
) -> usize {
    let limit = batch_limit(inject, owner, workers, cap);
    match inject.pop_batch_into(owner, stash, limit) {
        Some((first, taken)) => {
            assert!(
                (1..=limit).contains(&taken),
                "a batch took {taken} tasks with limit {limit}"
            );
            seen.push(first);
            taken
        }
        None => 0,
    }
}

fn drain_ring(local: &Local<usize>) -> Vec<usize> {
    std::iter::from_fn(|| local.pop()).collect()
}

/// Takes everything left once no other thread runs: batches and ring pops.
fn drain_all(inject: &Inject<usize>, owner: &Local<usize>, stash: &Stash<usize>) -> Vec<usize> {
    let mut seen = drain_ring(owner);
    while take_batch(inject, owner, stash, 2, 3, &mut seen) > 0 {
        seen.extend(drain_ring(owner));
    }
    seen
}

/// A thief with its own ring: one steal from `victim`, then it runs (pops)
/// everything it stole.
fn thief(victim: Steal<usize>) -> thread::JoinHandle<Vec<usize>> {
    thread::spawn(move || {
        let (mine, _) = queue::local();
        let mut got: Vec<usize> = victim.steal_into(&mine).into_iter().collect();
        got.extend(drain_ring(&mine));
        got
    })
}

fn pusher(inject: &Arc<Inject<usize>>, tasks: std::ops::Range<usize>) -> thread::JoinHandle<()> {
    let inject = inject.clone();
    thread::spawn(move || tasks.for_each(|task| inject.push(task)))
}

fn assert_each_once(mut seen: Vec<usize>, pushed: usize) {
    seen.sort_unstable();
    assert_eq!(
        seen,
        (0..pushed).collect::<Vec<_>>(),
        "a task was lost or duplicated"
    );
}

/// An outside thread pushes while the owner takes two batches into its ring
/// and a thief steals from that ring.
#[test]
fn batch_pop_races_a_pusher_and_a_thief() {
    loom::model(|| {
        let inject = Arc::new(Inject::new());
        for task in 0..2 {
            inject.push(task);
        }
        let (owner, steal) = queue::local();
        let stash = Stash::new();
        let pusher = pusher(&inject, 2..4);
        let thief = thief(steal);
        let mut seen = Vec::new();
        // Two workers, cap 3: the first batch takes 2 of 2 (or 3 of 4)
        // tasks, leaving one or two in the ring for the thief.
        take_batch(&inject, &owner, &stash, 2, 3, &mut seen);
        take_batch(&inject, &owner, &stash, 2, 3, &mut seen);
        seen.extend(owner.pop());
        pusher.join().unwrap();
        seen.extend(thief.join().unwrap());
        seen.extend(drain_all(&inject, &owner, &stash));
        assert_each_once(seen, 4);
    });
}

/// The owner's ring is full and a thief is copying half of it out when the
/// owner takes a batch: the batch must fit in the slots the thief is not
/// reading (`remaining_slots` counts from the thief's `steal` position).
/// Then the owner fills its ring until it overflows into the inject queue
/// while an outside thread pushes.
#[test]
fn batch_pop_into_a_ring_a_thief_is_copying_then_overflow() {
    loom::model(|| {
        let inject = Arc::new(Inject::new());
        let (owner, steal) = queue::local();
        let stash = Stash::new();
        // Tasks 0..4 fill the ring (capacity 4 under loom); 4..6 wait in
        // the inject queue; 6..8 come from a pusher; 8..11 are pushed by the
        // owner into its ring later (overflowing when it is full).
        for task in 0..queue::CAPACITY {
            let _ = owner.push_back(task, &*inject);
        }
        inject.push(4);
        inject.push(5);
        let thief = thief(steal);
        let pusher = pusher(&inject, 6..8);
        let mut seen = Vec::new();
        take_batch(&inject, &owner, &stash, 1, 4, &mut seen);
        seen.extend(owner.pop());
        for task in 8..11 {
            let _ = owner.push_back(task, &*inject);
        }
        take_batch(&inject, &owner, &stash, 1, 4, &mut seen);
        pusher.join().unwrap();
        seen.extend(thief.join().unwrap());
        seen.extend(drain_all(&inject, &owner, &stash));
        assert_each_once(seen, 11);
    });
}

/// Two outside threads push while the owner takes batches: with the
/// queue's length changing under it, every batch stays within its limit and
/// nothing pushed is missed.
#[test]
fn two_pushers_and_a_batch_popper() {
    loom::model(|| {
        let inject = Arc::new(Inject::new());
        let (owner, _steal) = queue::local();
        let stash = Stash::new();
        let first = pusher(&inject, 0..2);
        let second = pusher(&inject, 2..4);
        let mut seen = Vec::new();
        for _ in 0..2 {
            take_batch(&inject, &owner, &stash, 1, 2, &mut seen);
        }
        first.join().unwrap();
        second.join().unwrap();
        seen.extend(drain_all(&inject, &owner, &stash));
        assert_each_once(seen, 4);
    });
}
