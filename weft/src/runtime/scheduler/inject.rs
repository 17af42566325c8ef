//! The global inject queue: tasks spawned or woken from outside the workers,
//! and the overflow of full local queues.
//!
//! Lock-free: `crossbeam_deque::Injector`, a linked list of 63-slot blocks
//! where a push is one CAS on the tail and a batch pop is one CAS on the head
//! for up to a block's worth of tasks. Workers drain it in batches (see
//! `worker.rs` for when and how many), so remote work is never taken one
//! task per lock acquisition.
//!
//! Under loom the queue is a `Mutex<VecDeque>` with the same methods: the
//! models check weft's protocols around the queue (batching into a local
//! queue, wake-ups after a push, shutdown draining), not crossbeam's own
//! algorithm, which crossbeam tests.
//!
//! Ordering relied on by the sleep/wake protocol: a push is made visible
//! before the pusher's `fence(SeqCst)` in `Shared::notify_parked`; the
//! re-check of a worker about to sleep runs after its own `fence(SeqCst)`.

use super::queue::{Local, Overflow};

/// The global queue.
pub(crate) struct Inject<T> {
    #[cfg(not(loom))]
    queue: crossbeam_deque::Injector<T>,
    #[cfg(loom)]
    queue: crate::util::locks::Mutex<std::collections::VecDeque<T>>,
}

/// Per-worker scratch space a batch lands in before it moves to the local
/// queue (crossbeam's batch steal needs a crossbeam deque as destination).
#[cfg(not(loom))]
pub(crate) struct Stash<T>(crossbeam_deque::Worker<T>);
#[cfg(loom)]
pub(crate) struct Stash<T>(std::marker::PhantomData<T>);

impl<T> Stash<T> {
    pub(crate) fn new() -> Self {
        #[cfg(not(loom))]
        return Stash(crossbeam_deque::Worker::new_fifo());
        #[cfg(loom)]
        return Stash(std::marker::PhantomData);
    }
}

impl<T> Inject<T> {
    pub(crate) fn new() -> Self {
        Inject {
            #[cfg(not(loom))]
            queue: crossbeam_deque::Injector::new(),
            #[cfg(loom)]
            queue: crate::util::locks::Mutex::new(std::collections::VecDeque::new()),
        }
    }

    #[inline]
    pub(crate) fn push(&self, task: T) {
        #[cfg(not(loom))]
        self.queue.push(task);
        #[cfg(loom)]
        self.queue.lock().unwrap().push_back(task);
    }

    /// Tasks waiting (a racy snapshot).
    #[inline]
    pub(crate) fn len(&self) -> usize {
        #[cfg(not(loom))]
        return self.queue.len();
        #[cfg(loom)]
        return self.queue.lock().unwrap().len();
    }

    #[inline]
    pub(crate) fn is_empty(&self) -> bool {
        #[cfg(not(loom))]
        return self.queue.is_empty();
        #[cfg(loom)]
        return self.queue.lock().unwrap().is_empty();
    }

    /// Takes one task.
    pub(crate) fn pop(&self) -> Option<T> {
        #[cfg(not(loom))]
        loop {
            match self.queue.steal() {
                crossbeam_deque::Steal::Success(task) => return Some(task),
                crossbeam_deque::Steal::Empty => return None,
                crossbeam_deque::Steal::Retry => std::hint::spin_loop(),
            }
        }
        #[cfg(loom)]
        return self.queue.lock().unwrap().pop_front();
    }

    /// How many tasks one batch into `local` may take:
    /// `min(len / workers + 1, cap, free slots + 1)`; the first runs at
    /// once, the rest fill the ring. The one copy of the formula: the worker
    /// and the loom models both call it.
    ///
    /// `len / workers` is a share (speed: the backlog spread over the
    /// workers), not a bound the protocol needs: made `len * workers` (a
    /// batch of up to `cap` whatever the backlog) it passes every model and
    /// test. The rest of the formula is pinned by `inject_batches.rs` and by
    /// `tests::a_batch_is_a_share_capped_by_the_cap_and_the_free_slots`.
    pub(crate) fn batch_limit(&self, local: &Local<T>, workers: usize, cap: usize) -> usize {
        (self.len() / workers + 1)
            .min(cap)
            .min(local.remaining_slots() + 1)
    }

    /// Takes up to `limit` tasks (at least one if any): returns the first
    /// and appends the rest to `local`, which must have `limit - 1` free
    /// slots. Returns the first task and how many were taken in all.
    pub(crate) fn pop_batch_into(
        &self,
        local: &Local<T>,
        stash: &Stash<T>,
        limit: usize,
    ) -> Option<(T, usize)> {
        debug_assert!(limit >= 1 && limit - 1 <= local.remaining_slots());
        #[cfg(not(loom))]
        {
            use crossbeam_deque::Steal;
            let first = loop {
                match self.queue.steal_batch_with_limit_and_pop(&stash.0, limit) {
                    Steal::Success(task) => break task,
                    Steal::Empty => return None,
                    Steal::Retry => std::hint::spin_loop(),
                }
            };
            // One claim stops at the end of a crossbeam block (63 slots):
            // claim again until the limit is reached or the queue is empty.
            // (Size only: with the loop never entered, `<` made `>`, every
            // test passes; a batch is then cut short at a block's end.)
            while stash.0.len() + 1 < limit {
                match self
                    .queue
                    .steal_batch_with_limit(&stash.0, limit - 1 - stash.0.len())
                {
                    Steal::Success(()) => {}
                    Steal::Empty => break,
                    Steal::Retry => std::hint::spin_loop(),
                }
            }
            let rest = stash.0.len();
            local.push_back_batch(std::iter::from_fn(|| stash.0.pop()));
            Some((first, rest + 1))
        }
        #[cfg(loom)]
        {
            let _ = stash;
            let mut queue = self.queue.lock().unwrap();
            let first = queue.pop_front()?;
            let rest = (limit - 1).min(queue.len());
            local.push_back_batch(queue.drain(..rest));
            Some((first, rest + 1))
        }
    }
}

impl<T> Overflow<T> for Inject<T> {
    fn push_batch(&self, tasks: impl Iterator<Item = T>) {
        #[cfg(not(loom))]
        tasks.for_each(|task| self.queue.push(task));
        #[cfg(loom)]
        self.queue.lock().unwrap().extend(tasks);
    }
}

#[cfg(all(test, loom))]
mod loom_tests;

#[cfg(all(test, not(loom)))]
mod tests {
    use super::Inject;
    use crate::runtime::scheduler::queue::{CAPACITY, Pushed, local};

    /// The batch size's one statement (`Inject::batch_limit`), read back:
    /// the backlog's share per worker plus one, at most the cap, and at
    /// most the ring's free slots plus one (the first task runs at once and
    /// takes no slot). Fails if any of the three terms drifts.
    #[test]
    fn a_batch_is_a_share_capped_by_the_cap_and_the_free_slots() {
        let inject = Inject::new();
        let (ring, _steal) = local::<usize>();
        (0..100).for_each(|task| inject.push(task));
        // The share: 100 / 4 + 1.
        assert_eq!(inject.batch_limit(&ring, 4, 32), 26);
        // The cap.
        assert_eq!(inject.batch_limit(&ring, 2, 32), 32);
        // The free slots, plus the one that runs at once.
        let spill = Inject::new();
        for task in 0..CAPACITY - 3 {
            assert_eq!(ring.push_back(task, &spill), Pushed::Local);
        }
        assert_eq!(inject.batch_limit(&ring, 1, 128), 4);
        // An empty queue still allows the one task a pop may find.
        assert_eq!(Inject::<usize>::new().batch_limit(&ring, 4, 32), 1);
    }
}
