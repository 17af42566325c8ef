//! Steps 5 and 6 of the loop (`worker.rs`'s module doc): searching for
//! work elsewhere (another slot's ring, the global queues, another slot's
//! LIFO slot, the batch lane) and a short spin before sleeping.
//!
//! The searching state is `idle.rs`'s protocol (correctness: rule 4, a
//! last searcher that finds work wakes another; loom models in
//! `scheduler/loom_tests.rs`); the victim order and the spin are speed.

use super::{BatchCap, Core, SPIN_ROUNDS};
use crate::scheduler::idle::LeftSearching;
use crate::task::{Lane, Task};

impl Core {
    pub(super) fn next_random(&self, bound: usize) -> usize {
        // xorshift64*: cheap and good enough to pick a victim. Only where a
        // search starts: every victim is tried from there, so a poor or
        // constant answer costs contention among thieves, never a missed
        // task.
        let mut x = self.rng.get();
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.rng.set(x);
        (x.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 32) as usize % bound
    }

    /// Step 5 of the loop. Enters the searching state if allowed.
    pub(super) fn search(&self) -> Option<Task> {
        if !self.searching.get() {
            if !self.shared.idle.transition_worker_to_searching() {
                return None;
            }
            self.searching.set(true);
        }
        self.steal_work()
    }

    /// Work from elsewhere: another slot's ring, the global queues, another
    /// slot's LIFO slot, and last the batch lane.
    pub(super) fn steal_work(&self) -> Option<Task> {
        if let Some(task) = self.take_lane(Lane::Latency) {
            return Some(task);
        }
        let remotes = &self.shared.remotes;
        let n = remotes.len();
        let start = self.next_random(n);
        let victims = (0..n).map(|i| (start + i) % n).filter(|&v| v != self.index);
        for victim in victims.clone() {
            let before = self.local.len();
            if let Some(task) = remotes[victim].steal.steal_into(&self.local) {
                self.count_steal(before);
                return Some(task);
            }
        }
        if let Some(task) = self.take_inject_batch(BatchCap::Dry) {
            return Some(task);
        }
        // Last pass: a LIFO slot whose owner has not got to it.
        for victim in victims {
            if let Some(task) = remotes[victim].take_lifo() {
                let counters = self.counters();
                counters.steals.incr();
                counters.stolen_tasks.incr();
                return Some(task);
            }
        }
        self.take_lane(Lane::Batch)
    }

    /// A short spin before sleeping: work that arrives within a few
    /// microseconds is taken without a park/unpark pair.
    ///
    /// Speed only: with no spin the worker goes straight to the sleep
    /// protocol, which alone keeps work from being stranded.
    pub(super) fn spin_for_work(&self) -> Option<Task> {
        // One spinner is enough to catch the next task; more would only
        // take turns on the cores with the thread producing the work.
        if !self.searching.get() || self.shared.idle.counts().searching > 1 {
            return None;
        }
        #[cfg(not(loom))]
        {
            use spin_exp::*;
            let m = mode();
            match m {
                MODE_NONE => return None,
                MODE_RUNNING => {
                    if self.shared.idle.counts().unparked < 2 {
                        SKIP.fetch_add(1, Relaxed);
                        return None;
                    }
                }
                MODE_ADAPTIVE => {
                    let misses = self.spin_misses.get();
                    if misses >= param_n() {
                        let skips = self.spin_skips.get() + 1;
                        if skips < param_k() {
                            self.spin_skips.set(skips);
                            SKIP.fetch_add(1, Relaxed);
                            return None;
                        }
                        self.spin_skips.set(0);
                    }
                }
                _ => {}
            }
            let found = if m == MODE_PAUSE {
                let start = std::time::Instant::now();
                let budget = std::time::Duration::from_nanos(param_ns());
                let mut round = 0;
                loop {
                    for _ in 0..32 {
                        std::hint::spin_loop();
                    }
                    if let Some(task) = self.search() {
                        break Some((task, round.min(3)));
                    }
                    round += 1;
                    if start.elapsed() >= budget {
                        break None;
                    }
                }
            } else {
                let mut found = None;
                for round in 0..SPIN_ROUNDS {
                    std::thread::yield_now();
                    if let Some(task) = self.search() {
                        found = Some((task, round as usize));
                        break;
                    }
                }
                found
            };
            return match found {
                Some((task, round)) => {
                    FOUND[round].fetch_add(1, Relaxed);
                    self.spin_misses.set(0);
                    Some(task)
                }
                None => {
                    MISS.fetch_add(1, Relaxed);
                    self.spin_misses
                        .set(self.spin_misses.get().saturating_add(1));
                    None
                }
            };
        }
        #[cfg(loom)]
        {
            for _ in 0..SPIN_ROUNDS {
                // Yield rather than burn the core: on an oversubscribed machine
                // the thread producing the work may be waiting for it.
                std::thread::yield_now();
                if let Some(task) = self.search() {
                    return Some(task);
                }
            }
            None
        }
    }

    pub(super) fn stop_searching(&self) {
        self.searching.set(false);
        if self.shared.idle.transition_worker_from_searching() == LeftSearching::WasLast {
            // Rule 4: more work may be waiting; keep one worker looking.
            self.shared.notify_parked(Some(self.index));
        }
    }
}

/// EXPERIMENT (issue 38): spin variants chosen by `WEFT_SPIN`, counters
/// written to `WEFT_SPIN_STATS` every second.
#[cfg(not(loom))]
#[allow(missing_docs, clippy::missing_docs_in_private_items)]
pub(crate) mod spin_exp {
    use std::sync::OnceLock;
    use std::sync::atomic::AtomicU64;
    pub(crate) use std::sync::atomic::Ordering::Relaxed;
    pub(crate) const MODE_BASE: u8 = 0;
    pub(crate) const MODE_NONE: u8 = 1;
    pub(crate) const MODE_ADAPTIVE: u8 = 2;
    pub(crate) const MODE_PAUSE: u8 = 3;
    pub(crate) const MODE_RUNNING: u8 = 4;
    pub(crate) static FOUND: [AtomicU64; 4] = [const { AtomicU64::new(0) }; 4];
    pub(crate) static MISS: AtomicU64 = AtomicU64::new(0);
    pub(crate) static SKIP: AtomicU64 = AtomicU64::new(0);
    struct Params {
        mode: u8,
        n: u32,
        k: u32,
        ns: u64,
    }
    fn params() -> &'static Params {
        static P: OnceLock<Params> = OnceLock::new();
        P.get_or_init(|| {
            let var = |k: &str| std::env::var(k).ok();
            let mode = match var("WEFT_SPIN").as_deref() {
                None | Some("base") => MODE_BASE,
                Some("none") => MODE_NONE,
                Some("adaptive") => MODE_ADAPTIVE,
                Some("pause") => MODE_PAUSE,
                Some("running") => MODE_RUNNING,
                Some(other) => panic!("WEFT_SPIN={other}"),
            };
            let num = |k: &str, d: u64| var(k).map_or(d, |v| v.parse().expect(k));
            if let Some(path) = var("WEFT_SPIN_STATS") {
                std::thread::spawn(move || {
                    loop {
                        std::thread::sleep(std::time::Duration::from_secs(1));
                        let f: Vec<u64> = FOUND.iter().map(|c| c.load(Relaxed)).collect();
                        let _ = std::fs::write(
                            &path,
                            format!(
                                "found {:?} total {} miss {} skip {}\n",
                                f,
                                f.iter().sum::<u64>(),
                                MISS.load(Relaxed),
                                SKIP.load(Relaxed)
                            ),
                        );
                    }
                });
            }
            Params {
                mode,
                n: num("WEFT_SPIN_N", 4) as u32,
                k: num("WEFT_SPIN_K", 8) as u32,
                ns: num("WEFT_SPIN_NS", 5000),
            }
        })
    }
    #[inline]
    pub(crate) fn mode() -> u8 {
        params().mode
    }
    pub(crate) fn param_n() -> u32 {
        params().n
    }
    pub(crate) fn param_k() -> u32 {
        params().k
    }
    pub(crate) fn param_ns() -> u64 {
        params().ns
    }
}
