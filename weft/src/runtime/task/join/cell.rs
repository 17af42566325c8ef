//! The state of a join handle, and how it is shared with abort handles.
//!
//! # States
//!
//! - `Waiting`: async-task's handle to the output; nobody asked to abort.
//! - `Aborting`: cancellation was requested; a boxed `Task::cancel`
//!   future that resolves once the task's future is gone (to its output if
//!   the task had completed first).
//! - `Ready`: the result is known and not yet taken (`None`: cancelled).
//! - `Taken`: the result was returned by a poll.
//! - `Busy`: a thread took the async-task handle out of the cell to call
//!   async-task without the lock (below); requests that arrive meanwhile
//!   are recorded in it.
//! - `Shared` (a `JoinHandle`'s own cell only): the state moved into an
//!   `Arc<Cell>` that [`AbortHandle`](crate::runtime::task::AbortHandle)s share.
//!   Once there it never moves back; the shared cell never holds `Shared`.
//!
//! # No call into async-task under the lock
//!
//! A call into async-task can run code weft does not own: requesting a
//! cancellation schedules an idle task, and after shutdown the schedule
//! function drops the task's future at once; polling the output wakes or
//! drops the previous awaiter's waker; detaching drops a completed output.
//! Any of these may re-enter the runtime or this very cell (a future whose
//! destructor aborts another task, a waker that polls a `JoinSet`). So the
//! cell's mutex is held only to move values in and out: a thread that must
//! call async-task takes the handle out (`Busy`), unlocks, calls, locks
//! again and puts the handle back. While it is out:
//!
//! - an `abort` records itself in `Busy`; the thread holding the handle
//!   requests the cancellation before it puts the handle back;
//! - the owner's poll (shared cells only: an owner's poll of its own cell
//!   has the handle exclusively) leaves its waker in `Busy`; it is woken
//!   once the handle is back, outside the lock;
//! - `is_finished` answers `false`.
//!
//! Wakers are cloned and dropped outside the lock too (a waker's clone and
//! drop are its owner's code): the values replaced under the lock are
//! carried out of it and dropped after.
//!
//! # The awaiter of a shared cell
//!
//! async-task keeps one awaiter per task: whoever polled the output last.
//! When an `AbortHandle` requests a cancellation or asks `is_finished`, it
//! polls the output too; with a waker of its own it would replace the
//! owner's, and the owner (a `JoinSet` waiting in `join_next`) would never
//! hear that the task ended. So a shared cell remembers the waker its owner
//! last polled with (`awaiter`), and every other poll uses that same waker.
//! async-task does not wake a waker about the poll it is making, so when
//! such a poll finds the task finished, the thread that made it wakes the
//! owner itself.
//!
//! # The owner's drop
//!
//! When the owner is dropped, its task's output must be dropped as soon
//! as the task completes (at once if it has), as when no `AbortHandle`
//! exists; but the task cannot be detached while `AbortHandle`s may still
//! abort it through the shared cell. So the drop gives the shared cell a
//! new owner, a reaper (`Reaper`): a waker that, when woken, makes the
//! owner's poll with itself as the waker and drops the output it gets.
//! Its first poll, in the owner's drop, drops an output already there, or
//! makes it the awaiter (the task's, and the one the `AbortHandle`s poll
//! with); from then on the protocol above wakes it as it would wake the
//! owner: async-task when the task ends (inside the completing thread's
//! run, or a cancellation's notify), or the thread that found the task
//! finished or put the handle back after the reaper found the cell `Busy`.
//! The output is moved out under the lock, so one poll gets it; a poll
//! after that only answers `PolledAfterReady`, which the reaper ignores.
//! The reaper holds the cell weakly: once the last `AbortHandle` is gone,
//! the cell's drop detaches the task, and async-task drops the output.
//!
//! The loom models in `join_set/loom_tests.rs` race an `AbortHandle`'s
//! abort against the owner's poll through this protocol, and the owner's
//! drop against a completion and an abort.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Weak};
use std::task::{Context, Poll, Wake, Waker};

use crate::util::locks::{Mutex, MutexGuard};

use super::super::{Contained, Panic, TaskMeta};

/// What a task produces: its output or its panic, in a wrapper whose drop
/// cannot abort the process (see `Contained`).
pub(super) type Output<T> = Contained<Result<T, Panic>>;
type RawTask<T> = async_task::FallibleTask<Output<T>, TaskMeta>;
type CancelFuture<T> = Pin<Box<dyn Future<Output = Option<Output<T>>> + Send>>;

/// The state of one join handle (see the module documentation).
pub(super) struct Cell<T> {
    inner: Mutex<Inner<T>>,
    /// Boxes async-task's `cancel` future: made where `T: 'static`
    /// is known, so that nothing else here needs those bounds.
    cancel: fn(RawTask<T>) -> CancelFuture<T>,
}

struct Inner<T> {
    state: State<T>,
    /// Shared cells: the waker the owner last polled with (module
    /// documentation). Always `None` in a handle's own cell.
    awaiter: Option<Waker>,
}

enum State<T> {
    Waiting(RawTask<T>),
    Aborting(CancelFuture<T>),
    Ready(Option<Output<T>>),
    Taken,
    Busy(Requests),
    /// `orphaned::<T>`, made where `T: 'static` is known: what the
    /// owner's drop does to the shared cell (below).
    Shared(Arc<Cell<T>>, fn(Arc<Cell<T>>)),
}

/// What arrived while the async-task handle was out of the cell.
#[derive(Default)]
struct Requests {
    abort: bool,
    /// The owner polled meanwhile: wake it once the handle is back.
    waiter: Option<Waker>,
}

/// The async-task handle, out of the cell.
enum Work<T> {
    Task(RawTask<T>),
    Cancel(CancelFuture<T>),
}

/// What a caller asks of the cell.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Want {
    /// The owner's poll, on a shared cell.
    Output,
    Abort,
    IsFinished,
}

/// What the cell answers.
#[must_use]
enum Answer<T> {
    Pending,
    Output(Option<Output<T>>),
    Finished(bool),
    Done,
    /// The owner polled after it had taken the result.
    PolledAfterReady,
}

/// Wakers carried out of the lock: to wake, and to drop.
#[derive(Default)]
struct Carried {
    wake: [Option<Waker>; 2],
    drop: [Option<Waker>; 2],
}

impl Carried {
    fn dropping(first: Option<Waker>, second: Option<Waker>) -> Carried {
        Carried {
            wake: [None, None],
            drop: [first, second],
        }
    }

    /// Called with no lock held.
    fn release(self) {
        crate::util::locks::user_code("a waker's wake or drop (a join handle's cell)");
        for waker in self.wake.into_iter().flatten() {
            waker.wake();
        }
        drop(self.drop);
    }
}

/// The first part of a request, decided under the lock.
#[must_use]
enum Start<T> {
    Answer(Answer<T>, Carried),
    /// The handle is out (the state is `Busy`); `awaiter` is the waker a
    /// request other than the owner's polls with.
    Work {
        work: Work<T>,
        awaiter: Option<Waker>,
        carried: Carried,
    },
}

/// The part after a call into async-task, decided under the lock.
#[must_use]
enum Then<T> {
    /// An abort arrived while the handle was out: the handle stays out to
    /// request it.
    Cancel(Work<T>, Option<Waker>),
    Finish(Answer<T>, Carried),
}

fn start_cancel<T: 'static>(task: RawTask<T>) -> CancelFuture<T> {
    Box::pin(task.cancel())
}

impl<T> Work<T> {
    /// One call into async-task: requests the cancellation first if
    /// `abort` (and it was not requested yet), then polls the output.
    /// Never called with a cell's lock held.
    fn step(
        self,
        abort: bool,
        cancel: fn(RawTask<T>) -> CancelFuture<T>,
        cx: &mut Context<'_>,
    ) -> Result<Option<Output<T>>, Work<T>> {
        // async-task clones the caller's waker and drops the one it
        // replaces; a cancellation's poll may drop the task's output.
        crate::util::locks::user_code(
            "a join handle's poll (wakers' clone and drop, an output's drop)",
        );
        let mut future = match self {
            Work::Task(task) if abort => cancel(task),
            Work::Task(mut task) => {
                return match Pin::new(&mut task).poll(cx) {
                    Poll::Ready(output) => Ok(output),
                    Poll::Pending => Err(Work::Task(task)),
                };
            }
            Work::Cancel(future) => future,
        };
        match future.as_mut().poll(cx) {
            Poll::Ready(output) => Ok(output),
            Poll::Pending => Err(Work::Cancel(future)),
        }
    }

    fn into_state(self) -> State<T> {
        match self {
            Work::Task(task) => State::Waiting(task),
            Work::Cancel(future) => State::Aborting(future),
        }
    }
}

impl<T: 'static> Cell<T> {
    pub(super) fn new(task: async_task::Task<Output<T>, TaskMeta>) -> Cell<T> {
        Cell::with_state(State::Waiting(task.fallible()))
    }

    /// A cell whose task was refused at spawn: cancelled.
    pub(super) fn cancelled() -> Cell<T> {
        Cell::with_state(State::Ready(None))
    }

    /// The cell an `AbortHandle` holds: this one's state, moved into a
    /// shared cell the first time.
    pub(super) fn share(&self) -> Arc<Cell<T>> {
        let mut inner = self.lock();
        if let State::Shared(shared, _) = &inner.state {
            return shared.clone();
        }
        // A `Busy` state moves too: the thread holding the handle finds
        // the shared cell through `locked` when it puts the handle back.
        let state = std::mem::replace(&mut inner.state, State::Taken);
        let shared = Arc::new(Cell {
            inner: Mutex::new(Inner {
                state,
                awaiter: None,
            }),
            cancel: self.cancel,
        });
        inner.state = State::Shared(shared.clone(), orphaned::<T>);
        shared
    }

    fn with_state(state: State<T>) -> Cell<T> {
        Cell {
            inner: Mutex::new(Inner {
                state,
                awaiter: None,
            }),
            cancel: start_cancel::<T>,
        }
    }
}

impl<T> Cell<T> {
    fn lock(&self) -> MutexGuard<'_, Inner<T>> {
        // Every critical section is a few moves that cannot panic midway,
        // so a poisoned lock still guards a consistent state.
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Runs `f` on the state under the lock, following a handle's own
    /// cell to the shared one once it was shared.
    fn locked<R>(&self, f: impl FnOnce(&mut Inner<T>) -> R) -> R {
        let mut inner = self.lock();
        if let State::Shared(shared, _) = &inner.state {
            let shared = shared.clone();
            drop(inner);
            // Never the last reference: the own cell keeps one.
            return shared.locked(f);
        }
        f(&mut inner)
    }

    /// Requests the task's cancellation (see `JoinHandle::abort`).
    pub(super) fn abort(&self) {
        let _ = self.drive(Want::Abort, None);
    }

    /// Whether the task has finished (see `JoinHandle::is_finished`).
    pub(super) fn is_finished(&self) -> bool {
        matches!(self.drive(Want::IsFinished, None), Answer::Finished(true))
    }

    /// The owner's poll, with the handle borrowed exclusively: its own
    /// cell needs no lock (nobody else can reach it), a shared one does.
    pub(super) fn poll_owner(&mut self, cx: &mut Context<'_>) -> Poll<Option<Output<T>>> {
        let cancel = self.cancel;
        let inner = self.inner.get_mut().unwrap_or_else(|e| e.into_inner());
        if let State::Shared(shared, _) = &inner.state {
            return match shared.drive(Want::Output, Some(cx)) {
                Answer::Output(output) => Poll::Ready(output),
                Answer::PolledAfterReady => polled_after_ready(),
                _ => Poll::Pending,
            };
        }
        let work = match std::mem::replace(&mut inner.state, State::Taken) {
            State::Waiting(task) => Work::Task(task),
            State::Aborting(future) => Work::Cancel(future),
            State::Ready(output) => return Poll::Ready(output),
            State::Taken => polled_after_ready(),
            State::Busy(_) | State::Shared(..) => {
                unreachable!("an exclusive borrow leaves nobody else holding the task")
            }
        };
        match work.step(false, cancel, cx) {
            Ok(output) => Poll::Ready(output),
            Err(work) => {
                inner.state = work.into_state();
                Poll::Pending
            }
        }
    }

    /// Serves one request through `&self` (module documentation): decide
    /// under the lock, call async-task outside it, put the handle back
    /// under the lock, wake and drop wakers outside it.
    fn drive(&self, want: Want, mut owner: Option<&mut Context<'_>>) -> Answer<T> {
        // The owner's waker, cloned before the lock is taken.
        crate::util::locks::user_code("a waker's clone (a join handle's poll)");
        let mine = owner.as_ref().map(|cx| cx.waker().clone());
        let (mut work, mut awaiter) = match self.locked(|inner| inner.start(want, mine)) {
            Start::Answer(answer, carried) => {
                carried.release();
                return answer;
            }
            Start::Work {
                work,
                awaiter,
                carried,
            } => {
                carried.release();
                (work, awaiter)
            }
        };
        let mut abort = want == Want::Abort;
        loop {
            let result = match owner.as_deref_mut() {
                Some(cx) => work.step(abort, self.cancel, cx),
                None => {
                    let waker = awaiter.as_ref().unwrap_or(Waker::noop());
                    work.step(abort, self.cancel, &mut Context::from_waker(waker))
                }
            };
            match self.locked(|inner| inner.finish(want, result, awaiter)) {
                Then::Cancel(again, kept) => {
                    (work, awaiter, abort) = (again, kept, true);
                }
                Then::Finish(answer, carried) => {
                    carried.release();
                    return answer;
                }
            }
        }
    }
}

impl<T> Inner<T> {
    /// Under the lock: answers at once, or takes the handle out (`Busy`).
    /// `mine` is the owner's waker (`Want::Output` only).
    fn start(&mut self, want: Want, mine: Option<Waker>) -> Start<T> {
        let answer = match (&mut self.state, want) {
            (State::Shared(..), _) => unreachable!("`locked` follows a shared cell"),
            (State::Busy(requests), Want::Output) => {
                let replaced = std::mem::replace(&mut requests.waiter, mine);
                return Start::Answer(Answer::Pending, Carried::dropping(replaced, None));
            }
            (State::Busy(requests), Want::Abort) => {
                requests.abort = true;
                Answer::Done
            }
            (State::Busy(_), Want::IsFinished) => Answer::Finished(false),
            (State::Ready(output), Want::Output) => {
                let output = output.take();
                self.state = State::Taken;
                let stale = self.awaiter.take();
                return Start::Answer(Answer::Output(output), Carried::dropping(mine, stale));
            }
            (State::Taken, Want::Output) => Answer::PolledAfterReady,
            (State::Ready(_) | State::Taken, Want::IsFinished) => Answer::Finished(true),
            (State::Waiting(task), Want::IsFinished) => Answer::Finished(task.is_finished()),
            (State::Ready(_) | State::Taken | State::Aborting(_), Want::Abort) => Answer::Done,
            // Polled by the owner, aborted, or an abort's progress asked.
            (State::Waiting(_) | State::Aborting(_), _) => return self.take_out(want, mine),
        };
        Start::Answer(answer, Carried::dropping(mine, None))
    }

    fn take_out(&mut self, want: Want, mine: Option<Waker>) -> Start<T> {
        let work = match std::mem::replace(&mut self.state, State::Busy(Requests::default())) {
            State::Waiting(task) => Work::Task(task),
            State::Aborting(future) => Work::Cancel(future),
            _ => unreachable!("only a waiting or aborting task is taken out"),
        };
        if want != Want::Output {
            // Back in the cell in `finish`, unless the task ended.
            let awaiter = self.awaiter.take();
            return Start::Work {
                work,
                awaiter,
                carried: Carried::default(),
            };
        }
        // The owner polls with its own context; it leaves its waker for
        // the other requests' polls.
        let unused = match (&self.awaiter, mine) {
            (Some(current), Some(mine)) if current.will_wake(&mine) => Some(mine),
            (_, mine) => std::mem::replace(&mut self.awaiter, mine),
        };
        Start::Work {
            work,
            awaiter: None,
            carried: Carried::dropping(unused, None),
        }
    }

    /// Under the lock, after a call into async-task: puts the handle or the
    /// result back and says who to wake.
    fn finish(
        &mut self,
        want: Want,
        result: Result<Option<Output<T>>, Work<T>>,
        awaiter: Option<Waker>,
    ) -> Then<T> {
        let State::Busy(requests) = std::mem::replace(&mut self.state, State::Taken) else {
            unreachable!("only the thread holding the task ends `Busy`")
        };
        let output = match result {
            Err(Work::Task(task)) if requests.abort => {
                self.state = State::Busy(Requests {
                    abort: false,
                    waiter: requests.waiter,
                });
                return Then::Cancel(Work::Task(task), awaiter);
            }
            Err(work) => {
                self.state = work.into_state();
                if want != Want::Output {
                    self.awaiter = awaiter;
                }
                let answer = match want {
                    Want::Output => Answer::Pending,
                    Want::Abort => Answer::Done,
                    Want::IsFinished => Answer::Finished(false),
                };
                let carried = Carried {
                    wake: [requests.waiter, None],
                    drop: [None, None],
                };
                return Then::Finish(answer, carried);
            }
            Ok(output) => output,
        };
        if want == Want::Output {
            // The owner takes the result; its waker is no longer needed.
            let stale = self.awaiter.take();
            return Then::Finish(Answer::Output(output), Carried::dropping(stale, None));
        }
        self.state = State::Ready(output);
        let answer = match want {
            Want::IsFinished => Answer::Finished(true),
            _ => Answer::Done,
        };
        // This poll used the owner's waker, so async-task may have left
        // the owner unwoken (module documentation): wake it here. (The
        // models cannot reach the loss this prevents: it needs this poll
        // between async-task's state update and its notify at the end of
        // a run, two of async-task's own atomic steps with no loom
        // operation between them.)
        let carried = Carried {
            wake: [requests.waiter, awaiter],
            drop: [None, None],
        };
        Then::Finish(answer, carried)
    }
}

impl<T> Drop for Cell<T> {
    fn drop(&mut self) {
        // async-task cancels a task whose handle is dropped; weft's (and
        // tokio's) contract is to detach it. (Nobody holds the task out:
        // that thread would hold a reference to this cell.)
        // Detaching may drop a finished task's output; an output or a
        // cancellation left in the cell is dropped here too. A shared
        // cell lets go of its output as `orphaned` says.
        crate::util::locks::user_code("a join handle's drop (a task's output)");
        let inner = self.inner.get_mut().unwrap_or_else(|e| e.into_inner());
        match std::mem::replace(&mut inner.state, State::Taken) {
            State::Waiting(task) => task.detach(),
            State::Shared(shared, orphaned) => orphaned(shared),
            _ => {}
        }
    }
}

/// The owner of a shared cell is gone (module documentation).
fn orphaned<T: 'static>(shared: Arc<Cell<T>>) {
    if Arc::strong_count(&shared) == 1 {
        // No `AbortHandle` is left, and none can be made without the
        // owner: the cell's drop detaches the task.
        return;
    }
    if matches!(shared.lock().state, State::Taken) {
        return; // the owner took the output: nothing to reap
    }
    let reaper = Arc::new(Reaper(Arc::downgrade(&shared)));
    shared.reap(&Waker::from(reaper));
}

/// The owner a shared cell gets when its `JoinHandle` is dropped while
/// `AbortHandle`s live: a waker that, each time it is woken, polls the
/// output as the owner would and drops what it gets. It holds the cell
/// weakly: once the last `AbortHandle` is gone too, the cell's drop has
/// detached the task, and async-task drops the output itself.
struct Reaper<T>(Weak<Cell<T>>);

impl<T: 'static> Wake for Reaper<T> {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        if let Some(cell) = self.0.upgrade() {
            cell.reap(&Waker::from(self.clone()));
        }
    }
}

impl<T> Cell<T> {
    /// The reaper's poll (`reaper` is its waker): the owner's poll, whose
    /// output, if any, is dropped here, with no lock held. It never
    /// panics (it may run inside async-task's notify, which aborts the
    /// process on a panic): an output's drop is contained (`Contained`),
    /// and a poll after the output was taken only answers so.
    fn reap(&self, reaper: &Waker) {
        let answer = self.drive(Want::Output, Some(&mut Context::from_waker(reaper)));
        crate::util::locks::user_code("a task's output's drop (its JoinHandle dropped)");
        drop(answer);
    }
}

fn polled_after_ready<R>() -> R {
    panic!("JoinHandle polled after it returned Ready")
}
