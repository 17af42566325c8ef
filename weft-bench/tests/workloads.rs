//! Every workload completes on every runtime, and its set-up is torn down
//! (a busy load that did not stop would hang the drop).

use weft_bench::common::runtimes::{BenchRuntime, Smol, Tokio, Tuning, Weft};
use weft_bench::suites::scheduler::workloads::Workload;

fn run_every_workload<R: BenchRuntime>() {
    let rt = R::build(2, Tuning::default()).expect("runtime builds");
    for workload in Workload::ALL {
        let mut instance = workload.instantiate(&rt);
        instance.iterate();
        instance.iterate();
    }
}

#[test]
fn weft_runs_every_workload() {
    run_every_workload::<Weft>();
}

#[test]
fn weft_runs_every_workload_with_tuning() {
    let tuning = Tuning {
        inject_batch_cap: Some(2),
        lifo_slot: false,
        stall_monitor: false,
        demote_slow_tasks: false,
    };
    let rt = Weft::build(2, tuning).expect("runtime builds");
    let mut instance = Workload::SpawnManyRemoteBusy2.instantiate(&rt);
    instance.iterate();
}

#[test]
fn tokio_runs_every_workload() {
    run_every_workload::<Tokio>();
}

#[test]
fn smol_runs_every_workload() {
    run_every_workload::<Smol>();
}

#[test]
fn weft_reports_counters() {
    let rt = Weft::build(2, Tuning::default()).expect("runtime builds");
    let counters = rt.counters().expect("weft has counters");
    let names: Vec<&str> = counters.iter().map(|c| c.0).collect();
    for name in ["polls", "wake_requests", "parks", "spawned_remote"] {
        assert!(names.contains(&name), "missing {name} in {names:?}");
    }
    assert!(
        Tokio::build(2, Tuning::default())
            .unwrap()
            .counters()
            .is_none()
    );
}
