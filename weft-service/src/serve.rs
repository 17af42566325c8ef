//! Building the runtime, accepting, and shutting down.
//!
//! Both runtimes run the same `run_app`; they differ in how the runtime is
//! built, how the listener accepts (`weft::hyper::serve` or `axum::serve`)
//! and which signal API waits for `SIGINT`/`SIGTERM`. The signal
//! listeners are installed before the first line is printed, so a
//! `SIGTERM` sent as soon as the port is known shuts down gracefully
//! instead of killing the process.

use std::io::{self, Write};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use crate::args::{Args, RuntimeKind};
use crate::db::Db;
use crate::routes::{self, App, WorldCache};
use crate::rt::Rt;

/// How long the runtime waits for its threads after the server has drained.
const RUNTIME_SHUTDOWN: Duration = Duration::from_secs(5);

pub fn run(args: Args) -> Result<(), String> {
    if let Some(arenas) = args.malloc_arenas() {
        limit_malloc_arenas(arenas);
    }
    let workers = args.workers();
    match args.runtime {
        RuntimeKind::Weft => {
            let runtime = weft::runtime::Builder::new_multi_thread()
                .worker_threads(workers)
                .thread_name("weft-service-worker")
                .build()
                .map_err(|e| format!("building the weft runtime: {e}"))?;
            let result = runtime.block_on(serve_weft(args));
            runtime.shutdown_timeout(RUNTIME_SHUTDOWN);
            result
        }
        RuntimeKind::Tokio => {
            let runtime = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(workers)
                .thread_name("weft-service-worker")
                .enable_all()
                .build()
                .map_err(|e| format!("building the tokio runtime: {e}"))?;
            let result = runtime.block_on(serve_tokio(args));
            runtime.shutdown_timeout(RUNTIME_SHUTDOWN);
            result
        }
    }
}

/// Caps glibc's malloc arenas at `arenas`, before the runtime starts its
/// threads.
///
/// glibc gives each allocating thread an arena of its own, up to 8 per
/// core, and memory freed into an arena serves only the threads on that
/// arena, staying resident. A burst of connections (a latency spike makes
/// the client open up to a hundred, each with its buffers) leaves its
/// memory in the arenas of the threads that served it, and the next burst
/// lands on other threads' arenas: the resident size grows by the sum of
/// each arena's peak, a step at every spike, though the memory in use stays
/// flat. With a few arenas shared by every thread, a burst reuses what the
/// last one freed (`docs/experiments.md#service-soak`).
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn limit_malloc_arenas(arenas: usize) {
    let arenas = libc::c_int::try_from(arenas).unwrap_or(libc::c_int::MAX);
    // SAFETY: `mallopt` only stores a malloc parameter (under malloc's own
    // lock); `M_ARENA_MAX` with a positive value is a valid setting, and
    // the arenas already made are kept.
    unsafe { libc::mallopt(libc::M_ARENA_MAX, arenas) };
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn limit_malloc_arenas(_arenas: usize) {}

/// How often the service hands glibc's free memory back to the system.
const MALLOC_TRIM_EVERY: Duration = Duration::from_secs(10);

/// Every `every`, returns the free pages of glibc's arenas to the system
/// (`malloc_trim`), from a task that runs for the runtime's life.
///
/// glibc gives memory back only from the top of an arena; the pages a burst
/// of connections freed below a buffer still in use stay resident for
/// good, so the resident size would follow the largest burst so far, not
/// the memory in use. `malloc_trim` releases the free pages wherever they
/// are (it holds each arena's lock while it walks the arena's free lists:
/// on the blocking pool, not on a worker). An allocator that returns free
/// memory on its own (jemalloc's decay, mimalloc) would need none of this.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn trim_malloc_every(rt: Rt, every: Duration) {
    rt.spawn(async move {
        loop {
            rt.sleep(every).await;
            // SAFETY: `malloc_trim` only releases free memory of malloc's
            // own arenas, under their locks; no pointer is passed.
            let trim = move || unsafe { libc::malloc_trim(0) };
            if rt.spawn_blocking(trim).await.is_err() {
                return;
            }
        }
    });
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn trim_malloc_every(_rt: Rt, _every: Duration) {}

async fn serve_weft(args: Args) -> Result<(), String> {
    use weft::signal::unix::{SignalKind, signal};
    let mut interrupt = signal(SignalKind::interrupt()).map_err(|e| format!("SIGINT: {e}"))?;
    let mut terminate = signal(SignalKind::terminate()).map_err(|e| format!("SIGTERM: {e}"))?;
    // The signals are awaited by a task of their own, named, so that
    // `GET /debug/tasks` shows what the service is waiting for.
    let signals = weft::task::Builder::new()
        .name("shutdown signals")
        .spawn(async move {
            futures_lite::future::race(interrupt.recv(), terminate.recv()).await;
            eprintln!("weft-service: shutting down");
        })
        .map_err(|e| format!("spawning the signal task: {e}"))?;
    let shutdown = async move {
        // An error here is the runtime shutting down: stop serving too.
        let _ = signals.await;
    };
    let router = routes::router(app(&args, Rt::Weft).await?);
    let listener = weft::net::TcpListener::bind(args.listen.as_str())
        .await
        .map_err(|e| format!("--listen {}: {e}", args.listen))?;
    announce(listener.local_addr())?;
    weft::hyper::serve(listener, router)
        .with_graceful_shutdown(shutdown)
        .await
        .map_err(|e| format!("serving: {e}"))
}

async fn serve_tokio(args: Args) -> Result<(), String> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut interrupt = signal(SignalKind::interrupt()).map_err(|e| format!("SIGINT: {e}"))?;
    let mut terminate = signal(SignalKind::terminate()).map_err(|e| format!("SIGTERM: {e}"))?;
    let shutdown = async move {
        futures_lite::future::race(interrupt.recv(), terminate.recv()).await;
        eprintln!("weft-service: shutting down");
    };
    let router = routes::router(app(&args, Rt::Tokio).await?);
    let listener = tokio::net::TcpListener::bind(args.listen.as_str())
        .await
        .map_err(|e| format!("--listen {}: {e}", args.listen))?;
    announce(listener.local_addr())?;
    axum::serve(listener, router)
        .with_graceful_shutdown(shutdown)
        .await
        .map_err(|e| format!("serving: {e}"))
}

async fn app(args: &Args, rt: Rt) -> Result<App, String> {
    trim_malloc_every(rt, MALLOC_TRIM_EVERY);
    let db = Db::open(&args.database()?, rt, args.db_connections()).await?;
    // `/cached-queries`' rows, loaded now; a database that is down now
    // (PostgreSQL) is tried again by the first such request.
    let world_cache = WorldCache::default();
    if let Err(e) = world_cache.rows(&db).await {
        eprintln!("weft-service: the World cache is not loaded yet ({e}); loading it on first use");
    }
    Ok(App {
        rt,
        db: Arc::new(db),
        reports: Arc::default(),
        world_cache: Arc::new(world_cache),
    })
}

/// The first line on stdout, flushed: where to connect.
fn announce(addr: io::Result<SocketAddr>) -> Result<(), String> {
    let addr = addr.map_err(|e| format!("the listener's address: {e}"))?;
    let mut stdout = io::stdout().lock();
    writeln!(stdout, "listening on http://{addr}")
        .and_then(|()| stdout.flush())
        .map_err(|e| format!("stdout: {e}"))
}
