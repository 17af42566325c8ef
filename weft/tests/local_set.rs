//! `task::LocalSet` and `task::spawn_local`: `!Send` tasks run on the set's
//! thread while the set is polled, on either runtime flavor; wakes from
//! other threads reach them; the set as a future completes when its tasks
//! are done; dropping the set drops its tasks on its thread.

use std::cell::Cell;
use std::future::{Future, poll_fn};
use std::rc::Rc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Poll, Waker};
use std::thread::{self, ThreadId};
use std::time::{Duration, Instant};

use weft::runtime::{Builder, Runtime};
use weft::task::{self, LocalSet};

fn runtimes() -> Vec<(&'static str, Runtime)> {
    vec![
        (
            "current_thread",
            Builder::new_current_thread().build().unwrap(),
        ),
        (
            "multi_thread",
            Builder::new_multi_thread()
                .worker_threads(2)
                .build()
                .unwrap(),
        ),
    ]
}

/// A one-shot signal another thread can fire.
#[derive(Clone, Default)]
struct Signal(Arc<Mutex<(bool, Option<Waker>)>>);

impl Signal {
    fn fire(&self) {
        let waker = {
            let mut state = self.0.lock().unwrap();
            state.0 = true;
            state.1.take()
        };
        if let Some(waker) = waker {
            waker.wake();
        }
    }

    fn wait(&self) -> impl Future<Output = ()> + 'static {
        let this = self.clone();
        poll_fn(move |cx| {
            let mut state = this.0.lock().unwrap();
            if state.0 {
                Poll::Ready(())
            } else {
                state.1 = Some(cx.waker().clone());
                Poll::Pending
            }
        })
    }
}

#[test]
fn spawn_local_outside_a_local_set_panics_with_tokios_message() {
    let rt = Builder::new_current_thread().build().unwrap();
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        rt.block_on(async { drop(task::spawn_local(async {})) })
    }));
    let payload = outcome.unwrap_err();
    let message = payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap();
    assert_eq!(
        message,
        "`spawn_local` called from outside of a `task::LocalSet` or `runtime::LocalRuntime`"
    );
}

#[test]
fn not_send_tasks_run_on_the_sets_thread_on_both_flavors() {
    for (name, rt) in runtimes() {
        let local = LocalSet::new();
        let here = thread::current().id();
        let counter = Rc::new(Cell::new(0));
        let ids: Vec<ThreadId> = local.block_on(&rt, {
            let counter = counter.clone();
            async move {
                let mut handles = Vec::new();
                for _ in 0..20 {
                    let counter = counter.clone();
                    handles.push(task::spawn_local(async move {
                        task::yield_now().await;
                        counter.set(counter.get() + 1);
                        thread::current().id()
                    }));
                }
                let mut ids = Vec::new();
                for handle in handles {
                    ids.push(handle.await.unwrap());
                }
                ids
            }
        });
        assert_eq!(counter.get(), 20, "{name}");
        assert!(ids.iter().all(|id| *id == here), "{name}");
    }
}

#[test]
fn timers_and_wakes_from_other_threads_reach_local_tasks() {
    for (name, rt) in runtimes() {
        let local = LocalSet::new();
        let signal = Signal::default();
        let firer = {
            let signal = signal.clone();
            thread::spawn(move || {
                thread::sleep(Duration::from_millis(30));
                signal.fire();
            })
        };
        let start = Instant::now();
        local.block_on(&rt, async move {
            let rc = Rc::new(());
            let slept = task::spawn_local(async move {
                let _keep = rc;
                weft::time::sleep(Duration::from_millis(20)).await;
            });
            let signalled = task::spawn_local(signal.wait());
            slept.await.unwrap();
            signalled.await.unwrap();
        });
        assert!(start.elapsed() >= Duration::from_millis(30), "{name}");
        firer.join().unwrap();
    }
}

#[test]
fn the_set_as_a_future_completes_when_its_tasks_are_done() {
    for (name, rt) in runtimes() {
        let local = LocalSet::new();
        let done = Rc::new(Cell::new(0));
        for i in 0..5u64 {
            let done = done.clone();
            // Spawned before the set runs: from outside its context.
            drop(local.spawn_local(async move {
                weft::time::sleep(Duration::from_millis(i)).await;
                done.set(done.get() + 1);
            }));
        }
        rt.block_on(local);
        assert_eq!(done.get(), 5, "{name}");
    }
}

#[test]
fn run_until_returns_with_tasks_left_and_they_run_later() {
    let rt = Builder::new_current_thread().build().unwrap();
    let local = LocalSet::new();
    let signal = Signal::default();
    let handle = local.spawn_local(signal.wait());
    local.block_on(&rt, async { task::yield_now().await });
    assert!(!handle.is_finished());
    signal.fire();
    local.block_on(&rt, handle).unwrap();
}

/// Counts its drops and checks the thread each happens on.
struct DropOn {
    owner: ThreadId,
    drops: Rc<Cell<usize>>,
}

impl Drop for DropOn {
    fn drop(&mut self) {
        assert_eq!(
            thread::current().id(),
            self.owner,
            "dropped off the set's thread"
        );
        self.drops.set(self.drops.get() + 1);
    }
}

#[test]
fn dropping_the_set_drops_its_tasks_on_its_thread() {
    let rt = Builder::new_multi_thread()
        .worker_threads(2)
        .build()
        .unwrap();
    let drops = Rc::new(Cell::new(0));
    let owner = thread::current().id();
    let local = LocalSet::new();
    let guard = || DropOn {
        owner,
        drops: drops.clone(),
    };
    // Never polled.
    for _ in 0..3 {
        let guard = guard();
        drop(local.spawn_local(async move {
            let _guard = guard;
        }));
    }
    // Idle on a signal that another thread fires while the set is dropped.
    let signals: Vec<Signal> = (0..3).map(|_| Signal::default()).collect();
    local.block_on(&rt, async {
        for signal in &signals {
            let (guard, wait) = (guard(), signal.wait());
            drop(task::spawn_local(async move {
                let _guard = guard;
                wait.await;
                std::future::pending::<()>().await;
            }));
        }
        // Idle on a timer.
        let guard = guard();
        drop(task::spawn_local(async move {
            let _guard = guard;
            weft::time::sleep(Duration::from_secs(3600)).await;
        }));
        task::yield_now().await;
    });
    let firer = thread::spawn(move || {
        for signal in signals {
            signal.fire();
        }
    });
    // Tasks queued by the first three never ran either.
    assert_eq!(drops.get(), 3);
    drop(local);
    assert_eq!(drops.get(), 7);
    firer.join().unwrap();
}

#[test]
fn a_local_task_can_be_aborted_from_another_thread() {
    let rt = Builder::new_multi_thread()
        .worker_threads(1)
        .build()
        .unwrap();
    let local = LocalSet::new();
    let dropped = Arc::new(AtomicUsize::new(0));
    struct Count(Arc<AtomicUsize>);
    impl Drop for Count {
        fn drop(&mut self) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }
    let count = Count(dropped.clone());
    let result = local.block_on(&rt, async move {
        let handle = task::spawn_local(async move {
            let _count = count;
            let _not_send = Rc::new(());
            std::future::pending::<()>().await;
        });
        task::yield_now().await;
        let abort = handle.abort_handle();
        thread::spawn(move || abort.abort()).join().unwrap();
        handle.await
    });
    assert!(result.unwrap_err().is_cancelled());
    assert_eq!(dropped.load(Ordering::SeqCst), 1);
}

#[test]
fn enter_lets_spawn_local_spawn_on_the_set() {
    let rt = Builder::new_current_thread().build().unwrap();
    let local = LocalSet::new();
    let handle = {
        let _entered = local.enter();
        task::spawn_local(async {
            let not_send = Rc::new(3);
            task::yield_now().await;
            *not_send
        })
    };
    assert_eq!(local.block_on(&rt, handle).unwrap(), 3);
}

/// A value that counts its drops, and those made off the thread it was
/// made on.
struct ThreadBound {
    home: ThreadId,
    drops: Rc<Cell<usize>>,
    off_home: Arc<AtomicUsize>,
}

impl Drop for ThreadBound {
    fn drop(&mut self) {
        if thread::current().id() == self.home {
            self.drops.set(self.drops.get() + 1);
        } else {
            self.off_home.fetch_add(1, Ordering::SeqCst);
        }
    }
}

/// A local task's output need not be `Send` (tokio's bound): an `Rc`
/// comes back through the handle, and a `JoinSet` of them works.
#[test]
fn outputs_need_not_be_send() {
    let rt = Builder::new_current_thread().build().unwrap();
    let local = LocalSet::new();
    let total = local.block_on(&rt, async {
        let rc = task::spawn_local(async { Rc::new(40) }).await.unwrap();
        let mut set = task::JoinSet::new();
        set.spawn_local(async { Rc::new(2) });
        let two = set.join_next().await.unwrap().unwrap();
        *rc + *two
    });
    assert_eq!(total, 42);
}

/// The output of a local task is dropped on the set's thread: when the
/// task completes after its handle was dropped, and when an `AbortHandle`
/// on another thread has looked at the finished task (moving the output
/// into the handle's shared state there) before the handle is dropped.
#[test]
fn a_local_output_is_dropped_on_its_thread() {
    let rt = Builder::new_current_thread().build().unwrap();
    let local = LocalSet::new();
    let drops = Rc::new(Cell::new(0));
    let off_home = Arc::new(AtomicUsize::new(0));
    let make = {
        let drops = drops.clone();
        let off_home = off_home.clone();
        move || ThreadBound {
            home: thread::current().id(),
            drops: drops.clone(),
            off_home: off_home.clone(),
        }
    };
    local.block_on(&rt, async {
        // Detached before it completes: the output is dropped here.
        let value = make();
        drop(task::spawn_local(async move {
            task::yield_now().await;
            value
        }));
        let value = make();
        let handle = task::spawn_local(async move { value });
        let abort = handle.abort_handle();
        task::yield_now().await;
        task::yield_now().await;
        assert_eq!(drops.get(), 1, "the detached task's output");
        // Completed; an AbortHandle on another thread looks, then the
        // handle is dropped here.
        thread::spawn(move || {
            assert!(abort.is_finished());
            abort.abort();
        })
        .join()
        .unwrap();
        drop(handle);
    });
    assert_eq!(
        off_home.load(Ordering::SeqCst),
        0,
        "no drop off the set's thread"
    );
    assert_eq!(drops.get(), 2);
}

/// A set kept in a thread-local is dropped at the thread's exit, after the
/// thread's other thread-locals may be gone: its tasks are dropped, and
/// nothing panics (a panic there aborts the process).
#[test]
fn a_set_in_a_thread_local_is_dropped_at_thread_exit() {
    thread_local! {
        static SET: LocalSet = LocalSet::new();
    }
    let rt = Builder::new_multi_thread()
        .worker_threads(1)
        .build()
        .unwrap();
    let handle = rt.handle().clone();
    let dropped = Arc::new(AtomicUsize::new(0));
    let counter = dropped.clone();
    thread::spawn(move || {
        struct CountDrop(Arc<AtomicUsize>);
        impl Drop for CountDrop {
            fn drop(&mut self) {
                self.0.fetch_add(1, Ordering::SeqCst);
            }
        }
        SET.with(|set| {
            let guard = CountDrop(counter);
            set.spawn_local(async move {
                let _guard = guard;
                std::future::pending::<()>().await;
            });
            handle.block_on(set.run_until(task::yield_now()));
        });
    })
    .join()
    .expect("the thread exits without a panic");
    assert_eq!(dropped.load(Ordering::SeqCst), 1);
}

/// `block_in_place` inside a set, polled by a driving thread (here the
/// multi-thread runtime's `block_on`), panics with tokio's message: the
/// set's tasks, which only this thread may run, would wait.
#[test]
fn block_in_place_in_a_set_panics() {
    let rt = Builder::new_multi_thread()
        .worker_threads(2)
        .build()
        .unwrap();
    let local = LocalSet::new();
    let panic = rt.block_on(local.run_until(async {
        std::panic::catch_unwind(|| task::block_in_place(|| 1)).expect_err("it panics")
    }));
    let message = panic.downcast_ref::<&str>().copied().unwrap_or_default();
    assert_eq!(
        message,
        "can call blocking only when running on the multi-threaded runtime"
    );
    // Outside the set, the same call runs its closure.
    assert_eq!(rt.block_on(async { task::block_in_place(|| 2) }), 2);
}
