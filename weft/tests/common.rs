//! Shared helpers for the integration tests.
#![allow(dead_code)]

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use weft::runtime::{Builder, Runtime};

/// The runtime shapes every scheduler test runs on: one worker (no
/// stealing), two (this machine's cores), four (more workers than cores),
/// and four without the LIFO slot.
pub fn shapes() -> Vec<(&'static str, Runtime)> {
    vec![
        ("1 worker", rt(1, true)),
        ("2 workers", rt(2, true)),
        ("4 workers", rt(4, true)),
        ("4 workers, no LIFO", rt(4, false)),
    ]
}

pub fn rt(workers: usize, lifo: bool) -> Runtime {
    Builder::new_multi_thread()
        .worker_threads(workers)
        .lifo_slot(lifo)
        .build()
        .expect("runtime builds")
}

/// `workers` workers and no stall monitor: no spare thread can take a
/// stuck worker's tasks or fire its timers, so a test sees what the other
/// workers do.
pub fn rt_without_stall_monitor(workers: usize) -> Runtime {
    Builder::new_multi_thread()
        .worker_threads(workers)
        .stall_monitor(false)
        .build()
        .expect("runtime builds")
}

/// Runs `body` once per runtime shape, naming the shape on failure.
pub fn on_every_shape(body: impl Fn(&Runtime)) {
    for (name, rt) in shapes() {
        eprintln!("shape: {name}");
        body(&rt);
    }
}

/// A waker that counts its wakes.
#[derive(Default)]
pub struct WakeCount(AtomicUsize);

impl WakeCount {
    pub fn wakes(&self) -> usize {
        self.0.load(Ordering::SeqCst)
    }
}

impl std::task::Wake for WakeCount {
    fn wake(self: Arc<Self>) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

/// Counts drops of the values it hands out.
#[derive(Clone, Default)]
pub struct DropCounter(Arc<AtomicUsize>);

pub struct Tracked(Arc<AtomicUsize>);

impl Drop for Tracked {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

impl DropCounter {
    pub fn track(&self) -> Tracked {
        Tracked(self.0.clone())
    }

    pub fn drops(&self) -> usize {
        self.0.load(Ordering::SeqCst)
    }
}

/// Checks `done` about every millisecond until it holds or `limit` has
/// passed; whether it held. For what a loaded machine may make late.
pub fn wait_until(limit: std::time::Duration, mut done: impl FnMut() -> bool) -> bool {
    let start = std::time::Instant::now();
    while !done() {
        if start.elapsed() >= limit {
            return false;
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    true
}

/// Threads of this process, from /proc (Linux).
pub fn thread_count() -> usize {
    std::fs::read_dir("/proc/self/task")
        .map(|dir| dir.count())
        .expect("/proc/self/task is readable")
}

/// A minimal oneshot channel, so the tests depend on nothing but weft.
/// The receiver's waker is held by the channel, outside the runtime.
pub fn oneshot<T: Send + 'static>() -> (Sender<T>, Receiver<T>) {
    let slot = Arc::new(std::sync::Mutex::new((None, None::<std::task::Waker>)));
    (Sender(slot.clone()), Receiver(slot))
}

type Slot<T> = Arc<std::sync::Mutex<(Option<T>, Option<std::task::Waker>)>>;

pub struct Sender<T>(Slot<T>);
pub struct Receiver<T>(Slot<T>);

impl<T> Sender<T> {
    pub fn send(self, value: T) {
        let waker = {
            let mut slot = self.0.lock().unwrap();
            slot.0 = Some(value);
            slot.1.take()
        };
        if let Some(waker) = waker {
            waker.wake();
        }
    }
}

impl<T> std::future::Future for Receiver<T> {
    type Output = T;
    fn poll(self: std::pin::Pin<&mut Self>, cx: &mut std::task::Context<'_>) -> std::task::Poll<T> {
        let mut slot = self.0.lock().unwrap();
        match slot.0.take() {
            Some(value) => std::task::Poll::Ready(value),
            None => {
                slot.1 = Some(cx.waker().clone());
                std::task::Poll::Pending
            }
        }
    }
}

/// The text of a panic payload (`&str` or `String`).
pub fn panic_text(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_default()
}

/// Asserts that `rt` still runs tasks on its workers: 100 spawns from
/// inside, each value back.
pub fn assert_serves(rt: &Runtime) {
    let sum: u32 = rt.block_on(async {
        let joins: Vec<_> = (0..100u32).map(|i| weft::spawn(async move { i })).collect();
        let mut sum = 0;
        for join in joins {
            sum += join.await.unwrap();
        }
        sum
    });
    assert_eq!(sum, 99 * 100 / 2, "the runtime no longer serves");
}
