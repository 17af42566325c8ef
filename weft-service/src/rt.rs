//! What the service asks of its runtime, on weft or on tokio: the
//! blocking pool, a detached spawn, a timeout, a sleep. Handlers call these through
//! the `Rt` in the application state, so the same code runs on both.

use std::future::Future;
use std::time::Duration;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rt {
    Weft,
    Tokio,
}

impl Rt {
    /// Runs `f` on the runtime's blocking pool; `Err` if it panicked.
    pub async fn spawn_blocking<F, R>(self, f: F) -> Result<R, String>
    where
        F: FnOnce() -> R + Send + 'static,
        R: Send + 'static,
    {
        match self {
            Rt::Weft => weft::task::spawn_blocking(f)
                .await
                .map_err(|e| e.to_string()),
            Rt::Tokio => tokio::task::spawn_blocking(f)
                .await
                .map_err(|e| e.to_string()),
        }
    }

    /// Spawns `future` on the current runtime and detaches it.
    pub fn spawn<F>(self, future: F)
    where
        F: Future<Output = ()> + Send + 'static,
    {
        match self {
            Rt::Weft => drop(weft::spawn(future)),
            Rt::Tokio => drop(tokio::spawn(future)),
        }
    }

    /// `future`'s output, or `None` if it took longer than `limit`.
    pub async fn timeout<F: Future>(self, limit: Duration, future: F) -> Option<F::Output> {
        match self {
            Rt::Weft => weft::time::timeout(limit, future).await.ok(),
            Rt::Tokio => tokio::time::timeout(limit, future).await.ok(),
        }
    }

    /// Waits `duration`.
    pub async fn sleep(self, duration: Duration) {
        match self {
            Rt::Weft => weft::time::sleep(duration).await,
            Rt::Tokio => tokio::time::sleep(duration).await,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Rt::Weft => "weft",
            Rt::Tokio => "tokio",
        }
    }
}
