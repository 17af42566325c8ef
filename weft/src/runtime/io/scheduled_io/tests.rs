//! What each delivery, clear and poll does to one source's readiness word
//! and whom it wakes, one step at a time on one thread. The loom models
//! (`loom_tests.rs`) check the races; these check the bookkeeping the
//! races rest on, which no other test looks at: a delivery that erased
//! earlier bits, a clear fooled by two
//! deliveries, a wake of the wrong direction's waiters, a listed waiter
//! replaced by another's waker.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll, Wake, Waker};

use super::*;

/// A waker that counts its wakes.
#[derive(Default)]
struct Counter(AtomicUsize);

impl Wake for Counter {
    fn wake(self: Arc<Self>) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

impl Counter {
    fn new() -> (Arc<Counter>, Waker) {
        let counter = Arc::new(Counter::default());
        (counter.clone(), Waker::from(counter))
    }

    fn wakes(&self) -> usize {
        self.0.load(Ordering::SeqCst)
    }
}

/// Delivers `ready` and wakes whoever it moved out.
fn deliver(io: &ScheduledIo, ready: u64) -> usize {
    let mut out = Vec::new();
    io.set_readiness(ready, &mut out);
    let woken = out.len();
    out.into_iter().for_each(Waker::wake);
    woken
}

fn poll(
    io: &ScheduledIo,
    direction: Direction,
    waker: &Waker,
) -> Poll<std::io::Result<ReadyEvent>> {
    io.poll_ready(&mut Context::from_waker(waker), direction)
}

fn poll_listed(
    io: &ScheduledIo,
    direction: Direction,
    waker: &Waker,
    id: &mut u64,
) -> Poll<std::io::Result<ReadyEvent>> {
    io.poll_ready_listed(&mut Context::from_waker(waker), direction, id)
}

/// The event if `direction` is ready now (a poll with a waker nobody
/// keeps count of).
fn ready(io: &ScheduledIo, direction: Direction) -> Option<ReadyEvent> {
    match poll(io, direction, Waker::noop()) {
        Poll::Ready(Ok(event)) => Some(event),
        Poll::Ready(Err(error)) => panic!("not shut down, yet: {error}"),
        Poll::Pending => None,
    }
}

/// What a task does when its operation returns `WouldBlock`: clears
/// `direction` at the tick of the readiness it saw.
fn would_block(io: &ScheduledIo, direction: Direction) {
    let event = ready(io, direction).expect("the task saw its direction ready");
    io.clear_readiness(event, direction);
}

#[test]
fn a_delivery_keeps_what_earlier_ones_set() {
    let io = ScheduledIo::new();
    assert!(ready(&io, Direction::Read).is_none());
    deliver(&io, READABLE);
    deliver(&io, READABLE);
    assert!(
        ready(&io, Direction::Read).is_some(),
        "a second readable delivery cleared the first"
    );
    deliver(&io, WRITABLE);
    assert!(
        ready(&io, Direction::Read).is_some(),
        "a writable delivery erased the readable bit"
    );
    assert!(ready(&io, Direction::Write).is_some());
}

#[test]
fn a_clear_takes_only_its_direction_and_only_at_the_tick_it_saw() {
    let io = ScheduledIo::new();
    deliver(&io, READABLE | WRITABLE);
    would_block(&io, Direction::Write);
    assert!(
        ready(&io, Direction::Write).is_none(),
        "WouldBlock cleared nothing"
    );
    assert!(
        ready(&io, Direction::Read).is_some(),
        "a write's WouldBlock cleared the read side"
    );

    // One to three deliveries after the event was seen (a tick that merely
    // flipped between two values would read as unchanged after two).
    for later in 1..=3 {
        let event = ready(&io, Direction::Read).unwrap();
        for _ in 0..later {
            deliver(&io, READABLE);
        }
        io.clear_readiness(event, Direction::Read);
        assert!(
            ready(&io, Direction::Read).is_some(),
            "a clear erased a readiness delivered {later} time(s) after its event"
        );
    }
    would_block(&io, Direction::Read);
    assert!(ready(&io, Direction::Read).is_none());
}

#[test]
fn a_closed_peer_stays_closed_through_a_clear() {
    let io = ScheduledIo::new();
    deliver(&io, READABLE | READ_CLOSED);
    would_block(&io, Direction::Read);
    assert!(
        ready(&io, Direction::Read).is_some(),
        "a read's WouldBlock cleared READ_CLOSED"
    );
}

#[test]
fn a_delivery_wakes_the_waiters_of_its_direction_only() {
    let io = ScheduledIo::new();
    let (reader, reader_waker) = Counter::new();
    let (writer, writer_waker) = Counter::new();
    let (listed_reader, listed_reader_waker) = Counter::new();
    let (listed_writer, listed_writer_waker) = Counter::new();
    let (mut reader_id, mut writer_id) = (0, 0);
    let wait_all = |io: &ScheduledIo, reader_id: &mut u64, writer_id: &mut u64| {
        assert!(poll(io, Direction::Read, &reader_waker).is_pending());
        assert!(poll(io, Direction::Write, &writer_waker).is_pending());
        assert!(poll_listed(io, Direction::Read, &listed_reader_waker, reader_id).is_pending());
        assert!(poll_listed(io, Direction::Write, &listed_writer_waker, writer_id).is_pending());
    };
    wait_all(&io, &mut reader_id, &mut writer_id);

    assert_eq!(deliver(&io, WRITABLE), 2);
    assert_eq!((writer.wakes(), listed_writer.wakes()), (1, 1));
    assert_eq!((reader.wakes(), listed_reader.wakes()), (0, 0));

    would_block(&io, Direction::Write);
    wait_all(&io, &mut reader_id, &mut writer_id);
    assert_eq!(deliver(&io, READ_CLOSED), 2);
    assert_eq!((reader.wakes(), listed_reader.wakes()), (1, 1));
    assert_eq!((writer.wakes(), listed_writer.wakes()), (1, 1));
}

#[test]
fn a_waiter_that_polls_again_with_another_waker_is_woken_through_the_new_one() {
    let io = ScheduledIo::new();
    let (first, first_waker) = Counter::new();
    let (second, second_waker) = Counter::new();
    assert!(poll(&io, Direction::Read, &first_waker).is_pending());
    assert!(poll(&io, Direction::Read, &second_waker).is_pending());
    deliver(&io, READABLE);
    assert_eq!((first.wakes(), second.wakes()), (0, 1));
}

#[test]
fn listed_waiters_keep_their_own_entries() {
    let io = ScheduledIo::new();
    let counters: Vec<_> = (0..4).map(|_| Counter::new()).collect();
    let (mut a, mut b) = (0, 0);
    // A and B wait, then each polls again with a new waker: each must
    // replace its own entry, not the other's and not add one.
    assert!(poll_listed(&io, Direction::Read, &counters[0].1, &mut a).is_pending());
    assert!(poll_listed(&io, Direction::Read, &counters[1].1, &mut b).is_pending());
    assert_ne!(a, b);
    assert!(poll_listed(&io, Direction::Read, &counters[2].1, &mut a).is_pending());
    assert!(poll_listed(&io, Direction::Read, &counters[3].1, &mut b).is_pending());
    assert_eq!(deliver(&io, READABLE), 2, "one entry per waiter");
    let wakes: Vec<_> = counters
        .iter()
        .map(|(counter, _)| counter.wakes())
        .collect();
    assert_eq!(
        wakes,
        [0, 0, 1, 1],
        "each waiter woken through its newest waker"
    );
}

#[test]
fn a_forgotten_listed_waiter_is_not_woken() {
    let io = ScheduledIo::new();
    let (kept, kept_waker) = Counter::new();
    let (forgotten, forgotten_waker) = Counter::new();
    let (mut kept_id, mut forgotten_id) = (0, 0);
    assert!(poll_listed(&io, Direction::Read, &kept_waker, &mut kept_id).is_pending());
    assert!(poll_listed(&io, Direction::Read, &forgotten_waker, &mut forgotten_id).is_pending());
    io.forget_waiter(0); // never listed: nothing to forget
    io.forget_waiter(forgotten_id);
    assert_eq!(deliver(&io, READABLE), 1);
    assert_eq!((kept.wakes(), forgotten.wakes()), (1, 0));
}

#[test]
fn deregistration_hands_back_every_waiter() {
    let io = ScheduledIo::new();
    let (reader, reader_waker) = Counter::new();
    let (writer, writer_waker) = Counter::new();
    let (listed, listed_waker) = Counter::new();
    let mut id = 0;
    assert!(poll(&io, Direction::Read, &reader_waker).is_pending());
    assert!(poll(&io, Direction::Write, &writer_waker).is_pending());
    assert!(poll_listed(&io, Direction::Read, &listed_waker, &mut id).is_pending());
    let mut out = Vec::new();
    io.take_waiters(&mut out);
    assert_eq!(out.len(), 3);
    out.into_iter().for_each(Waker::wake);
    assert_eq!((reader.wakes(), writer.wakes(), listed.wakes()), (1, 1, 1));
    assert_eq!(
        deliver(&io, READABLE | WRITABLE),
        0,
        "nobody is left waiting"
    );
}

#[test]
fn shutdown_wakes_every_waiter_and_fails_every_poll() {
    let io = ScheduledIo::new();
    let (reader, reader_waker) = Counter::new();
    let (listed, listed_waker) = Counter::new();
    let mut id = 0;
    assert!(poll(&io, Direction::Read, &reader_waker).is_pending());
    assert!(poll_listed(&io, Direction::Write, &listed_waker, &mut id).is_pending());
    let mut out = Vec::new();
    io.shut_down(&mut out);
    out.into_iter().for_each(Waker::wake);
    assert_eq!((reader.wakes(), listed.wakes()), (1, 1));
    for direction in [Direction::Read, Direction::Write] {
        match poll(&io, direction, Waker::noop()) {
            Poll::Ready(Err(error)) => assert!(error.to_string().contains("shut down")),
            other => panic!("{direction:?} after shutdown: {other:?}"),
        }
    }
}
