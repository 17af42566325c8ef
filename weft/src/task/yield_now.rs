//! Cooperative yielding.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

/// Yields execution back to the scheduler once.
///
/// The task is woken while it is still running, which weft's scheduler
/// treats as a yield: it goes to the *back* of its worker's run queue, behind
/// the tasks already waiting there, rather than into the LIFO slot.
///
/// # Examples
///
/// ```
/// let rt = weft::runtime::Runtime::new().unwrap();
/// rt.block_on(async {
///     let handle = weft::spawn(async {
///         for _ in 0..3 {
///             weft::task::yield_now().await;
///         }
///         7
///     });
///     assert_eq!(handle.await.unwrap(), 7);
/// });
/// ```
pub async fn yield_now() {
    YieldNow { yielded: false }.await
}

struct YieldNow {
    yielded: bool,
}

impl Future for YieldNow {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.yielded {
            return Poll::Ready(());
        }
        self.yielded = true;
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}
