//! Lanes, the stall monitor and its spare threads, demotion.
//!
//! Nothing here times the runtime against a number: each test checks an
//! ordering or an event that the mechanism makes happen and that does not
//! happen without it (each says which setting turns it off, and the
//! monitor tests run both ways). Stuck polls are made with a task that
//! blocks its thread until the test releases it, so no test depends on how
//! fast the machine is.

mod common;

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

use weft::metrics::RuntimeMetrics;
use weft::runtime::{Builder, Handle, Runtime, StallInfo};
use weft::task::{self, Lane};

/// A task that holds its worker inside one poll until released.
struct Stuck {
    inside: Arc<AtomicBool>,
    release: Arc<AtomicBool>,
}

impl Stuck {
    fn new() -> Stuck {
        Stuck {
            inside: Arc::new(AtomicBool::new(false)),
            release: Arc::new(AtomicBool::new(false)),
        }
    }

    /// The future to spawn: blocks its thread until `release`.
    fn task(&self) -> impl std::future::Future<Output = ()> + Send + 'static {
        let (inside, release) = (self.inside.clone(), self.release.clone());
        async move {
            inside.store(true, Ordering::SeqCst);
            while !release.load(Ordering::SeqCst) {
                std::thread::sleep(Duration::from_millis(1));
            }
            inside.store(false, Ordering::SeqCst);
        }
    }

    /// Waits until a thread runs the task (a test fails after 30 s rather
    /// than hang when no thread ever comes).
    fn wait_until_inside(&self) {
        let start = Instant::now();
        while !self.inside.load(Ordering::SeqCst) {
            assert!(
                start.elapsed() < Duration::from_secs(30),
                "no thread ran the stuck task"
            );
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    fn release(&self) {
        self.release.store(true, Ordering::SeqCst);
    }
}

/// A test that fails while its task is stuck still ends: unwinding drops
/// the `Stuck` (declared after the runtime) before the runtime, whose
/// drop waits for every thread, so the task is released first. (Without
/// it, a failed assertion hung `every_spare_thread_is_joined_by_the_runtimes_drop`
/// in the runtime's drop, seen once in a loop of runs beside two CPU
/// hogs; the assertion it failed is `monitor.rs`'s `run_spare` comment.)
impl Drop for Stuck {
    fn drop(&mut self) {
        self.release();
    }
}

fn one_worker(monitor: bool) -> Runtime {
    Builder::new_multi_thread()
        .worker_threads(1)
        .stall_monitor(monitor)
        .build()
        .unwrap()
}

/// Spawns a short task from outside; the channel gets whether the stuck
/// task was still inside its poll when the short one ran.
fn spawn_short(handle: &Handle, stuck: &Stuck) -> mpsc::Receiver<bool> {
    let (tx, rx) = mpsc::channel();
    let inside = stuck.inside.clone();
    drop(handle.spawn(async move {
        let _ = tx.send(inside.load(Ordering::SeqCst));
    }));
    rx
}

/// A stall with work behind it: a task stuck in one poll and, spawned
/// from outside beside it, a short task; the stuck one is released once
/// the short one ran or `wait` passed. `Ok(true)`: the short task ran
/// while the stuck poll went on.
fn short_task_beside_a_stall(rt: &Runtime, wait: Duration) -> Result<bool, mpsc::RecvTimeoutError> {
    let stuck = Stuck::new();
    let long = rt.spawn(stuck.task());
    stuck.wait_until_inside();
    let ran = spawn_short(rt.handle(), &stuck).recv_timeout(wait);
    stuck.release();
    rt.block_on(long).unwrap();
    ran
}

#[test]
fn a_short_task_runs_while_the_only_worker_is_stuck_in_a_long_poll() {
    let rt = one_worker(true);
    let stuck = Stuck::new();
    let long = rt.spawn(stuck.task());
    stuck.wait_until_inside();
    let ran = spawn_short(rt.handle(), &stuck);
    let was_inside = ran
        .recv_timeout(Duration::from_secs(30))
        .expect("the short task never ran while the worker was stuck");
    assert!(was_inside, "the short task ran only after the long poll");
    stuck.release();
    rt.block_on(long).unwrap();
    let metrics = rt.handle().metrics();
    assert!(metrics.stalls >= 1, "{metrics:?}");
    assert!(metrics.handoffs >= 1, "{metrics:?}");
    assert!(metrics.spares_started >= 1, "{metrics:?}");
    assert!(metrics.spare_slots.polls >= 1, "a spare ran the short task");
}

/// The task a stuck poll spawns lands in its own worker's LIFO slot, the
/// one place no other worker is told about (a local push wakes others for
/// parallelism only): the monitor must count that slot as work waiting and
/// hand it to a spare. (With `Remote::has_lifo` answering `false` the child
/// waits for the poll, which waits for the child: this test times out.)
#[test]
fn a_task_spawned_by_a_stuck_poll_runs_while_it_is_stuck() {
    let rt = one_worker(true);
    let (ran_tx, ran_rx) = mpsc::channel::<()>();
    let parent = rt.spawn(async move {
        drop(weft::spawn(async move {
            let _ = ran_tx.send(());
        }));
        // A blocking wait inside the poll: only a spare can run the child.
        ran_rx.recv_timeout(Duration::from_secs(30)).is_ok()
    });
    assert!(
        rt.block_on(parent).unwrap(),
        "the child in the stuck worker's LIFO slot never ran"
    );
    let metrics = rt.handle().metrics();
    assert!(metrics.handoffs >= 1, "{metrics:?}");
}

#[test]
fn without_the_monitor_a_short_task_waits_for_the_long_poll() {
    let rt = one_worker(false);
    let stuck = Stuck::new();
    let long = rt.spawn(stuck.task());
    stuck.wait_until_inside();
    let ran = spawn_short(rt.handle(), &stuck);
    // The counterpart of the test above: the same short task, no monitor.
    assert!(
        ran.recv_timeout(Duration::from_millis(300)).is_err(),
        "a short task ran beside a stuck worker with the monitor off"
    );
    stuck.release();
    assert!(!ran.recv_timeout(Duration::from_secs(30)).unwrap());
    rt.block_on(long).unwrap();
    let metrics = rt.handle().metrics();
    assert_eq!(metrics.handoffs, 0, "{metrics:?}");
    // Nothing watches the polls at all: no monitor thread counts the
    // 300 ms poll as a stall or lowers its thread.
    assert_eq!(metrics.stalls, 0, "{metrics:?}");
    assert_eq!(metrics.threads_demoted, 0, "{metrics:?}");
}

/// `workers` workers, a 5 ms stall threshold, and every stall report kept.
fn reporting_stalls(workers: usize) -> (Runtime, Arc<Mutex<Vec<StallInfo>>>) {
    let reports: Arc<Mutex<Vec<StallInfo>>> = Arc::default();
    let rt = {
        let reports = reports.clone();
        Builder::new_multi_thread()
            .worker_threads(workers)
            .stall_threshold(Duration::from_millis(5))
            .on_stall(move |info| reports.lock().unwrap().push(info.clone()))
            .build()
            .unwrap()
    };
    (rt, reports)
}

#[test]
fn the_stall_hook_names_the_task_and_where_it_was_spawned() {
    let (rt, reports) = reporting_stalls(1);
    let stuck = Stuck::new();
    let line = line!() + 3;
    let long = task::Builder::new()
        .name("report-builder")
        .spawn_on(stuck.task(), rt.handle())
        .unwrap();
    stuck.wait_until_inside();
    let start = Instant::now();
    while reports.lock().unwrap().is_empty() {
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "no stall reported"
        );
        std::thread::sleep(Duration::from_millis(1));
    }
    stuck.release();
    rt.block_on(long).unwrap();
    let reports = reports.lock().unwrap();
    assert_eq!(reports.len(), 1, "one report per stuck poll: {reports:?}");
    let info = &reports[0];
    assert_eq!(info.worker(), 0);
    assert_eq!(info.task_name(), Some("report-builder"));
    assert_eq!(info.spawned_at().file(), file!());
    assert_eq!(info.spawned_at().line(), line);
    assert!(info.stuck_for() >= Duration::from_millis(5), "{info:?}");
    let text = info.to_string();
    assert!(
        text.contains("report-builder") && text.contains("lanes.rs"),
        "{text}"
    );
    assert_eq!(rt.handle().metrics().stalls, 1);
}

/// Each report names the worker slot the stall is on.
#[test]
fn stall_reports_name_the_stuck_worker() {
    let (rt, reports) = reporting_stalls(2);
    let stuck = [Stuck::new(), Stuck::new()];
    let long: Vec<_> = stuck.iter().map(|stuck| rt.spawn(stuck.task())).collect();
    stuck.iter().for_each(Stuck::wait_until_inside);
    let start = Instant::now();
    while reports.lock().unwrap().len() < 2 {
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "no two stalls reported"
        );
        std::thread::sleep(Duration::from_millis(1));
    }
    stuck.iter().for_each(Stuck::release);
    for long in long {
        rt.block_on(long).unwrap();
    }
    let mut workers: Vec<usize> = reports
        .lock()
        .unwrap()
        .iter()
        .map(StallInfo::worker)
        .collect();
    workers.sort_unstable();
    assert_eq!(
        workers,
        [0, 1],
        "one report per stuck worker, each naming its own"
    );
}

#[test]
fn plain_spawns_report_their_call_site() {
    let (rt, reports) = reporting_stalls(1);
    let stuck = Stuck::new();
    let line = line!() + 1;
    let long = rt.handle().spawn(stuck.task());
    stuck.wait_until_inside();
    while reports.lock().unwrap().is_empty() {
        std::thread::sleep(Duration::from_millis(1));
    }
    stuck.release();
    rt.block_on(long).unwrap();
    let info = reports.lock().unwrap()[0].clone();
    assert_eq!(info.task_name(), None);
    assert_eq!(
        (info.spawned_at().file(), info.spawned_at().line()),
        (file!(), line)
    );
}

/// A task whose first poll blocks for `slow`, then yields twice.
async fn slow_then_yielding(slow: Duration) {
    std::thread::sleep(slow);
    task::yield_now().await;
    task::yield_now().await;
}

#[test]
fn a_default_task_with_a_slow_poll_moves_to_the_batch_lane() {
    for demote in [true, false] {
        let rt = Builder::new_multi_thread()
            .worker_threads(1)
            .slow_poll_threshold(Duration::from_millis(2))
            .demote_slow_tasks(demote)
            .build()
            .unwrap();
        rt.block_on(rt.spawn(slow_then_yielding(Duration::from_millis(100))))
            .unwrap();
        // The last poll is counted after it returns, while the handle may
        // already have resolved: read once the workers have stopped.
        let handle = rt.handle().clone();
        drop(rt);
        let metrics = handle.metrics();
        if demote {
            assert_eq!(metrics.total.demotions, 1, "{metrics:?}");
            assert_eq!(metrics.total.batch_polls, 2, "both later polls in Batch");
        } else {
            assert_eq!(metrics.total.demotions, 0, "{metrics:?}");
            assert_eq!(metrics.total.batch_polls, 0);
        }
    }
}

/// Only a poll past `slow_poll_threshold` demotes its task: one that the
/// monitor sees across many samples (20 ms, samples every 250 us at the
/// default stall threshold: a stall) but under the threshold (1 s) does
/// not.
#[test]
fn a_poll_under_the_slow_threshold_does_not_demote_however_many_samples_see_it() {
    let rt = Builder::new_multi_thread()
        .worker_threads(1)
        .slow_poll_threshold(Duration::from_secs(1))
        .build()
        .unwrap();
    rt.block_on(rt.spawn(slow_then_yielding(Duration::from_millis(20))))
        .unwrap();
    let metrics = rt.handle().metrics();
    assert!(metrics.stalls >= 1, "the monitor saw the poll: {metrics:?}");
    assert_eq!(metrics.total.demotions, 0, "{metrics:?}");
}

#[test]
fn fast_tasks_are_never_demoted() {
    let rt = common::rt(2, true);
    rt.block_on(async {
        let tasks: Vec<_> = (0..100)
            .map(|_| weft::spawn(async { task::yield_now().await }))
            .collect();
        for task in tasks {
            task.await.unwrap();
        }
    });
    assert_eq!(rt.handle().metrics().total.demotions, 0);
}

/// Queues `count` default tasks (each records its number in `order`)
/// behind a stuck worker.
fn queue_default_tasks(
    rt: &Runtime,
    order: &Arc<Mutex<Vec<i32>>>,
    count: i32,
) -> Vec<task::JoinHandle<()>> {
    (0..count)
        .map(|i| {
            let order = order.clone();
            rt.spawn(async move { order.lock().unwrap().push(i) })
        })
        .collect()
}

/// Releases the stuck worker, waits for every task, and returns the order
/// they ran in.
fn release_and_collect_order(
    rt: &Runtime,
    stuck: &Stuck,
    blocker: task::JoinHandle<()>,
    urgent: task::JoinHandle<()>,
    queued: Vec<task::JoinHandle<()>>,
    order: &Mutex<Vec<i32>>,
) -> Vec<i32> {
    stuck.release();
    rt.block_on(async {
        blocker.await.unwrap();
        urgent.await.unwrap();
        for handle in queued {
            handle.await.unwrap();
        }
    });
    order.lock().unwrap().clone()
}

#[test]
fn latency_work_runs_before_queued_default_work() {
    let rt = one_worker(false);
    let stuck = Stuck::new();
    let blocker = rt.spawn(stuck.task());
    stuck.wait_until_inside();
    let order = Arc::new(Mutex::new(Vec::new()));
    let handles = queue_default_tasks(&rt, &order, 50);
    let order_latency = order.clone();
    let urgent = task::Builder::new()
        .lane(Lane::Latency)
        .spawn_on(
            async move { order_latency.lock().unwrap().push(-1) },
            rt.handle(),
        )
        .unwrap();
    let order = release_and_collect_order(&rt, &stuck, blocker, urgent, handles, &order);
    assert_eq!(order.len(), 51);
    assert_eq!(order[0], -1, "the latency task ran first: {order:?}");
}

/// A `Latency` task keeps its lane when it is woken, not only when it is
/// spawned: woken from outside while default work is queued, it runs
/// first. (Woken onto the default path instead, it would queue behind
/// the default tasks in the inject queue.)
#[test]
fn a_latency_task_woken_from_outside_runs_before_queued_default_work() {
    let rt = one_worker(false);
    let order = Arc::new(Mutex::new(Vec::new()));
    let wake_me: Arc<Mutex<(bool, Option<std::task::Waker>)>> = Arc::default();
    let urgent = {
        let (order, wake_me) = (order.clone(), wake_me.clone());
        task::Builder::new()
            .lane(Lane::Latency)
            .spawn_on(
                std::future::poll_fn(move |cx| {
                    let mut wake_me = wake_me.lock().unwrap();
                    if wake_me.0 {
                        order.lock().unwrap().push(-1);
                        std::task::Poll::Ready(())
                    } else {
                        wake_me.1 = Some(cx.waker().clone());
                        std::task::Poll::Pending
                    }
                }),
                rt.handle(),
            )
            .unwrap()
    };
    wait_for("the latency task was never polled", || {
        wake_me.lock().unwrap().1.is_some()
    });
    let stuck = Stuck::new();
    let blocker = rt.spawn(stuck.task());
    stuck.wait_until_inside();
    let handles = queue_default_tasks(&rt, &order, 10);
    let waker = {
        let mut wake_me = wake_me.lock().unwrap();
        wake_me.0 = true;
        wake_me.1.take().unwrap()
    };
    waker.wake();
    let order = release_and_collect_order(&rt, &stuck, blocker, urgent, handles, &order);
    assert_eq!(order.len(), 11);
    assert_eq!(order[0], -1, "the woken latency task ran first: {order:?}");
}

/// Spawns `count` tasks on `lane` that each spin `spin` per poll and yield,
/// until `stop`: a lane whose queue is never empty.
fn flood(
    rt: &Runtime,
    lane: Lane,
    count: usize,
    spin: Duration,
    stop: &Arc<AtomicBool>,
) -> Vec<task::JoinHandle<()>> {
    (0..count)
        .map(|_| {
            let stop = stop.clone();
            task::Builder::new()
                .lane(lane)
                .spawn_on(
                    async move {
                        while !stop.load(Ordering::Relaxed) {
                            let start = Instant::now();
                            while start.elapsed() < spin {
                                std::hint::spin_loop();
                            }
                            task::yield_now().await;
                        }
                    },
                    rt.handle(),
                )
                .unwrap()
        })
        .collect()
}

#[test]
fn batch_work_keeps_its_share_under_a_latency_flood() {
    let rt = Builder::new_multi_thread()
        .worker_threads(2)
        .batch_share(0.25)
        .build()
        .unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    // A latency flood on every worker: tasks that yield until stopped, so
    // the latency queue is never empty.
    let latency = flood(&rt, Lane::Latency, 4, Duration::ZERO, &stop);
    let batch_polls = Arc::new(AtomicU64::new(0));
    let batch = {
        let (stop, polls) = (stop.clone(), batch_polls.clone());
        task::Builder::new()
            .lane(Lane::Batch)
            .spawn_on(
                async move {
                    while !stop.load(Ordering::Relaxed) {
                        let start = Instant::now();
                        while start.elapsed() < Duration::from_micros(200) {
                            std::hint::spin_loop();
                        }
                        polls.fetch_add(1, Ordering::Relaxed);
                        task::yield_now().await;
                    }
                },
                rt.handle(),
            )
            .unwrap()
    };
    std::thread::sleep(Duration::from_secs(1));
    stop.store(true, Ordering::Relaxed);
    rt.block_on(async {
        for task in latency {
            task.await.unwrap();
        }
        batch.await.unwrap();
    });
    // With only "latency first" the batch task would never run while the
    // flood lasts; its share (25% of two workers, ~2,500 polls of 200 µs
    // in the second) keeps it going. The bound is far below the share so
    // a loaded machine does not fail it.
    let polls = batch_polls.load(Ordering::Relaxed);
    assert!(polls >= 50, "the batch task starved: {polls} polls in 1 s");
    let metrics = rt.handle().metrics();
    assert!(metrics.total.batch_busy_ns > 0);
    assert!(metrics.total.latency_polls > metrics.total.batch_polls);
    let total = &metrics.total;
    assert_eq!(
        total.default_lane_polls() + total.latency_polls + total.batch_polls,
        total.polls
    );
    assert!(total.default_lane_busy_ns() <= total.busy_ns);
}

#[test]
fn batch_work_takes_no_more_than_its_share_under_a_latency_flood() {
    // The other side of the share: with batch work waiting on every
    // worker too, the lane gets its 25% of the time, not the whole of it.
    // Without the charge (credit never spent, or a debt floor that holds
    // it above zero) every periodic check takes a batch poll: 200 µs
    // against a check every ~10-127 one-microsecond latency polls, most of
    // the time. The bound is twice the share: a preempted poll's time
    // counts, and a loaded machine preempts.
    let rt = Builder::new_multi_thread()
        .worker_threads(2)
        .batch_share(0.25)
        .build()
        .unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let latency = flood(&rt, Lane::Latency, 4, Duration::ZERO, &stop);
    let batch = flood(&rt, Lane::Batch, 4, Duration::from_micros(200), &stop);
    std::thread::sleep(Duration::from_secs(1));
    stop.store(true, Ordering::Relaxed);
    rt.block_on(async {
        for task in latency.into_iter().chain(batch) {
            task.await.unwrap();
        }
    });
    // Polls are counted after they return: read once the workers stopped.
    let handle = rt.handle().clone();
    drop(rt);
    let total = handle.metrics().total;
    let share = total.batch_busy_ns as f64 / total.busy_ns as f64;
    assert!(total.batch_polls > 0, "the batch lane never ran");
    assert!(
        share < 0.5,
        "the batch lane took {:.0}% of the busy time, its share is 25%",
        share * 100.0
    );
}

/// Four stuck tasks: the workers and the spare slots get stuck; the
/// rest waits; short tasks queued behind all of them still finish once the
/// stuck ones are released. With 2 workers and with 1 (the spare slots
/// are `max_threads` less the workers, not some other ratio of them).
#[test]
fn spare_threads_never_exceed_max_threads() {
    const MAX_THREADS: usize = 3;
    for workers in [2, 1] {
        let spares = MAX_THREADS - workers;
        let rt = Builder::new_multi_thread()
            .worker_threads(workers)
            .max_threads(MAX_THREADS)
            .stall_threshold(Duration::from_millis(1))
            .build()
            .unwrap();
        let stuck: Vec<_> = (0..4).map(|_| Stuck::new()).collect();
        let handles: Vec<_> = stuck.iter().map(|s| rt.spawn(s.task())).collect();
        let inside = || {
            stuck
                .iter()
                .filter(|s| s.inside.load(Ordering::SeqCst))
                .count()
        };
        let start = Instant::now();
        while inside() < MAX_THREADS {
            assert!(
                start.elapsed() < Duration::from_secs(30),
                "{workers} workers: no spare took a stuck task"
            );
            std::thread::sleep(Duration::from_millis(1));
        }
        let done = Arc::new(AtomicUsize::new(0));
        let shorts: Vec<_> = (0..20)
            .map(|_| {
                let done = done.clone();
                rt.spawn(async move {
                    done.fetch_add(1, Ordering::SeqCst);
                })
            })
            .collect();
        std::thread::sleep(Duration::from_millis(50));
        let metrics = rt.handle().metrics();
        assert!(metrics.spare_threads <= spares, "{metrics:?}");
        assert!(metrics.spares_started <= spares as u64, "{metrics:?}");
        assert_eq!(
            inside(),
            MAX_THREADS,
            "{workers} workers and {spares} spares: no thread more"
        );
        for s in &stuck {
            s.release();
        }
        rt.block_on(async {
            for handle in handles.into_iter().chain(shorts) {
                handle.await.unwrap();
            }
        });
        assert_eq!(done.load(Ordering::SeqCst), 20);
    }
}

/// Waits (up to 30 s) until `done` holds; `what` names it in the failure.
fn wait_for(what: &str, mut done: impl FnMut() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(start.elapsed() < Duration::from_secs(30), "{what}");
        std::thread::sleep(Duration::from_millis(1));
    }
}

#[test]
fn a_demoted_spare_gives_its_slot_back_and_later_stalls_are_still_rescued() {
    unprivileged(
        a_demoted_spare_gives_its_slot_back_and_later_stalls_are_still_rescued_unprivileged,
    );
}

fn a_demoted_spare_gives_its_slot_back_and_later_stalls_are_still_rescued_unprivileged() {
    let rt = one_worker(true);
    let handle = rt.handle();
    // The worker stuck in `first`; `second`, queued behind it, is taken by
    // a spare thread, which gets stuck in it too.
    let (first, second) = (Stuck::new(), Stuck::new());
    let first_task = rt.spawn(first.task());
    first.wait_until_inside();
    let second_task = rt.spawn(second.task());
    second.wait_until_inside();
    // Work behind both stuck polls: both threads are lowered and a second
    // spare runs it.
    let ran = spawn_short(handle, &second);
    assert_eq!(ran.recv_timeout(Duration::from_secs(30)), Ok(true));
    wait_for("the stuck spare was never demoted", || {
        handle.metrics().threads_demoted == 2
    });
    // The demoted spare leaves its poll, gives its slot back and ends.
    second.release();
    rt.block_on(second_task).unwrap();
    wait_for("the demoted spare never ended", || {
        handle.metrics().spare_threads == 1
    });
    // The demoted worker thread gives its core back; the spare left takes
    // it over (after the monitor took back the slot, given back first).
    first.release();
    rt.block_on(first_task).unwrap();
    // A new stall with work behind it is rescued: the slot given back is
    // free again, and nothing counts a thread on it any more.
    let ran = short_task_beside_a_stall(&rt, Duration::from_secs(30));
    assert_eq!(
        ran,
        Ok(true),
        "no thread came for the stall after the handback"
    );
}

/// A demoted worker's core gets a thread of its own even while the thread
/// of the only spare slot is stuck too: spare threads may number the spare
/// slots plus the workers, as each worker's core can lose its thread.
#[test]
fn a_demoted_workers_core_gets_a_thread_while_every_spare_slot_is_stuck() {
    unprivileged(a_demoted_workers_core_gets_a_thread_while_every_spare_slot_is_stuck_unprivileged);
}

fn a_demoted_workers_core_gets_a_thread_while_every_spare_slot_is_stuck_unprivileged() {
    let rt = Builder::new_multi_thread()
        .worker_threads(1)
        .max_threads(2)
        .build()
        .unwrap();
    let handle = rt.handle();
    // The worker stuck in `first`; `second`, queued behind it, goes to the
    // one spare slot's thread and holds it; the worker's thread is lowered.
    let (first, second) = (Stuck::new(), Stuck::new());
    let first_task = rt.spawn(first.task());
    first.wait_until_inside();
    let second_task = rt.spawn(second.task());
    second.wait_until_inside();
    wait_for("the worker's thread was never demoted", || {
        handle.metrics().threads_demoted >= 1
    });
    // The lowered thread leaves its poll and gives the worker's core back;
    // a new spare thread takes it and runs the short task.
    first.release();
    rt.block_on(first_task).unwrap();
    let ran = spawn_short(handle, &second).recv_timeout(Duration::from_secs(10));
    second.release();
    rt.block_on(second_task).unwrap();
    assert_eq!(
        ran,
        Ok(true),
        "the worker's core waited for the stuck spare slot's thread"
    );
}

/// A spare slot lent while a worker's core waits for its new thread gets a
/// thread of its own: the one on its way is the core's.
#[test]
fn a_slot_lent_while_a_core_waits_for_its_thread_gets_another_thread() {
    unprivileged(a_slot_lent_while_a_core_waits_for_its_thread_gets_another_thread_unprivileged);
}

fn a_slot_lent_while_a_core_waits_for_its_thread_gets_another_thread_unprivileged() {
    // While `gate` is down, new threads wait in their start hook: a thread
    // asked for stays on its way until the test lets it start.
    let gate = Arc::new(AtomicBool::new(true));
    let rt = {
        let gate = gate.clone();
        Builder::new_multi_thread()
            .worker_threads(1)
            .max_threads(3)
            .on_thread_start(move || {
                while !gate.load(Ordering::SeqCst) {
                    std::thread::sleep(Duration::from_millis(1));
                }
            })
            .build()
            .unwrap()
    };
    let handle = rt.handle();
    // The worker stuck in `first`; `second`, queued behind it, goes to the
    // first spare slot's thread and holds it; the worker's thread is
    // lowered.
    let (first, second) = (Stuck::new(), Stuck::new());
    let first_task = rt.spawn(first.task());
    first.wait_until_inside();
    let second_task = rt.spawn(second.task());
    second.wait_until_inside();
    wait_for("the worker's thread was never demoted", || {
        handle.metrics().threads_demoted >= 1
    });
    // The lowered thread gives the worker's core back; the thread asked
    // for it waits at the gate.
    gate.store(false, Ordering::SeqCst);
    first.release();
    rt.block_on(first_task).unwrap();
    wait_for("no thread was asked for the worker's core", || {
        handle.metrics().spare_threads >= 2
    });
    // Work waits behind the stuck spare: the monitor lends the second
    // slot, and asks for a thread for it too.
    let ran = spawn_short(handle, &second);
    let start = Instant::now();
    while handle.metrics().spare_threads < 3 && start.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(1));
    }
    let metrics = handle.metrics();
    gate.store(true, Ordering::SeqCst);
    let ran = ran.recv_timeout(Duration::from_secs(30));
    second.release();
    rt.block_on(second_task).unwrap();
    assert_eq!(
        metrics.spare_threads, 3,
        "the lent slot counted the core's thread as its own: {metrics:?}"
    );
    assert_eq!(ran, Ok(true), "the short task waited for the stuck spare");
}

/// While a poll is stalled, the inject queue is drained one task at a
/// time: a batch moved into a ring could wait behind that thread's next
/// long poll. With the only worker stuck, 64 tasks spawned from outside
/// wait in the inject queue until the monitor's spare comes; it takes them
/// in 64 batches of one (without the rule, in one batch: the stall flag
/// made always false fails this test).
#[test]
fn while_a_poll_is_stalled_outside_work_is_taken_one_task_at_a_time() {
    let rt = one_worker(true);
    let handle = rt.handle();
    let stuck = Stuck::new();
    let long = rt.spawn(stuck.task());
    stuck.wait_until_inside();
    wait_for("the stuck poll was never reported as a stall", || {
        handle.metrics().stalls >= 1
    });
    let before = handle.metrics().total;
    let (tx, rx) = mpsc::channel();
    for _ in 0..64 {
        let tx = tx.clone();
        drop(handle.spawn(async move {
            let _ = tx.send(());
        }));
    }
    for _ in 0..64 {
        rx.recv_timeout(Duration::from_secs(30))
            .expect("a task spawned beside the stalled poll never ran");
    }
    let after = handle.metrics().total;
    stuck.release();
    rt.block_on(long).unwrap();
    let tasks = after.inject_tasks - before.inject_tasks;
    let batches = after.inject_batches - before.inject_batches;
    assert_eq!(tasks, 64, "every task came through the inject queue");
    assert_eq!(batches, 64, "{tasks} tasks taken in {batches} batches");
}

#[test]
fn idle_spares_retire_after_their_timeout() {
    // Without demotion, so no spare takes over the worker for good; one
    // spare slot, so the second stall is rescued only if the first spare
    // gave its slot back.
    let rt = Builder::new_multi_thread()
        .worker_threads(1)
        .max_threads(2)
        .demote_slow_tasks(false)
        .spare_idle_timeout(Duration::from_millis(20))
        .build()
        .unwrap();
    let stuck = Stuck::new();
    let long = rt.spawn(stuck.task());
    stuck.wait_until_inside();
    let ran = spawn_short(rt.handle(), &stuck);
    assert!(ran.recv_timeout(Duration::from_secs(30)).unwrap());
    stuck.release();
    rt.block_on(long).unwrap();
    let start = Instant::now();
    while rt.handle().metrics().spare_threads > 0 {
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "the spare never retired"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    assert!(rt.handle().metrics().spares_retired >= 1);
    // With no spare left, the next stall gets a new thread (the monitor
    // must not count a thread as on its way that has long arrived).
    let ran = short_task_beside_a_stall(&rt, Duration::from_secs(10));
    assert_eq!(ran, Ok(true), "no thread came for the second stall");
}

/// A warm spare is used before a new thread is started: the spare that
/// rescued one stall and went idle takes the next one's slot.
#[test]
fn a_warm_spare_takes_the_next_stall_before_a_new_thread_starts() {
    // Without demotion, so the worker keeps its thread; spares stay warm
    // for longer than the test takes. One spare slot: the spare gives it
    // back and goes idle in one step under the monitor's lock, so the next
    // handoff always finds it idle.
    let rt = Builder::new_multi_thread()
        .worker_threads(1)
        .max_threads(2)
        .demote_slow_tasks(false)
        .spare_idle_timeout(Duration::from_secs(60))
        .build()
        .unwrap();
    let handle = rt.handle();
    let ran = short_task_beside_a_stall(&rt, Duration::from_secs(30));
    assert_eq!(ran, Ok(true), "no spare came for the first stall");
    wait_for("the spare never went idle with its slot back", || {
        let metrics = handle.metrics();
        metrics.spare_threads == 1 && metrics.spares_started == 1
    });
    let ran = short_task_beside_a_stall(&rt, Duration::from_secs(10));
    let metrics = handle.metrics();
    assert_eq!(
        ran,
        Ok(true),
        "the warm spare did not take the second stall"
    );
    assert_eq!(
        metrics.spares_started, 1,
        "a new thread started: {metrics:?}"
    );
    assert!(metrics.spares_woken >= 1, "{metrics:?}");
}

#[test]
fn a_spare_slow_to_start_is_waited_for_not_started_again() {
    // Spare threads take 200 ms to start (their start hook sleeps), so the
    // monitor samples many times while the ones it asked for are on their
    // way.
    let slow_starts = Arc::new(AtomicBool::new(false));
    let rt = {
        let slow_starts = slow_starts.clone();
        Builder::new_multi_thread()
            .worker_threads(1)
            .on_thread_start(move || {
                if slow_starts.load(Ordering::SeqCst) {
                    std::thread::sleep(Duration::from_millis(200));
                }
            })
            .build()
            .unwrap()
    };
    slow_starts.store(true, Ordering::SeqCst);
    let stuck = Stuck::new();
    let long = rt.spawn(stuck.task());
    stuck.wait_until_inside();
    // Work behind the stuck poll: the monitor demotes the worker's thread
    // and lends a spare slot, for which it asks for a thread.
    let ran = spawn_short(rt.handle(), &stuck);
    let start = Instant::now();
    while rt.handle().metrics().threads_demoted == 0 {
        if start.elapsed() > Duration::from_secs(30) {
            stuck.release();
            panic!("never demoted");
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    // The demoted thread gives its core back at once, while that thread
    // is still starting: the core needs a second thread, and only one.
    stuck.release();
    let short_ran = ran.recv_timeout(Duration::from_secs(30));
    rt.block_on(long).unwrap();
    assert!(short_ran.is_ok(), "the short task never ran");
    let after = spawn_short(rt.handle(), &stuck);
    assert!(after.recv_timeout(Duration::from_secs(30)).is_ok());
    // Read before the stall below, which may rightly start a third thread
    // (a second free slot lent while the first one's spare still holds it).
    let metrics = rt.handle().metrics();
    // The lent slot and the core given back each got a thread: the one
    // asked for at the handoff, counted as on its way, and one more. A
    // later stall with work behind it is rescued. (`find_threads` counting
    // the thread on its way wrongly, `idle - starting`, overflowed and
    // killed the monitor, or, wrapping, left the lent slot without a
    // thread: counted as a free thread, it stops every later handoff.)
    slow_starts.store(false, Ordering::SeqCst);
    let ran = short_task_beside_a_stall(&rt, Duration::from_secs(10));
    assert_eq!(
        ran,
        Ok(true),
        "no thread came for a stall after the slow starts"
    );
    assert!(
        metrics.spares_started <= 2,
        "threads started while others were on their way: {metrics:?}"
    );
}

#[test]
fn shutdown_while_a_spare_holds_a_stuck_task_drops_every_task_once() {
    let drops = common::DropCounter::default();
    let rt = one_worker(true);
    let stuck = Stuck::new();
    let long = rt.spawn(stuck.task());
    stuck.wait_until_inside();
    // A second stuck task, which the spare takes; then pending tasks.
    let second = Stuck::new();
    let _second = rt.spawn(second.task());
    second.wait_until_inside();
    for _ in 0..10 {
        let token = drops.track();
        drop(rt.spawn(async move {
            let _token = token;
            std::future::pending::<()>().await;
        }));
    }
    stuck.release();
    second.release();
    drop(long);
    drop(rt);
    assert_eq!(drops.drops(), 10);
}

/// Drops `CAP_SYS_NICE` from this thread (and so from the runtime threads
/// it starts): like an unprivileged process, it may then lower priorities
/// but never raise one. Returns whether raising is now refused, checked.
#[cfg(target_os = "linux")]
fn drop_cap_sys_nice() -> bool {
    #[repr(C)]
    struct Header {
        version: u32,
        pid: i32,
    }
    #[repr(C)]
    #[derive(Default, Clone, Copy)]
    struct Data {
        effective: u32,
        permitted: u32,
        inheritable: u32,
    }
    const CAP_SYS_NICE: u32 = 23;
    let mut header = Header {
        version: 0x2008_0522, // _LINUX_CAPABILITY_VERSION_3
        pid: 0,
    };
    let mut data = [Data::default(); 2];
    // SAFETY: capget writes one header and two data records, which both
    // point to, for the calling thread.
    let got = unsafe { libc::syscall(libc::SYS_capget, &mut header, data.as_mut_ptr()) };
    assert_eq!(got, 0, "capget failed");
    data[0].effective &= !(1 << CAP_SYS_NICE);
    data[0].permitted &= !(1 << CAP_SYS_NICE);
    // SAFETY: capset reads the same records; it changes only this thread's
    // capabilities.
    let set = unsafe { libc::syscall(libc::SYS_capset, &mut header, data.as_ptr()) };
    assert_eq!(set, 0, "capset failed");
    // SAFETY: reads and sets the calling thread's nice value only.
    let raised = unsafe {
        let nice = libc::getpriority(libc::PRIO_PROCESS, 0);
        libc::setpriority(libc::PRIO_PROCESS, 0, nice - 1) == 0
    };
    !raised
}

#[cfg(target_os = "linux")]
fn this_thread() -> (i32, i32) {
    // SAFETY: gettid and getpriority read the calling thread's own ids.
    unsafe { (libc::gettid(), libc::getpriority(libc::PRIO_PROCESS, 0)) }
}

/// A thread's kernel id and nice value.
#[cfg(target_os = "linux")]
type ThreadNice = (i32, i32);

/// A task in a stalled poll holding up another task on a 1-worker
/// runtime: (thread id, nice) when its poll began, once the monitor has
/// lowered it, and in the task's next poll; with the runtime's metrics.
#[cfg(target_os = "linux")]
fn a_stalled_poll_on_one_worker() -> (ThreadNice, ThreadNice, ThreadNice, RuntimeMetrics) {
    let rt = Builder::new_multi_thread()
        .worker_threads(1)
        .slow_poll_threshold(Duration::from_millis(2))
        .build()
        .unwrap();
    let started = Arc::new(AtomicBool::new(false));
    let slow = {
        let started = started.clone();
        rt.spawn(async move {
            let before = this_thread();
            started.store(true, Ordering::SeqCst);
            // A stalled poll holding up the task spawned below: the
            // monitor lowers this thread meanwhile.
            let start = Instant::now();
            while this_thread().1 == before.1 && start.elapsed() < Duration::from_secs(30) {
                std::thread::sleep(Duration::from_millis(1));
            }
            let after = this_thread();
            // Past the slow-poll threshold as well (the monitor marks
            // the poll slow at its next look after 2 ms).
            std::thread::sleep(Duration::from_millis(50));
            task::yield_now().await;
            (before, after, this_thread())
        })
    };
    while !started.load(Ordering::SeqCst) {
        std::thread::sleep(Duration::from_millis(1));
    }
    let held_up = rt.spawn(async {});
    let (before, after, next) = rt.block_on(slow).unwrap();
    rt.block_on(held_up).unwrap();
    (before, after, next, rt.handle().metrics())
}

/// [`a_stalled_poll_on_one_worker`], checked to have lowered its thread
/// (which began at this thread's nice value) during the poll: the thread
/// at the poll's start and in the task's next poll, and the metrics.
#[cfg(target_os = "linux")]
fn a_stalled_polls_thread_lowered() -> (ThreadNice, ThreadNice, RuntimeMetrics) {
    let (_, normal_nice) = this_thread();
    let (before, after, next, metrics) = a_stalled_poll_on_one_worker();
    assert_eq!(before.1, normal_nice);
    assert!(
        after.1 > before.1,
        "the stalled poll's thread was not lowered"
    );
    assert_eq!(after.0, before.0);
    (before, next, metrics)
}

#[cfg(target_os = "linux")]
#[test]
fn a_slow_polls_thread_is_lowered_and_a_normal_thread_takes_over_its_worker() {
    // On its own thread: the capability change must not leak into the
    // other tests.
    std::thread::spawn(|| {
        assert!(drop_cap_sys_nice(), "raising a priority still works");
        let (_, normal_nice) = this_thread();
        let (before, next, metrics) = a_stalled_polls_thread_lowered();
        assert_ne!(next.0, before.0, "the worker stayed on the lowered thread");
        assert_eq!(
            next.1, normal_nice,
            "the new thread runs at normal priority"
        );
        assert_eq!(metrics.threads_demoted, 1, "{metrics:?}");
        assert_eq!(metrics.threads_restored, 0, "{metrics:?}");
        assert_eq!(metrics.total.demotions, 1, "the task moved to Batch");
    })
    .join()
    .unwrap();
}

/// Runs `f` on a thread without `CAP_SYS_NICE` (the runtime threads it
/// starts inherit that), as an unprivileged process runs: a demoted thread
/// then keeps its lowered priority and gives its worker or slot away, the
/// path the tests calling this are about.
fn unprivileged(f: fn()) {
    std::thread::spawn(move || {
        #[cfg(target_os = "linux")]
        assert!(drop_cap_sys_nice(), "raising a priority still works");
        f()
    })
    .join()
    .unwrap()
}

/// Whether this process may raise a thread's priority (`CAP_SYS_NICE`, or
/// an `RLIMIT_NICE` that allows it), tried on a thread of its own.
#[cfg(target_os = "linux")]
fn may_raise_priority() -> bool {
    std::thread::spawn(|| {
        // SAFETY: reads and sets the calling thread's own nice value only.
        unsafe {
            let nice = libc::getpriority(libc::PRIO_PROCESS, 0);
            libc::setpriority(libc::PRIO_PROCESS, 0, nice + 1) == 0
                && libc::setpriority(libc::PRIO_PROCESS, 0, nice) == 0
        }
    })
    .join()
    .unwrap()
}

/// Where priorities may be raised (root in CI), a demoted thread gets its
/// normal priority back after its stalled poll and goes on running its
/// worker: no thread ends and none is started for a demotion.
#[cfg(target_os = "linux")]
#[test]
fn a_demoted_thread_that_may_be_raised_again_keeps_its_worker() {
    if !may_raise_priority() {
        eprintln!("not run: this process may not raise priorities (no CAP_SYS_NICE)");
        return;
    }
    let (_, normal_nice) = this_thread();
    let (before, next, metrics) = a_stalled_polls_thread_lowered();
    assert_eq!(next.0, before.0, "the worker moved to another thread");
    assert_eq!(next.1, normal_nice, "the thread kept its lowered priority");
    assert_eq!(metrics.threads_demoted, 1, "{metrics:?}");
    assert_eq!(metrics.threads_restored, 1, "{metrics:?}");
}

/// Only a stalled poll's thread is lowered: the other worker's, busy with
/// the work waiting meanwhile, keeps normal priority (every thread lowered
/// at a stall would leave no normal one).
#[cfg(target_os = "linux")]
#[test]
fn only_the_stalled_polls_thread_is_lowered() {
    let threshold = Duration::from_millis(1);
    let rt = Builder::new_multi_thread()
        .worker_threads(2)
        .stall_threshold(threshold)
        .build()
        .unwrap();
    let (_, normal_nice) = this_thread();
    let stuck = Stuck::new();
    let long = rt.spawn(stuck.task());
    stuck.wait_until_inside();
    // 200 us tasks, more than the free worker runs at once, so work waits
    // beside the stall: each says how long its poll took and at what
    // priority it ended. A thread is lowered only inside a poll past the
    // stall threshold (a short one preempted that long is a stall of its
    // own), and gives its queue away after it: so a task that ends on a
    // lowered thread had a poll at least that long.
    let shorts: Vec<_> = (0..100)
        .map(|_| {
            rt.spawn(async {
                let start = Instant::now();
                while start.elapsed() < Duration::from_micros(200) {
                    std::hint::spin_loop();
                }
                (this_thread().1, start.elapsed())
            })
        })
        .collect();
    let ends: Vec<(i32, Duration)> = rt.block_on(async {
        let mut ends = Vec::new();
        for short in shorts {
            ends.push(short.await.unwrap());
        }
        ends
    });
    stuck.release();
    rt.block_on(long).unwrap();
    let metrics = rt.handle().metrics();
    assert!(
        metrics.threads_demoted >= 1,
        "the stall was not seen: {metrics:?}"
    );
    let lowered_while_short: Vec<_> = ends
        .iter()
        .filter(|(nice, took)| *nice != normal_nice && *took < threshold)
        .collect();
    assert!(
        lowered_while_short.is_empty(),
        "threads lowered during short polls: {lowered_while_short:?}"
    );
}

#[test]
fn without_demotion_no_thread_is_lowered() {
    let rt = Builder::new_multi_thread()
        .worker_threads(1)
        .slow_poll_threshold(Duration::from_millis(2))
        .demote_slow_tasks(false)
        .build()
        .unwrap();
    rt.block_on(rt.spawn(slow_then_yielding(Duration::from_millis(50))))
        .unwrap();
    assert_eq!(rt.handle().metrics().threads_demoted, 0);
}

#[test]
fn a_worker_demoted_during_shutdown_still_drops_every_task_once() {
    unprivileged(a_worker_demoted_during_shutdown_still_drops_every_task_once_unprivileged);
}

fn a_worker_demoted_during_shutdown_still_drops_every_task_once_unprivileged() {
    let drops = common::DropCounter::default();
    let rt = one_worker(true);
    let stuck = Stuck::new();
    let long = rt.spawn(stuck.task());
    stuck.wait_until_inside();
    // Work waiting behind the stuck poll: the monitor lowers its thread.
    let held_up = rt.spawn(async {});
    let start = Instant::now();
    while rt.handle().metrics().threads_demoted == 0 {
        assert!(start.elapsed() < Duration::from_secs(30), "never demoted");
        std::thread::sleep(Duration::from_millis(1));
    }
    for _ in 0..10 {
        let token = drops.track();
        drop(rt.spawn(async move {
            let _token = token;
            std::future::pending::<()>().await;
        }));
    }
    drop((long, held_up));
    // Shutdown begins while the demoted thread is still inside its poll;
    // it hands its worker back only afterwards, into a closed monitor.
    let dropper = std::thread::spawn(move || drop(rt));
    std::thread::sleep(Duration::from_millis(50));
    stuck.release();
    dropper.join().unwrap();
    assert_eq!(drops.drops(), 10);
}

#[test]
fn no_stall_is_reported_while_every_poll_is_short() {
    let reports = Arc::new(AtomicUsize::new(0));
    let rt = {
        let reports = reports.clone();
        Builder::new_multi_thread()
            .worker_threads(2)
            // 25 times the polls' 2 ms, so a loaded machine that wakes a
            // sleeping poll late does not make it a stall; a worker taken
            // for stuck after its poll still sits past it (it sleeps 40 ms
            // between short tasks and about 100 ms after the last).
            .stall_threshold(Duration::from_millis(50))
            .on_stall(move |_| {
                reports.fetch_add(1, Ordering::SeqCst);
            })
            .build()
            .unwrap()
    };
    // One task keeps a worker busy with 2 ms polls (under the threshold),
    // so the monitor keeps sampling, while short tasks run on the other
    // worker now and then and it goes back to sleep: a worker that has left
    // its poll is not stuck in it.
    let busy = rt.spawn(async {
        let start = Instant::now();
        while start.elapsed() < Duration::from_millis(300) {
            std::thread::sleep(Duration::from_millis(2));
            task::yield_now().await;
        }
    });
    for _ in 0..5 {
        std::thread::sleep(Duration::from_millis(40));
        let short = rt.spawn(async { std::thread::sleep(Duration::from_millis(2)) });
        rt.block_on(short).unwrap();
    }
    rt.block_on(busy).unwrap();
    assert_eq!(rt.handle().metrics().stalls, 0);
    assert_eq!(reports.load(Ordering::SeqCst), 0);
}

/// The calling thread's time slice as the kernel reports it
/// (`sched_attr.sched_runtime`; 0 on kernels before 6.12, which have no
/// per-thread slice).
#[cfg(target_os = "linux")]
fn this_threads_slice_ns() -> u64 {
    #[repr(C)]
    #[derive(Default)]
    struct SchedAttr {
        size: u32,
        policy: u32,
        flags: u64,
        nice: i32,
        priority: u32,
        runtime_ns: u64,
        deadline_ns: u64,
        period_ns: u64,
    }
    let mut attr = SchedAttr::default();
    // SAFETY: sched_getattr writes at most `size` (48) bytes into `attr`,
    // a live repr(C) record of that size, for the calling thread.
    let got = unsafe {
        libc::syscall(
            libc::SYS_sched_getattr,
            0,
            &mut attr as *mut SchedAttr,
            std::mem::size_of::<SchedAttr>() as u32,
            0,
        )
    };
    assert_eq!(got, 0, "sched_getattr: {}", std::io::Error::last_os_error());
    attr.runtime_ns
}

#[cfg(target_os = "linux")]
#[test]
fn runtime_threads_ask_for_the_shortest_slice_without_privilege() {
    std::thread::spawn(|| {
        assert!(drop_cap_sys_nice(), "raising a priority still works");
        let plain = this_threads_slice_ns();
        if plain == 0 {
            eprintln!("skipped: this kernel has no per-thread time slice (6.12+)");
            return;
        }
        let rt = Builder::new_multi_thread()
            .worker_threads(2)
            .build()
            .unwrap();
        let on_worker = rt
            .block_on(rt.spawn(async { this_threads_slice_ns() }))
            .unwrap();
        assert_eq!(on_worker, 100_000, "a worker kept the default slice");
        assert_ne!(plain, 100_000, "a thread outside weft was changed");
    })
    .join()
    .unwrap();
}

/// A thread inside one long poll gets a slice longer than the kernel's
/// default while that poll lasts (so a thread woken on its core goes
/// first), and the shortest one back once the poll is over; its nice value
/// (3 here, inherited from the thread that built the runtime) stays.
#[cfg(target_os = "linux")]
#[test]
fn a_long_poll_has_a_long_slice_until_it_returns() {
    if this_threads_slice_ns() == 0 {
        eprintln!("skipped: this kernel has no per-thread time slice (6.12+)");
        return;
    }
    // SAFETY: `getpriority(PRIO_PROCESS, 0)` reads the calling thread's
    // nice value (3 and 0 here are values, not the -1 error).
    let nice = || unsafe { libc::getpriority(libc::PRIO_PROCESS, 0) };
    std::thread::spawn(move || {
        // SAFETY: `setpriority(PRIO_PROCESS, 0, 3)` lowers only this
        // thread; the runtime's threads inherit it.
        assert_eq!(unsafe { libc::setpriority(libc::PRIO_PROCESS, 0, 3) }, 0);
        let rt = Builder::new_multi_thread()
            .worker_threads(1)
            .build()
            .unwrap();
        // Inside one poll until the monitor has lengthened this thread's
        // slice.
        let (in_poll, nice_in_poll) = rt
            .block_on(rt.spawn(async move {
                let start = Instant::now();
                let mut slice = this_threads_slice_ns();
                while slice == 100_000 && start.elapsed() < Duration::from_secs(10) {
                    std::hint::spin_loop();
                    slice = this_threads_slice_ns();
                }
                (slice, nice())
            }))
            .unwrap();
        assert_eq!(in_poll, 3_000_000, "a long poll kept the shortest slice");
        assert_eq!(
            nice_in_poll, 3,
            "lengthening the slice changed the nice value"
        );
        // Short polls on the same (only) worker from now on: the next
        // sample of the monitor gives the short slice back.
        let start = Instant::now();
        let mut after = (in_poll, nice_in_poll);
        while after.0 != 100_000 && start.elapsed() < Duration::from_secs(10) {
            std::thread::sleep(Duration::from_millis(1));
            after = rt
                .block_on(rt.spawn(async move { (this_threads_slice_ns(), nice()) }))
                .unwrap();
        }
        assert_eq!(
            after,
            (100_000, 3),
            "the worker kept the long slice after its poll"
        );
    })
    .join()
    .unwrap();
}

/// A lane task stuck in the poll right after a short poll of its own (it
/// yielded once) is seen as stuck, and the task waiting behind it runs:
/// after a lane poll the next poll takes a new odd number. (Left on the
/// lane poll's own number, the next poll's was even, "not in a poll", and
/// the monitor never saw the stall.)
#[test]
fn a_lane_task_stuck_right_after_a_short_poll_of_its_own_is_seen() {
    for lane in [Lane::Latency, Lane::Batch] {
        let rt = one_worker(true);
        let stuck = Stuck::new();
        let blocking = stuck.task();
        let long = task::Builder::new()
            .lane(lane)
            .spawn_on(
                async move {
                    task::yield_now().await;
                    blocking.await;
                },
                rt.handle(),
            )
            .unwrap();
        stuck.wait_until_inside();
        let ran = spawn_short(rt.handle(), &stuck).recv_timeout(Duration::from_secs(10));
        stuck.release();
        rt.block_on(long).unwrap();
        assert_eq!(
            ran,
            Ok(true),
            "{lane:?}: the short task waited for the stuck poll"
        );
    }
}

/// Voluntary context switches of the calling thread so far (it blocked).
#[cfg(target_os = "linux")]
fn voluntary_switches() -> i64 {
    // SAFETY: a zeroed `rusage` is a valid value for `getrusage` to fill.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `usage` is a valid, writable `rusage`.
    let result = unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut usage) };
    assert_eq!(result, 0);
    usage.ru_nvcsw
}

/// A demoted thread inside a stalled poll steps aside when the work it
/// holds up makes no progress: the monitor signals it and it blocks
/// briefly, which a poll that only computes never does (its thread's
/// voluntary context switches count it). Every thread of the runtime
/// shares one CPU (the first this process may use), so the short tasks'
/// thread waits behind the long poll; each short task also computes for
/// 2 ms, so no thread begins or ends a poll for two samples while more
/// wait. Off with `demote_slow_tasks`.
#[cfg(target_os = "linux")]
#[test]
fn a_demoted_poll_steps_aside_for_the_work_it_holds_up() {
    for demote in [true, false] {
        let (step_asides, switches) = std::thread::spawn(move || {
            // The runtime's threads inherit this thread's CPU mask: the
            // first CPU this process may use (not always CPU 0 in a
            // container).
            // SAFETY: a zeroed `cpu_set_t` is an empty set; the `CPU_*`
            // macros and `sched_{get,set}affinity` read and write only the
            // sets on this stack.
            unsafe {
                let mut allowed: libc::cpu_set_t = std::mem::zeroed();
                let size = std::mem::size_of_val(&allowed);
                assert_eq!(libc::sched_getaffinity(0, size, &mut allowed), 0);
                let first = (0..libc::CPU_SETSIZE as usize)
                    .find(|&cpu| libc::CPU_ISSET(cpu, &allowed))
                    .expect("an allowed CPU");
                let mut one: libc::cpu_set_t = std::mem::zeroed();
                libc::CPU_SET(first, &mut one);
                assert_eq!(libc::sched_setaffinity(0, size, &one), 0);
            }
            let rt = Builder::new_multi_thread()
                .worker_threads(1)
                .demote_slow_tasks(demote)
                .build()
                .unwrap();
            let stop = Arc::new(AtomicBool::new(false));
            let long = rt.spawn({
                let stop = stop.clone();
                async move {
                    let before = voluntary_switches();
                    let start = Instant::now();
                    while !stop.load(Ordering::Relaxed) && start.elapsed() < Duration::from_secs(30)
                    {
                        std::hint::spin_loop();
                    }
                    voluntary_switches() - before
                }
            });
            let start = Instant::now();
            // Without demotion: long enough for many samples to find the
            // work stuck behind the poll.
            let limit = Duration::from_millis(if demote { 10_000 } else { 300 });
            while start.elapsed() < limit && (!demote || rt.handle().metrics().step_asides == 0) {
                let shorts: Vec<_> = (0..4)
                    .map(|_| {
                        rt.spawn(async {
                            let start = Instant::now();
                            while start.elapsed() < Duration::from_millis(2) {
                                std::hint::spin_loop();
                            }
                        })
                    })
                    .collect();
                for short in shorts {
                    rt.block_on(short).unwrap();
                }
            }
            stop.store(true, Ordering::Relaxed);
            let switches = rt.block_on(long).unwrap();
            (rt.handle().metrics().step_asides, switches)
        })
        .join()
        .unwrap();
        if demote {
            assert!(step_asides > 0, "no step-aside in 10 s");
            assert!(switches > 0, "the long poll's thread never blocked");
        } else {
            assert_eq!(step_asides, 0);
            assert_eq!(switches, 0, "a poll that only computes blocked");
        }
    }
}

/// Stepping aside is for work that waits: once the work a demoted poll
/// held up has run, that poll (still stalled) is left alone, however long
/// it lasts.
#[test]
fn a_stalled_poll_is_not_asked_to_step_aside_while_nothing_waits() {
    let rt = one_worker(true);
    let stuck = Stuck::new();
    let long = rt.spawn(stuck.task());
    stuck.wait_until_inside();
    let ran = spawn_short(rt.handle(), &stuck);
    assert!(
        ran.recv_timeout(Duration::from_secs(30))
            .expect("the short task never ran"),
        "the short task ran only after the long poll"
    );
    wait_for("the stuck thread demoted", || {
        rt.handle().metrics().threads_demoted >= 1
    });
    let before = rt.handle().metrics().step_asides;
    // Many samples (one per 0.25 ms) with the poll stalled and nothing
    // waiting.
    std::thread::sleep(Duration::from_millis(200));
    let after = rt.handle().metrics().step_asides;
    stuck.release();
    rt.block_on(long).unwrap();
    assert_eq!(after, before, "asked to step aside with nothing waiting");
}

/// A thread-local whose destructor takes a while, counted when it ends.
struct SlowToDrop(Arc<AtomicUsize>);

impl Drop for SlowToDrop {
    fn drop(&mut self) {
        std::thread::sleep(Duration::from_millis(200));
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

thread_local! {
    static SLOW_TO_DROP: std::cell::RefCell<Option<SlowToDrop>> =
        const { std::cell::RefCell::new(None) };
}

/// Every thread the runtime started is joined by its drop, spare threads
/// too, however many came after them: a task's thread-local on the first
/// spare is dropped (its destructor done) when the runtime's drop returns.
#[test]
fn every_spare_thread_is_joined_by_the_runtimes_drop() {
    let rt = Builder::new_multi_thread()
        .worker_threads(1)
        .max_threads(3)
        .build()
        .unwrap();
    let dropped = Arc::new(AtomicUsize::new(0));
    // The worker stuck; a task on the first spare sets the thread-local and
    // gets stuck; a third task brings a second spare.
    let on_worker = Stuck::new();
    let on_spare = Stuck::new();
    let first = rt.spawn(on_worker.task());
    on_worker.wait_until_inside();
    let second = rt.spawn({
        let (dropped, stuck) = (dropped.clone(), on_spare.task());
        async move {
            SLOW_TO_DROP.with(|slot| *slot.borrow_mut() = Some(SlowToDrop(dropped)));
            stuck.await;
        }
    });
    on_spare.wait_until_inside();
    let (ran_tx, ran_rx) = mpsc::channel();
    let third = rt.spawn(async move { ran_tx.send(()).unwrap() });
    ran_rx
        .recv_timeout(Duration::from_secs(30))
        .expect("a second spare ran the third task");
    assert!(rt.handle().metrics().spares_started >= 2);
    on_worker.release();
    on_spare.release();
    rt.block_on(async {
        for handle in [first, second, third] {
            handle.await.unwrap();
        }
    });
    drop(rt);
    assert_eq!(
        dropped.load(Ordering::SeqCst),
        1,
        "the first spare's thread-local outlived the runtime's drop"
    );
}

/// Spares a burst of stalls started retire under a steady trickle of
/// single stalls: each stall's work goes to the spare that went idle last,
/// so the others stay unused past their idle timeout. (Woken in turn, each
/// would run a stall's work within its timeout and none would retire.)
#[test]
fn a_burst_of_spares_retires_under_a_steady_trickle_of_stalls() {
    let rt = Builder::new_multi_thread()
        .worker_threads(1)
        .spare_idle_timeout(Duration::from_millis(300))
        .build()
        .unwrap();
    let handle = rt.handle();
    // The burst: the worker stuck, then each stuck task spawned behind it
    // taken by a spare of its own.
    let burst: Vec<Stuck> = (0..4).map(|_| Stuck::new()).collect();
    let tasks: Vec<_> = burst
        .iter()
        .map(|stuck| {
            let task = rt.spawn(stuck.task());
            stuck.wait_until_inside();
            task
        })
        .collect();
    let started = handle.metrics().spare_threads;
    assert!(started >= 2, "the burst started {started} spares");
    burst.iter().for_each(Stuck::release);
    for task in tasks {
        rt.block_on(task).unwrap();
    }
    // The trickle: one stall at a time with work behind it, well inside
    // the spares' idle timeout of each other.
    let deadline = Instant::now() + Duration::from_secs(20);
    while handle.metrics().spare_threads >= started {
        let stuck = Stuck::new();
        let task = rt.spawn(stuck.task());
        stuck.wait_until_inside();
        let ran = spawn_short(handle, &stuck);
        assert_eq!(ran.recv_timeout(Duration::from_secs(30)), Ok(true));
        stuck.release();
        rt.block_on(task).unwrap();
        std::thread::sleep(Duration::from_millis(20));
        assert!(
            Instant::now() < deadline,
            "still {} spare threads of the burst's {started} under a trickle of stalls",
            handle.metrics().spare_threads
        );
    }
}
