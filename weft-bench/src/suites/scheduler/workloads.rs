//! The seven scheduler workloads of tokio's `benches/rt_multi_threaded.rs`,
//! plus `lifo_stuck` (a task stuck behind a long poll in its worker's LIFO
//! slot), written once over [`BenchRuntime`] and run unchanged on every
//! runtime.
//!
//! Sizes and shapes are tokio's, quirks included:
//!
//! * `spawn_many_local` spawns its 10,000 tasks from inside `block_on`, that
//!   is from a thread that is *not* a worker (so they go through the global
//!   queue), and then blocks that thread in a std `mpsc` `recv`.
//! * The 10 µs `stall()` spins on `Instant::now()` and calls
//!   `std::thread::yield_now()` in the loop, as tokio's does: on a machine
//!   with fewer cores than workers this hands the core to another thread.
//! * The busy loads of `spawn_many_remote_busy1`/`busy2` are spawned from
//!   outside and detached. tokio starts them once per benchmark; here all
//!   three runtimes live side by side and take turns, so each runtime's busy
//!   load is started at the beginning of each of its blocks and stopped (flag
//!   cleared, every busy task seen to finish) at the end of it: a runtime
//!   never competes with another runtime's busy load.
//!
//! Completion is signalled through std `mpsc` channels, as in tokio's bench;
//! `ping_pong`'s oneshots are `futures-channel` oneshots for every runtime
//! (tokio's bench uses tokio's own, but the channel is not what is measured,
//! and one runtime-neutral type keeps the three runs identical).

use std::sync::atomic::Ordering::Relaxed;
use std::sync::atomic::{AtomicBool, AtomicUsize};
use std::sync::{Arc, mpsc};
use std::time::{Duration, Instant};

use clap::ValueEnum;
use futures_channel::oneshot;

use crate::common::runtimes::{BenchRuntime, Spawner};

/// Tasks spawned per iteration by the `spawn_many_*` workloads (busy2: 1,000).
const NUM_SPAWN: usize = 10_000;
/// Remote spawns per iteration of `spawn_many_remote_busy2`.
const NUM_SPAWN_BUSY2: usize = 1_000;
/// Rounds of `ping_pong` per iteration.
const NUM_PINGS: usize = 1_000;
/// Yields per task in `yield_many`.
const NUM_YIELD: usize = 1_000;
/// Tasks in `yield_many`.
const YIELD_TASKS: usize = 200;
/// Length of the chain in `chained_spawn`.
const CHAIN_LEN: usize = 1_000;
/// Duration of one [`stall`].
const STALL: Duration = Duration::from_micros(10);
/// Length of `lifo_stuck`'s long poll.
const LONG_POLL: Duration = Duration::from_millis(10);

/// One of the scheduler workloads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, ValueEnum)]
#[value(rename_all = "snake_case")]
pub enum Workload {
    /// Inside `block_on`, spawn 10,000 tiny tasks; the last one signals.
    SpawnManyLocal,
    /// From outside, spawn 10,000 empty tasks on an idle runtime; join all.
    SpawnManyRemoteIdle,
    /// The same while 2×workers tasks loop `yield_now` + 10 µs stall.
    SpawnManyRemoteBusy1,
    /// 1,000 remote spawns while each worker runs a chain of stalling tasks.
    SpawnManyRemoteBusy2,
    /// 1,000 rounds of paired tasks passing a message through oneshots.
    PingPong,
    /// 200 tasks each yielding 1,000 times.
    YieldMany,
    /// A chain of 1,000 tasks each spawning the next.
    ChainedSpawn,
    /// A task spawns a second one (into its worker's LIFO slot where there
    /// is one), then spins 10 ms in one poll; the iteration ends when both
    /// are done. Counts what a runtime does while a poll is long.
    LifoStuck,
}

impl Workload {
    /// Every workload, in the order the suite runs them.
    pub const ALL: [Workload; 8] = [
        Workload::SpawnManyLocal,
        Workload::SpawnManyRemoteIdle,
        Workload::SpawnManyRemoteBusy1,
        Workload::SpawnManyRemoteBusy2,
        Workload::PingPong,
        Workload::YieldMany,
        Workload::ChainedSpawn,
        Workload::LifoStuck,
    ];

    /// The name used in tables and JSON (tokio's benchmark name).
    pub fn name(self) -> &'static str {
        match self {
            Workload::SpawnManyLocal => "spawn_many_local",
            Workload::SpawnManyRemoteIdle => "spawn_many_remote_idle",
            Workload::SpawnManyRemoteBusy1 => "spawn_many_remote_busy1",
            Workload::SpawnManyRemoteBusy2 => "spawn_many_remote_busy2",
            Workload::PingPong => "ping_pong",
            Workload::YieldMany => "yield_many",
            Workload::ChainedSpawn => "chained_spawn",
            Workload::LifoStuck => "lifo_stuck",
        }
    }

    /// Measured iterations per round in the quick profile: more for the
    /// sub-millisecond workloads, whose medians need more samples, fewer
    /// for those that take tens of milliseconds on a slow runtime.
    pub fn quick_iterations_per_round(self) -> usize {
        match self {
            Workload::PingPong | Workload::ChainedSpawn => 60,
            Workload::SpawnManyRemoteBusy2 => 16,
            Workload::YieldMany => 12,
            // 10 ms each: about 2 s of the suite for three runtimes.
            Workload::LifoStuck => 10,
            _ => 20,
        }
    }

    /// Sets the workload up on `rt`; the returned instance runs iterations
    /// and tears the set-up down when dropped.
    pub fn instantiate<R: BenchRuntime>(self, rt: &R) -> Instance<'_> {
        match self {
            Workload::SpawnManyLocal => spawn_many_local(rt),
            Workload::SpawnManyRemoteIdle => spawn_many_remote_idle(rt),
            Workload::SpawnManyRemoteBusy1 => spawn_many_remote_busy1(rt),
            Workload::SpawnManyRemoteBusy2 => spawn_many_remote_busy2(rt),
            Workload::PingPong => ping_pong(rt),
            Workload::YieldMany => yield_many(rt),
            Workload::ChainedSpawn => chained_spawn(rt),
            Workload::LifoStuck => lifo_stuck(rt),
        }
    }
}

/// A workload set up on one runtime: call [`iterate`](Self::iterate) for
/// each iteration; dropping it stops any background load.
pub struct Instance<'a> {
    // Declared first so that it is dropped before the background load.
    iteration: Box<dyn FnMut() + 'a>,
    _background: Option<BusyLoad>,
}

impl Instance<'_> {
    /// Runs one iteration, returning when all of its work is done.
    pub fn iterate(&mut self) {
        (self.iteration)();
    }
}

fn instance<'a>(iteration: impl FnMut() + 'a, background: Option<BusyLoad>) -> Instance<'a> {
    Instance {
        iteration: Box::new(iteration),
        _background: background,
    }
}

fn spawn_many_local<R: BenchRuntime>(rt: &R) -> Instance<'_> {
    let spawner = rt.spawner();
    let (tx, rx) = mpsc::sync_channel(1000);
    let rem = Arc::new(AtomicUsize::new(0));
    let iteration = move || {
        rem.store(NUM_SPAWN, Relaxed);
        rt.block_on(async {
            for _ in 0..NUM_SPAWN {
                let tx = tx.clone();
                let rem = rem.clone();
                spawner.spawn_detached(async move {
                    if 1 == rem.fetch_sub(1, Relaxed) {
                        tx.send(()).unwrap();
                    }
                });
            }
            rx.recv().unwrap();
        });
    };
    instance(iteration, None)
}

fn spawn_many_remote_idle<R: BenchRuntime>(rt: &R) -> Instance<'_> {
    remote_spawn_and_join(rt, NUM_SPAWN, None)
}

fn spawn_many_remote_busy1<R: BenchRuntime>(rt: &R) -> Instance<'_> {
    let spawner = rt.spawner();
    let busy = BusyLoad::new(2 * rt.workers());
    for done in busy.tokens() {
        let flag = busy.flag.clone();
        spawner.spawn_detached(async move {
            let _done = done;
            while flag.load(Relaxed) {
                R::Spawner::yield_now().await;
                stall();
            }
        });
    }
    remote_spawn_and_join(rt, NUM_SPAWN, Some(busy))
}

fn spawn_many_remote_busy2<R: BenchRuntime>(rt: &R) -> Instance<'_> {
    let spawner = rt.spawner();
    let busy = BusyLoad::new(rt.workers());
    for done in busy.tokens() {
        let flag = busy.flag.clone();
        let next = spawner.clone();
        spawner.spawn_detached(async move { busy_chain(next, flag, done) });
    }
    remote_spawn_and_join(rt, NUM_SPAWN_BUSY2, Some(busy))
}

/// One link of a busy2 chain: a task that, while the flag is set, stalls and
/// spawns the next link (tokio's `iter(flag)`). The chain's [`Done`] token
/// rides along and is dropped with the last link.
fn busy_chain<S: Spawner>(spawner: S, flag: Arc<AtomicBool>, _done: Done) {
    let next = spawner.clone();
    spawner.spawn_detached(async move {
        if flag.load(Relaxed) {
            stall();
            busy_chain(next, flag, _done);
        }
    });
}

/// The iteration of the `spawn_many_remote_*` workloads: spawn `count`
/// empty tasks from outside the runtime, then `block_on` joining them all.
fn remote_spawn_and_join<R: BenchRuntime>(
    rt: &R,
    count: usize,
    background: Option<BusyLoad>,
) -> Instance<'_> {
    let spawner = rt.spawner();
    let mut handles = Vec::with_capacity(count);
    let iteration = move || {
        handles.extend((0..count).map(|_| spawner.spawn(async {})));
        rt.block_on(async {
            for handle in handles.drain(..) {
                handle.await;
            }
        });
    };
    instance(iteration, background)
}

fn ping_pong<R: BenchRuntime>(rt: &R) -> Instance<'_> {
    let spawner = rt.spawner();
    let (done_tx, done_rx) = mpsc::sync_channel(1000);
    let rem = Arc::new(AtomicUsize::new(0));
    let iteration = move || {
        let done_tx = done_tx.clone();
        let rem = rem.clone();
        rem.store(NUM_PINGS, Relaxed);
        let inner = spawner.clone();
        rt.block_on(async {
            spawner.spawn_detached(async move {
                for _ in 0..NUM_PINGS {
                    let round = ping_pong_round(inner.clone(), rem.clone(), done_tx.clone());
                    inner.spawn_detached(round);
                }
            });
            done_rx.recv().unwrap();
        });
    };
    instance(iteration, None)
}

/// One round of `ping_pong`: spawn a partner, ping it, await its pong; the
/// last round to finish signals `done_tx`.
async fn ping_pong_round<S: Spawner>(
    spawner: S,
    rem: Arc<AtomicUsize>,
    done_tx: mpsc::SyncSender<()>,
) {
    let (tx1, rx1) = oneshot::channel();
    let (tx2, rx2) = oneshot::channel();
    spawner.spawn_detached(async move {
        rx1.await.unwrap();
        tx2.send(()).unwrap();
    });
    tx1.send(()).unwrap();
    rx2.await.unwrap();
    if 1 == rem.fetch_sub(1, Relaxed) {
        done_tx.send(()).unwrap();
    }
}

fn yield_many<R: BenchRuntime>(rt: &R) -> Instance<'_> {
    let spawner = rt.spawner();
    let (tx, rx) = mpsc::sync_channel(YIELD_TASKS);
    let iteration = move || {
        for _ in 0..YIELD_TASKS {
            let tx = tx.clone();
            spawner.spawn_detached(async move {
                for _ in 0..NUM_YIELD {
                    R::Spawner::yield_now().await;
                }
                tx.send(()).unwrap();
            });
        }
        for _ in 0..YIELD_TASKS {
            rx.recv().unwrap();
        }
    };
    instance(iteration, None)
}

fn chained_spawn<R: BenchRuntime>(rt: &R) -> Instance<'_> {
    let spawner = rt.spawner();
    let (done_tx, done_rx) = mpsc::sync_channel(1000);
    let iteration = move || {
        let done_tx = done_tx.clone();
        let next = spawner.clone();
        rt.block_on(async {
            spawner.spawn_detached(async move { chain(next, done_tx, CHAIN_LEN) });
            done_rx.recv().unwrap();
        });
    };
    instance(iteration, None)
}

/// tokio's `iter(done_tx, n)`: spawn the next link, or signal at the end.
fn chain<S: Spawner>(spawner: S, done_tx: mpsc::SyncSender<()>, n: usize) {
    if n == 0 {
        done_tx.send(()).unwrap();
    } else {
        let next = spawner.clone();
        spawner.spawn_detached(async move { chain(next, done_tx, n - 1) });
    }
}

/// Inside `block_on`, task A spawns task B (from a worker, so B lands in
/// that worker's LIFO slot where the runtime has one) and then spins for
/// [`LONG_POLL`] in the same poll; B signals when it runs, A when its poll
/// returns.
///
/// The long poll spins rather than sleeps: it models CPU-bound work in a
/// poll (what stall monitors exist for), keeps its core busy as such work
/// would, and makes no context switch of its own, so the switches counted
/// are the runtime's (the monitor's samples, a hand-off of B).
fn lifo_stuck<R: BenchRuntime>(rt: &R) -> Instance<'_> {
    let spawner = rt.spawner();
    let (done_tx, done_rx) = mpsc::sync_channel(2);
    let iteration = move || {
        let done_tx = done_tx.clone();
        let inner = spawner.clone();
        rt.block_on(async {
            spawner.spawn_detached(async move {
                let b_done = done_tx.clone();
                inner.spawn_detached(async move { b_done.send(()).unwrap() });
                spin(LONG_POLL);
                done_tx.send(()).unwrap();
            });
            done_rx.recv().unwrap();
            done_rx.recv().unwrap();
        });
    };
    instance(iteration, None)
}

/// Keeps the calling thread busy for `length` without yielding it.
fn spin(length: Duration) {
    let start = Instant::now();
    while start.elapsed() < length {
        std::hint::spin_loop();
    }
}

/// tokio's `stall()`: 10 µs of spinning, yielding the OS thread in between.
fn stall() {
    let now = Instant::now();
    while now.elapsed() < STALL {
        std::thread::yield_now();
    }
}

/// The background tasks of a busy workload. Dropping it clears the flag and
/// waits until every busy task (or chain) has finished.
struct BusyLoad {
    flag: Arc<AtomicBool>,
    tasks: usize,
    done_tx: mpsc::Sender<()>,
    done_rx: mpsc::Receiver<()>,
}

/// Carried by one busy task (or passed along one chain); reports the end of
/// that task or chain when dropped, however it ends.
struct Done(mpsc::Sender<()>);

impl Drop for Done {
    fn drop(&mut self) {
        // The receiver lives as long as the `BusyLoad`, which waits for us.
        let _ = self.0.send(());
    }
}

impl BusyLoad {
    fn new(tasks: usize) -> BusyLoad {
        let (done_tx, done_rx) = mpsc::channel();
        BusyLoad {
            flag: Arc::new(AtomicBool::new(true)),
            tasks,
            done_tx,
            done_rx,
        }
    }

    /// One [`Done`] token per busy task.
    fn tokens(&self) -> impl Iterator<Item = Done> + use<> {
        let done_tx = self.done_tx.clone();
        (0..self.tasks).map(move |_| Done(done_tx.clone()))
    }
}

impl Drop for BusyLoad {
    fn drop(&mut self) {
        self.flag.store(false, Relaxed);
        for _ in 0..self.tasks {
            // Every token sends before it is gone, and `done_tx` keeps the
            // channel open, so this only returns once all tasks are done.
            self.done_rx.recv().expect("BusyLoad holds a sender");
        }
    }
}
