//! A stand-in timer for the metrics suite, until weft's own timer lands: one
//! thread keeps a binary heap of `(deadline, waker)` entries and wakes each
//! waker when its deadline has passed; [`TimerHandle::sleep`] returns a
//! future that registers with it.
//!
//! The thread waits on a condvar with a timeout (a futex wait), so an entry
//! fires late by the kernel's timer slack (50 µs by default on Linux) plus a
//! thread wake-up: around 60–100 µs on the 2-core dev machine. That is 1%
//! of the suite's 10 ms wait, and part of the workload, not of what is
//! measured (the suite divides counts by measured time). It is not fit for
//! waits of a few microseconds: see [`crate::suites::metrics::wait`].
//!
//! Invariant: the thread checks the heap and goes to sleep under the state
//! lock, and a registration that becomes the earliest deadline notifies the
//! condvar after pushing under the same lock, so no deadline is slept past
//! by more than the slack.

use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll, Waker};
use std::thread;
use std::time::{Duration, Instant};

/// The timer thread; dropping it stops the thread (pending sleeps then
/// never complete).
pub struct TimerService {
    shared: Arc<Shared>,
    thread: Option<thread::JoinHandle<()>>,
}

/// A cheap handle for creating sleeps on a [`TimerService`].
#[derive(Clone)]
pub struct TimerHandle(Arc<Shared>);

struct Shared {
    state: Mutex<State>,
    wake_up: Condvar,
}

#[derive(Default)]
struct State {
    heap: BinaryHeap<Reverse<Entry>>,
    next_seq: u64,
    shutdown: bool,
}

/// A registered sleep, ordered by deadline, then by registration.
struct Entry {
    deadline: Instant,
    seq: u64,
    waker: Waker,
}

impl Ord for Entry {
    fn cmp(&self, other: &Self) -> Ordering {
        (self.deadline, self.seq).cmp(&(other.deadline, other.seq))
    }
}

impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for Entry {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Entry {}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        // Wakers run outside the lock, so a panic cannot poison it midway.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl TimerService {
    /// Starts the timer thread.
    pub fn start() -> io::Result<TimerService> {
        let shared = Arc::new(Shared {
            state: Mutex::new(State::default()),
            wake_up: Condvar::new(),
        });
        let thread = thread::Builder::new()
            .name("bench-timer".to_owned())
            .spawn({
                let shared = shared.clone();
                move || fire_due_entries(&shared)
            })?;
        Ok(TimerService {
            shared,
            thread: Some(thread),
        })
    }

    /// A handle for creating sleeps.
    pub fn handle(&self) -> TimerHandle {
        TimerHandle(self.shared.clone())
    }
}

impl Drop for TimerService {
    fn drop(&mut self) {
        self.shared.lock().shutdown = true;
        self.shared.wake_up.notify_one();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// The timer thread: wakes due entries, sleeps until the earliest deadline.
fn fire_due_entries(shared: &Shared) {
    let mut due: Vec<Waker> = Vec::new();
    let mut state = shared.lock();
    while !state.shutdown {
        let now = Instant::now();
        while state.heap.peek().is_some_and(|e| e.0.deadline <= now) {
            due.extend(state.heap.pop().map(|e| e.0.waker));
        }
        if !due.is_empty() {
            drop(state);
            due.drain(..).for_each(Waker::wake);
            state = shared.lock();
            continue;
        }
        let next = state.heap.peek().map(|e| e.0.deadline);
        state = match next {
            Some(deadline) => {
                let timeout = deadline.saturating_duration_since(now);
                let waited = shared.wake_up.wait_timeout(state, timeout);
                waited.unwrap_or_else(PoisonError::into_inner).0
            }
            None => shared
                .wake_up
                .wait(state)
                .unwrap_or_else(PoisonError::into_inner),
        };
    }
}

impl TimerHandle {
    /// A future that completes once `duration` has passed (measured from
    /// this call).
    pub fn sleep(&self, duration: Duration) -> Sleep {
        Sleep {
            timer: self.clone(),
            deadline: Instant::now() + duration,
            registered: None,
        }
    }

    fn register(&self, deadline: Instant, waker: Waker) {
        let mut state = self.0.lock();
        let seq = state.next_seq;
        state.next_seq += 1;
        let earliest = state.heap.peek().is_none_or(|e| deadline < e.0.deadline);
        state.heap.push(Reverse(Entry {
            deadline,
            seq,
            waker,
        }));
        drop(state);
        if earliest {
            self.0.wake_up.notify_one();
        }
    }
}

/// The future of [`TimerHandle::sleep`].
pub struct Sleep {
    timer: TimerHandle,
    deadline: Instant,
    /// The waker registered with the timer, if any.
    registered: Option<Waker>,
}

impl Future for Sleep {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if Instant::now() >= self.deadline {
            return Poll::Ready(());
        }
        // Register once per waker: a spurious poll keeps the entry it has.
        if !self
            .registered
            .as_ref()
            .is_some_and(|w| w.will_wake(cx.waker()))
        {
            self.timer.register(self.deadline, cx.waker().clone());
            self.registered = Some(cx.waker().clone());
        }
        Poll::Pending
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sleep_lasts_at_least_its_duration() {
        let timer = TimerService::start().unwrap();
        let start = Instant::now();
        futures_lite::future::block_on(timer.handle().sleep(Duration::from_millis(5)));
        assert!(start.elapsed() >= Duration::from_millis(5));
    }

    #[test]
    fn sleeps_complete_in_deadline_order() {
        let timer = TimerService::start().unwrap();
        let handle = timer.handle();
        let order = Arc::new(Mutex::new(Vec::new()));
        let threads: Vec<_> = [60u64, 20, 40]
            .into_iter()
            .map(|ms| {
                let (handle, order) = (handle.clone(), order.clone());
                thread::spawn(move || {
                    futures_lite::future::block_on(handle.sleep(Duration::from_millis(ms)));
                    order.lock().unwrap().push(ms);
                })
            })
            .collect();
        threads.into_iter().for_each(|t| t.join().unwrap());
        assert_eq!(*order.lock().unwrap(), vec![20, 40, 60]);
    }

    #[test]
    fn dropping_the_service_stops_its_thread() {
        let timer = TimerService::start().unwrap();
        let pending = timer.handle().sleep(Duration::from_secs(3600));
        drop(timer);
        drop(pending);
    }
}
