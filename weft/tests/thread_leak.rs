//! Runtimes leave no threads behind. Its own test binary: the thread count
//! is process-wide, and other tests running in parallel would disturb it.

mod common;

#[test]
fn creating_and_dropping_a_thousand_runtimes_leaks_no_threads() {
    let before = common::thread_count();
    for i in 0..1_000 {
        let rt = common::rt(1 + i % 4, true);
        assert_eq!(rt.block_on(rt.spawn(async move { i })).unwrap(), i);
    }
    let after = common::thread_count();
    assert!(after <= before, "threads before: {before}, after: {after}");
}
