//! What `serve`'s accept loop does after a failed `accept`.
//!
//! A connection's own failure (`ECONNABORTED`: the client gave up while it
//! waited in the queue) is retried at once: the failed connection has left
//! the queue, so the next accept makes progress, and each accept spends the
//! task's cooperative budget, so a burst of them cannot hold a worker.
//!
//! A resource failure (`EMFILE`, `ENFILE`, `ENOBUFS`, `ENOMEM`) leaves the
//! connection in the queue and the listener ready: accepting again at once
//! fails again, and a loop doing so spins a worker at 100% while it starves
//! the connections that would free a descriptor by closing. So the loop
//! pauses, 1 ms after the first failure, doubling up to 1 s while they go
//! on, back to 1 ms after the next accepted connection. Anything else is
//! the listener's (closed, shut down, its runtime gone) and ends `serve`
//! with that error. The sorting of errors is `sys::accept_failure`.

use std::io;
use std::time::Duration;

use crate::runtime::{AcceptFailure, accept_failure};

/// The first pause after a resource failure.
const FIRST_PAUSE: Duration = Duration::from_millis(1);
/// The longest pause: the delay a freed descriptor may wait to be used.
const MAX_PAUSE: Duration = Duration::from_secs(1);

/// What the accept loop does next after a failed accept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[must_use = "the accept loop must retry, pause or return"]
pub(crate) enum AfterFailure {
    /// Accept again at once.
    Retry,
    /// Accept again after this pause.
    Pause(Duration),
    /// Return the error from `serve`.
    Return,
}

/// The accept loop's back-off state.
#[derive(Debug)]
pub(crate) struct Backoff {
    /// The pause after the next resource failure.
    next: Duration,
}

impl Backoff {
    pub(crate) fn new() -> Backoff {
        Backoff { next: FIRST_PAUSE }
    }

    /// A connection was accepted: the next resource failure pauses briefly.
    pub(crate) fn accepted(&mut self) {
        self.next = FIRST_PAUSE;
    }

    /// What to do after `error`.
    pub(crate) fn failed(&mut self, error: &io::Error) -> AfterFailure {
        match accept_failure(error) {
            AcceptFailure::Connection => AfterFailure::Retry,
            AcceptFailure::Resources => {
                let pause = self.next;
                self.next = (self.next * 2).min(MAX_PAUSE);
                AfterFailure::Pause(pause)
            }
            AcceptFailure::Listener => AfterFailure::Return,
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    fn os(code: i32) -> io::Error {
        io::Error::from_raw_os_error(code)
    }

    const MS: Duration = Duration::from_millis(1);

    #[cfg(target_os = "linux")]
    #[test]
    fn resource_failures_pause_1_ms_doubling_to_1_s_until_an_accept_succeeds() {
        let mut backoff = Backoff::new();
        let pauses: Vec<_> = (0..13)
            .map(|i| {
                let code = [libc::EMFILE, libc::ENFILE, libc::ENOBUFS, libc::ENOMEM][i % 4];
                backoff.failed(&os(code))
            })
            .collect();
        let expected: Vec<_> = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1000, 1000, 1000]
            .into_iter()
            .map(|ms| AfterFailure::Pause(ms * MS))
            .collect();
        assert_eq!(pauses, expected);
        // A connection failure in between neither pauses nor resets.
        assert_eq!(backoff.failed(&os(libc::ECONNABORTED)), AfterFailure::Retry);
        assert_eq!(
            backoff.failed(&os(libc::EMFILE)),
            AfterFailure::Pause(1000 * MS)
        );
        backoff.accepted();
        assert_eq!(backoff.failed(&os(libc::EMFILE)), AfterFailure::Pause(MS));
        assert_eq!(
            backoff.failed(&os(libc::EMFILE)),
            AfterFailure::Pause(2 * MS)
        );
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn connection_failures_are_retried_at_once() {
        for code in [
            libc::ECONNABORTED,
            libc::ECONNRESET,
            libc::EINTR,
            libc::EPROTO,
            libc::EPERM,
            libc::ENETUNREACH,
            libc::EHOSTUNREACH,
        ] {
            assert_eq!(
                Backoff::new().failed(&os(code)),
                AfterFailure::Retry,
                "{}",
                os(code)
            );
        }
    }

    #[test]
    fn a_broken_listener_and_a_shut_down_runtime_end_serve() {
        // EINVAL: accept on a listener that was shut down (net tests);
        // EBADF and ENOTSOCK: not a listener at all.
        #[cfg(target_os = "linux")]
        for code in [libc::EINVAL, libc::EBADF, libc::ENOTSOCK] {
            assert_eq!(
                Backoff::new().failed(&os(code)),
                AfterFailure::Return,
                "{}",
                os(code)
            );
        }
        let shut_down = crate::runtime::shutdown_error();
        assert_eq!(Backoff::new().failed(&shut_down), AfterFailure::Return);
    }
}
