//! Bad input: every builder setting just outside (and just inside) its
//! range, and public functions called in the wrong context. Each mistake
//! gives an error or a panic whose message names the setting or says what
//! to do. (`context.rs` has the first cases: zero and huge worker counts,
//! tiny and huge stacks, a zero batch cap, a zero check target, a
//! panicking start hook, spawning or `Handle::current` outside a runtime;
//! `shutdown.rs` has `block_on` inside a runtime and dropping a runtime in
//! its own task.)

mod common;

use std::future::Future;
use std::pin::pin;
use std::sync::mpsc;
use std::task::{Context, Waker};
use std::time::Duration;

use weft::runtime::{Builder, Handle, MAX_STACK_SIZE, MAX_WORKER_THREADS, MIN_STACK_SIZE};

fn build(configure: impl FnOnce(&mut Builder)) -> std::io::Result<weft::runtime::Runtime> {
    let mut builder = Builder::new_multi_thread();
    builder.worker_threads(2);
    configure(&mut builder);
    builder.build()
}

/// The setting is rejected with `InvalidInput`, and the message names it
/// and says what is allowed.
fn assert_rejected(configure: impl FnOnce(&mut Builder), setting: &str, allowed: &[&str]) {
    let err = build(configure).expect_err("an invalid setting was accepted");
    assert_eq!(err.kind(), std::io::ErrorKind::InvalidInput, "{err}");
    let message = err.to_string();
    assert!(message.contains(&format!("`{setting}`")), "{message}");
    assert!(message.contains("must be"), "{message}");
    for fragment in allowed {
        assert!(
            message.contains(fragment),
            "{setting}: {message:?} lacks {fragment:?}"
        );
    }
}

/// The setting is accepted and the runtime runs tasks.
fn assert_accepted(configure: impl FnOnce(&mut Builder)) {
    let rt = build(configure).expect("a valid setting was rejected");
    common::assert_serves(&rt);
}

#[test]
fn worker_threads_one_past_the_maximum_is_rejected() {
    assert_rejected(
        |b| {
            b.worker_threads(MAX_WORKER_THREADS + 1);
        },
        "worker_threads",
        &["4096", "4097"],
    );
    assert_accepted(|b| {
        b.worker_threads(1);
    });
}

#[test]
fn thread_stack_size_just_outside_its_range_is_rejected() {
    // The documented range, 64 KiB to 1 GiB, in bytes.
    let range = ["65536", "1073741824"];
    assert_rejected(
        |b| {
            b.thread_stack_size(MIN_STACK_SIZE - 1);
        },
        "thread_stack_size",
        &range,
    );
    assert_rejected(
        |b| {
            b.thread_stack_size(MAX_STACK_SIZE + 1);
        },
        "thread_stack_size",
        &range,
    );
    // The smallest stack accepted really runs tasks (in a debug build too).
    assert_accepted(|b| {
        b.thread_stack_size(MIN_STACK_SIZE);
    });
}

#[test]
fn global_check_target_just_outside_its_range_is_rejected() {
    for target in [
        Duration::from_nanos(999),
        Duration::from_secs(1) + Duration::from_nanos(1),
        Duration::MAX,
    ] {
        assert_rejected(
            |b| {
                b.global_check_target(target);
            },
            "global_check_target",
            &["1 µs", "1 s"],
        );
    }
    for target in [Duration::from_micros(1), Duration::from_secs(1)] {
        assert_accepted(|b| {
            b.global_check_target(target);
        });
    }
}

#[test]
fn poll_time_sample_every_zero_is_rejected() {
    assert_rejected(
        |b| {
            b.poll_time_sample_every(0);
        },
        "poll_time_sample_every",
        &["at least 1"],
    );
    assert_accepted(|b| {
        b.poll_time_sample_every(u32::MAX);
    });
}

#[test]
fn max_blocking_threads_zero_is_rejected() {
    assert_rejected(
        |b| {
            b.max_blocking_threads(0);
        },
        "max_blocking_threads",
        &["at least 1"],
    );
    assert_accepted(|b| {
        b.max_blocking_threads(1);
    });
}

#[test]
fn thread_keep_alive_just_outside_its_range_is_rejected() {
    for keep_alive in [
        Duration::ZERO,
        Duration::from_micros(999),
        Duration::from_secs(3600) + Duration::from_nanos(1),
    ] {
        assert_rejected(
            |b| {
                b.thread_keep_alive(keep_alive);
            },
            "thread_keep_alive",
            &["1 ms", "1 hour"],
        );
    }
    for keep_alive in [Duration::from_millis(1), Duration::from_secs(3600)] {
        assert_accepted(|b| {
            b.thread_keep_alive(keep_alive);
        });
    }
}

#[test]
fn spawn_blocking_outside_a_runtime_panics_and_says_what_to_do() {
    let panic = std::panic::catch_unwind(|| weft::task::spawn_blocking(|| 1))
        .expect_err("spawn_blocking outside a runtime must panic");
    let message = common::panic_text(&*panic);
    assert!(message.contains("outside of a weft runtime"), "{message}");
    assert!(message.contains("Handle::spawn_blocking"), "{message}");
}

#[test]
fn the_smallest_inject_batch_cap_drains_outside_work() {
    // Cap 1: every batch taken while local work waits is a single task;
    // remote spawns still all run.
    let rt = build(|b| {
        b.inject_batch_cap(1);
    })
    .unwrap();
    let joins: Vec<_> = (0..10_000u64).map(|i| rt.spawn(async move { i })).collect();
    let sum: u64 = rt.block_on(async {
        let mut sum = 0;
        for join in joins {
            sum += join.await.unwrap();
        }
        sum
    });
    assert_eq!(sum, 9_999 * 10_000 / 2);
}

#[test]
fn a_builder_rejected_once_can_be_fixed_and_reused() {
    let mut builder = Builder::new_multi_thread();
    builder.worker_threads(0);
    let err = builder.build().unwrap_err();
    assert!(err.to_string().contains("worker_threads"), "{err}");
    let rt = builder.worker_threads(2).build().unwrap();
    assert_eq!(rt.block_on(rt.spawn(async { 5 })).unwrap(), 5);
    // And builds a second, independent runtime.
    let second = builder.build().unwrap();
    assert_eq!(second.block_on(second.spawn(async { 6 })).unwrap(), 6);
}

#[test]
fn a_join_handle_polled_after_its_result_panics_clearly() {
    let rt = common::rt(1, true);
    let mut handle = pin!(rt.spawn(async { 1 }));
    let result = rt.block_on(handle.as_mut());
    assert_eq!(result.unwrap(), 1);
    let panic = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let _ = handle
            .as_mut()
            .poll(&mut Context::from_waker(Waker::noop()));
    }))
    .unwrap_err();
    let message = common::panic_text(&*panic);
    assert!(
        message.contains("polled after it returned Ready"),
        "{message}"
    );
}

#[test]
fn into_panic_on_a_cancelled_error_panics_and_names_the_alternative() {
    let rt = common::rt(1, true);
    let handle = rt.spawn(std::future::pending::<()>());
    handle.abort();
    let err = rt.block_on(handle).unwrap_err();
    assert!(err.is_cancelled());
    let panic =
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| err.into_panic())).unwrap_err();
    let message = common::panic_text(&*panic);
    assert!(message.contains("cancelled"), "{message}");
    // The non-panicking way gives the error back.
    let handle = rt.spawn(std::future::pending::<()>());
    handle.abort();
    let err = rt.block_on(handle).unwrap_err();
    assert!(err.try_into_panic().unwrap_err().is_cancelled());
}

#[test]
fn block_on_of_another_runtime_inside_a_task_panics_and_says_what_to_do() {
    let rt = common::rt(1, true);
    let other = common::rt(1, true);
    let other_handle = other.handle().clone();
    let err = rt
        .block_on(rt.spawn(async move { other_handle.block_on(async { 1 }) }))
        .unwrap_err();
    let message = common::panic_text(&*err.into_panic());
    assert!(
        message.contains("Cannot start a runtime from within a runtime"),
        "{message}"
    );
    assert!(
        message.contains(".await"),
        "says what to do instead: {message}"
    );
    assert_eq!(
        rt.block_on(rt.spawn(async { 2 })).unwrap(),
        2,
        "the worker survived"
    );
}

#[test]
fn shutdown_timeout_inside_its_own_task_panics_instead_of_deadlocking() {
    let rt = common::rt(2, true);
    let handle = rt.handle().clone();
    let (tx, rx) = mpsc::channel();
    let join = handle.spawn(async move { rt.shutdown_timeout(Duration::from_secs(5)) });
    std::thread::spawn(move || {
        let other = common::rt(1, true);
        tx.send(other.block_on(join)).unwrap();
    });
    let err = rx
        .recv_timeout(Duration::from_secs(10))
        .expect("no deadlock")
        .unwrap_err();
    assert!(err.is_panic(), "{err}");
    assert!(
        err.to_string().contains("from inside one of its own tasks"),
        "{err}"
    );
}

#[test]
fn a_handle_of_a_dropped_runtime_still_blocks_on_and_refuses_spawns() {
    let rt = common::rt(2, true);
    let handle = rt.handle().clone();
    drop(rt);
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let outcome = handle.block_on(async {
            // The context is set (spawning does not panic), but the runtime
            // is gone: the spawn is refused and reported as cancelled.
            let join = weft::spawn(async { 1 });
            join.await
        });
        tx.send(outcome.map_err(|err| err.is_cancelled())).unwrap();
    });
    let outcome = rx.recv_timeout(Duration::from_secs(10)).expect("no hang");
    assert_eq!(outcome, Err(true));
}

/// `EnterGuard`s restore the previous context when dropped; dropped out of
/// order, they must not leave a stale runtime as the thread's current one
/// (tokio panics: "`EnterGuard` values dropped out of order"); weft
/// panics too, and leaves no runtime current.
#[test]
fn enter_guards_dropped_out_of_order_do_not_leave_a_stale_context() {
    let first = common::rt(1, true);
    let second = common::rt(1, true);
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let outer = first.enter();
        let inner = second.enter();
        drop(outer);
        drop(inner);
    }));
    let panic = outcome.expect_err("guards dropped out of order went unreported");
    let message = common::panic_text(&*panic);
    assert!(message.contains("order"), "{message}");
    assert!(
        Handle::try_current().is_err(),
        "no runtime is current once every EnterGuard is dropped"
    );
}

#[test]
fn stall_and_slow_poll_thresholds_just_outside_their_range_are_rejected() {
    type Set = fn(&mut Builder, Duration);
    let settings: [(&str, Set); 2] = [
        ("stall_threshold", |b, d| {
            b.stall_threshold(d);
        }),
        ("slow_poll_threshold", |b, d| {
            b.slow_poll_threshold(d);
        }),
    ];
    for (name, set) in settings {
        for bad in [
            Duration::ZERO,
            Duration::from_micros(99),
            Duration::from_secs(10) + Duration::from_nanos(1),
        ] {
            assert_rejected(|b| set(b, bad), name, &["100 µs", "10 s"]);
        }
        for good in [Duration::from_micros(100), Duration::from_secs(10)] {
            assert_accepted(|b| set(b, good));
        }
    }
}

#[test]
fn batch_share_outside_zero_to_one_is_rejected() {
    for share in [0.0, -0.1, 1.0, 1.5, f64::NAN] {
        assert_rejected(
            |b| {
                b.batch_share(share);
            },
            "batch_share",
            &["greater than 0", "less than 1"],
        );
    }
    for share in [0.01, 0.5, 0.99] {
        assert_accepted(|b| {
            b.batch_share(share);
        });
    }
}

#[test]
fn max_threads_below_the_worker_count_is_rejected() {
    assert_rejected(
        |b| {
            b.max_threads(1);
        },
        "max_threads",
        &["worker_threads (2)", "got 1"],
    );
    // Equal to the workers: valid, the monitor then has no spare slot.
    assert_accepted(|b| {
        b.max_threads(2);
    });
}

#[test]
fn io_shards_outside_one_to_the_worker_count_is_rejected() {
    assert_rejected(
        |b| {
            b.io_shards(0);
        },
        "io_shards",
        &["between 1 and worker_threads (2)", "got 0"],
    );
    assert_rejected(
        |b| {
            b.io_shards(3);
        },
        "io_shards",
        &["got 3"],
    );
    for shards in [1, 2] {
        assert_accepted(|b| {
            b.io_shards(shards);
        });
    }
}

#[test]
fn spare_idle_timeout_just_outside_its_range_is_rejected() {
    for timeout in [
        Duration::ZERO,
        Duration::from_micros(999),
        Duration::from_secs(3600) + Duration::from_nanos(1),
    ] {
        assert_rejected(
            |b| {
                b.spare_idle_timeout(timeout);
            },
            "spare_idle_timeout",
            &["1 ms", "1 hour"],
        );
    }
    for timeout in [Duration::from_millis(1), Duration::from_secs(3600)] {
        assert_accepted(|b| {
            b.spare_idle_timeout(timeout);
        });
    }
}

#[test]
fn task_builder_spawn_outside_a_runtime_panics_and_says_what_to_do() {
    let panic = std::panic::catch_unwind(|| weft::task::Builder::new().spawn(async {}))
        .expect_err("task::Builder::spawn outside a runtime must panic");
    let message = common::panic_text(&*panic);
    assert!(message.contains("outside of a weft runtime"), "{message}");
    assert!(message.contains("spawn_on"), "{message}");
}

#[test]
fn join_set_spawn_outside_a_runtime_panics_and_names_spawn_on() {
    let mut set = weft::task::JoinSet::<()>::new();
    let panic = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        set.spawn(async {});
    }))
    .expect_err("JoinSet::spawn outside a runtime must panic");
    let message = common::panic_text(&*panic);
    assert!(message.contains("outside of a weft runtime"), "{message}");
    assert!(message.contains("`JoinSet::spawn_on`"), "{message}");
    assert!(message.contains("Handle"), "{message}");
    let panic = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        set.spawn_blocking(|| {});
    }))
    .expect_err("JoinSet::spawn_blocking outside a runtime must panic");
    let message = common::panic_text(&*panic);
    assert!(
        message.contains("`JoinSet::spawn_blocking_on`"),
        "{message}"
    );
    assert!(set.is_empty(), "a refused spawn left a member");
    // The same set works once given a handle.
    let rt = common::rt(1, true);
    set.spawn_on(async {}, rt.handle());
    assert!(rt.block_on(set.join_next()).unwrap().is_ok());
}

/// `global_queue_interval(0)` panics with tokio's message; any other value
/// is taken, and the runtime runs outside work with it.
#[test]
fn a_zero_global_queue_interval_panics_as_tokio_does() {
    let zero = std::panic::catch_unwind(|| {
        weft::runtime::Builder::new_multi_thread().global_queue_interval(0);
    })
    .unwrap_err();
    let message = zero.downcast_ref::<&str>().copied().unwrap_or_default();
    assert_eq!(message, "global_queue_interval must be greater than 0");
    let rt = weft::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .global_queue_interval(7)
        .build()
        .unwrap();
    let outputs: Vec<_> = (0..100).map(|i| rt.spawn(async move { i })).collect();
    rt.block_on(async {
        for (i, output) in outputs.into_iter().enumerate() {
            assert_eq!(output.await.unwrap(), i);
        }
    });
}

/// Runs `f`, which must panic; gives its message and the file of the
/// panic's location (through a panic hook, restored after).
fn panic_message_and_file(f: impl FnOnce() + std::panic::UnwindSafe) -> (String, String) {
    static HOOK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _one_at_a_time = HOOK.lock().unwrap_or_else(|e| e.into_inner());
    let file = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
    let previous = std::panic::take_hook();
    {
        let file = file.clone();
        std::panic::set_hook(Box::new(move |info| {
            *file.lock().unwrap() = info.location().unwrap().file().to_owned();
        }));
    }
    let panic = std::panic::catch_unwind(f).expect_err("it panics");
    std::panic::set_hook(previous);
    let message = panic
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default();
    let file = file.lock().unwrap().clone();
    (message, file)
}

/// `drivers_opt_in(true)`: a timer without `enable_time`, a socket or an
/// `AsyncFd` without `enable_io`, panic at the caller's line saying which
/// call is missing; with `enable_all` both work.
#[test]
fn opt_in_drivers_name_the_missing_enable_call_at_the_callers_line() {
    let no_time = Builder::new_current_thread()
        .drivers_opt_in(true)
        .enable_io()
        .build()
        .unwrap();
    let (message, file) = panic_message_and_file(|| {
        no_time.block_on(async {
            let _sleep = weft::time::sleep(Duration::from_millis(1));
        })
    });
    assert!(message.contains("`enable_time`"), "{message}");
    assert_eq!(file, file!());
    let no_io = Builder::new_current_thread()
        .drivers_opt_in(true)
        .enable_time()
        .build()
        .unwrap();
    let (message, file) = panic_message_and_file(|| {
        no_io.block_on(async {
            let std = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
            std.set_nonblocking(true).unwrap();
            let _socket = weft::net::UdpSocket::from_std(std);
        })
    });
    assert!(message.contains("`enable_io`"), "{message}");
    assert_eq!(file, file!());
    let (message, file) = panic_message_and_file(|| {
        no_io.block_on(async {
            let (a, _b) = std::os::unix::net::UnixStream::pair().unwrap();
            let _fd = weft::io::unix::AsyncFd::new(a);
        })
    });
    assert!(message.contains("`enable_io`"), "{message}");
    assert_eq!(file, file!());
    no_io.block_on(async { weft::time::sleep(Duration::from_millis(1)).await });
    let all = Builder::new_current_thread()
        .drivers_opt_in(true)
        .enable_all()
        .build()
        .unwrap();
    all.block_on(async {
        weft::time::sleep(Duration::from_millis(1)).await;
        weft::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
    });
}
