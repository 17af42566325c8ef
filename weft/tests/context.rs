//! Builder validation, hooks, and the runtime context outside a runtime.

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use weft::runtime::{Builder, Handle};

fn build_error(configure: impl FnOnce(&mut Builder)) -> std::io::Error {
    let mut builder = Builder::new_multi_thread();
    configure(&mut builder);
    builder.build().expect_err("invalid setting accepted")
}

#[test]
fn invalid_settings_are_rejected_with_the_setting_named() {
    type Configure = Box<dyn FnOnce(&mut Builder)>;
    let cases: Vec<(&str, Configure)> = vec![
        (
            "worker_threads",
            Box::new(|b| {
                b.worker_threads(0);
            }),
        ),
        (
            "worker_threads",
            Box::new(|b| {
                b.worker_threads(1_000_000);
            }),
        ),
        (
            "thread_stack_size",
            Box::new(|b| {
                b.thread_stack_size(1);
            }),
        ),
        (
            "thread_stack_size",
            Box::new(|b| {
                b.thread_stack_size(usize::MAX);
            }),
        ),
        (
            "inject_batch_cap",
            Box::new(|b| {
                b.inject_batch_cap(0);
            }),
        ),
        (
            "global_check_target",
            Box::new(|b| {
                b.global_check_target(std::time::Duration::ZERO);
            }),
        ),
    ];
    for (setting, configure) in cases {
        let err = build_error(configure);
        assert_eq!(err.kind(), std::io::ErrorKind::InvalidInput);
        assert!(err.to_string().contains(setting), "{setting}: {err}");
    }
}

#[test]
fn a_panicking_on_thread_start_hook_is_a_build_error_not_a_hang() {
    let err = build_error(|b| {
        b.worker_threads(2)
            .on_thread_start(|| panic!("hook failed"));
    });
    assert!(err.to_string().contains("on_thread_start"), "{err}");
    assert!(err.to_string().contains("hook failed"), "{err}");
}

#[test]
fn thread_hooks_and_names_apply_to_every_worker() {
    let starts = Arc::new(AtomicUsize::new(0));
    let stops = Arc::new(AtomicUsize::new(0));
    let rt = {
        let (starts, stops) = (starts.clone(), stops.clone());
        Builder::new_multi_thread()
            .worker_threads(3)
            .thread_name("test-worker")
            .thread_stack_size(256 * 1024)
            .on_thread_start(move || {
                starts.fetch_add(1, Ordering::SeqCst);
            })
            .on_thread_stop(move || {
                stops.fetch_add(1, Ordering::SeqCst);
            })
            .build()
            .unwrap()
    };
    assert_eq!(
        starts.load(Ordering::SeqCst),
        3,
        "build returns after every hook ran"
    );
    let name = rt
        .block_on(rt.spawn(async { std::thread::current().name().map(str::to_owned) }))
        .unwrap();
    assert_eq!(name.as_deref(), Some("test-worker"));
    drop(rt);
    assert_eq!(stops.load(Ordering::SeqCst), 3);
}

#[test]
fn outside_a_runtime_try_current_errors_and_current_panics_helpfully() {
    let err = Handle::try_current().unwrap_err();
    assert!(err.to_string().contains("Runtime::block_on"), "{err}");
    let panic = std::panic::catch_unwind(Handle::current).unwrap_err();
    let message = common::panic_text(&*panic);
    assert!(message.contains("no weft runtime is running"), "{message}");
    let panic = std::panic::catch_unwind(|| weft::spawn(async {})).unwrap_err();
    let message = common::panic_text(&*panic);
    assert!(message.contains("outside of a weft runtime"), "{message}");
}

#[test]
fn enter_makes_spawn_work_outside_block_on() {
    let rt = common::rt(2, true);
    let join = {
        let _guard = rt.enter();
        assert!(Handle::try_current().is_ok());
        weft::spawn(async { 11 })
    };
    assert!(
        Handle::try_current().is_err(),
        "the guard restores the context"
    );
    assert_eq!(rt.block_on(join).unwrap(), 11);
}

/// Nested guards, dropped in order, each restore the runtime before them;
/// `Debug` names the runtime, the handle and the guard.
#[test]
fn nested_enter_guards_restore_the_runtime_before_them() {
    // Told apart by their worker counts, which `Debug` shows.
    let (first, second) = (common::rt(1, true), common::rt(2, true));
    let runtime = format!("{second:?}");
    assert!(
        runtime.starts_with("Runtime") && runtime.contains("num_workers: 2"),
        "{runtime}"
    );
    let current = || Handle::try_current().map(|handle| format!("{handle:?}"));
    let outer = first.enter();
    let in_first = current().unwrap();
    assert!(in_first.starts_with("Handle"), "{in_first}");
    assert!(format!("{outer:?}").starts_with("EnterGuard"), "{outer:?}");
    {
        let _inner = second.enter();
        assert_ne!(current().unwrap(), in_first);
        let _innermost = first.enter();
        assert_eq!(current().unwrap(), in_first);
    }
    assert_eq!(
        current().unwrap(),
        in_first,
        "the outer runtime is current again"
    );
    {
        let _inner = second.enter();
    }
    drop(outer);
    assert!(current().is_err());
}

#[test]
fn default_runtime_uses_available_parallelism() {
    let rt = weft::runtime::Runtime::new().unwrap();
    let cores = std::thread::available_parallelism().unwrap().get();
    assert_eq!(rt.handle().num_workers(), cores);
}

/// tokio's small runtime queries: the flavor, an id unique per runtime and
/// shared by its handles, and `is_rt_shutdown_err` telling the error of a
/// socket whose runtime shut down from any other.
#[test]
fn flavor_id_and_the_shutdown_error_are_tokios() {
    use weft::runtime::{RuntimeFlavor, is_rt_shutdown_err};
    let first = weft::runtime::Runtime::new().unwrap();
    let second = weft::runtime::Runtime::new().unwrap();
    assert_eq!(first.handle().runtime_flavor(), RuntimeFlavor::MultiThread);
    assert_eq!(first.handle().id(), first.handle().clone().id());
    assert_ne!(first.handle().id(), second.handle().id());
    assert!(!first.handle().id().to_string().is_empty());
    let mut socket = first.block_on(async {
        let listener = weft::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let (client, _server) =
            futures_lite::future::zip(weft::net::TcpStream::connect(addr), listener.accept()).await;
        client.unwrap()
    });
    drop(first);
    let error = second
        .block_on(async {
            let mut buf = [0u8; 1];
            futures_lite::io::AsyncReadExt::read(&mut socket, &mut buf).await
        })
        .unwrap_err();
    assert!(is_rt_shutdown_err(&error), "{error}");
    assert!(!is_rt_shutdown_err(&std::io::Error::other(
        "something else"
    )));
}

/// `on_thread_park` runs each time a worker goes to sleep for want of
/// work and `on_thread_unpark` each time it wakes from that sleep, on the
/// worker's own thread: every wake follows a park, and at most one park per
/// worker is still open.
#[test]
fn park_hooks_bracket_every_sleep_of_a_worker() {
    let parks = Arc::new(AtomicUsize::new(0));
    let unparks = Arc::new(AtomicUsize::new(0));
    let rt = weft::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name("hooked")
        .on_thread_park({
            let parks = parks.clone();
            move || {
                assert_eq!(std::thread::current().name(), Some("hooked"));
                parks.fetch_add(1, Ordering::SeqCst);
            }
        })
        .on_thread_unpark({
            let unparks = unparks.clone();
            move || {
                unparks.fetch_add(1, Ordering::SeqCst);
            }
        })
        .build()
        .unwrap();
    for _ in 0..20 {
        let nap = rt.spawn(async { weft::time::sleep(std::time::Duration::from_millis(1)).await });
        rt.block_on(nap).unwrap();
    }
    let (parked, woke) = (parks.load(Ordering::SeqCst), unparks.load(Ordering::SeqCst));
    assert!(woke >= 20, "{woke} wakes for 20 spawns with sleeps between");
    assert!(
        parked >= woke && parked <= woke + 2,
        "{parked} parks, {woke} wakes"
    );
}

/// `Builder::name` names the runtime for `Handle::name` (tokio's); no name
/// by default; an empty name is refused as tokio refuses it.
#[test]
fn a_runtime_has_the_name_it_was_given() {
    let named = weft::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .name("orders")
        .build()
        .unwrap();
    assert_eq!(named.handle().name(), Some("orders"));
    assert_eq!(
        named.block_on(async { weft::runtime::Handle::current().name().map(str::to_owned) }),
        Some("orders".into())
    );
    let plain = weft::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    assert_eq!(plain.handle().name(), None);
    let refused = std::panic::catch_unwind(|| {
        weft::runtime::Builder::new_multi_thread().name("  ");
    });
    let message = refused.unwrap_err();
    assert_eq!(
        message.downcast_ref::<&str>(),
        Some(&"runtime name shouldn't be empty")
    );
}

/// The runtime, its handle, a `JoinHandle` and the sockets can be held
/// across `catch_unwind`, as tokio's can (a compile-time check: removing an
/// `UnwindSafe` impl makes this file fail to build).
#[test]
fn runtime_types_are_unwind_safe() {
    fn unwind_safe<T: std::panic::UnwindSafe + std::panic::RefUnwindSafe>() {}
    unwind_safe::<weft::runtime::Runtime>();
    unwind_safe::<weft::runtime::Handle>();
    unwind_safe::<weft::task::JoinHandle<()>>();
    unwind_safe::<weft::net::TcpStream>();
    unwind_safe::<weft::net::TcpListener>();
    unwind_safe::<weft::net::UdpSocket>();
    unwind_safe::<weft::net::UnixStream>();
}
