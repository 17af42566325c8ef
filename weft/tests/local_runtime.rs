//! `runtime::LocalRuntime` and `runtime::worker_index`: `spawn_local`
//! without a `LocalSet` anywhere on the runtime's thread (in `block_on`,
//! in a task spawned with `weft::spawn`, under `enter`), and a panic on
//! another thread; the local tasks dropped once, on the thread, in the
//! runtime's context; `JoinSet::spawn_local(_on)`; the worker index on
//! each kind of thread.

use std::cell::Cell;
use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread;
use std::time::Duration;

use weft::runtime::{Builder, LocalOptions, LocalRuntime, worker_index};
use weft::task::{self, JoinSet, LocalSet};

fn message(panic: Box<dyn std::any::Any + Send>) -> String {
    panic
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default()
}

/// A `!Send` future spawned with `task::spawn_local` inside `block_on`
/// runs, and may hold an `Rc` across an `.await`.
#[test]
fn spawn_local_works_in_block_on() {
    let rt = LocalRuntime::new().unwrap();
    let got = rt.block_on(async {
        let shared = Rc::new(Cell::new(0));
        let inner = shared.clone();
        task::spawn_local(async move {
            weft::time::sleep(Duration::from_millis(1)).await;
            inner.set(inner.get() + 7);
        })
        .await
        .unwrap();
        shared.get()
    });
    assert_eq!(got, 7);
}

/// From a task spawned with `weft::spawn` on the local runtime (no
/// `LocalSet` entered there), `spawn_local` finds the runtime's set.
#[test]
fn spawn_local_works_in_a_spawned_task() {
    let rt = LocalRuntime::new().unwrap();
    let got = rt.block_on(async {
        weft::spawn(async {
            let rc = Rc::new(5);
            task::spawn_local(async move { *rc * 2 }).await.unwrap()
        })
        .await
        .unwrap()
    });
    assert_eq!(got, 10);
}

/// Under `enter`, outside `block_on`, `spawn_local` queues the task; it
/// runs when `block_on` drives. `LocalRuntime::spawn_local` likewise.
#[test]
fn spawn_local_under_enter_and_on_the_runtime_run_in_block_on() {
    let rt = LocalRuntime::new().unwrap();
    let ran = Rc::new(Cell::new(0));
    let entered = {
        let _guard = rt.enter();
        let ran = ran.clone();
        task::spawn_local(async move { ran.set(ran.get() + 1) })
    };
    let direct = {
        let ran = ran.clone();
        rt.spawn_local(async move { ran.set(ran.get() + 10) })
    };
    assert_eq!(ran.get(), 0, "nothing runs before block_on");
    rt.block_on(async {
        entered.await.unwrap();
        direct.await.unwrap();
    });
    assert_eq!(ran.get(), 11);
}

/// The runtime's handle entered on another thread spawns `Send` tasks, but
/// a `spawn_local` there panics with tokio's message (the task would run
/// on the wrong thread).
#[test]
fn spawn_local_through_the_handle_on_another_thread_panics() {
    let rt = LocalRuntime::new().unwrap();
    let handle = rt.handle().clone();
    let (spawned, panic) = thread::spawn(move || {
        let _guard = handle.enter();
        let spawned = weft::spawn(async { 3 });
        let panic = std::panic::catch_unwind(|| {
            drop(task::spawn_local(async {}));
        });
        (spawned, panic)
    })
    .join()
    .unwrap();
    let panic = panic.expect_err("spawn_local on another thread panics");
    assert_eq!(
        message(panic),
        "Local tasks can only be spawned on a LocalRuntime from the thread the runtime was \
         created on"
    );
    assert_eq!(rt.block_on(spawned).unwrap(), 3);
}

/// A plain current-thread runtime is not a local one: `spawn_local` in its
/// `block_on` panics, as on tokio.
#[test]
fn spawn_local_on_a_plain_current_thread_runtime_panics() {
    let rt = Builder::new_current_thread().build().unwrap();
    let panic = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        rt.block_on(async {
            drop(task::spawn_local(async {}));
        })
    }))
    .expect_err("no LocalSet, no LocalRuntime");
    assert!(message(panic).contains("`spawn_local` called from outside of a `task::LocalSet`"));
}

/// Dropping the runtime drops each pending local task's future once, on
/// this thread, with the runtime's context entered (a destructor may
/// spawn).
#[test]
fn the_drop_drops_pending_local_tasks_once_in_context() {
    struct Probe {
        drops: Rc<Cell<usize>>,
        in_context: Rc<Cell<usize>>,
        thread: thread::ThreadId,
    }
    impl Drop for Probe {
        fn drop(&mut self) {
            assert_eq!(thread::current().id(), self.thread);
            self.drops.set(self.drops.get() + 1);
            if weft::runtime::Handle::try_current().is_ok() {
                self.in_context.set(self.in_context.get() + 1);
            }
        }
    }
    let drops = Rc::new(Cell::new(0));
    let in_context = Rc::new(Cell::new(0));
    let rt = LocalRuntime::new().unwrap();
    rt.block_on(async {
        for _ in 0..3 {
            let probe = Probe {
                drops: drops.clone(),
                in_context: in_context.clone(),
                thread: thread::current().id(),
            };
            task::spawn_local(async move {
                let _probe = probe;
                std::future::pending::<()>().await;
            });
        }
        task::yield_now().await;
    });
    assert_eq!(drops.get(), 0);
    drop(rt);
    assert_eq!(drops.get(), 3);
    assert_eq!(in_context.get(), 3);
}

/// `build_local` on a multi-thread builder panics with tokio's message.
#[test]
fn build_local_on_a_multi_thread_builder_panics() {
    let panic = std::panic::catch_unwind(|| {
        let _ = Builder::new_multi_thread().build_local(LocalOptions::default());
    })
    .expect_err("a local runtime runs on one thread");
    assert_eq!(
        message(panic),
        "multi_thread is not supported for LocalRuntime"
    );
}

/// `JoinSet::spawn_local` on a local runtime and `spawn_local_on` a
/// `LocalSet` add `!Send` futures to the set; results come back.
#[test]
fn join_set_spawns_local_tasks() {
    let rt = LocalRuntime::new().unwrap();
    let mut total = rt.block_on(async {
        let mut set = JoinSet::new();
        for i in 0..4 {
            let rc = Rc::new(i);
            set.spawn_local(async move { *rc });
        }
        let mut total = 0;
        while let Some(result) = set.join_next().await {
            total += result.unwrap();
        }
        total
    });
    let plain = Builder::new_current_thread().build().unwrap();
    let local = LocalSet::new();
    let mut set = JoinSet::new();
    let rc = Rc::new(100);
    set.spawn_local_on(async move { *rc }, &local);
    total += local.block_on(&plain, async { set.join_next().await.unwrap().unwrap() });
    assert_eq!(total, 106);
}

/// `worker_index`: `0..n` in a multi-thread runtime's task, `None` in its
/// `block_on` (not a worker), on the blocking pool and outside any
/// runtime; `Some(0)` in a current-thread or local runtime's `block_on`.
#[test]
fn worker_index_on_each_kind_of_thread() {
    assert_eq!(worker_index(), None);
    let multi = Builder::new_multi_thread()
        .worker_threads(2)
        .build()
        .unwrap();
    let seen = Arc::new(AtomicUsize::new(0));
    multi.block_on(async {
        assert_eq!(worker_index(), None, "block_on's thread is not a worker");
        let mut tasks = JoinSet::new();
        for _ in 0..16 {
            let seen = seen.clone();
            tasks.spawn(async move {
                let index = worker_index().expect("a worker");
                assert!(index < 2, "{index}");
                seen.fetch_or(1 << index, Ordering::Relaxed);
            });
        }
        while let Some(done) = tasks.join_next().await {
            done.unwrap();
        }
        let blocking = weft::task::spawn_blocking(worker_index).await.unwrap();
        assert_eq!(blocking, None, "the blocking pool");
    });
    assert_ne!(seen.load(Ordering::Relaxed), 0);
    let current = Builder::new_current_thread().build().unwrap();
    assert_eq!(current.block_on(async { worker_index() }), Some(0));
    assert_eq!(
        current.block_on(async { weft::spawn(async { worker_index() }).await.unwrap() }),
        Some(0)
    );
    let local = LocalRuntime::new().unwrap();
    assert_eq!(local.block_on(async { worker_index() }), Some(0));
}
