//! The stall suite's scene, written once for every runtime: what each
//! runtime brings behind [`StallRuntime`] (a build with timers and I/O, a
//! client's round trips, a way to spawn the blockers and, on weft, to see
//! which slots poll them), and one trial ([`measure`]): the three kinds
//! of work, the calm window, the blockers, the stall, the tail, every
//! completion timestamped ([`Trial`]). [`super::shares`] turns the
//! timestamps into rates and shares.
//!
//! Every log is written as the work goes (a mutex taken by one writer),
//! never returned by a task at its end: a task stranded by the stall may
//! never end, and what it logged before still counts. The ticker logs a
//! tick's deadline before it sleeps and its wake after, so a tick that
//! never fired is seen too.

use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread;
use std::time::{Duration, Instant};

use async_io::Async;

use super::Sizes;
use super::shares::{Span, Tick};
use crate::common::measure::process_cpu_time;
use crate::common::others::{self, CpuTimes};
use crate::common::runtimes::net::{Accept, NetRuntime};
use crate::common::runtimes::timer::TimerRuntime;
use crate::common::runtimes::{BenchRuntime, Counters, Smol, Spawner, Tokio, Weft};

/// The name of every blocker task (weft's task dump finds them by it).
pub const BLOCKER: &str = "stall-blocker";

/// How often the task client looks at its stop flag while it waits for an
/// answer.
const CLIENT_POLL: Duration = Duration::from_millis(50);

/// How long the orchestrator waits for a blocker to start before it
/// spawns the next one anyway.
const START_WAIT: Duration = Duration::from_millis(200);

/// After the last blocker started, when weft's task dump is taken.
const DUMP_AFTER: Duration = Duration::from_millis(50);

/// Beyond the stall, how long the orchestrator waits for the blockers to
/// return before it gives up on them.
const BLOCKER_GRACE: Duration = Duration::from_secs(5);

/// A runtime the stall suite can measure: timers, TCP, and the blockers.
pub trait StallRuntime: TimerRuntime + NetRuntime {
    /// Starts a runtime with `workers` worker threads, its timers and its
    /// I/O enabled.
    fn build_for_stall(workers: usize) -> io::Result<Self>;

    /// Connects to the echo server at `address` and makes round trips of
    /// `bytes` (each written, read back whole and checked) until `stop`,
    /// logging each one's end; call it from one of its tasks.
    fn round_trips(
        address: SocketAddr,
        bytes: usize,
        stop: Arc<AtomicBool>,
        log: Arc<Mutex<Vec<Instant>>>,
    ) -> impl Future<Output = io::Result<()>> + Send + 'static;

    /// Spawns a blocker through the runtime's handle, named [`BLOCKER`]
    /// where the runtime names tasks.
    fn spawn_blocker(&self, blocker: impl Future<Output = ()> + Send + 'static) {
        self.spawner().spawn_detached(blocker);
    }

    /// The slots polling a blocker right now, where the runtime tells
    /// (weft's task dump: a worker's index, or a spare slot's above them).
    fn blocker_slots(&self) -> Option<Vec<usize>> {
        None
    }
}

/// Round trips over a stream with `write_all` and `read_exact` from the
/// extension traits in scope (futures-lite's, or tokio's).
macro_rules! round_trips {
    ($stream:ident, $bytes:expr, $stop:expr, $log:expr) => {{
        let sent: Vec<u8> = (0..$bytes).map(|i| i as u8).collect();
        let mut back = vec![0u8; sent.len()];
        while !$stop.load(Ordering::Relaxed) {
            $stream.write_all(&sent).await?;
            $stream.read_exact(&mut back).await?;
            if back != sent {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    "the echo came back different",
                ));
            }
            lock(&$log).push(Instant::now());
        }
        Ok(())
    }};
}

impl StallRuntime for Weft {
    fn build_for_stall(workers: usize) -> io::Result<Self> {
        // weft's defaults: the stall monitor is on.
        Weft::build_with_timers(workers)
    }

    async fn round_trips(
        address: SocketAddr,
        bytes: usize,
        stop: Arc<AtomicBool>,
        log: Arc<Mutex<Vec<Instant>>>,
    ) -> io::Result<()> {
        use futures_lite::{AsyncReadExt, AsyncWriteExt};
        let mut stream = weft::net::TcpStream::connect(address).await?;
        stream.set_nodelay(true)?;
        round_trips!(stream, bytes, stop, log)
    }

    fn spawn_blocker(&self, blocker: impl Future<Output = ()> + Send + 'static) {
        let spawned = weft::task::Builder::new()
            .name(BLOCKER)
            .spawn_on(blocker, &self.spawner());
        // `spawn_on` has no error today (tokio's signature); dropping the
        // handle detaches the task.
        drop(spawned);
    }

    fn blocker_slots(&self) -> Option<Vec<usize>> {
        let dump = self.spawner().dump();
        let slots = dump
            .tasks()
            .filter(|task| task.name() == Some(BLOCKER))
            .filter_map(|task| match task.state() {
                weft::runtime::TaskState::Running { worker, .. } => Some(worker),
                _ => None,
            });
        Some(slots.collect())
    }
}

/// tokio's drivers for the suite: I/O and time.
fn io_and_time(builder: &mut tokio::runtime::Builder) -> &mut tokio::runtime::Builder {
    builder.enable_io().enable_time()
}

impl StallRuntime for Tokio {
    fn build_for_stall(workers: usize) -> io::Result<Self> {
        Tokio::with_driver(workers, io_and_time)
    }

    async fn round_trips(
        address: SocketAddr,
        bytes: usize,
        stop: Arc<AtomicBool>,
        log: Arc<Mutex<Vec<Instant>>>,
    ) -> io::Result<()> {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let mut stream = tokio::net::TcpStream::connect(address).await?;
        stream.set_nodelay(true)?;
        round_trips!(stream, bytes, stop, log)
    }
}

impl StallRuntime for Smol {
    fn build_for_stall(workers: usize) -> io::Result<Self> {
        // async-io's thread drives smol's timers and readiness.
        Smol::build_with_timers(workers)
    }

    async fn round_trips(
        address: SocketAddr,
        bytes: usize,
        stop: Arc<AtomicBool>,
        log: Arc<Mutex<Vec<Instant>>>,
    ) -> io::Result<()> {
        use futures_lite::{AsyncReadExt, AsyncWriteExt};
        let mut stream = Async::<std::net::TcpStream>::connect(address).await?;
        stream.get_ref().set_nodelay(true)?;
        round_trips!(stream, bytes, stop, log)
    }
}

/// One blocker as it ran.
#[derive(Debug, Clone)]
pub struct Blocker {
    /// When its poll began.
    pub start: Instant,
    /// When its sleep ended.
    pub end: Instant,
    /// The thread that polled it.
    pub thread: String,
}

/// One trial on one runtime: every timestamp, and what the orchestrator
/// read around the stall.
#[derive(Debug, Clone)]
pub struct Trial {
    /// Worker threads of the runtime.
    pub workers: usize,
    /// Blockers spawned.
    pub blockers_spawned: usize,
    /// The calm window.
    pub calm: Span,
    /// The blockers that returned, in the order they did.
    pub blockers: Vec<Blocker>,
    /// Every tick of the ticker, in order.
    pub ticks: Vec<Tick>,
    /// When each task's answer reached the client.
    pub tasks: Vec<Instant>,
    /// When each I/O round trip ended.
    pub round_trips: Vec<Instant>,
    /// When the work stopped and the logs were read: a tick that never
    /// fired is late until then.
    pub end: Instant,
    /// From the first blocker's spawn until every blocker returned.
    pub stall_wall: Duration,
    /// The process's CPU over `stall_wall`.
    pub stall_cpu: Duration,
    /// Percent of the machine other processes used over `stall_wall`.
    pub others_cpu_pct: Option<f64>,
    /// weft: the slots polling a blocker, from a task dump taken during
    /// the stall.
    pub blocker_slots: Option<Vec<usize>>,
    /// weft: its stall-monitor counters over `stall_wall`.
    pub monitor: Option<Counters>,
    /// What may have gone wrong without failing the trial.
    pub notes: Vec<String>,
}

/// Locks `mutex`, whether or not a writer panicked.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

/// Sets the flag when dropped: every way out of [`measure`] stops the
/// client thread and the work.
struct StopOnDrop(Arc<AtomicBool>);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// One trial on `R` with `workers` workers and `blockers` blockers:
/// builds the runtime, starts the work, measures the calm window, blocks,
/// waits for the blockers and the tail, stops the work and drops the
/// runtime.
pub fn measure<R: StallRuntime>(
    blockers: usize,
    sizes: &Sizes,
    workers: usize,
) -> Result<Trial, String> {
    let ms = Duration::from_millis;
    let runtime =
        R::build_for_stall(workers).map_err(|err| format!("cannot build the runtime: {err}"))?;
    let spawner = runtime.spawner();
    let (address, listener) = runtime
        .bind()
        .map_err(|err| format!("cannot listen: {err}"))?;
    let stop = Arc::new(AtomicBool::new(false));
    let guard = StopOnDrop(stop.clone());
    // The echo server: one connection, until EOF.
    spawner.spawn_detached(async move {
        if let Ok(stream) = listener.next().await {
            R::echo(stream).await;
        }
    });
    let ticks = Arc::new(Mutex::new(Vec::new()));
    spawner.spawn_detached(ticker::<R>(stop.clone(), ticks.clone(), ms(sizes.tick_ms)));
    let round_trips = Arc::new(Mutex::new(Vec::with_capacity(1 << 16)));
    let io_error = Arc::new(Mutex::new(None));
    let (log, failed) = (round_trips.clone(), io_error.clone());
    let io_client = R::round_trips(address, sizes.message_bytes, stop.clone(), log);
    spawner.spawn_detached(async move {
        if let Err(err) = io_client.await {
            *lock(&failed) = Some(err.to_string());
        }
    });
    let client = {
        let (spawner, stop) = (spawner.clone(), stop.clone());
        thread::Builder::new()
            .name("stall-client".to_owned())
            .spawn(move || task_client(&spawner, &stop))
            .map_err(|err| format!("cannot start the client thread: {err}"))?
    };

    thread::sleep(ms(sizes.warmup_ms));
    let calm_start = Instant::now();
    thread::sleep(ms(sizes.calm_ms));
    let calm = Span::new(calm_start, Instant::now());

    let cpu = process_cpu_time().ok();
    let machine = CpuTimes::now();
    let monitor = runtime.monitor_counters();
    let stall_start = Instant::now();
    let (done, returned) = mpsc::channel();
    let started = Arc::new(AtomicUsize::new(0));
    let stall = ms(sizes.stall_ms);
    for index in 0..blockers {
        runtime.spawn_blocker(blocker(stall, started.clone(), done.clone()));
        // The next one once this one runs: two spawned at once may queue
        // one behind the other on the worker the first one blocks.
        let deadline = Instant::now() + START_WAIT;
        while started.load(Ordering::Acquire) <= index && Instant::now() < deadline {
            thread::sleep(ms(1));
        }
    }
    drop(done);
    thread::sleep(DUMP_AFTER);
    let blocker_slots = runtime.blocker_slots();
    let mut ran = Vec::with_capacity(blockers);
    let give_up = stall_start + stall + BLOCKER_GRACE;
    while ran.len() < blockers {
        match returned.recv_timeout(give_up.saturating_duration_since(Instant::now())) {
            Ok(blocker) => ran.push(blocker),
            Err(_) => break,
        }
    }
    let stall_wall = stall_start.elapsed();
    let stall_cpu = cpu
        .zip(process_cpu_time().ok())
        .map_or(Duration::ZERO, |(before, after)| {
            after.saturating_sub(before)
        });
    let others_cpu_pct = others::since(machine);
    let monitor = monitor
        .zip(runtime.monitor_counters())
        .map(|(before, after)| {
            let before = |name| before.iter().find(|c| c.0 == name).map_or(0, |c| c.1);
            let delta =
                |(name, value): (&'static str, u64)| (name, value.saturating_sub(before(name)));
            after.into_iter().map(delta).collect()
        });

    thread::sleep(ms(sizes.tail_ms));
    drop(guard);
    let tasks = client
        .join()
        .map_err(|_| "the client thread panicked".to_owned())?;
    let end = Instant::now();
    let ticks = std::mem::take(&mut *lock(&ticks));
    let round_trips = std::mem::take(&mut *lock(&round_trips));
    let io_error = lock(&io_error).take();
    // Every blocker has returned (or never ran): dropping the runtime
    // cancels the work still pending.
    drop(spawner);
    drop(runtime);
    if let Some(err) = io_error {
        return Err(format!("the I/O client failed: {err}"));
    }
    if ran.len() < blockers {
        return Err(format!(
            "only {} of {blockers} blockers returned within {} s of the first one's spawn",
            ran.len(),
            (stall + BLOCKER_GRACE).as_secs()
        ));
    }
    let mut trial = Trial {
        workers,
        blockers_spawned: blockers,
        calm,
        blockers: ran,
        ticks,
        tasks,
        round_trips,
        end,
        stall_wall,
        stall_cpu,
        others_cpu_pct,
        blocker_slots,
        monitor,
        notes: Vec::new(),
    };
    trial.notes = super::shares::placement_notes(&trial, ms(sizes.start_spread_ms));
    Ok(trial)
}

/// A blocker: counts itself started, then sleeps `stall` in its poll, as
/// a blocking driver would, and says when it ran and on which thread.
async fn blocker(stall: Duration, started: Arc<AtomicUsize>, done: mpsc::Sender<Blocker>) {
    let start = Instant::now();
    started.fetch_add(1, Ordering::Release);
    thread::sleep(stall);
    let end = Instant::now();
    let thread = thread::current().name().unwrap_or("unnamed").to_owned();
    let _ = done.send(Blocker { start, end, thread });
}

/// Sleeps `tick` from each wake until `stop`, logging each tick's deadline
/// before the sleep and its wake after.
async fn ticker<R: TimerRuntime>(
    stop: Arc<AtomicBool>,
    ticks: Arc<Mutex<Vec<Tick>>>,
    tick: Duration,
) {
    while !stop.load(Ordering::Relaxed) {
        let deadline = Instant::now() + tick;
        let index = {
            let mut ticks = lock(&ticks);
            ticks.push(Tick {
                deadline,
                wake: None,
            });
            ticks.len() - 1
        };
        R::sleep_until(deadline).await;
        lock(&ticks)[index].wake = Some(Instant::now());
    }
}

/// The tasks' client, on a thread outside the runtime: one request at a
/// time, each a task spawned through `spawner` that answers on a channel;
/// gives when each answer arrived. It looks at `stop` at least every
/// [`CLIENT_POLL`] while it waits, so it ends soon after `stop` however
/// stuck the runtime is.
fn task_client<S: Spawner>(spawner: &S, stop: &AtomicBool) -> Vec<Instant> {
    let (answer, answers) = mpsc::channel::<u64>();
    let mut answered = Vec::with_capacity(1 << 16);
    let mut request = 0u64;
    'requests: while !stop.load(Ordering::Relaxed) {
        request += 1;
        let answer = answer.clone();
        spawner.spawn_detached(async move {
            let _ = answer.send(request);
        });
        loop {
            match answers.recv_timeout(CLIENT_POLL) {
                Ok(n) if n == request => {
                    answered.push(Instant::now());
                    break;
                }
                // One request is out at a time: no other answer comes.
                Ok(_) => {}
                Err(RecvTimeoutError::Timeout) if !stop.load(Ordering::Relaxed) => {}
                Err(_) => break 'requests,
            }
        }
    }
    answered
}
