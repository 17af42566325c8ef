//! The service suite's soak (`weft-bench service --soak SECONDS`, not in
//! the default run; issue 37, item 6): the seed-004 load for that long on
//! each runtime's server, with the server process sampled every 10 s —
//! its resident memory (`/proc/PID/status`), threads (`/proc/PID/task`),
//! open descriptors (`/proc/PID/fd`), on weft its threads alive by kind
//! (from its `/metrics`: started less ended), the connections the generator has
//! open to it, the point reads and reports it answered since the last
//! sample and their p99, its CPU, and the generator's errors so far by
//! kind — and a verdict: at the end, RSS, threads and the server's own
//! descriptors each ≤ 1.1× their value at the first sample at or after
//! the first minute, and no error.
//!
//! The server's own descriptors are its open ones less the generator's
//! connections (each holds one socket on the server): the listener, the
//! database's files and the runtime's (epoll, eventfd, timers), plus any
//! connection the server kept after its client closed it. The
//! connections themselves are the client's choice (its pool, bounded:
//! [`super::load::OPEN_LOOP_CONNECTIONS`]) and are shown beside.
//!
//! Samples are timed from the start of the load (warm-up included): the
//! first at 0 s (before any request), then every `interval`, and the last
//! when the window closes (the load still running).

use std::collections::BTreeMap;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::common::table::{self, Column, Table};

/// How far the end may grow over the reference: 1.1×.
pub const MAX_GROWTH: f64 = 1.1;

/// How a soak runs.
#[derive(Debug, Clone, PartialEq)]
pub struct SoakConfig {
    /// The load's length (the measured window).
    pub duration: Duration,
    /// Time between samples: 10 s.
    pub interval: Duration,
    /// The reference sample is the first at or after this: 60 s. Only
    /// tests shorten it (the smoke test's soak lasts seconds).
    pub reference_after: Duration,
    /// A request not answered within this counts as a timeout error (and
    /// its connection is dropped): 5 s.
    pub request_timeout: Duration,
}

impl SoakConfig {
    /// A soak of `duration` with the sampling and reference.
    pub fn new(duration: Duration) -> SoakConfig {
        SoakConfig {
            duration,
            interval: Duration::from_secs(10),
            reference_after: Duration::from_secs(60),
            request_timeout: Duration::from_secs(5),
        }
    }
}

/// The generator's failed requests, by kind.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Errors {
    /// Answers that were not `200` with the expected body.
    pub status: u64,
    /// Connections refused or broken, requests or bodies that failed.
    pub io: u64,
    /// Requests not answered within the request timeout.
    pub timeout: u64,
}

impl Errors {
    pub fn total(&self) -> u64 {
        self.status + self.io + self.timeout
    }
}

/// What a failed request ran into.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    Status,
    Io,
    Timeout,
}

impl Errors {
    /// Counts one failure of `kind`.
    pub fn count(&mut self, kind: ErrorKind) {
        match kind {
            ErrorKind::Status => self.status += 1,
            ErrorKind::Io => self.io += 1,
            ErrorKind::Timeout => self.timeout += 1,
        }
    }
}

/// The server process's resources at one moment, from `/proc`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Resources {
    /// Resident memory (`VmRSS`), KiB.
    pub rss_kib: u64,
    /// Threads (entries of `/proc/PID/task`).
    pub threads: u64,
    /// Open file descriptors (entries of `/proc/PID/fd`).
    pub fds: u64,
}

impl Resources {
    /// Process `pid`'s resources; `None` if it is gone or `/proc` cannot
    /// be read.
    pub fn of(pid: u32) -> Option<Resources> {
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
        let rss_kib = status.lines().find_map(|line| {
            let kib = line.strip_prefix("VmRSS:")?.trim().strip_suffix("kB")?;
            kib.trim().parse().ok()
        })?;
        let entries = |dir: &str| -> Option<u64> {
            Some(
                std::fs::read_dir(format!("/proc/{pid}/{dir}"))
                    .ok()?
                    .count() as u64,
            )
        };
        Some(Resources {
            rss_kib,
            threads: entries("task")?,
            fds: entries("fd")?,
        })
    }
}

/// One sample of a soak.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Sample {
    /// Seconds since the load started.
    pub t_s: f64,
    #[serde(flatten)]
    pub resources: Resources,
    /// The runtime's threads by kind (`worker`, `monitor`, `spare`,
    /// `blocking`), from weft's `/metrics`; `None` on tokio (no such
    /// figures) or when `/metrics` did not answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threads_by_kind: Option<BTreeMap<String, KindThreads>>,
    /// The connections the generator had open to the server.
    #[serde(default)]
    pub client_connections: u64,
    /// Point reads (`/users`) and `/report`s answered since the last sample.
    pub users: u64,
    pub reports: u64,
    /// The p99 of those point reads' latencies (from arrival), ms.
    pub users_p99_ms: Option<f64>,
    /// The server's CPU since the last sample, ms per s.
    pub cpu_ms_per_s: f64,
    /// The generator's errors since the load started.
    pub errors: Errors,
}

impl Sample {
    /// The server's descriptors less the generator's connections.
    pub fn own_fds(&self) -> u64 {
        self.resources.fds.saturating_sub(self.client_connections)
    }
}

/// One kind of the runtime's threads at a sample.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct KindThreads {
    /// Started less ended.
    pub alive: u64,
    /// Started since the runtime started (so a pool that keeps its size
    /// by ending and starting threads shows here, not in `alive`).
    pub started: u64,
}

/// Threads by kind from weft's Prometheus text
/// (`weft_threads_started_total` and `weft_threads_ended_total`). `None`
/// when the text has no started counts (not weft's).
pub fn threads_by_kind(prometheus: &str) -> Option<BTreeMap<String, KindThreads>> {
    let mut started = BTreeMap::new();
    let mut ended = BTreeMap::<String, u64>::new();
    for line in prometheus.lines() {
        let Some((series, value)) = line.split_once(' ') else {
            continue;
        };
        let Ok(value) = value.trim().parse::<u64>() else {
            continue;
        };
        let counted = |name: &str| {
            let kind = series.strip_prefix(name)?.strip_prefix("{kind=\"")?;
            Some(kind.strip_suffix("\"}")?.to_owned())
        };
        if let Some(kind) = counted("weft_threads_started_total") {
            started.insert(kind, value);
        } else if let Some(kind) = counted("weft_threads_ended_total") {
            ended.insert(kind, value);
        }
    }
    if started.is_empty() {
        return None;
    }
    Some(
        started
            .into_iter()
            .map(|(kind, started)| {
                let gone = ended.get(&kind).copied().unwrap_or(0);
                let alive = started.saturating_sub(gone);
                (kind, KindThreads { alive, started })
            })
            .collect(),
    )
}

/// The columns of a soak's table: one row per sample.
const SAMPLE_COLUMNS: [Column<Sample>; 12] = [
    ("t s", |s| format!("{:.0}", s.t_s)),
    ("RSS MiB", |s| {
        format!("{:.1}", s.resources.rss_kib as f64 / 1024.0)
    }),
    ("threads", |s| s.resources.threads.to_string()),
    ("alive (started) by kind", |s| {
        s.threads_by_kind.as_ref().map_or("-".to_owned(), |kinds| {
            let kinds: Vec<String> = kinds
                .iter()
                .map(|(kind, n)| format!("{kind} {} ({})", n.alive, n.started))
                .collect();
            kinds.join(", ")
        })
    }),
    ("fds", |s| s.resources.fds.to_string()),
    ("client conns", |s| s.client_connections.to_string()),
    ("own fds", |s| s.own_fds().to_string()),
    ("/users", |s| s.users.to_string()),
    ("p99 ms", |s| {
        s.users_p99_ms.map_or("-".to_owned(), table::ms)
    }),
    ("/report", |s| s.reports.to_string()),
    ("CPU ms/s", |s| format!("{:.0}", s.cpu_ms_per_s)),
    ("errors (status/io/timeout)", |s| {
        let e = &s.errors;
        format!("{} ({}/{}/{})", e.total(), e.status, e.io, e.timeout)
    }),
];

/// A soak's samples and verdict (in a seed-004 run's figures).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Soak {
    /// Time between samples, s.
    pub interval_s: f64,
    /// The reference is the first sample at or after this, s.
    pub reference_after_s: f64,
    pub samples: Vec<Sample>,
    pub verdict: Verdict,
}

/// The end's resources over the reference's, and the errors.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Verdict {
    /// The reference sample's time; `None` if the soak ended first.
    pub reference_t_s: Option<f64>,
    /// The last sample's over the reference's.
    pub rss_ratio: Option<f64>,
    pub threads_ratio: Option<f64>,
    /// Of the server's own descriptors (less the generator's connections).
    pub fds_ratio: Option<f64>,
    /// Errors over the whole soak.
    pub errors: u64,
    /// Every ratio ≤ [`MAX_GROWTH`] and no error; `None` without a
    /// reference.
    pub passed: Option<bool>,
}

impl Soak {
    /// The verdict on the samples `config` took, the reference being the
    /// first at or after its `reference_after`.
    pub fn judge(samples: Vec<Sample>, config: &SoakConfig) -> Soak {
        let after = config.reference_after.as_secs_f64();
        let reference = samples.iter().find(|s| s.t_s >= after);
        let last = samples.last();
        let errors = last.map_or(0, |s| s.errors.total());
        let ratio = |of: fn(&Sample) -> u64| {
            let (first, last) = (of(reference?), of(last?));
            (first > 0).then(|| last as f64 / first as f64)
        };
        let (rss_ratio, threads_ratio, fds_ratio) = (
            ratio(|s| s.resources.rss_kib),
            ratio(|s| s.resources.threads),
            ratio(Sample::own_fds),
        );
        let passed = reference.map(|_| {
            let grew = [rss_ratio, threads_ratio, fds_ratio]
                .iter()
                .any(|r| r.is_none_or(|r| r > MAX_GROWTH));
            !grew && errors == 0
        });
        Soak {
            interval_s: config.interval.as_secs_f64(),
            reference_after_s: after,
            verdict: Verdict {
                reference_t_s: reference.map(|s| s.t_s),
                rss_ratio,
                threads_ratio,
                fds_ratio,
                errors,
                passed,
            },
            samples,
        }
    }

    /// The samples as a table.
    pub fn table(&self) -> Table {
        Table::of(&SAMPLE_COLUMNS, &self.samples)
    }

    /// The verdict on one line.
    pub fn verdict_line(&self) -> String {
        let v = &self.verdict;
        let Some(at) = v.reference_t_s else {
            return format!(
                "not judged: no sample at or after {:.0} s (the soak was shorter); {} errors",
                self.reference_after_s, v.errors
            );
        };
        let ratio = |r: Option<f64>| r.map_or("?".to_owned(), |r| format!("{r:.2}×"));
        format!(
            "{}: at the end over at {at:.0} s: RSS {}, threads {}, own descriptors {} (each \
             ≤ {MAX_GROWTH}×); {} errors",
            if v.passed == Some(true) {
                "PASSED"
            } else {
                "FAILED"
            },
            ratio(v.rss_ratio),
            ratio(v.threads_ratio),
            ratio(v.fds_ratio),
            v.errors
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn soak(reference_after_s: u64) -> SoakConfig {
        SoakConfig {
            reference_after: Duration::from_secs(reference_after_s),
            ..SoakConfig::new(Duration::from_secs(600))
        }
    }

    fn sample(t_s: f64, rss_kib: u64, threads: u64, fds: u64, errors: u64) -> Sample {
        Sample {
            t_s,
            resources: Resources {
                rss_kib,
                threads,
                fds: fds + 3,
            },
            threads_by_kind: None,
            client_connections: 3,
            users: 10_000,
            reports: 200,
            users_p99_ms: Some(2.0),
            cpu_ms_per_s: 900.0,
            errors: Errors {
                timeout: errors,
                ..Errors::default()
            },
        }
    }

    #[test]
    fn the_reference_is_the_first_sample_at_or_after_the_minute() {
        // RSS doubles in the first minute (warming up), then grows 5%.
        let samples = vec![
            sample(0.0, 10_000, 3, 10, 0),
            sample(50.0, 20_000, 5, 40, 0),
            sample(60.0, 20_000, 5, 40, 0),
            sample(70.0, 20_500, 5, 41, 0),
            sample(600.0, 21_000, 5, 40, 0),
        ];
        let judged = Soak::judge(samples.clone(), &soak(60));
        let v = &judged.verdict;
        assert_eq!(v.reference_t_s, Some(60.0));
        assert_eq!((v.rss_ratio, v.threads_ratio), (Some(1.05), Some(1.0)));
        assert_eq!(v.passed, Some(true), "{}", judged.verdict_line());
        assert!(judged.verdict_line().starts_with("PASSED"));
        // Judged from 55 s, the reference is the 60 s sample; from 45 s,
        // the 50 s one.
        let later = Soak::judge(samples.clone(), &soak(55));
        assert_eq!(later.verdict.reference_t_s, Some(60.0));
        let earlier = Soak::judge(samples, &soak(45));
        assert_eq!(earlier.verdict.reference_t_s, Some(50.0));
    }

    #[test]
    fn growth_past_a_tenth_or_any_error_fails() {
        let base = [sample(0.0, 1, 1, 1, 0), sample(60.0, 20_000, 10, 40, 0)];
        let with_end = |end: Sample| {
            let mut samples = base.to_vec();
            samples.push(end);
            Soak::judge(samples, &soak(60)).verdict
        };
        // Exactly 1.1× passes; one more KiB, thread or descriptor fails.
        for (rss, threads, fds, passed) in [
            (22_000, 11, 44, true),
            (22_001, 10, 40, false),
            (20_000, 12, 40, false),
            (20_000, 10, 45, false),
        ] {
            let end = sample(600.0, rss, threads, fds, 0);
            assert_eq!(with_end(end).passed, Some(passed), "{rss} {threads} {fds}");
        }
        let erred = with_end(sample(600.0, 20_000, 10, 40, 1));
        assert_eq!((erred.passed, erred.errors), (Some(false), 1));
    }

    #[test]
    fn the_generators_connections_are_not_the_servers_growth() {
        let mut reference = sample(60.0, 20_000, 10, 40, 0);
        reference.resources.fds += 5;
        reference.client_connections += 5;
        // 95 more descriptors, each a connection the generator holds.
        let mut end = sample(600.0, 20_000, 10, 40, 0);
        end.resources.fds += 100;
        end.client_connections += 100;
        let passed = Soak::judge(vec![reference.clone(), end.clone()], &soak(60));
        assert_eq!(passed.verdict.fds_ratio, Some(1.0));
        assert!(passed.table().render().contains("client conns"));
        // The same descriptors with the generator's connections closed:
        // the server kept them.
        end.client_connections = 3;
        let failed = Soak::judge(vec![reference, end], &soak(60));
        assert_eq!(failed.verdict.passed, Some(false));
    }

    #[test]
    fn a_soak_shorter_than_the_reference_is_not_judged() {
        let judged = Soak::judge(
            vec![sample(0.0, 1, 1, 1, 0), sample(30.0, 9, 9, 9, 0)],
            &soak(60),
        );
        assert_eq!(judged.verdict.passed, None);
        assert!(judged.verdict_line().starts_with("not judged"));
        assert!(judged.table().render().contains("RSS MiB"));
    }

    #[test]
    fn threads_alive_by_kind_are_started_less_ended() {
        let text = "# TYPE weft_threads_started_total counter\n\
                    weft_threads_started_total{kind=\"worker\"} 2\n\
                    weft_threads_started_total{kind=\"blocking\"} 9\n\
                    weft_threads_ended_total{kind=\"worker\"} 0\n\
                    weft_threads_ended_total{kind=\"blocking\"} 5\n\
                    weft_workers 2\n";
        let kinds = threads_by_kind(text).unwrap();
        let alive = |kind: &str| kinds.get(kind).map(|n| (n.alive, n.started));
        assert_eq!(alive("worker"), Some((2, 2)));
        assert_eq!(alive("blocking"), Some((4, 9)));
        assert_eq!(kinds.len(), 2);
        assert_eq!(threads_by_kind("tokio_workers 2\n"), None);
        let mut row = sample(10.0, 1, 6, 1, 0);
        row.threads_by_kind = Some(kinds);
        let judged = Soak::judge(vec![row], &soak(60));
        assert!(
            judged
                .table()
                .render()
                .contains("blocking 4 (9), worker 2 (2)")
        );
    }

    #[test]
    fn this_process_resources_are_read() {
        let r = Resources::of(std::process::id()).unwrap();
        assert!(r.rss_kib > 0 && r.threads >= 1 && r.fds >= 3, "{r:?}");
        assert!(Resources::of(u32::MAX).is_none());
    }
}
