//! The counters snapshot is exact once the runtime is quiet.

mod common;

#[test]
fn snapshot_totals_match_the_tasks_run() {
    const TASKS: u64 = 20_000;
    // The longest slow-poll threshold: a worker preempted inside a poll on
    // a loaded machine must not demote the spawning task to `Batch` (seen:
    // 77 of its polls counted there).
    let rt = weft::runtime::Builder::new_multi_thread()
        .worker_threads(4)
        .slow_poll_threshold(std::time::Duration::from_secs(10))
        .build()
        .unwrap();
    let before = rt.handle().metrics();
    let remote: Vec<_> = (0..TASKS / 2).map(|_| rt.spawn(async {})).collect();
    rt.block_on(async move {
        let local = weft::spawn(async {
            let joins: Vec<_> = (0..TASKS / 2).map(|_| weft::spawn(async {})).collect();
            for join in joins {
                join.await.unwrap();
            }
        });
        for join in remote {
            join.await.unwrap();
        }
        local.await.unwrap();
    });
    let after = rt.handle().metrics();
    // +1: the task that spawned the local half was itself a remote spawn.
    assert_eq!(after.spawned_remote - before.spawned_remote, TASKS / 2 + 1);
    let delta = after.total.delta(&before.total);
    assert_eq!(delta.spawned_local, TASKS / 2);
    assert_eq!(after.live_tasks, 0, "every task finished");
    // Each task ended on a worker, counted there, not as a finish off the
    // workers.
    assert_eq!(delta.tasks_finished, TASKS + 1);
    assert_eq!(after.finished_remote, before.finished_remote);
    // Each empty task completes in one poll; the spawning task polls at
    // least twice (it waits on its joins).
    assert!(
        delta.polls > TASKS,
        "polls {} for {} tasks",
        delta.polls,
        TASKS + 1
    );
    assert!(
        delta.inject_tasks >= TASKS / 2,
        "remote tasks come through the inject queue"
    );
    assert_eq!(after.workers.len(), 4);
    assert_eq!(after.num_workers, 4);
    assert_eq!(
        after.spawned() - before.spawned(),
        TASKS + 1,
        "local and remote"
    );
    // Only `Default` tasks here: every poll and all the busy time are that
    // lane's.
    assert_eq!(delta.default_lane_polls(), delta.polls);
    assert!(delta.busy_ns > 1);
    assert_eq!(delta.default_lane_busy_ns(), delta.busy_ns);
    // `total` is the workers' slots and the spare slots: a worker thread
    // preempted long enough looks stuck, and a spare may then run tasks.
    let summed: u64 = after.workers.iter().map(|w| w.polls).sum();
    assert_eq!(summed + after.spare_slots.polls, after.total.polls);
}

#[test]
fn every_poll_is_timed_when_sampling_every_poll() {
    let rt = weft::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .poll_time_sample_every(1)
        .build()
        .unwrap();
    let joins: Vec<_> = (0..1_000).map(|_| rt.spawn(async {})).collect();
    rt.block_on(async move {
        for join in joins {
            join.await.unwrap();
        }
    });
    // A poll is counted as it starts and timed as it ends, after the task
    // (and so its `JoinHandle`) completed: wait for the workers to finish
    // the last poll's accounting.
    let start = std::time::Instant::now();
    let metrics = loop {
        let metrics = rt.handle().metrics();
        let settled = metrics.total.poll_time_histogram.count() == metrics.total.polls;
        if settled || start.elapsed() > std::time::Duration::from_secs(10) {
            break metrics;
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
    };
    let histogram = metrics.total.poll_time_histogram;
    assert_eq!(
        histogram.count(),
        metrics.total.polls,
        "one timed poll per poll"
    );
    assert!(histogram.sum_ns > 0);
    let per_worker: u64 = metrics
        .workers
        .iter()
        .map(|w| w.poll_time_histogram.count())
        .sum();
    assert_eq!(per_worker, histogram.count());
}

#[test]
fn default_sampling_times_one_poll_in_sixteen() {
    let rt = common::rt(1, true);
    let joins: Vec<_> = (0..1_600).map(|_| rt.spawn(async {})).collect();
    rt.block_on(async move {
        for join in joins {
            join.await.unwrap();
        }
    });
    let metrics = rt.handle().metrics();
    let timed = metrics.total.poll_time_histogram.count();
    assert_eq!(
        timed,
        metrics.total.polls.div_ceil(16),
        "polls: {}",
        metrics.total.polls
    );
}

#[test]
fn busy_time_is_counted_and_bounded_by_wall_time() {
    let start = std::time::Instant::now();
    let rt = common::rt(2, true);
    rt.block_on(rt.spawn(async {
        let spin = std::time::Instant::now();
        while spin.elapsed() < std::time::Duration::from_millis(20) {
            std::hint::spin_loop();
        }
    }))
    .unwrap();
    drop(rt.spawn(async {})); // a poll after the spin, so a check or park accounts it
    // The worker accounts the spin when it next checks or parks, which on
    // a loaded machine can be milliseconds later (a fixed 5 ms wait failed
    // beside two CPU hogs: 2.8 ms counted): wait for it, up to 10 s.
    common::wait_until(std::time::Duration::from_secs(10), || {
        rt.handle().metrics().total.busy_ns >= 20_000_000
    });
    let busy: u64 = rt.handle().metrics().total.busy_ns;
    let wall = start.elapsed().as_nanos() as u64;
    assert!(busy >= 20_000_000, "busy {busy} ns after a 20 ms poll");
    assert!(
        busy <= 2 * wall,
        "busy {busy} ns exceeds 2 workers × wall {wall} ns"
    );
}

#[test]
fn prometheus_text_has_every_family_and_consistent_histograms() {
    let rt = common::rt(2, true);
    let joins: Vec<_> = (0..100).map(|_| rt.spawn(async {})).collect();
    rt.block_on(async move {
        for join in joins {
            join.await.unwrap();
        }
    });
    let metrics = rt.handle().metrics();
    let text = metrics.to_prometheus();
    for family in [
        "weft_polls_total",
        "weft_busy_seconds_total",
        "weft_parks_total",
        "weft_step_asides_total",
        "weft_monitor_io_wakes_total",
        "weft_monitor_timer_wakes_total",
        "weft_threads_restored_total",
        "weft_poll_time_seconds",
        "weft_live_tasks",
        "weft_inject_queue_depth",
        "weft_local_queue_depth",
        "weft_blocking_threads",
        "weft_blocking_idle_threads",
        "weft_blocking_queue_depth",
        "weft_blocking_tasks_spawned_total",
    ] {
        assert!(
            text.contains(&format!("# TYPE {family} ")),
            "{family} missing:\n{text}"
        );
    }
    for (worker, w) in metrics.workers.iter().enumerate() {
        let line = format!("weft_polls_total{{worker=\"{worker}\"}} {}", w.polls);
        assert!(text.contains(&line), "{line} missing");
        // Prometheus wants seconds: busy time is exposed as ns × 1e-9.
        let busy = format!(
            "weft_busy_seconds_total{{worker=\"{worker}\"}} {}\n",
            w.busy_ns as f64 * 1e-9
        );
        assert!(text.contains(&busy), "{busy} missing:\n{text}");
        let count = format!(
            "weft_poll_time_seconds_count{{worker=\"{worker}\"}} {}",
            w.poll_time_histogram.count()
        );
        assert!(text.contains(&count), "{count} missing");
        let inf = format!(
            "weft_poll_time_seconds_bucket{{worker=\"{worker}\",le=\"+Inf\"}} {}",
            w.poll_time_histogram.count()
        );
        assert!(text.contains(&inf), "{inf} missing");
    }
}

/// `local_queue_depths` counts what waits in each worker's own queue: the
/// ring (read through its thieves' side) and the LIFO slot.
#[test]
fn local_queue_depth_counts_the_ring_and_the_lifo_slot() {
    const QUEUED: usize = 5;
    // One worker and no stall monitor: no thread can take the queued
    // tasks while their spawner holds the worker.
    let rt = common::rt_without_stall_monitor(1);
    let (holding, held) = std::sync::mpsc::channel();
    let (release, released) = std::sync::mpsc::channel::<()>();
    let spawner = rt.spawn(async move {
        let joins: Vec<_> = (0..QUEUED).map(|_| weft::spawn(async {})).collect();
        holding.send(()).unwrap();
        released.recv().unwrap();
        joins
    });
    held.recv().unwrap();
    let depths = rt.handle().metrics().local_queue_depths;
    release.send(()).unwrap();
    assert_eq!(
        depths,
        vec![QUEUED],
        "four in the ring, one in the LIFO slot"
    );
    let joins = rt.block_on(spawner).unwrap();
    rt.block_on(async {
        for join in joins {
            join.await.unwrap();
        }
    });
    assert_eq!(rt.handle().metrics().local_queue_depths, vec![0]);
}

#[test]
fn the_lifo_slot_setting_decides_whether_woken_tasks_run_from_it() {
    for lifo in [true, false] {
        // One worker: nothing is stolen, every child runs on the worker
        // that spawned it.
        let rt = common::rt(1, lifo);
        let before = rt.handle().metrics().total;
        rt.block_on(async {
            weft::spawn(async {
                for _ in 0..100 {
                    weft::spawn(async {}).await.unwrap();
                }
            })
            .await
            .unwrap();
        });
        let hits = rt.handle().metrics().total.delta(&before).lifo_hits;
        if lifo {
            assert!(
                hits >= 50,
                "LIFO slot on: {hits} of 100 children ran from it"
            );
        } else {
            assert_eq!(hits, 0, "LIFO slot off, yet tasks ran from it");
        }
    }
}

/// Tasks dropped at shutdown, off the workers, are counted as finished
/// there, and none is left counted as live: a handle kept past the
/// runtime reads the same totals.
#[test]
fn tasks_dropped_at_shutdown_are_not_left_live() {
    let rt = common::rt(2, true);
    let handle = rt.handle().clone();
    let pending: Vec<_> = (0..10)
        .map(|_| rt.spawn(std::future::pending::<()>()))
        .collect();
    // Each polled once and waiting, so none is in a worker's queue (a
    // worker closing its queue at shutdown drops those itself): all are
    // dropped by the shutdown's drain, off the workers.
    let start = std::time::Instant::now();
    while handle.metrics().total.polls < 10 {
        assert!(start.elapsed() < std::time::Duration::from_secs(30));
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    drop(rt);
    drop(pending);
    let metrics = handle.metrics();
    assert_eq!(metrics.finished_remote, 10, "{metrics:?}");
    assert_eq!(
        metrics.total.tasks_finished + metrics.finished_remote,
        metrics.spawned_remote
    );
    assert_eq!(metrics.live_tasks, 0, "{metrics:?}");
}

/// Tasks queued behind a worker stuck in a poll are stolen by the other
/// worker, and counted: `steals` once per steal, `stolen_tasks` for every
/// task moved, exactly. The stall monitor is off, so no spare takes them
/// instead.
#[test]
fn steals_and_stolen_tasks_are_counted() {
    const CHILDREN: usize = 64;
    let rt = common::rt_without_stall_monitor(2);
    let ran = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let spawner = rt.spawn({
        let ran = ran.clone();
        async move {
            for _ in 0..CHILDREN {
                let ran = ran.clone();
                drop(weft::spawn(async move {
                    ran.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                }));
            }
            // Stuck here until the other worker has run all but perhaps
            // one (the LIFO slot's), 3 s at most: it ran only what it stole.
            let start = std::time::Instant::now();
            while ran.load(std::sync::atomic::Ordering::SeqCst) < CHILDREN - 1
                && start.elapsed() < std::time::Duration::from_secs(3)
            {
                std::hint::spin_loop();
            }
        }
    });
    rt.block_on(spawner).unwrap();
    let handle = rt.handle().clone();
    drop(rt);
    let metrics = handle.metrics();
    assert!(ran.load(std::sync::atomic::Ordering::SeqCst) >= CHILDREN - 1);
    let total = &metrics.total;
    assert!(total.steals >= 1, "{total:?}");
    // The thief ran nothing it did not steal; it ran every child but
    // perhaps the LIFO slot's.
    let thief_polls = metrics.workers.iter().map(|w| w.polls).max().unwrap();
    assert!(thief_polls >= CHILDREN as u64 - 1, "{metrics:?}");
    assert_eq!(
        total.stolen_tasks, thief_polls,
        "every task the thief ran was counted as stolen: {total:?}"
    );
}

/// `wake_requests()` is every wake-up asked for: those asked by workers
/// (in `total`) and those asked from outside. Each round spawns from
/// outside into a sleeping runtime (a wake from outside), and that task
/// spawns children that spin while its worker is busy (wakes from a
/// worker).
#[test]
fn wake_requests_count_the_workers_and_the_outsides() {
    let rt = common::rt(2, true);
    for _ in 0..20 {
        std::thread::sleep(std::time::Duration::from_millis(5));
        rt.block_on(rt.spawn(async {
            let children: Vec<_> = (0..4)
                .map(|_| {
                    weft::spawn(async {
                        let start = std::time::Instant::now();
                        while start.elapsed() < std::time::Duration::from_micros(200) {}
                    })
                })
                .collect();
            for child in children {
                child.await.unwrap();
            }
        }))
        .unwrap();
    }
    let metrics = rt.handle().metrics();
    assert!(metrics.remote_wake_requests > 0, "no wake from outside");
    assert!(metrics.total.wake_requests > 0, "no wake from a worker");
    assert_eq!(
        metrics.wake_requests(),
        metrics.total.wake_requests + metrics.remote_wake_requests
    );
}

/// Every thread the runtime starts counts itself in and out, by kind: the
/// worker, the monitor and its spawner, a spare thread started for a stuck
/// poll with work behind it (it retires after `spare_idle_timeout`), a
/// blocking-pool thread (it retires after `thread_keep_alive`); and the
/// Prometheus text has them.
#[test]
fn threads_started_and_ended_are_counted_by_kind() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::time::{Duration, Instant};

    let rt = weft::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .stall_threshold(Duration::from_millis(5))
        .spare_idle_timeout(Duration::from_millis(50))
        .thread_keep_alive(Duration::from_millis(50))
        // No demotion: a spare that took a demoted worker's core would
        // carry on as that worker, never retiring.
        .demote_slow_tasks(false)
        .build()
        .unwrap();
    let metrics = rt.handle().metrics();
    assert_eq!(metrics.threads_started_by_kind.worker, 1, "{metrics:?}");
    assert_eq!(metrics.threads_ended(), 0, "{metrics:?}");
    rt.block_on(rt.handle().spawn_blocking(|| ())).unwrap();
    // The only worker stuck in one poll until a spare thread has started
    // (and run the task behind it).
    let release = Arc::new(AtomicBool::new(false));
    let stuck = {
        let release = release.clone();
        rt.spawn(async move {
            while !release.load(Ordering::SeqCst) {
                std::thread::sleep(Duration::from_millis(1));
            }
        })
    };
    let behind = rt.spawn(async {});
    let deadline = Instant::now() + Duration::from_secs(30);
    let wait_for = |what: &str, done: &dyn Fn(&weft::metrics::RuntimeMetrics) -> bool| loop {
        let metrics = rt.handle().metrics();
        if done(&metrics) {
            return metrics;
        }
        assert!(Instant::now() < deadline, "{what}: {metrics:?}");
        std::thread::sleep(Duration::from_millis(5));
    };
    wait_for("a spare thread", &|m| m.threads_started_by_kind.spare >= 1);
    release.store(true, Ordering::SeqCst);
    rt.block_on(async {
        stuck.await.unwrap();
        behind.await.unwrap();
    });
    // Quiet again: the spares and the pool thread retire.
    let metrics = wait_for("the spare and pool threads retiring", &|m| {
        let (started, ended) = (&m.threads_started_by_kind, &m.threads_ended_by_kind);
        ended.spare == started.spare && ended.blocking == started.blocking
    });
    let (started, ended) = (
        metrics.threads_started_by_kind,
        metrics.threads_ended_by_kind,
    );
    // The monitor and the spawner it started for the spares.
    assert_eq!(started.monitor, 2, "{metrics:?}");
    assert_eq!(ended.monitor, 0, "{metrics:?}");
    assert!(started.blocking >= 1 && started.spare >= 1, "{metrics:?}");
    // A spare counts itself where the monitor's own counter counts it.
    assert_eq!(started.spare, metrics.spares_started, "{metrics:?}");
    // A demoted worker thread ends, and a spare carries on as the worker.
    assert!(ended.worker <= started.worker, "{metrics:?}");
    assert_eq!(
        metrics.threads_started(),
        started.worker + started.monitor + started.spare + started.blocking
    );
    assert_eq!(metrics.threads_ended(), ended.total());
    let text = metrics.to_prometheus();
    for (name, counts) in [
        ("weft_threads_started_total", started),
        ("weft_threads_ended_total", ended),
    ] {
        assert!(text.contains(&format!("# TYPE {name} counter")), "{text}");
        let line = format!("{name}{{kind=\"spare\"}} {}\n", counts.spare);
        assert!(text.contains(&line), "{line} missing:\n{text}");
    }
}

/// tokio's metric methods read the snapshot's fields: workers, live tasks,
/// the global queues, each worker's busy time and parks; a worker index out
/// of range panics naming the count.
#[test]
fn tokios_metric_methods_read_the_snapshot() {
    let rt = common::rt(2, true);
    let pending = rt.spawn(std::future::pending::<()>());
    rt.block_on(async { weft::time::sleep(std::time::Duration::from_millis(5)).await });
    let metrics = rt.metrics();
    assert_eq!(metrics.num_workers(), 2);
    assert_eq!(metrics.num_alive_tasks() as u64, metrics.live_tasks);
    assert!(metrics.num_alive_tasks() >= 1);
    assert_eq!(
        metrics.global_queue_depth(),
        metrics.inject_queue_depth + metrics.latency_queue_depth + metrics.batch_queue_depth
    );
    for worker in 0..2 {
        let w = &metrics.workers[worker];
        assert_eq!(metrics.worker_park_count(worker), w.parks);
        assert_eq!(
            metrics.worker_park_unpark_count(worker),
            w.parks + w.unparks
        );
        assert_eq!(
            metrics.worker_total_busy_duration(worker).as_nanos() as u64,
            w.busy_ns
        );
    }
    let out_of_range = std::panic::catch_unwind(|| metrics.worker_park_count(2)).unwrap_err();
    let message = out_of_range
        .downcast_ref::<String>()
        .cloned()
        .unwrap_or_default();
    assert!(message.contains("has 2 workers"), "{message}");
    pending.abort();
}
