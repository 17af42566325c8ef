//! The metrics snapshot serializes (feature `serde`; the workspace enables
//! it through weft-bench, so `cargo test --workspace` runs this).
#![cfg(feature = "serde")]

mod common;

#[test]
fn snapshot_serializes_to_json_with_every_counter() {
    let rt = common::rt(2, true);
    rt.block_on(rt.spawn(async {})).unwrap();
    let metrics = rt.handle().metrics();
    let json = serde_json::to_value(&metrics).unwrap();
    assert_eq!(json["num_workers"], 2);
    assert_eq!(json["total"]["polls"], metrics.total.polls);
    assert_eq!(json["workers"].as_array().unwrap().len(), 2);
    for (name, value) in metrics.total.fields() {
        assert_eq!(json["total"][name], value, "{name}");
    }
    let buckets = json["total"]["poll_time_histogram"]["buckets"]
        .as_array()
        .unwrap();
    assert_eq!(buckets.len(), weft::metrics::POLL_TIME_BUCKETS);
}
