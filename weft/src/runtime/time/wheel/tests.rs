//! The wheel against a plain sorted list: same timers, same firing order,
//! nothing early, nothing lost, stale keys inert.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Wake, Waker};

use super::{Fired, TICK_NS, Wheel};

/// A waker that records which timer it belongs to when woken.
struct Tag {
    id: usize,
    fired: Arc<std::sync::Mutex<Vec<usize>>>,
}

impl Wake for Tag {
    fn wake(self: Arc<Self>) {
        self.fired.lock().unwrap().push(self.id);
    }
}

fn tagged(id: usize, fired: &Arc<std::sync::Mutex<Vec<usize>>>) -> Waker {
    Waker::from(Arc::new(Tag {
        id,
        fired: fired.clone(),
    }))
}

fn fire(wheel: &mut Wheel, now: u64) -> usize {
    let mut out = Vec::new();
    assert_eq!(wheel.fire_due(now, usize::MAX, &mut out), Fired::AllDue);
    let n = out.len();
    out.into_iter().for_each(Waker::wake);
    n
}

/// `count` deadlines spread over every level, pseudo-random from `seed`
/// (xorshift): 16 µs .. 2^51 ns (~26 days).
fn spread_deadlines(count: usize, seed: u64) -> Vec<u64> {
    let mut x = seed;
    (0..count)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let exponent = 14 + (x % 38);
            1 + (x >> 8) % (1u64 << exponent)
        })
        .collect()
}

#[test]
fn fires_each_timer_once_at_or_after_its_deadline_at_every_level() {
    let fired = Arc::new(std::sync::Mutex::new(Vec::new()));
    let mut wheel = Wheel::new();
    let deadlines = spread_deadlines(3_000, 0x2545_F491_4F6C_DD1D);
    for (id, &deadline) in deadlines.iter().enumerate() {
        wheel.insert(deadline, tagged(id, &fired));
    }
    let mut now = 0;
    let mut seen = 0;
    let mut pending = vec![true; deadlines.len()];
    while wheel.len() > 0 {
        let next = wheel.next_deadline().expect("timers pending");
        let earliest = (0..deadlines.len())
            .filter(|&id| pending[id])
            .map(|id| deadlines[id])
            .min()
            .unwrap();
        assert!(
            next <= earliest,
            "next_deadline {next} after a pending {earliest}"
        );
        now = next.max(now);
        fire(&mut wheel, now);
        let fired = fired.lock().unwrap();
        for &id in &fired[seen..] {
            assert!(deadlines[id] <= now, "timer {id} fired early");
            pending[id] = false;
        }
        seen = fired.len();
    }
    let mut order = fired.lock().unwrap().clone();
    assert_eq!(order.len(), deadlines.len(), "every timer fired");
    order.sort_unstable();
    order.dedup();
    assert_eq!(order.len(), deadlines.len(), "no timer fired twice");
}

#[test]
fn next_deadline_is_exact_within_level_zero_and_never_late_above() {
    let fired = Arc::new(std::sync::Mutex::new(Vec::new()));
    let mut wheel = Wheel::new();
    wheel.insert(1_000_123, tagged(0, &fired));
    wheel.insert(1_000_200, tagged(1, &fired));
    wheel.insert(900_000_000, tagged(2, &fired));
    assert_eq!(wheel.next_deadline(), Some(1_000_123));
    // Just before: nothing; at the deadline: exactly the first.
    assert_eq!(fire(&mut wheel, 1_000_122), 0);
    assert_eq!(fire(&mut wheel, 1_000_123), 1);
    assert_eq!(wheel.next_deadline(), Some(1_000_200));
    assert_eq!(fire(&mut wheel, 1_000_200), 1);
    let far = wheel.next_deadline().unwrap();
    assert!(
        far <= 900_000_000,
        "a cascade point is never after the deadline"
    );
    assert_eq!(fire(&mut wheel, 900_000_000), 1);
    assert_eq!(*fired.lock().unwrap(), vec![0, 1, 2]);
}

#[test]
fn removed_timers_never_fire_and_stale_keys_are_inert() {
    let fired = Arc::new(std::sync::Mutex::new(Vec::new()));
    let mut wheel = Wheel::new();
    let a = wheel.insert(5 * TICK_NS, tagged(0, &fired));
    let b = wheel.insert(5 * TICK_NS, tagged(1, &fired));
    assert!(wheel.remove(a).is_some());
    assert!(wheel.remove(a).is_none(), "removing twice is a no-op");
    // The freed record is reused; the old key must not reach the new timer.
    let c = wheel.insert(7 * TICK_NS, tagged(2, &fired));
    assert!(!wheel.contains(a));
    assert!(wheel.remove(a).is_none());
    assert!(wheel.contains(c));
    assert_eq!(fire(&mut wheel, 10 * TICK_NS), 2);
    assert!(!wheel.contains(b) && !wheel.contains(c));
    assert_eq!(*fired.lock().unwrap(), vec![1, 2]);
    assert_eq!(wheel.len(), 0);
}

/// Removal at every level, list heads included (the record's `place` must
/// name its level as well as its slot, or unlinking a head above level 0
/// rewrites a level-0 list): exactly the timers left fire.
#[test]
fn removing_timers_at_every_level_leaves_exactly_the_rest() {
    let fired = Arc::new(std::sync::Mutex::new(Vec::new()));
    let mut wheel = Wheel::new();
    let keys: Vec<_> = spread_deadlines(2_000, 0x9E37_79B9_7F4A_7C15)
        .into_iter()
        .enumerate()
        .map(|(id, deadline)| wheel.insert(deadline, tagged(id, &fired)))
        .collect();
    // Newest first, so many removals take a slot's head.
    let removed = |id: usize| id % 3 != 0;
    for id in (0..keys.len()).rev().filter(|&id| removed(id)) {
        assert!(wheel.remove(keys[id]).is_some(), "timer {id} was pending");
    }
    let left = keys.len() - (0..keys.len()).filter(|&id| removed(id)).count();
    assert_eq!(wheel.len(), left);
    // Far past every deadline: a few calls (each cascade is a call).
    for _ in 0..64 {
        fire(&mut wheel, u64::MAX >> 1);
    }
    assert_eq!(wheel.len(), 0, "every timer left has fired");
    let mut order = fired.lock().unwrap().clone();
    order.sort_unstable();
    let expected: Vec<usize> = (0..keys.len()).filter(|&id| !removed(id)).collect();
    assert_eq!(
        order, expected,
        "the timers left fire, once each, and no other"
    );
}

#[test]
fn a_budget_leaves_the_rest_due_for_the_next_call() {
    let count = Arc::new(AtomicUsize::new(0));
    struct Count(Arc<AtomicUsize>);
    impl Wake for Count {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Ordering::Relaxed);
        }
    }
    let mut wheel = Wheel::new();
    for i in 0..1_000 {
        wheel.insert(1_000 + i, Waker::from(Arc::new(Count(count.clone()))));
    }
    let mut out = Vec::new();
    assert_eq!(wheel.fire_due(10_000, 300, &mut out), Fired::BudgetSpent);
    assert_eq!(out.len(), 300);
    assert!(
        wheel.next_deadline().unwrap() <= 10_000,
        "the rest is still due"
    );
    out.clear();
    assert_eq!(wheel.fire_due(10_000, 10_000, &mut out), Fired::AllDue);
    assert_eq!(out.len(), 700);
    assert_eq!(wheel.len(), 0);
}

#[test]
fn far_deadlines_are_placed_and_fire_without_overflow() {
    let fired = Arc::new(std::sync::Mutex::new(Vec::new()));
    let mut wheel = Wheel::new();
    wheel.insert(u64::MAX, tagged(0, &fired));
    wheel.insert(u64::MAX / 2, tagged(1, &fired));
    assert_eq!(fire(&mut wheel, 1u64 << 60), 0);
    assert_eq!(wheel.len(), 2);
    let mut now = 1u64 << 60;
    let mut steps = 0;
    while wheel.len() == 2 {
        now = wheel.next_deadline().unwrap().max(now);
        let _ = fire(&mut wheel, now);
        steps += 1;
        assert!(steps < 100_000, "the wheel must make progress");
    }
    assert_eq!(*fired.lock().unwrap(), vec![1]);
    assert!(wheel.drain().len() == 1);
}
