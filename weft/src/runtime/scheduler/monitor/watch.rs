//! What a worker slot publishes for the monitor: [`PollWatch`].
//!
//! Per poll, the slot's thread makes three relaxed stores on its own cache
//! line (a sequence number, odd inside a poll, the polled task's label and
//! lane word, and the task's address, which dumps use as its id); no clock
//! read, no read-modify-write. The slot's thread also publishes its last
//! clock reading (`clock_ns`) whenever it reads the clock anyway (periodic
//! checks, wake-ups, timed polls), which dumps take as the start of the
//! poll in progress. The monitor reads them by sampling:
//! a slot showing the same odd number at two samples has been inside one
//! poll since the first. The label is read as a seqlock (`PollWatch::label`):
//! every field is atomic and the label `'static`, so a torn read is
//! detected, never undefined.
//!
//! The thread running a slot is published under a lock (`thread_id`), not
//! an atomic: the monitor acts on that thread with system calls, and the
//! lock keeps the thread from ending meanwhile (correctness: a signal or a
//! priority change never reaches a thread id that was reused). Pinned by
//! `runtime/sys.rs`'s tests of the calls and `lanes.rs`'s demotion tests.

use std::panic::Location;
// `std` atomics, not loom's: the monitor reads them by sampling, which is
// timing, not a protocol, and as loom atomics they would add states to
// every worker model (each poll writes them). The exception is the
// demotion flag and the thread id's lock, which the monitor and the slot's
// thread both write: loom's under `cfg(loom)` (`loom_tests.rs`).
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU64, AtomicUsize, Ordering};

use crate::runtime::task::TaskMeta;
use crate::runtime::task::label::Label;

/// The poll a worker slot is in, published for the monitor.
#[derive(Default)]
pub(crate) struct PollWatch {
    /// Odd while the slot's thread is inside a poll.
    seq: AtomicU64,
    /// The polled task's lane-and-label word (`runtime/task/lane.rs`).
    label: AtomicUsize,
    /// The polled task's address: compared by dumps, never dereferenced.
    task: AtomicUsize,
    /// The slot's thread's last clock reading, ns on the registry's clock
    /// (`runtime/task/registry.rs`); 0 before the first.
    clock_ns: AtomicU64,
    /// The `seq` of a poll the monitor saw run past `slow_poll_threshold`.
    pub(super) slow_seq: AtomicU64,
    /// The monitor found this slot stalled at its last sample: other
    /// threads take its queued tasks before their own inject work.
    stalled: AtomicBool,
    /// The kernel id of the thread running this slot (0: none). A lock, not
    /// an atomic, because the monitor acts on that id with system calls
    /// (`setpriority`, `sched_setattr`, `tgkill`): it holds this lock across
    /// each call, and a thread clears its id under it before it can end
    /// ([`ThreadOnSlot`]), so an id the monitor acts on always names the
    /// live thread running this slot, never one that reused the number.
    thread_id: crate::util::locks::Mutex<i32>,
    /// The monitor lowered the priority of the thread running this slot:
    /// after its poll it hands the slot to a thread of normal priority.
    /// Written under `thread_id`'s lock only: raised by the monitor
    /// (`demote`), lowered by the slot's next thread as it publishes its
    /// id (`attach`) or by the demoted thread given its priority back
    /// (`restore_thread_priority`); read without it after each poll.
    thread_demoted: crate::util::loom::sync::atomic::AtomicBool,
    /// The demoted thread's nice value before (written and read under
    /// `thread_id`'s lock).
    pub(super) demoted_from: AtomicI32,
}

/// A thread's hold on a slot's [`PollWatch`]: dropping it clears the
/// thread's id there (under the watch's lock, so after the drop no system
/// call of the monitor can name this thread).
pub(crate) struct ThreadOnSlot<'a> {
    watch: &'a PollWatch,
    tid: i32,
}

impl Drop for ThreadOnSlot<'_> {
    fn drop(&mut self) {
        let mut tid = self.watch.lock_thread_id();
        // Another thread may run the slot already (it attached after a
        // hand-back): its id stays.
        if *tid == self.tid {
            *tid = 0;
        }
    }
}

impl PollWatch {
    /// A poll of `meta`'s task starts; `seq` is odd.
    #[inline]
    pub(crate) fn begin(&self, seq: u64, meta: &TaskMeta) {
        // The seqlock's writer side: a monitor that reads this label has,
        // after its Acquire fence, the previous poll's `end` store in view,
        // so its re-read of `seq` sees the poll it sampled is over (without
        // this fence the new label could pair with the old number; a
        // compiler barrier on x86). The same pairing makes what this
        // thread sees of the label's interned pair (`runtime/task/label.rs`, made
        // on another thread) visible to the monitor that decodes it.
        std::sync::atomic::fence(Ordering::Release);
        self.label
            .store(meta.lane_and_label_bits(), Ordering::Relaxed);
        self.task
            .store(std::ptr::from_ref(meta) as usize, Ordering::Relaxed);
        // Release: a monitor that reads this `seq` reads the label above
        // (or a later one, which its second read of `seq` detects).
        self.seq.store(seq, Ordering::Release);
    }

    /// The poll started with `seq - 1` has returned.
    #[inline]
    pub(crate) fn end(&self, seq: u64) {
        self.seq.store(seq, Ordering::Release);
    }

    /// The slot's thread read the clock (`ns` on the registry's clock).
    #[inline]
    pub(crate) fn publish_clock(&self, ns: u64) {
        self.clock_ns.store(ns, Ordering::Relaxed);
    }

    /// The poll in progress, for a dump: the task's address, its
    /// lane-and-label word and the slot's last clock reading before the
    /// poll began (or the slot's current clock, if a timed poll just
    /// ended). `None` between polls or if the poll changed while it was
    /// read (a seqlock read, as in [`label`](Self::label)).
    pub(crate) fn running(&self) -> Option<(usize, usize, u64)> {
        let seq = self.seq.load(Ordering::Acquire);
        if seq % 2 == 0 {
            return None;
        }
        let bits = self.label.load(Ordering::Relaxed);
        let task = self.task.load(Ordering::Relaxed);
        let clock_ns = self.clock_ns.load(Ordering::Relaxed);
        std::sync::atomic::fence(Ordering::Acquire);
        (self.seq.load(Ordering::Relaxed) == seq && Label::from_bits(bits).is_some())
            .then_some((task, bits, clock_ns))
    }

    /// Whether the monitor marked the poll `seq` as slow.
    #[inline]
    pub(crate) fn is_slow(&self, seq: u64) -> bool {
        self.slow_seq.load(Ordering::Relaxed) == seq
    }

    pub(super) fn seq(&self) -> u64 {
        self.seq.load(Ordering::Acquire)
    }

    /// The slot's last published number, for the next `Core` of the slot
    /// to continue from (read by the thread about to run the slot).
    pub(crate) fn current_seq(&self) -> u64 {
        self.seq.load(Ordering::Relaxed)
    }

    /// The calling thread now runs this slot, until the returned guard
    /// drops (before the thread can end, even by unwinding).
    #[must_use = "the thread runs the slot while the guard lives"]
    pub(crate) fn attach_thread(&self) -> ThreadOnSlot<'_> {
        self.attach(crate::runtime::sys::current_thread_id())
    }

    /// `attach_thread` for thread `tid`. The flag is lowered under the
    /// lock, with the id: a monitor that finds `tid` here and lowers its
    /// priority then raises the flag after this, so the thread learns it
    /// after its poll. (Lowered after the lock, as it once was, it could
    /// erase the raise of a monitor that came in between: a thread running
    /// lowered for good, never handing its slot back.)
    pub(super) fn attach(&self, tid: i32) -> ThreadOnSlot<'_> {
        let mut id = self.lock_thread_id();
        self.thread_demoted.store(false, Ordering::Relaxed);
        *id = tid;
        drop(id);
        ThreadOnSlot { watch: self, tid }
    }

    /// The monitor lowers the thread running this slot with `lower` (given
    /// its id; whether it succeeded), raising the flag first, under the
    /// lock: only once per thread. Whether it was lowered now.
    pub(super) fn demote(&self, lower: impl FnOnce(i32) -> bool) -> bool {
        self.with_thread(|tid| !self.thread_demoted.swap(true, Ordering::Relaxed) && lower(tid))
            == Some(true)
    }

    fn lock_thread_id(&self) -> crate::util::locks::MutexGuard<'_, i32> {
        // Nothing panics under this lock but the system calls' callers;
        // the id is valid either way.
        self.thread_id.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Runs `act` on the kernel id of the thread running this slot, if one
    /// is attached, while that thread cannot end (see `thread_id`).
    pub(super) fn with_thread<R>(&self, act: impl FnOnce(i32) -> R) -> Option<R> {
        let tid = self.lock_thread_id();
        (*tid != 0).then(|| act(*tid))
    }

    /// After a poll during which the monitor demoted the calling thread
    /// (the one running this slot): gives it its priority back if the
    /// process may raise priorities (`sys::restore_nice`); whether it did,
    /// and the thread then goes on running the slot as before. Under the
    /// thread lock, as the monitor's demotion is, so the two never
    /// interleave: the flag and the thread's nice value always agree.
    pub(crate) fn restore_thread_priority(&self) -> bool {
        self.restore_with(|tid, nice| crate::runtime::sys::restore_nice(tid, nice).is_ok())
    }

    /// `restore_thread_priority` with `raise` (given the thread's id and
    /// the nice value it had before; whether it succeeded) in place of the
    /// system call, so a model can stand in for the kernel.
    pub(super) fn restore_with(&self, raise: impl FnOnce(i32, i32) -> bool) -> bool {
        let tid = self.lock_thread_id();
        if *tid == 0 || !self.thread_demoted.load(Ordering::Relaxed) {
            return false;
        }
        if !raise(*tid, self.demoted_from.load(Ordering::Relaxed)) {
            return false;
        }
        self.thread_demoted.store(false, Ordering::Relaxed);
        true
    }

    /// Whether the thread running this slot was demoted (checked after each
    /// poll: one load of a line the slot's thread writes anyway).
    #[inline]
    pub(crate) fn is_thread_demoted(&self) -> bool {
        #[cfg(not(loom))]
        return self.thread_demoted.load(Ordering::Relaxed);
        // Under loom a read that is no point where loom may switch threads:
        // it runs after every poll of every worker model, where an atomic
        // load would multiply the interleavings for a flag nobody writes.
        #[cfg(loom)]
        // SAFETY: loom's `unsync_load` is memory-safe; it requires that no
        // store races the read, which loom checks: only the two models of
        // the flag (`a_thread_demoted_as_it_attaches_to_a_slot_learns_it`,
        // `a_thread_restoring_its_priority_as_the_monitor_demotes_it_ends_consistent`)
        // write it, and they read it after joining the other writer.
        // SAFETY: no store races this read (loom checks it; see above).
        return unsafe { self.thread_demoted.unsync_load() };
    }

    /// Whether the monitor last saw this slot stalled. (Made `true`, every
    /// thread was lowered at the first stall, a healthy worker's in the
    /// middle of 200 us polls, and ran on lowered: `lanes.rs`'s
    /// `only_the_stalled_polls_thread_is_lowered`.)
    #[inline]
    pub(crate) fn is_stalled(&self) -> bool {
        self.stalled.load(Ordering::Relaxed)
    }

    pub(crate) fn set_stalled(&self, stalled: bool) {
        if self.stalled.load(Ordering::Relaxed) != stalled {
            self.stalled.store(stalled, Ordering::Relaxed);
        }
    }

    /// The label of poll `seq`, if it is still the current one (a seqlock
    /// read, paired with the fence in `begin`: every field is atomic and
    /// the label `'static`, so a torn read is only detected, never
    /// undefined). Not modelled by loom (`std` atomics, see the imports).
    pub(super) fn label(
        &self,
        seq: u64,
    ) -> Option<(Option<&'static str>, &'static Location<'static>)> {
        let bits = self.label.load(Ordering::Relaxed);
        std::sync::atomic::fence(Ordering::Acquire);
        if self.seq.load(Ordering::Relaxed) != seq {
            return None;
        }
        let label = Label::from_bits(bits)?;
        Some((label.name(), label.spawned_at()))
    }
}
