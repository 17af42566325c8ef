//! The per-worker local run queue: bounded, single producer (its worker),
//! many consumers (its worker pops, idle workers steal half).
//!
//! # Layout and invariants
//!
//! A ring of `CAPACITY` slots indexed by wrapping `u32` positions, and two
//! words:
//!
//! - `tail` — written only by the owner, with `Release` after the slot it
//!   publishes is written. Stealers read it with `Acquire`.
//! - `head` — packs two positions, `(steal, real)`. `real` is the next slot to
//!   pop. `steal` equals `real` except while a stealer is copying slots out:
//!   then `steal..real` are the slots being copied, which the owner must not
//!   overwrite. Every change to `head` is a compare-and-swap, so the owner's
//!   pops and one stealer's claim are totally ordered by `head`'s
//!   modification order (loom checks this; nothing rests on SeqCst).
//!
//! The owner may write slot `p` only while `p - steal < CAPACITY`, which keeps
//! it off the slots a stealer is still reading. At most one stealer is active
//! at a time: a stealer that finds `steal != real` backs off.
//!
//! When the ring is full the owner moves half of it plus the new task to the
//! overflow sink (the inject queue) in one batch, so a burst of local spawns
//! costs one inject operation per `CAPACITY / 2` tasks.
//!
//! The algorithm is the one tokio's multi-thread scheduler uses (itself after
//! Go's runtime `runqput`/`runqsteal`); the capacity is shrunk under loom so
//! the full and overflow paths are reachable in a model.
//!
//! # Which orderings the models prove needed
//!
//! `scripts/orderings.sh` weakens each ordering alone and runs the loom
//! models (docs/experiments.md#memory-ordering-survey). Caught: `tail`'s
//! Release stores in `push_back` and `push_back_batch`, and in
//! `steal_into` for the thief's own thieves
//! (`a_stolen_task_is_stolen_again`); the Acquire loads of `head` in
//! `push_back` and of `head`/`tail` in a thief's claim; the Release half of
//! `pop`'s CAS and of a thief's release CAS; the Acquire failure ordering of
//! the claim's CAS. The others pass every model when weakened alone, and
//! are kept for these reasons:
//! - `Inner::len`'s two loads: a snapshot for hints and metrics; whoever
//!   acts on it re-decides with a CAS. Stronger than needed.
//! - `remaining_slots` and `push_back_batch` both load `head` with Acquire
//!   before the owner reuses slots a thief copied; either one orders that
//!   copy first (a later load of the same word never reads an older
//!   value), so each survives alone; both made Relaxed together,
//!   `inject::loom_tests::batch_pop_into_a_ring_a_thief_is_copying_then_overflow`
//!   fails. Both kept: each function is safe on its own.
//! - `pop`'s first load and its CAS's Acquire half and failure ordering:
//!   the owner takes slots it wrote itself. `steal_into`'s load of `dst`'s
//!   `head` also orders the copies of `dst`'s own thieves before `dst`'s
//!   slots are refilled; a worker steals only after its `pop` loaded `head`
//!   (Acquire) and found the ring empty, which orders them too. A model of
//!   a thief refilling a slot its own thief copied did not fail even with
//!   both loads made Relaxed: not reached within the bound, or ordered by
//!   a CAS of `pop` in between; not resolved, both kept.
//! - The overflow claim's CAS (`push_overflow`): expects `steal == real`,
//!   so no thief is copying, and takes slots the owner published itself.
//! - A thief's claim CAS (Acquire and Release halves): the slots' contents
//!   are ordered by the Acquire load of `tail` before it, and nothing
//!   before the claim needs publishing. Its release CAS's Acquire half and
//!   failure ordering: the thief reads nothing after it.

use std::marker::PhantomData;
use std::mem::MaybeUninit;

use crate::util::loom::cell::UnsafeCell;
use crate::util::loom::sync::Arc;
use crate::util::loom::sync::atomic::{AtomicU32, AtomicU64, Ordering};

/// Slots per local queue.
#[cfg(not(loom))]
pub(crate) const CAPACITY: usize = 256;
#[cfg(loom)]
pub(crate) const CAPACITY: usize = 4;

const MASK: u32 = CAPACITY as u32 - 1;
const HALF: u32 = CAPACITY as u32 / 2;

/// Where the owner sends half of a full queue.
pub(crate) trait Overflow<T> {
    fn push_batch(&self, tasks: impl Iterator<Item = T>);
}

/// What happened to a task given to [`Local::push_back`].
#[must_use = "an overflow moved tasks to the inject queue: idle workers may need a wake-up"]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Pushed {
    /// The task is in the local ring.
    Local,
    /// The task (and possibly half of the ring) went to the overflow sink.
    Overflowed,
}

struct Inner<T> {
    /// `(steal, real)` packed as `steal << 32 | real`.
    head: AtomicU64,
    tail: AtomicU32,
    buffer: Box<[UnsafeCell<MaybeUninit<T>>]>,
}

// SAFETY: an `Inner` owns the `T`s in its slots and gives them out only by
// value (`take`), never as `&T`: sending it sends those `T`s, which
// `T: Send` allows.
unsafe impl<T: Send> Send for Inner<T> {}
// Sound: through `&Inner` a slot is reached only by the unsafe `take` and
// `put`, whose callers first get the slot to themselves through the
// head/tail protocol above: the one `Local` (neither `Clone` nor `Sync`) is
// the only writer, a claim CAS on `head` gives slots to one thread, and
// `tail`'s Release/Acquire publishes what a slot holds. Two threads never
// touch one slot at once, and a `T` crosses threads only by value, so
// `T: Send` is all that needs (no `&T` is ever shared: no `T: Sync`).
// SAFETY: one thread per slot at a time; `T`s cross by value.
unsafe impl<T: Send> Sync for Inner<T> {}

/// The owner's handle: push and pop. `Send` but not `Sync`: exactly one
/// thread at a time may use it.
pub(crate) struct Local<T> {
    inner: Arc<Inner<T>>,
    _not_sync: PhantomData<std::cell::Cell<()>>,
}

/// A thief's handle: steal half, check emptiness.
pub(crate) struct Steal<T>(Arc<Inner<T>>);

impl<T> Clone for Steal<T> {
    fn clone(&self) -> Self {
        Steal(self.0.clone())
    }
}

/// Creates a local queue and its stealer handle.
pub(crate) fn local<T>() -> (Local<T>, Steal<T>) {
    let buffer = (0..CAPACITY)
        .map(|_| UnsafeCell::new(MaybeUninit::uninit()))
        .collect();
    let inner = Arc::new(Inner {
        head: AtomicU64::new(0),
        tail: AtomicU32::new(0),
        buffer,
    });
    (
        Local {
            inner: inner.clone(),
            _not_sync: PhantomData,
        },
        Steal(inner),
    )
}

#[inline]
fn unpack(head: u64) -> (u32, u32) {
    ((head >> 32) as u32, head as u32)
}

// `|` and `^` agree here (the halves never overlap): that mutant is
// equivalent. Dropping either half is not, and
// `loom_tests::a_thief_steals_after_the_owner_popped` catches it.
#[inline]
fn pack(steal: u32, real: u32) -> u64 {
    ((steal as u64) << 32) | real as u64
}

impl<T> Inner<T> {
    /// Moves the task out of slot `pos`.
    ///
    /// # Safety
    /// The caller has slot `pos` to itself and it holds a task no one has
    /// taken: a published slot it claimed through the protocol (owner pop,
    /// stealer claim or overflow claim), or (`steal_into`) an unpublished
    /// slot of its own ring that it has just written. The slot is empty
    /// afterwards: the caller takes it once.
    #[inline]
    unsafe fn take(&self, pos: u32) -> T {
        self.buffer[(pos & MASK) as usize]
            // SAFETY: the caller has the slot to itself and it is
            // initialised (the contract above); the task is moved out once.
            .with(|slot| unsafe { std::ptr::read(slot).assume_init() })
    }

    /// Writes a task into slot `pos`.
    ///
    /// # Safety
    /// The caller is this ring's owner (it holds its `Local`: a thief
    /// writes only into its *own* ring), and no thread can read slot `pos`:
    /// it is unpublished (at or past `tail`) and no thief is copying it
    /// (`pos - steal < CAPACITY`, `steal` loaded with Acquire). A task
    /// still in it would be overwritten, not dropped.
    #[inline]
    unsafe fn put(&self, pos: u32, task: T) {
        self.buffer[(pos & MASK) as usize]
            // SAFETY: the caller has exclusive access to the unpublished slot.
            .with_mut(|slot| unsafe { slot.write(MaybeUninit::new(task)) });
    }

    fn len(&self) -> u32 {
        let (_, real) = unpack(self.head.load(Ordering::Acquire));
        self.tail.load(Ordering::Acquire).wrapping_sub(real)
    }
}

impl<T> Local<T> {
    /// Tasks in the ring (a stealer may be taking some right now).
    pub(crate) fn len(&self) -> usize {
        self.inner.len() as usize
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.inner.len() == 0
    }

    /// Slots the owner can fill without overflowing.
    pub(crate) fn remaining_slots(&self) -> usize {
        let (steal, _) = unpack(self.inner.head.load(Ordering::Acquire));
        let tail = self.inner.tail.load(Ordering::Relaxed);
        CAPACITY - tail.wrapping_sub(steal) as usize
    }

    /// Appends a task; when the ring is full, moves half of it and the task
    /// to `overflow`.
    #[inline]
    pub(crate) fn push_back(&self, mut task: T, overflow: &impl Overflow<T>) -> Pushed {
        let tail = loop {
            let (steal, real) = unpack(self.inner.head.load(Ordering::Acquire));
            let tail = self.inner.tail.load(Ordering::Relaxed);
            if tail.wrapping_sub(steal) < CAPACITY as u32 {
                break tail;
            }
            if steal != real {
                // A stealer is emptying half the ring; it cannot be waited
                // for, so this one task goes to the sink.
                overflow.push_batch(std::iter::once(task));
                return Pushed::Overflowed;
            }
            match self.push_overflow(task, real, tail, overflow) {
                Ok(()) => return Pushed::Overflowed,
                // A stealer took tasks in between: there may be room now.
                Err(back) => task = back,
            }
        };
        // Sound: only the owner writes (this `Local`); the slot is past the
        // published `tail`, and `tail - steal < CAPACITY` with `head` loaded
        // Acquire, so a thief that copied out of it is done (its release
        // CAS moved `steal` past it) and no thief reads it now.
        // SAFETY: the slot is the owner's alone (argued above).
        unsafe { self.inner.put(tail, task) };
        self.inner
            .tail
            .store(tail.wrapping_add(1), Ordering::Release);
        Pushed::Local
    }

    #[cold]
    fn push_overflow(
        &self,
        task: T,
        real: u32,
        tail: u32,
        sink: &impl Overflow<T>,
    ) -> Result<(), T> {
        debug_assert_eq!(tail.wrapping_sub(real), CAPACITY as u32);
        let claimed = real.wrapping_add(HALF);
        // Claim the older half by moving both positions past it. Failure
        // means a stealer got there first.
        if self
            .inner
            .head
            .compare_exchange(
                pack(real, real),
                pack(claimed, claimed),
                Ordering::AcqRel,
                Ordering::Relaxed,
            )
            .is_err()
        {
            return Err(task);
        }
        // Sound: the CAS above (from `(real, real)`: no thief active) gave
        // the owner slots `real..claimed`, which it published itself. They
        // are taken lazily, inside `push_batch`, which does not touch this
        // ring: until it returns, this thread (the only writer) writes none.
        // SAFETY: slots `real..claimed` are the owner's (argued above).
        let batch = (0..HALF).map(|i| unsafe { self.inner.take(real.wrapping_add(i)) });
        sink.push_batch(batch.chain(std::iter::once(task)));
        Ok(())
    }

    /// Appends every task of `tasks`. The caller guarantees they fit:
    /// `tasks` yields at most [`remaining_slots`](Self::remaining_slots).
    pub(crate) fn push_back_batch(&self, tasks: impl Iterator<Item = T>) {
        let (steal, _) = unpack(self.inner.head.load(Ordering::Acquire));
        let start = self.inner.tail.load(Ordering::Relaxed);
        let mut tail = start;
        for task in tasks {
            assert!(
                tail.wrapping_sub(steal) < CAPACITY as u32,
                "push_back_batch given more tasks than free slots"
            );
            // Sound: only the owner writes (this `Local`); the slot is past
            // the published `tail`, and no thief reads it: asserted above
            // against a `steal` loaded Acquire (`steal` only grows, so an
            // old value errs on the safe side).
            // SAFETY: the slot is the owner's alone (argued above).
            unsafe { self.inner.put(tail, task) };
            tail = tail.wrapping_add(1);
        }
        if tail != start {
            self.inner.tail.store(tail, Ordering::Release);
        }
    }

    /// Takes the oldest task.
    #[inline]
    pub(crate) fn pop(&self) -> Option<T> {
        let mut head = self.inner.head.load(Ordering::Acquire);
        let pos = loop {
            let (steal, real) = unpack(head);
            if real == self.inner.tail.load(Ordering::Relaxed) {
                return None;
            }
            let next_real = real.wrapping_add(1);
            // While no stealer is active both positions move together.
            let next = if steal == real {
                pack(next_real, next_real)
            } else {
                pack(steal, next_real)
            };
            match self
                .inner
                .head
                .compare_exchange(head, next, Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(_) => break real,
                Err(actual) => head = actual,
            }
        };
        // SAFETY: the CAS moved `real` past `pos`, claiming it for the owner
        // alone (a thief's claim is a CAS on the same word, so the two are
        // ordered); `pos < tail`, a slot the owner published itself.
        Some(unsafe { self.inner.take(pos) })
    }
}

impl<T> Steal<T> {
    pub(crate) fn is_empty(&self) -> bool {
        self.0.len() == 0
    }

    /// Tasks in the ring (a racy snapshot).
    pub(crate) fn len(&self) -> usize {
        self.0.len() as usize
    }

    /// Moves about half of this queue's tasks into `dst` and returns one of
    /// them to run. `None` when there was nothing to take, another stealer
    /// was active, or `dst` is more than half full.
    pub(crate) fn steal_into(&self, dst: &Local<T>) -> Option<T> {
        let dst_tail = dst.inner.tail.load(Ordering::Relaxed);
        let (dst_steal, _) = unpack(dst.inner.head.load(Ordering::Acquire));
        // A steal copies at most HALF tasks, so a thief holding HALF still
        // has room: `>=` here (refusing it) would be a policy change, not a
        // fault, and no model or test tells the two apart.
        if dst_tail.wrapping_sub(dst_steal) > HALF {
            return None;
        }
        let n = self.claim_and_copy(dst, dst_tail);
        if n == 0 {
            return None;
        }
        let last = dst_tail.wrapping_add(n - 1);
        // Sound: `claim_and_copy` wrote `n` tasks into dst's unpublished
        // slots starting at `dst_tail` (this thread owns `dst`: a `&Local`
        // is not `Sync`, and dst's thieves read only below its `tail`); the
        // last one is taken back here and the rest published below.
        // SAFETY: slot `last` holds a task this thread wrote (argued above).
        let task = unsafe { dst.inner.take(last) };
        // With one task `last` is `dst_tail`: storing it would write the
        // value the tail already holds (so `>=` here is an equivalent
        // mutant).
        if n > 1 {
            dst.inner.tail.store(last, Ordering::Release);
        }
        Some(task)
    }

    /// Claims half of the tasks, copies them to `dst` starting at
    /// `dst_tail`, then releases the claim. Returns how many were copied.
    fn claim_and_copy(&self, dst: &Local<T>, dst_tail: u32) -> u32 {
        let src = &*self.0;
        let mut head = src.head.load(Ordering::Acquire);
        let (first, n) = loop {
            let (steal, real) = unpack(head);
            if steal != real {
                return 0; // another stealer is active
            }
            let available = src.tail.load(Ordering::Acquire).wrapping_sub(real);
            let n = available - available / 2;
            if n == 0 {
                return 0;
            }
            // Claim `real..real+n`: advance `real`, leave `steal` behind so
            // the owner does not overwrite the slots being copied.
            let next = pack(steal, real.wrapping_add(n));
            match src
                .head
                .compare_exchange(head, next, Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(_) => {
                    head = next;
                    break (real, n);
                }
                Err(actual) => head = actual,
            }
        };
        for i in 0..n {
            // Sound: the CAS above claimed source slots `first..first + n`
            // for this thread: another thief backs off while `steal` and
            // `real` differ, and the owner pops only above them and writes
            // only within `CAPACITY` of `steal`, left at `first` until the
            // release below. They are published: below the `tail` loaded
            // with Acquire. The destination slots are past dst's tail,
            // unpublished; only this thread (dst's owner) writes them, and
            // no thief of dst reads them: `dst_tail - dst_steal <= HALF`
            // (checked by `steal_into`) and `n <= HALF` keep them within
            // `CAPACITY` of dst's `steal`.
            // SAFETY: the source slots are claimed and published, the destination slots unread
            // (argued above).
            unsafe {
                let task = src.take(first.wrapping_add(i));
                dst.inner.put(dst_tail.wrapping_add(i), task);
            }
        }
        // Release the claim: `steal` catches up with `real`, which the owner
        // may have advanced meanwhile.
        loop {
            let (_, real) = unpack(head);
            match src.head.compare_exchange(
                head,
                pack(real, real),
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) => return n,
                Err(actual) => {
                    let (steal, real) = unpack(actual);
                    debug_assert_ne!(steal, real, "the claim vanished under a stealer");
                    head = actual;
                }
            }
        }
    }
}

impl<T> Drop for Inner<T> {
    fn drop(&mut self) {
        // Last handle gone: no concurrent access remains.
        let (_, real) = unpack(self.head.load(Ordering::Relaxed));
        let tail = self.tail.load(Ordering::Relaxed);
        let mut pos = real;
        while pos != tail {
            // SAFETY: `&mut self`, the last handle gone: no thief is copying
            // (it would hold a `Steal`), so `real..tail` are published tasks
            // no one took, each taken once here.
            drop(unsafe { self.take(pos) });
            pos = pos.wrapping_add(1);
        }
    }
}

#[cfg(all(test, loom))]
mod loom_tests;
#[cfg(all(test, not(loom)))]
mod tests;
