//! `Timeout`: a future with a deadline.

use std::future::{Future, IntoFuture};
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use super::Instant;
use super::error::Elapsed;
use super::sleep::{Sleep, current_runtime};

/// Requires `future` to complete within `duration`.
///
/// The future is polled first at every poll, so one that is ready when the
/// deadline passes still wins. On timeout the future is dropped (cancelled)
/// with the `Timeout`. Durations are capped as in [`sleep`](super::sleep).
///
/// # Panics
///
/// Outside a weft runtime, like [`sleep`](super::sleep).
///
/// ```
/// use std::time::Duration;
/// use weft::time::{sleep, timeout};
///
/// let rt = weft::runtime::Runtime::new().unwrap();
/// rt.block_on(async {
///     assert_eq!(timeout(Duration::from_secs(5), async { 7 }).await, Ok(7));
///     let slow = sleep(Duration::from_secs(3600));
///     assert!(timeout(Duration::from_millis(1), slow).await.is_err());
/// });
/// ```
#[track_caller]
pub fn timeout<F: IntoFuture>(duration: Duration, future: F) -> Timeout<F::IntoFuture> {
    let shared = current_runtime("timeout");
    let deadline = Instant::now().saturating_add(duration);
    Timeout {
        value: future.into_future(),
        delay: Sleep::new(shared, deadline),
    }
}

/// Requires `future` to complete before `deadline`. See [`timeout`].
#[track_caller]
pub fn timeout_at<F: IntoFuture>(deadline: Instant, future: F) -> Timeout<F::IntoFuture> {
    Timeout {
        value: future.into_future(),
        delay: Sleep::new(current_runtime("timeout_at"), deadline),
    }
}

/// The future returned by [`timeout`] and [`timeout_at`].
#[must_use = "futures do nothing unless you `.await` or poll them"]
#[derive(Debug)]
pub struct Timeout<T> {
    value: T,
    delay: Sleep,
}

impl<T> Timeout<T> {
    /// The wrapped future.
    pub fn get_ref(&self) -> &T {
        &self.value
    }

    /// The wrapped future, mutably.
    pub fn get_mut(&mut self) -> &mut T {
        &mut self.value
    }

    /// Drops the deadline and returns the wrapped future.
    pub fn into_inner(self) -> T {
        self.value
    }
}

impl<T: Future> Future for Timeout<T> {
    type Output = Result<T::Output, Elapsed>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        // `value` is structurally pinned: it is never moved out of a pinned
        // `Timeout` (`into_inner` takes `self` by value and `get_mut` takes
        // `&mut self`, which a pinned `Timeout` never gives: its `Sleep` is
        // `!Unpin`, so it is too), this
        // function moves neither `this` nor `value`, and `Timeout` has no
        // `Drop` that could move it.
        // `delay` is structurally pinned too, for the same reasons.
        // SAFETY: as just said.
        let this = unsafe { self.get_unchecked_mut() };
        // SAFETY: as above.
        let value = unsafe { Pin::new_unchecked(&mut this.value) };
        if let Poll::Ready(output) = value.poll(cx) {
            return Poll::Ready(Ok(output));
        }
        // The deadline is checked even when the value spent the task's
        // budget (an always-ready loop inside the timeout), or it could
        // never fire.
        // SAFETY: `delay` stays in place while pinned (above).
        let delay = unsafe { Pin::new_unchecked(&mut this.delay) };
        match crate::task::coop::run_unconstrained(|| delay.poll(cx)) {
            Poll::Ready(()) => Poll::Ready(Err(Elapsed::new())),
            Poll::Pending => Poll::Pending,
        }
    }
}
