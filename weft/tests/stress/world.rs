//! The scripted tasks of the stress scenarios, what is recorded about each
//! (`Ledger`), and the state a scenario's tasks and threads share
//! (`World`).

use std::pin::Pin;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};

use weft::JoinHandle;

/// The message of the panics tasks are scripted to raise.
pub(crate) const SCRIPTED_PANIC: &str = "scripted panic (stress test)";

// ----- a tiny PRNG (SplitMix64): no dependency, same sequence everywhere.

#[derive(Clone)]
pub(crate) struct Rng(pub(crate) u64);

impl Rng {
    pub(crate) fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    pub(crate) fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    pub(crate) fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }

    pub(crate) fn fork(&mut self) -> Rng {
        Rng(self.next())
    }
}

// ----- what is known about every task

#[derive(Default)]
pub(crate) struct Ledger {
    pub(crate) polls: AtomicU32,
    pub(crate) drops: AtomicU32,
    pub(crate) completions: AtomicU32,
    pub(crate) polls_after_ready: AtomicU32,
    pub(crate) panicked: AtomicU32,
    pub(crate) aborted: AtomicU32,
    /// `abort` was first called when the task had already completed: the
    /// handle must then give the output.
    pub(crate) completed_before_abort: AtomicU32,
}

impl Ledger {
    /// Records an abort about to be made on `join`.
    pub(crate) fn note_abort(&self, join: &JoinHandle<usize>) {
        let first = self.aborted.fetch_add(1, Ordering::SeqCst) == 0;
        if first && join.is_finished() && self.completions.load(Ordering::SeqCst) == 1 {
            self.completed_before_abort.fetch_add(1, Ordering::SeqCst);
        }
    }
}

/// State shared by the tasks and the outside threads of one scenario.
pub(crate) struct World {
    pub(crate) seed: u64,
    /// Drained mode: no waker may be dropped without a wake.
    pub(crate) drain_mode: bool,
    pub(crate) ledgers: Mutex<Vec<Arc<Ledger>>>,
    /// Wakers of tasks waiting for a wake from someone else.
    pub(crate) wakers: Mutex<Vec<Waker>>,
    /// Handles not yet awaited or dropped: (task id, handle).
    pub(crate) handles: Mutex<Vec<(usize, JoinHandle<usize>)>>,
    /// Results of handles awaited while the runtime ran.
    pub(crate) results: Mutex<Vec<(usize, Result<usize, weft::JoinError>)>>,
}

impl World {
    pub(crate) fn new_task(self: &Arc<World>, rng: &mut Rng, depth: u32) -> (usize, Scripted) {
        let ledger = Arc::new(Ledger::default());
        let id = {
            let mut ledgers = self.ledgers.lock().unwrap();
            ledgers.push(ledger.clone());
            ledgers.len() - 1
        };
        let len = 1 + rng.below(5);
        let steps = (0..len)
            .map(|_| match rng.below(100) {
                0..30 => Step::Yield,
                30..55 => Step::Wait,
                55..70 if depth < 3 => Step::Spawn,
                55..80 => Step::WakeOther,
                80..83 => Step::Panic,
                83..90 => Step::Socket,
                _ => Step::Yield,
            })
            .collect();
        let task = Scripted {
            id,
            steps,
            at: 0,
            waiting: false,
            socket: None,
            depth,
            rng: rng.fork(),
            ledger: ledger.clone(),
            world: self.clone(),
            _probe: DropProbe(ledger),
        };
        (id, task)
    }

    pub(crate) fn keep_handle(&self, id: usize, handle: JoinHandle<usize>) {
        self.handles.lock().unwrap().push((id, handle));
    }

    pub(crate) fn take_random<T>(list: &Mutex<Vec<T>>, rng: &mut Rng) -> Option<T> {
        let mut list = list.lock().unwrap();
        if list.is_empty() {
            return None;
        }
        let at = rng.below(list.len());
        Some(list.swap_remove(at))
    }
}

// ----- the scripted task

#[derive(Clone, Copy, Debug)]
pub(crate) enum Step {
    /// Wake itself and return `Pending` (as `yield_now`).
    Yield,
    /// Put its waker in the shared pool and wait for someone to wake it.
    Wait,
    /// Spawn a child task from inside (`weft::spawn`).
    Spawn,
    /// Wake a waiting task from inside (the worker's local path).
    WakeOther,
    /// Panic in `poll`.
    Panic,
    /// A round trip over a fresh Unix stream pair on the reactor: register,
    /// write, wait for the reactor's readiness, read, deregister (an error
    /// is accepted only when the runtime is shutting down under it).
    Socket,
}

/// `Step::Socket`'s round trip.
async fn socket_round_trip() {
    use futures_lite::io::{AsyncReadExt, AsyncWriteExt};
    let (mut a, mut b) = match weft::net::UnixStream::pair() {
        Ok(pair) => pair,
        Err(error) => {
            // Only a runtime shutting down under the task refuses sockets.
            assert!(error.to_string().contains("shut down"), "{error}");
            return;
        }
    };
    if let Err(error) = a.write_all(b"ping").await {
        assert!(error.to_string().contains("shut down"), "{error}");
        return;
    }
    let mut buf = [0; 4];
    match b.read_exact(&mut buf).await {
        Ok(()) => assert_eq!(&buf, b"ping", "the bytes written come back"),
        Err(error) => assert!(error.to_string().contains("shut down"), "{error}"),
    }
}

pub(crate) fn expected_output(id: usize) -> usize {
    id * 3 + 1
}

pub(crate) struct Scripted {
    id: usize,
    steps: Vec<Step>,
    at: usize,
    waiting: bool,
    socket: Option<Pin<Box<dyn std::future::Future<Output = ()> + Send>>>,
    depth: u32,
    rng: Rng,
    ledger: Arc<Ledger>,
    world: Arc<World>,
    _probe: DropProbe,
}

pub(crate) struct DropProbe(Arc<Ledger>);

impl Drop for DropProbe {
    fn drop(&mut self) {
        self.0.drops.fetch_add(1, Ordering::SeqCst);
    }
}

impl std::future::Future for Scripted {
    type Output = usize;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<usize> {
        let this = &mut *self;
        this.ledger.polls.fetch_add(1, Ordering::SeqCst);
        if this.ledger.completions.load(Ordering::SeqCst) > 0 {
            this.ledger.polls_after_ready.fetch_add(1, Ordering::SeqCst);
        }
        while let Some(&step) = this.steps.get(this.at) {
            match step {
                Step::Yield => {
                    this.at += 1;
                    cx.waker().wake_by_ref();
                    return Poll::Pending;
                }
                Step::Wait if !this.waiting => {
                    this.waiting = true;
                    this.world.wakers.lock().unwrap().push(cx.waker().clone());
                    return Poll::Pending;
                }
                Step::Wait => {
                    this.waiting = false;
                    this.at += 1;
                }
                Step::Spawn => {
                    this.at += 1;
                    let (id, child) = this.world.new_task(&mut this.rng, this.depth + 1);
                    let handle = weft::spawn(child);
                    if this.rng.chance(50) {
                        this.world.keep_handle(id, handle);
                    }
                }
                Step::WakeOther => {
                    this.at += 1;
                    if let Some(waker) = World::take_random(&this.world.wakers, &mut this.rng) {
                        waker.wake();
                    }
                }
                Step::Socket => {
                    let round_trip = this
                        .socket
                        .get_or_insert_with(|| Box::pin(socket_round_trip()));
                    if round_trip.as_mut().poll(cx).is_pending() {
                        return Poll::Pending;
                    }
                    this.socket = None;
                    this.at += 1;
                }
                Step::Panic => {
                    this.ledger.panicked.fetch_add(1, Ordering::SeqCst);
                    panic!("{SCRIPTED_PANIC}");
                }
            }
        }
        this.ledger.completions.fetch_add(1, Ordering::SeqCst);
        Poll::Ready(expected_output(this.id))
    }
}
