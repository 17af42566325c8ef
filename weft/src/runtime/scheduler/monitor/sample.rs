//! The monitor thread's loop: sample every slot's [`PollWatch`], decide,
//! act; then sleep a sample period (or, with every worker parked, until
//! one wakes).
//!
//! # Rules
//!
//! Each rule, what it is for, and what pins it (a test in `weft/tests`,
//! a loom model, or only a lane of `weft-bench` where the rule is about
//! time):
//!
//! - A slot showing the same odd sequence number as at its last sample is
//!   inside one poll. Past `slow_poll_threshold` the poll is marked slow
//!   (fairness: its task moves to the `Batch` lane; `lanes.rs`); past
//!   `stall_threshold` it is a stall, counted and reported once to
//!   `on_stall`, outside the monitor's lock (correctness: the hook is user
//!   code; `metrics.rs`, `lanes.rs`).
//! - A stalled poll that holds up waiting work has its thread demoted
//!   (fairness; `lanes.rs`'s `only_the_stalled_polls_thread_is_lowered`).
//! - Waiting work with fewer threads of normal priority moving it than
//!   [`normal_threads_wanted`] gets one: a parked worker woken (a backstop
//!   of `idle.rs`'s wake rules), else a spare slot lent (correctness: no
//!   work waits for ever behind stuck polls; `lanes.rs`, and the loom
//!   models in `loom_tests.rs`). A demoted thread is never counted as one
//!   that moves work: it runs no task after its poll (speed: the mixed
//!   lane, [measured](../../../../../docs/experiments.md#handoffs)).
//! - Work that has waited [`STEP_ASIDE_AFTER`] samples with no thread of
//!   normal priority beginning or ending a poll: each demoted thread still
//!   in its stalled poll is asked to step aside (speed, the mixed lane;
//!   `lanes.rs`'s step-aside tests pin "never" and "always").
//! - A thread inside one poll for a sample period gets a long time slice
//!   until the poll returns (`sys::lengthen_slice`; speed, the mixed lane;
//!   `lanes.rs`'s `a_long_poll_has_a_long_slice_until_it_returns`).
//! - A stalled poll whose thread is asleep in the kernel (its CPU clock
//!   ran under half the wall time since the last sample and its state is
//!   asleep: a synchronous sleep, a blocking read; not a thread that
//!   computes or waits for a core, however little CPU it gets) holds no
//!   core: the waiting work may have one
//!   more thread of normal priority for it, and the thread is never asked
//!   to step aside (a signal would only lengthen its system call). Speed:
//!   the stall lane's shares with one of two workers blocked.
//! - While every awake thread is inside a stalled poll, the monitor
//!   delivers readiness and fires every wheel's due timers itself
//!   (correctness: no timer or socket waits for a poll to end;
//!   `tests/time.rs`'s `timers_fire_while_every_worker_is_stuck`,
//!   `tests/net.rs`).
//! - The period is `stall_threshold / 4` while a poll may be stalling,
//!   doubling up to [`MAX_PERIOD`] while none lasts a sample (speed: the
//!   scheduler lanes' CPU column; Go's sysmon backs off the same way).
//!
//! [`PollWatch`]: super::PollWatch

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use crate::util::locks::MutexGuard;
use crate::util::loom::sync::Arc;

use super::{MAX_PERIOD, Monitor, STEP_ASIDE_AFTER, StallInfo, State};
use crate::runtime::scheduler::Shared;

/// What the monitor remembers of a slot between two samples.
#[derive(Clone, Copy, Default)]
struct Seen {
    seq: u64,
    /// When the monitor first saw `seq`.
    since: Option<Instant>,
    slow_marked: bool,
    stall_reported: bool,
    /// Whether the monitor asked for a longer slice for this poll's thread
    /// (asked once: a kernel that refuses refuses every time).
    slice_asked: bool,
    /// The thread whose slice the monitor lengthened for this poll (0:
    /// none), given the short one back when the poll is over.
    lengthened: i32,
    /// The poll's thread's CPU time (ns) and when it was read, at the last
    /// sample of this stalled poll.
    cpu: Option<(u64, Instant)>,
    /// At the last sample the stalled poll's thread had used under half
    /// the wall time since the sample before and was asleep in the kernel
    /// (a synchronous sleep or read): it holds no core. A thread that
    /// computes, or waits for a core, does.
    off_cpu: bool,
    /// The thread's state at the last read of it (asleep in the kernel),
    /// and how many samples in a row it ran little since that read began.
    asleep: bool,
    asleep_checked: u32,
}

/// Samples between two reads of a stalled poll's thread state while its
/// CPU clock stands (a read of `/proc` costs the monitor more than the
/// rest of a sample).
const RECHECK_ASLEEP: u32 = 16;

/// What one pass over the slots found.
#[derive(Default)]
struct Sample {
    /// Some slot is inside a poll that has lasted a sample period.
    suspicious: bool,
    /// Slots inside one poll for longer than `stall_threshold`.
    stalled_slots: usize,
    /// Of those, the ones whose thread holds a core (running, or waiting
    /// for one; not asleep in the kernel).
    stalled_on_cpu: usize,
    /// Threads of normal priority that move waiting work (not stalled, not
    /// demoted).
    free_threads: usize,
    /// Demoted threads still inside their poll.
    demoted_threads: usize,
    /// A thread of normal priority began or ended a poll since the last
    /// sample.
    progressed: bool,
}

impl Sample {
    /// Every awake thread is inside a stalled poll: none reaches its
    /// periodic look at the reactor soon, and no worker waits in the
    /// poller (a parked keeper would; the others are parked). Readiness
    /// would wait for a stalled poll to end, and the tasks it wakes would
    /// be in no queue for [`Sampler::act`] to see.
    fn every_awake_thread_stalled(&self) -> bool {
        self.stalled_slots > 0 && self.free_threads == 0
    }
}

/// The monitor thread's memory from one sample to the next.
struct Sampler<'a> {
    shared: &'a Arc<Shared>,
    seen: Vec<Seen>,
    base_period: Duration,
    period: Duration,
    /// Whether demoted threads can be asked to step aside (the signal
    /// handler is installed).
    step_aside: bool,
    /// Samples in a row in which work waited and no normal thread moved.
    no_progress: u32,
    /// Stalls to report to `on_stall`, outside the monitor's lock.
    new_stalls: Vec<StallInfo>,
    /// Resting (see [`Sampler::may_rest`]): the workers awake at the last
    /// sample; the monitor's next sleep ends early when one more wakes.
    resting: Option<usize>,
}

/// The monitor thread's loop; returns at shutdown.
pub(crate) fn run_monitor(shared: &Arc<Shared>) {
    let _counted = shared.threads.count(crate::metrics::ThreadKind::Monitor);
    let monitor = &shared.monitor;
    let mut sampler = Sampler::new(shared);
    let mut state = monitor.lock();
    loop {
        if state.shutdown {
            return;
        }
        monitor.take_handed_back(shared, &mut state);
        if !state.orphans.is_empty() {
            monitor.find_threads(shared, &mut state);
        }
        // A held spare slot counts as busy: its spare runs tasks without
        // joining the idle protocol. (Without it, the monitor sampled an
        // idle runtime every `MAX_PERIOD`, which `idle_cpu.rs` cannot see.)
        let nobody_busy = shared.idle.counts().unparked == 0 && !state.held.contains(&true);
        if nobody_busy {
            state = monitor.sleep_until_a_worker_wakes(shared, state);
            sampler.period = sampler.base_period;
            continue;
        }
        state = match sampler.resting {
            Some(unparked) => {
                monitor.rest_until_a_worker_wakes(shared, state, unparked, sampler.period)
            }
            None => {
                monitor
                    .wake_monitor
                    .wait_timeout(state, sampler.period)
                    .unwrap_or_else(|e| e.into_inner())
                    .0
            }
        };
        if state.shutdown {
            return;
        }
        let sample = sampler.sample(&state);
        let unwatched = sample.every_awake_thread_stalled();
        if !sampler.new_stalls.is_empty() || unwatched {
            // The hook and the wakers readiness calls are user code: never
            // under the monitor's lock.
            drop(state);
            sampler.report_stalls();
            if unwatched {
                sampler.deliver_io();
                sampler.fire_timers();
            }
            state = monitor.lock();
        }
        sampler.act(&sample, &mut state);
    }
}

impl<'a> Sampler<'a> {
    fn new(shared: &'a Arc<Shared>) -> Sampler<'a> {
        let config = &shared.monitor.config;
        let base_period = (config.stall_threshold / 4).max(Duration::from_micros(50));
        Sampler {
            shared,
            seen: vec![Seen::default(); shared.remotes.len()],
            base_period,
            period: base_period,
            step_aside: config.demote_threads && crate::runtime::sys::install_step_aside(),
            no_progress: 0,
            new_stalls: Vec::new(),
            resting: None,
        }
    }

    /// One pass over every slot (workers and spare slots).
    fn sample(&mut self, state: &State) -> Sample {
        let now = Instant::now();
        let mut sample = Sample::default();
        for slot in 0..self.shared.remotes.len() {
            self.sample_slot(slot, state, now, &mut sample);
        }
        sample
    }

    fn sample_slot(&mut self, slot: usize, state: &State, now: Instant, sample: &mut Sample) {
        let monitor = &self.shared.monitor;
        let watch = &self.shared.remotes[slot].watch;
        let awake = moves_work(self.shared, slot, state);
        let seq = watch.seq();
        // Inside its poll: a slot given back keeps its flag until its next
        // thread attaches, with no thread of its own.
        sample.demoted_threads += usize::from(watch.is_thread_demoted() && seq % 2 == 1);
        let last = &mut self.seen[slot];
        if seq != last.seq || last.since.is_none() {
            // A poll ended: its thread gets the short slice back, if it
            // still runs this slot and is not demoted (a demoted thread
            // ends; a spare that gave the slot back restores its own).
            if last.lengthened != 0 {
                watch.with_thread(|tid| {
                    if tid == last.lengthened && !watch.is_thread_demoted() {
                        crate::runtime::sys::restore_short_slice(tid);
                    }
                });
            }
            *last = Seen {
                seq,
                since: Some(now),
                ..Seen::default()
            };
            watch.set_stalled(false);
            sample.free_threads += usize::from(awake);
            sample.progressed |= awake;
            return;
        }
        if seq % 2 == 0 {
            // Not inside a poll (searching, parked, or between polls).
            watch.set_stalled(false);
            sample.free_threads += usize::from(awake);
            return;
        }
        sample.suspicious = true;
        if !last.slice_asked && self.shared.config.time_slices {
            // In one poll for a sample period: a thread woken on its core
            // should go first (`sys::lengthen_slice` says why).
            last.slice_asked = true;
            if let Some(Some(tid)) =
                watch.with_thread(|tid| crate::runtime::sys::lengthen_slice(tid).then_some(tid))
            {
                last.lengthened = tid;
            }
        }
        let stuck_for = now - last.since.unwrap_or(now);
        if stuck_for >= monitor.config.slow_poll_threshold && !last.slow_marked {
            last.slow_marked = true;
            watch.slow_seq.store(seq, Ordering::Relaxed);
        }
        if stuck_for < monitor.config.stall_threshold {
            sample.free_threads += 1; // a short poll: that thread is moving
            return;
        }
        sample.stalled_slots += 1;
        watch.set_stalled(true);
        last.off_cpu = Self::holds_no_core(watch, last, now);
        sample.stalled_on_cpu += usize::from(!last.off_cpu);
        if !last.stall_reported {
            last.stall_reported = true;
            monitor.stalls.fetch_add(1, Ordering::Relaxed);
            if monitor.config.on_stall.is_some() {
                if let Some((task_name, spawned_at)) = watch.label(seq) {
                    self.new_stalls.push(StallInfo {
                        worker: slot,
                        task_name,
                        spawned_at,
                        stuck_for,
                    });
                }
            }
        }
    }

    /// Whether a stalled poll's thread holds no core: its CPU clock ran
    /// under half the wall time since the last sample (cheap, read first)
    /// and it is asleep in the kernel now. Either alone misleads: threads
    /// sharing an oversubscribed core each run under half the time yet
    /// hold one, and a computing thread can be caught in a short system
    /// call. Needs two samples of the same poll.
    fn holds_no_core(watch: &super::PollWatch, last: &mut Seen, now: Instant) -> bool {
        let cpu = watch
            .with_thread(crate::runtime::sys::thread_cpu_ns)
            .flatten()
            .map(|cpu_ns| (cpu_ns, now));
        let ran_little = match (cpu, last.cpu) {
            (Some((cpu_now, _)), Some((cpu_before, at))) => {
                let wall = now.saturating_duration_since(at).as_nanos() as u64;
                cpu_now.saturating_sub(cpu_before) < wall / 2
            }
            _ => false,
        };
        last.cpu = cpu;
        if !ran_little {
            last.asleep_checked = 0;
            return false;
        }
        // The kernel's word is a file read: asked when the thread first
        // runs little, then every `RECHECK_ASLEEP` samples while it does.
        if last.asleep_checked % RECHECK_ASLEEP == 0 {
            last.asleep = watch
                .with_thread(crate::runtime::sys::thread_is_blocked)
                .flatten()
                .unwrap_or(false);
        }
        last.asleep_checked = last.asleep_checked.wrapping_add(1);
        last.asleep
    }

    /// Delivers the readiness waiting in the reactor, without blocking
    /// (a poller another thread holds is being served): the tasks it wakes
    /// go to the inject queue, where [`Sampler::act`] sees them as waiting
    /// work and hands them to a spare thread. Without the monitor's lock:
    /// waking calls wakers, which are user code.
    fn deliver_io(&self) {
        #[cfg(not(loom))]
        {
            let woken = self.shared.io.poll_ready_now();
            if woken > 0 {
                self.shared
                    .monitor
                    .io_deliveries
                    .fetch_add(woken as u64, Ordering::Relaxed);
            }
        }
    }

    /// Fires the due timers of every wheel, skipping a wheel whose lock is
    /// held (its holder is serving it): with every awake thread inside a
    /// stalled poll no worker reaches a periodic check, and none sleeps as
    /// the keeper (`runtime/time/driver.rs`), so without this no timer fires until
    /// a poll returns. The monitor is no worker: the tasks the timers wake
    /// go to the inject queue, where [`Sampler::act`] sees them as waiting
    /// work and lends them a spare thread, so they run on a thread that is
    /// not stuck. A timer is late by at most a sample period (the period
    /// stays at its base while a poll is stalled). Without the monitor's
    /// lock: waking calls wakers, which are user code. Correctness of "no
    /// timer waits on a stuck poll" with every worker stuck: `tests/time.rs`'s
    /// `timers_fire_while_every_worker_is_stuck` fails without it.
    fn fire_timers(&self) {
        let time = &self.shared.time;
        let now = time.clock.now_ns();
        let mut wakers = Vec::new();
        for wheel in 0..time.num_wheels() {
            if time.is_due(wheel, now) {
                time.fire_due(wheel, now, false, &mut wakers);
            }
        }
        if wakers.is_empty() {
            return;
        }
        self.shared
            .monitor
            .timer_fires
            .fetch_add(wakers.len() as u64, Ordering::Relaxed);
        for waker in wakers {
            let _ = crate::util::locks::call_user(
                "a waker's wake (timer fired by the monitor)",
                move || waker.wake(),
            );
        }
    }

    /// Calls `on_stall` for each stall found by the last sample (a hook
    /// that panics is contained).
    fn report_stalls(&mut self) {
        let hook = self.shared.monitor.config.on_stall.as_ref();
        for info in self.new_stalls.drain(..) {
            if let Some(hook) = hook {
                let _ = crate::util::locks::call_user("on_stall", || hook(&info));
            }
        }
    }

    /// Demotes, asks to step aside, wakes or lends threads for what the
    /// sample found, and sets the next sample period.
    fn act(&mut self, sample: &Sample, state: &mut MutexGuard<'_, State>) {
        let shared = self.shared;
        let monitor = &shared.monitor;
        let num_workers = shared.config.num_workers;
        let waiting = sample.stalled_slots > 0 && shared.has_waiting_work();
        if waiting && monitor.config.demote_threads {
            // Each stalled thread holds up waiting work: it runs on, at a
            // priority that lets the threads running that work go first.
            for remote in shared.remotes.iter() {
                if remote.watch.is_stalled() {
                    monitor.demote_thread(&remote.watch);
                }
            }
        }
        self.no_progress = if waiting && !sample.progressed {
            self.no_progress.saturating_add(1)
        } else {
            0
        };
        if self.step_aside && self.no_progress >= STEP_ASIDE_AFTER {
            // The threads meant to run the waiting work wait for a core
            // behind a long poll (`sys::install_step_aside` says why
            // lowering that poll's thread is not enough).
            for (slot, remote) in shared.remotes.iter().enumerate() {
                let watch = &remote.watch;
                // A thread blocked in the kernel holds no core to give.
                if watch.is_stalled()
                    && !self.seen[slot].off_cpu
                    && watch.is_thread_demoted()
                    && watch.with_thread(crate::runtime::sys::ask_to_step_aside) == Some(true)
                {
                    monitor.step_asides.fetch_add(1, Ordering::Relaxed);
                }
            }
        }
        let any_stalled = sample.stalled_slots > 0;
        if shared.any_stalled.load(Ordering::Relaxed) != any_stalled {
            shared.any_stalled.store(any_stalled, Ordering::Relaxed);
        }
        // A stalled thread blocked in the kernel holds no core: the
        // waiting work may have it.
        let wanted = normal_threads_wanted(
            num_workers,
            sample.demoted_threads,
            shared.config.batch_share,
        )
        .max(num_workers.saturating_sub(sample.stalled_on_cpu));
        if waiting && sample.free_threads < wanted {
            if shared.idle.counts().unparked < num_workers {
                // A worker sleeps while work waits behind a stuck one: the
                // wake rules should have woken it; wake it now (backstop).
                shared.notify_parked(None);
            } else {
                monitor.hand_off(shared, state);
            }
        }
        self.resting = self.may_rest(sample, waiting, state);
        self.period = if self.resting.is_none() && (sample.suspicious || !state.orphans.is_empty())
        {
            self.base_period
        } else {
            (self.period * 2).min(MAX_PERIOD.max(self.base_period))
        };
    }

    /// Whether nothing can change without a worker waking, so the monitor
    /// may back off (doubling its period up to [`MAX_PERIOD`]) and sleep
    /// until a worker wakes: every awake thread is inside a stalled poll
    /// already seen, no work waits, no core waits for a thread, at least
    /// one worker is parked (new work wakes it, and its wake wakes the
    /// monitor), no socket depends on the monitor's look at the reactor,
    /// and no demoted thread will hand anything back (none is in a poll,
    /// or this process may raise priorities, so none does). Returns the
    /// workers awake now.
    fn may_rest(&self, sample: &Sample, waiting: bool, state: &State) -> Option<usize> {
        let shared = self.shared;
        let unparked = shared.idle.counts().unparked;
        let rest = sample.every_awake_thread_stalled()
            && !waiting
            && state.orphans.is_empty()
            && unparked < shared.config.num_workers
            && !self.reactor_has_sources()
            && (sample.demoted_threads == 0
                || shared.monitor.restores_work.load(Ordering::Relaxed));
        rest.then_some(unparked)
    }

    /// Whether any I/O source is registered (the monitor may be the only
    /// thread to look at the reactor: `Sample::every_awake_thread_stalled`).
    fn reactor_has_sources(&self) -> bool {
        #[cfg(not(loom))]
        {
            self.shared.io.has_sources()
        }
        #[cfg(loom)]
        false
    }
}

/// Whether slot `slot`'s thread can move waiting work: awake, and not
/// demoted (a demoted thread runs no task after its current poll). A
/// worker slot whose core is orphaned has no thread; a spare slot moves
/// work only while a spare holds it.
fn moves_work(shared: &Shared, slot: usize, state: &State) -> bool {
    let num_workers = shared.config.num_workers;
    if shared.remotes[slot].watch.is_thread_demoted() {
        return false;
    }
    if slot < num_workers {
        !shared.idle.is_parked(slot) && !state.orphans.iter().any(|core| core.index == slot)
    } else {
        state.held[slot - num_workers]
    }
}

impl Monitor {
    /// Demotes the thread inside a stalled poll (`sys::demote_thread`), so
    /// the threads running the work it holds up get the cores first; the
    /// flag goes up first, so the thread, checking it after its poll,
    /// always learns it was (or is about to be) demoted and gives its slot
    /// to a normal thread.
    fn demote_thread(&self, watch: &super::PollWatch) {
        let lower = |tid| {
            crate::runtime::sys::demote_thread(tid)
                .map(|nice| watch.demoted_from.store(nice, Ordering::Relaxed))
                .is_ok()
        };
        if watch.demote(lower) {
            self.threads_demoted.fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// How many threads of normal priority should run the work that waits
/// while `demoted` threads sit in long polls: one at least, and more, up to
/// one per worker (a core each), while the demoted threads' kernel weight
/// still gives them `batch_share` of the CPU beside those threads
/// (fairness: one normal thread let the demoted ones take every other core
/// whole, [measured](../../../../../docs/experiments.md#handoffs)).
fn normal_threads_wanted(workers: usize, demoted: usize, batch_share: f64) -> usize {
    // The kernel's weights of nice 10 and nice 0 (`sched_prio_to_weight`).
    const DEMOTED_WEIGHT: f64 = 110.0 / 1024.0;
    // demoted·w / (n + demoted·w) >= share  <=>  n <= demoted·w·(1 - share) / share
    let fits = demoted as f64 * DEMOTED_WEIGHT * (1.0 - batch_share) / batch_share;
    (fits as usize).clamp(1, workers.max(1))
}

/// What the monitor does when it finds `slot` stalled, as far as the
/// threads that take its work see it: the slot's flag and the runtime-wide
/// hint (the loom model of the handoff drives this directly).
#[cfg(all(test, loom))]
pub(crate) fn mark_stalled(shared: &Shared, slot: usize) {
    shared.remotes[slot].watch.set_stalled(true);
    shared.any_stalled.store(true, Ordering::Relaxed);
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::normal_threads_wanted;

    #[test]
    fn a_second_normal_thread_only_where_the_demoted_keep_their_share() {
        // 8 demoted threads beside 2 normal ones keep 880 / 2928 = 30% of
        // the CPU by weight: over the default share of 25%.
        assert_eq!(normal_threads_wanted(2, 8, 0.25), 2);
        // 6 would keep 24%: one normal thread only.
        assert_eq!(normal_threads_wanted(2, 6, 0.25), 1);
        assert_eq!(normal_threads_wanted(2, 2, 0.25), 1);
        // Always one, even with nothing demoted, and never more than the
        // workers (cores) however many are demoted.
        assert_eq!(normal_threads_wanted(2, 0, 0.25), 1);
        assert_eq!(normal_threads_wanted(4, 100, 0.25), 4);
        // A smaller share lets more normal threads in sooner.
        assert_eq!(normal_threads_wanted(2, 2, 0.05), 2);
        assert_eq!(normal_threads_wanted(4, 2, 0.05), 4);
    }
}
