//! The cooperative budget: how many resource operations (socket reads and
//! writes, accepts, `Sleep`s, `JoinHandle`s) a task may complete in one
//! poll before they start returning `Pending` (after waking the task, so it
//! is queued behind the others, as a yield).
//!
//! Without it, a task reading a socket that is always ready never returns
//! `Pending`, and on one worker nothing else runs, not even the timers'
//! tasks (smol's behaviour). The budget is a thread-local counter: the
//! worker (and `block_on`) sets it before each poll; a thread that never
//! sets it (a foreign executor polling weft's types) is unconstrained.
//!
//! 128 is tokio's budget, the anchor the networking issue names.
//!
//! A fairness rule (no task starves the others on its worker), pinned by
//! the unit tests below and by `net.rs`'s
//! `a_task_on_an_always_ready_socket_does_not_starve_a_sleeper`, which
//! turns the stall monitor off: with it on, the monitor rescues the
//! starved task and hides a budget that never runs out.

use std::cell::Cell;
use std::task::{Context, Poll};

/// Operations a task may complete per poll.
pub(crate) const BUDGET: u16 = 128;
const UNCONSTRAINED: u16 = u16::MAX;

thread_local! {
    static REMAINING: Cell<u16> = const { Cell::new(UNCONSTRAINED) };
}

/// Gives the task about to be polled on this thread a full budget; returns
/// the previous value for `restore` (a `block_on` nested in a task).
#[inline]
pub(crate) fn reset() -> u16 {
    // loom runs every model thread on one OS thread, so a thread-local
    // budget would leak between them (and between iterations): the models
    // run unconstrained (the budget is a fairness rule, not a protocol).
    if cfg!(loom) {
        return UNCONSTRAINED;
    }
    REMAINING.with(|remaining| remaining.replace(BUDGET))
}

/// Puts back a budget saved by `reset`.
#[inline]
pub(crate) fn restore(saved: u16) {
    REMAINING.with(|remaining| remaining.set(saved));
}

/// Runs `f` with no budget on this thread, then puts the budget back (also
/// when `f` unwinds): for a poll made outside the task's own progress,
/// which must neither be refused nor counted (`JoinSet::try_join_next`
/// and the registration poll of a new `JoinSet` member).
pub(crate) fn run_unconstrained<R>(f: impl FnOnce() -> R) -> R {
    struct Restore(u16);

    impl Drop for Restore {
        fn drop(&mut self) {
            restore(self.0);
        }
    }

    let _restore = Restore(REMAINING.with(|remaining| remaining.replace(UNCONSTRAINED)));
    f()
}

/// `Ready` if the running task may complete another operation; otherwise
/// wakes it (so it is queued again, as after a yield) and returns `Pending`.
#[inline]
pub(crate) fn poll_budget(cx: &mut Context<'_>) -> Poll<()> {
    let remaining = REMAINING.with(Cell::get);
    if remaining == 0 {
        crate::util::locks::user_code("a waker's wake (budget spent)");
        cx.waker().wake_by_ref();
        return Poll::Pending;
    }
    Poll::Ready(())
}

/// Counts one completed operation against the running task's budget.
#[inline]
pub(crate) fn spend() {
    REMAINING.with(|remaining| {
        let left = remaining.get();
        // `left > 0` only guards the subtraction: every caller spends
        // after `poll_budget` found the budget not spent, with nothing
        // spending in between (so `>= 0`, always true, is equivalent).
        if left != UNCONSTRAINED && left > 0 {
            remaining.set(left - 1);
        }
    });
}

/// Runs `poll` only if the budget allows, spending one unit when it
/// returns `Ready`.
#[inline]
pub(crate) fn poll_with_budget<T>(
    cx: &mut Context<'_>,
    poll: impl FnOnce(&mut Context<'_>) -> Poll<T>,
) -> Poll<T> {
    if poll_budget(cx).is_pending() {
        return Poll::Pending;
    }
    let result = poll(cx);
    if result.is_ready() {
        spend();
    }
    result
}

/// Spends one unit of the running task's budget, yielding first if it is
/// already spent: for loops that do work weft cannot see (tokio's
/// `task::consume_budget`).
///
/// ```
/// # weft::runtime::Runtime::new().unwrap().block_on(async {
/// for item in 0..10_000 {
///     weft::task::consume_budget().await;
///     let _ = item * 2;
/// }
/// # });
/// ```
pub async fn consume_budget() {
    std::future::poll_fn(|cx| poll_with_budget(cx, |_| Poll::Ready(()))).await
}

/// Whether the running task may still complete an operation in this poll
/// (always, on a thread no weft runtime polls on).
pub fn has_budget_remaining() -> bool {
    REMAINING.with(Cell::get) > 0
}

/// tokio's budget check for a resource's `poll_*`: `Pending` (the task
/// woken, to run again after the others) if the budget is spent; else one
/// unit is spent now and given back when the returned guard is dropped,
/// unless [`RestoreOnPending::made_progress`] was called (the operation
/// completed).
///
/// ```
/// use std::task::{Poll, ready};
/// # weft::runtime::Runtime::new().unwrap().block_on(async {
/// std::future::poll_fn(|cx| {
///     let coop = ready!(weft::task::coop::poll_proceed(cx));
///     coop.made_progress();
///     Poll::Ready(())
/// })
/// .await;
/// # });
/// ```
#[inline]
pub fn poll_proceed(cx: &mut Context<'_>) -> Poll<RestoreOnPending> {
    if poll_budget(cx).is_pending() {
        return Poll::Pending;
    }
    let spent = REMAINING.with(|remaining| {
        let left = remaining.get();
        let spends = left != UNCONSTRAINED && left > 0;
        if spends {
            remaining.set(left - 1);
        }
        spends
    });
    Poll::Ready(RestoreOnPending {
        give_back: std::cell::Cell::new(spent),
        _this_thread: std::marker::PhantomData,
    })
}

/// The unit [`poll_proceed`] spent, given back on drop unless the
/// operation made progress.
#[derive(Debug)]
pub struct RestoreOnPending {
    give_back: std::cell::Cell<bool>,
    /// `!Send` and `!Sync`, as tokio's: it gives the unit back to *this*
    /// thread's budget.
    _this_thread: std::marker::PhantomData<*mut ()>,
}

impl RestoreOnPending {
    /// The operation completed: keep the unit spent.
    pub fn made_progress(&self) {
        self.give_back.set(false);
    }
}

impl Drop for RestoreOnPending {
    fn drop(&mut self) {
        if self.give_back.get() {
            REMAINING.with(|remaining| {
                let left = remaining.get();
                if left != UNCONSTRAINED {
                    remaining.set(left.saturating_add(1).min(BUDGET));
                }
            });
        }
    }
}

/// Runs `future` with no budget: its operations are never refused for a
/// spent budget and spend none (tokio's `task::coop::unconstrained`).
pub fn unconstrained<F: std::future::Future>(future: F) -> Unconstrained<F> {
    Unconstrained { future }
}

/// The future of [`unconstrained`].
#[derive(Debug)]
#[must_use = "futures do nothing unless polled"]
pub struct Unconstrained<F> {
    future: F,
}

impl<F: std::future::Future> std::future::Future for Unconstrained<F> {
    type Output = F::Output;

    fn poll(self: std::pin::Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        // SAFETY: `future` is structurally pinned: it is never moved out of
        // `self` (no method hands it out by value or by `&mut`), and
        // `Unconstrained` has no `Drop` impl or `Unpin` impl of its own.
        let future = unsafe { self.map_unchecked_mut(|this| &mut this.future) };
        unconstrained_poll(|| future.poll(cx))
    }
}

/// Polls `f` with no budget, putting the task's back after.
fn unconstrained_poll<R>(f: impl FnOnce() -> R) -> R {
    if cfg!(loom) {
        return f();
    }
    run_unconstrained(f)
}

/// Makes `future` take part in the budget: each poll that finds the
/// budget spent yields instead, and a poll that completes spends a unit
/// (tokio's `task::coop::cooperative`).
pub fn cooperative<F: std::future::Future>(future: F) -> Coop<F> {
    Coop { future }
}

/// The future of [`cooperative`].
#[derive(Debug)]
#[must_use = "futures do nothing unless polled"]
pub struct Coop<F> {
    future: F,
}

impl<F: std::future::Future> std::future::Future for Coop<F> {
    type Output = F::Output;

    fn poll(self: std::pin::Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let coop = std::task::ready!(poll_proceed(cx));
        // SAFETY: as in `Unconstrained::poll`: `future` is structurally
        // pinned and never moved out; no `Drop` or `Unpin` impl here.
        let future = unsafe { self.map_unchecked_mut(|this| &mut this.future) };
        let output = std::task::ready!(future.poll(cx));
        coop.made_progress();
        Poll::Ready(output)
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use std::sync::mpsc;
    use std::time::Duration;

    use super::{BUDGET, consume_budget};

    /// Runs `work` on a new thread; fails if it has not returned in 10 s
    /// (a budget spent and never reset makes `consume_budget` return
    /// `Pending` forever, and a plain executor polls it again forever).
    fn within_10_s(what: &str, work: impl FnOnce() + Send + 'static) {
        let (done, finished) = mpsc::channel();
        std::thread::spawn(move || {
            work();
            done.send(()).unwrap();
        });
        match finished.recv_timeout(Duration::from_secs(10)) {
            Ok(()) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => panic!("{what}: panicked (above)"),
            Err(mpsc::RecvTimeoutError::Timeout) => panic!("{what}: still stuck after 10 s"),
        }
    }

    /// `poll_proceed` spends a unit only when the operation made
    /// progress: a guard dropped without `made_progress` gives it back.
    /// After `BUDGET` completed operations the budget is spent and the
    /// next `poll_proceed` is `Pending`; inside `unconstrained` nothing is
    /// counted.
    #[test]
    fn poll_proceed_spends_only_what_made_progress() {
        use std::task::Poll;

        use super::{has_budget_remaining, poll_proceed, unconstrained};

        within_10_s("poll_proceed's accounting", || {
            let rt = crate::runtime::Runtime::new().unwrap();
            rt.block_on(std::future::poll_fn(|cx| {
                for _ in 0..10 * BUDGET {
                    let Poll::Ready(guard) = poll_proceed(cx) else {
                        panic!("no progress made, yet the budget ran out");
                    };
                    drop(guard);
                }
                for spent in 0..BUDGET {
                    assert!(has_budget_remaining(), "{spent} units spent");
                    let Poll::Ready(guard) = poll_proceed(cx) else {
                        panic!("out of budget after {spent} units");
                    };
                    guard.made_progress();
                }
                assert!(!has_budget_remaining());
                assert!(poll_proceed(cx).is_pending(), "the budget is spent");
                Poll::Ready(())
            }));
            rt.block_on(unconstrained(std::future::poll_fn(|cx| {
                for _ in 0..10 * BUDGET {
                    let Poll::Ready(guard) = poll_proceed(cx) else {
                        panic!("an unconstrained future ran out of budget");
                    };
                    guard.made_progress();
                }
                Poll::Ready(())
            })));
        });
    }

    /// A thread no weft runtime polls on counts nothing: more operations
    /// than the counter's range (a spend that counted them would leave it
    /// at zero after 65,535 and stuck there).
    #[test]
    fn a_thread_outside_any_runtime_is_never_constrained() {
        within_10_s("70,000 operations on a plain thread", || {
            futures_lite::future::block_on(async {
                for _ in 0..70_000 {
                    consume_budget().await;
                }
            });
        });
    }

    /// `block_on` gives its future a budget and puts the thread's back
    /// after: a future that spent it all leaves the thread unconstrained
    /// (a budget not put back would stay at zero on that thread).
    #[test]
    fn a_thread_is_unconstrained_again_after_block_on() {
        within_10_s("an operation after block_on spent the budget", || {
            let rt = crate::runtime::Runtime::new().unwrap();
            rt.block_on(async {
                for _ in 0..BUDGET {
                    consume_budget().await;
                }
            });
            futures_lite::future::block_on(consume_budget());
        });
    }

    /// A loop that only calls `consume_budget` yields every `BUDGET`
    /// rounds, so a task queued behind it on the one worker runs (the
    /// stall monitor off: it would rescue that task otherwise).
    #[test]
    fn consume_budget_lets_a_task_behind_the_loop_run() {
        within_10_s("a task behind a consume_budget loop", || {
            let rt = crate::runtime::Builder::new_multi_thread()
                .worker_threads(1)
                .stall_monitor(false)
                .build()
                .unwrap();
            let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
            let looping = rt.spawn({
                let stop = stop.clone();
                async move {
                    let mut rounds = 0u64;
                    while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                        consume_budget().await;
                        rounds += 1;
                    }
                    rounds
                }
            });
            let stopper =
                rt.spawn(async move { stop.store(true, std::sync::atomic::Ordering::Relaxed) });
            rt.block_on(async {
                stopper.await.unwrap();
                // It ran first (queued first) and yielded only when its budget was spent.
                assert!(looping.await.unwrap() >= u64::from(BUDGET));
            });
        });
    }
}
