//! The ready list of a `JoinSet`: its members whose task woke them, in the
//! order of the wakes, and the waker of whoever waits in `join_next`.
//!
//! # Invariants
//!
//! - A member is in the list at most once: its `queued` flag is raised by
//!   the wake that pushes it and lowered by `join_next` after popping it,
//!   *before* polling its handle. A wake that finds the flag up does
//!   nothing: the member is in the list, or popped and about to be polled.
//! - No wake is lost between the pop and the poll. The poll registers the
//!   member's waker with async-task by a read-modify-write of the task's
//!   state word, after the flag was lowered; the task's completion is a
//!   read-modify-write of the same word followed by taking the waker with
//!   another. Either the completion comes first in that word's order, and
//!   the poll sees it; or the completer takes the new registration, which
//!   orders the lowered flag before its wake, and the wake pushes again.
//!   (So the flag's own orderings carry nothing: its accesses are
//!   `Relaxed` read-modify-writes.)
//! - Only the set owns its list; a member points to it weakly. A task keeps
//!   its member as its awaiter after the set is dropped or detached, and a
//!   wake then would put the member in the list it points to: with a
//!   strong pointer, list and member would keep each other alive for good.
//! - The lock guards the list and the waiting waker only. Nothing is woken,
//!   cloned or dropped under it except `Member` references (weft's own
//!   reference counts): the waiting waker is taken out and woken after the
//!   unlock, its replacement is cloned before the lock, and what a
//!   replacement displaces is dropped after.

use std::collections::VecDeque;
use std::sync::{Arc, Weak};
use std::task::{Wake, Waker};

use crate::util::locks::{Mutex, MutexGuard};
use crate::util::loom::sync::atomic::{AtomicBool, Ordering};

/// The shared part of one `JoinSet`.
pub(super) struct ReadyList {
    inner: Mutex<Inner>,
}

struct Inner {
    woken: VecDeque<Arc<Member>>,
    /// The task waiting in `join_next` for the next wake.
    waiter: Option<Waker>,
}

/// One member of a set, as its task's awaiter: waking it queues it.
pub(super) struct Member {
    /// Gone once the set dropped or detached its members.
    list: Weak<ReadyList>,
    /// The member's slot in the set (checked against the slot's own
    /// `Member` when popped: the slot may have been emptied and reused).
    pub(super) index: usize,
    queued: AtomicBool,
}

impl ReadyList {
    pub(super) fn new() -> Arc<ReadyList> {
        Arc::new(ReadyList {
            inner: Mutex::new(Inner {
                woken: VecDeque::new(),
                waiter: None,
            }),
        })
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        // Every critical section is a push, a pop or a swap of an
        // `Option`: the state is consistent even after a panic elsewhere.
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The member woken first and not yet taken, if any.
    pub(super) fn pop(&self) -> Option<Arc<Member>> {
        self.lock().woken.pop_front()
    }

    /// As [`pop`](Self::pop); if none is woken, `waker` is woken by the
    /// next member's wake.
    pub(super) fn pop_or_wait(&self, waker: &Waker) -> Option<Arc<Member>> {
        if let Some(member) = self.pop() {
            return Some(member);
        }
        crate::util::locks::user_code("a waker's clone (a JoinSet's join_next)");
        let mine = waker.clone();
        let (member, unused) = {
            let mut inner = self.lock();
            match inner.woken.pop_front() {
                Some(member) => (Some(member), Some(mine)),
                None => match &inner.waiter {
                    // Only a saving: replacing a waker that would wake the
                    // same task (the guard `false`, a mutant) is equivalent.
                    Some(current) if current.will_wake(&mine) => (None, Some(mine)),
                    _ => (None, inner.waiter.replace(mine)),
                },
            }
        };
        crate::util::locks::user_code("a waker's drop (a JoinSet's join_next)");
        drop(unused);
        member
    }

    /// Empties the list and forgets the waiting waker; the caller drops
    /// what is returned, after the lock.
    ///
    /// Both callers then drop the list itself (`detach_all` replaces it, the
    /// set's drop frees it), which would drop these too: returning nothing
    /// (a mutant) is equivalent; this only makes the drop happen in
    /// `JoinSet::empty`, under its `user_code` check.
    pub(super) fn clear(&self) -> (VecDeque<Arc<Member>>, Option<Waker>) {
        let mut inner = self.lock();
        (std::mem::take(&mut inner.woken), inner.waiter.take())
    }
}

impl Member {
    pub(super) fn new(list: &Arc<ReadyList>, index: usize) -> Arc<Member> {
        Arc::new(Member {
            list: Arc::downgrade(list),
            index,
            queued: AtomicBool::new(false),
        })
    }

    /// Called after the member was popped and before its handle is
    /// polled: a wake from now on queues it again.
    pub(super) fn unqueue(&self) {
        // A read-modify-write, not a store: every access to the flag is
        // one, so they are totally ordered by what each read. (A plain
        // store is as correct, but loom orders it only by happens-before,
        // and lets a later wake read the `true` of an earlier wake that
        // found the flag up, with nothing ordering the two: a lost wake
        // the C++ model rules out.)
        self.queued.swap(false, Ordering::Relaxed);
    }
}

impl Wake for Member {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        if self.queued.swap(true, Ordering::Relaxed) {
            return;
        }
        let Some(list) = self.list.upgrade() else {
            return; // the set is gone
        };
        let waiter = {
            let mut inner = list.lock();
            inner.woken.push_back(self.clone());
            inner.waiter.take()
        };
        // After the unlock: this may be the list's last reference (the set
        // was dropped meanwhile), and the waiter is the user's waker.
        crate::util::locks::user_code("a waker's wake (a JoinSet member's wake)");
        drop(list);
        if let Some(waiter) = waiter {
            waiter.wake();
        }
    }
}
