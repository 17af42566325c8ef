//! The suite's oracle: the same load served by a scheduler that is *told*
//! each request's kind, so that the targets can be read against what this
//! machine allows, not only against the peers.
//!
//! Short requests go to one thread of normal priority per worker, long
//! ones to threads under `SCHED_IDLE` (Linux: a waking thread of normal
//! priority preempts one at once, and one gets the CPU only when nothing
//! else wants it). Nothing has to be detected: what is left of a short
//! request's latency is the generator's own lateness, a thread's wake-up,
//! queueing behind other short requests and the machine's noise. Not a
//! strict bound (the generator's lateness depends on what else runs: p99
//! 0.7-1.9 ms beside it, 0.7-2.5 beside weft, 2026-11-26) and not a
//! runtime of the comparison: its long requests get only what the short
//! ones leave, which no runtime that is not told may do
//! (`Builder::batch_share`), so in closed loop they nearly stop. Never
//! counted as a peer in the ratios.
//!
//! Its short threads keep the kernel's time slice. Asking for the
//! shortest, as weft's threads do, measured no different alone (4
//! alternated 6 s open-loop runs each: p99 from arrival 2.2-3.5 ms with
//! it, 2.8-3.3 without) but worse in three whole-suite runs each (3.3-3.6
//! against 1.6-2.5 ms, the generator late by 2.5-3.0 against 0.7-1.9 ms
//! at p99: threads with the shortest slice go before the generator, which
//! keeps the kernel's), 2026-11-26.
//!
//! Invariant: every request submitted before the oracle is dropped runs to
//! completion (the threads drain their queue before they end).

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::thread::{self, JoinHandle};

use super::generator::{Kind, Submit};

type Request = Pin<Box<dyn Future<Output = ()> + Send>>;

/// The two pools; dropping it waits for every request submitted.
pub struct Oracle {
    short: async_channel::Sender<Request>,
    long: async_channel::Sender<Request>,
    threads: Vec<JoinHandle<()>>,
}

impl Oracle {
    /// Starts `short_threads` threads for the short requests and
    /// `long_threads` (under `SCHED_IDLE`) for the long ones.
    pub fn start(short_threads: usize, long_threads: usize) -> io::Result<Oracle> {
        let (short, short_queue) = async_channel::unbounded::<Request>();
        let (long, long_queue) = async_channel::unbounded::<Request>();
        let mut oracle = Oracle {
            short,
            long,
            threads: Vec::new(),
        };
        for (count, queue, idle, name) in [
            (short_threads, short_queue, false, "oracle-short"),
            (long_threads, long_queue, true, "oracle-long"),
        ] {
            for _ in 0..count {
                let queue = queue.clone();
                let thread = thread::Builder::new()
                    .name(name.to_owned())
                    .spawn(move || serve(&queue, idle))?;
                oracle.threads.push(thread);
            }
        }
        Ok(oracle)
    }
}

/// Runs the requests of `queue` until it is closed and empty.
fn serve(queue: &async_channel::Receiver<Request>, idle: bool) {
    if idle {
        set_sched_idle();
    }
    while let Ok(request) = queue.recv_blocking() {
        futures_lite::future::block_on(request);
    }
}

/// Puts the calling thread under `SCHED_IDLE` (unprivileged: it lowers).
fn set_sched_idle() {
    #[cfg(target_os = "linux")]
    {
        let param = libc::sched_param { sched_priority: 0 };
        // SAFETY: `param` is a valid `sched_param` that outlives the call;
        // pid 0 names the calling thread, so no other thread is affected.
        let rc = unsafe { libc::sched_setscheduler(0, libc::SCHED_IDLE, &param) };
        if rc != 0 {
            eprintln!(
                "weft-bench: mixed oracle: SCHED_IDLE refused ({}); the long threads run at \
                 normal priority",
                io::Error::last_os_error()
            );
        }
    }
}

impl Submit for Oracle {
    fn submit(&self, kind: Kind, request: impl Future<Output = ()> + Send + 'static) {
        let queue = match kind {
            Kind::Short => &self.short,
            Kind::Long => &self.long,
        };
        // Unbounded and open until the oracle is dropped: never refused.
        let _ = queue.send_blocking(Box::pin(request));
    }
}

impl Drop for Oracle {
    fn drop(&mut self) {
        self.short.close();
        self.long.close();
        for thread in self.threads.drain(..) {
            let _ = thread.join();
        }
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use std::sync::mpsc;
    use std::time::Duration;

    use super::*;

    /// The name and scheduling policy of the thread that ran a request.
    fn where_it_ran() -> (String, i32) {
        let name = thread::current().name().unwrap_or_default().to_owned();
        // SAFETY: `sched_getscheduler(0)` only reads the calling thread's
        // policy.
        let policy = unsafe { libc::sched_getscheduler(0) };
        (name, policy)
    }

    #[test]
    fn each_kind_runs_on_its_own_threads_and_drop_waits_for_every_request() {
        let oracle = Oracle::start(2, 3).unwrap();
        let (sender, receiver) = mpsc::channel();
        for kind in [Kind::Short, Kind::Long, Kind::Short, Kind::Long] {
            let sender = sender.clone();
            oracle.submit(kind, async move {
                // Slow enough that the drop below finds them still running.
                thread::sleep(Duration::from_millis(20));
                sender.send((kind, where_it_ran())).unwrap();
            });
        }
        drop(sender);
        drop(oracle);
        let ran: Vec<_> = receiver.try_iter().collect();
        assert_eq!(ran.len(), 4, "the drop returned before every request ran");
        for (kind, (name, policy)) in ran {
            match kind {
                Kind::Short => {
                    assert_eq!(name, "oracle-short");
                    assert_eq!(policy, libc::SCHED_OTHER);
                }
                Kind::Long => {
                    assert_eq!(name, "oracle-long");
                    assert_eq!(policy, libc::SCHED_IDLE);
                }
            }
        }
    }
}
