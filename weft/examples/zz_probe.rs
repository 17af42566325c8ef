use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::Relaxed};
use std::sync::{Arc, mpsc};
use std::time::{Duration, Instant};

fn stall() {
    let s = Instant::now();
    while s.elapsed() < Duration::from_micros(10) {
        std::hint::spin_loop();
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

fn main() {
    let workers: usize = std::env::var("W")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(4);
    let cap: usize = std::env::var("CAP")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(32);
    let rt = weft::runtime::Builder::new_multi_thread()
        .worker_threads(workers)
        .inject_batch_cap(cap)
        .build()
        .unwrap();
    let h = rt.handle().clone();
    let only = std::env::var("ONLY").unwrap_or_default();
    let want = |n: &str| only.is_empty() || only == n;
    // spawn_many_local
    if want("local") {
        let (tx, rx) = mpsc::sync_channel(1000);
        let rem = Arc::new(AtomicUsize::new(0));
        let mut t = vec![];
        let m0 = h.metrics();
        for _ in 0..500 {
            rem.store(10_000, Relaxed);
            let s = Instant::now();
            rt.block_on(async {
                for _ in 0..10_000 {
                    let tx = tx.clone();
                    let rem = rem.clone();
                    drop(weft::spawn(async move {
                        if 1 == rem.fetch_sub(1, Relaxed) {
                            tx.send(()).unwrap();
                        }
                    }));
                }
                rx.recv().unwrap();
            });
            t.push(s.elapsed().as_secs_f64() * 1e3);
        }
        let m1 = h.metrics();
        let d = m1.total.delta(&m0.total);
        println!(
            "spawn_many_local {:.3} ms parks/iter {} unparks {} wakes {} remote_wakes {} batches {} steals {}",
            median(t),
            d.parks / 500,
            d.unparks / 500,
            d.wake_requests / 500,
            (m1.remote_wake_requests - m0.remote_wake_requests) / 500,
            d.inject_batches / 500,
            d.steals / 500
        );
    }
    // remote idle
    if want("idle") {
        let mut t = vec![];
        let m0 = h.metrics();
        for _ in 0..50 {
            let s = Instant::now();
            let hs: Vec<_> = (0..10_000).map(|_| h.spawn(async {})).collect();
            rt.block_on(async {
                for x in hs {
                    x.await.unwrap();
                }
            });
            t.push(s.elapsed().as_secs_f64() * 1e3);
        }
        let m1 = h.metrics();
        println!(
            "remote_idle {:.3} ms  delta {:?}",
            median(t),
            m1.total.delta(&m0.total)
        );
    }
    if !only.is_empty() {
        return;
    }
    // busy2
    let flag = Arc::new(AtomicBool::new(true));
    fn iter(flag: Arc<AtomicBool>) {
        drop(weft::spawn(async move {
            if flag.load(Relaxed) {
                stall();
                iter(flag);
            }
        }));
    }
    for _ in 0..workers {
        let flag = flag.clone();
        drop(rt.spawn(async move { iter(flag) }));
    }
    let mut t = vec![];
    let mut ts = vec![];
    let m0 = h.metrics();
    for _ in 0..50 {
        let s = Instant::now();
        let hs: Vec<_> = (0..1_000).map(|_| h.spawn(async {})).collect();
        ts.push(s.elapsed().as_secs_f64() * 1e3);
        rt.block_on(async {
            for x in hs {
                x.await.unwrap();
            }
        });
        t.push(s.elapsed().as_secs_f64() * 1e3);
    }
    let m1 = h.metrics();
    flag.store(false, Relaxed);
    println!("busy2 spawn phase {:.3} ms", median(ts));
    println!(
        "busy2 {:.3} ms  delta {:?}",
        median(t),
        m1.total.delta(&m0.total)
    );
    // yield_many
    let mut t = vec![];
    for _ in 0..10 {
        let (tx, rx) = mpsc::sync_channel(200);
        let s = Instant::now();
        for _ in 0..200 {
            let tx = tx.clone();
            drop(rt.spawn(async move {
                for _ in 0..1000 {
                    weft::task::yield_now().await;
                }
                tx.send(()).unwrap();
            }));
        }
        for _ in 0..200 {
            rx.recv().unwrap();
        }
        t.push(s.elapsed().as_secs_f64() * 1e3);
    }
    println!("yield_many {:.3} ms", median(t));
}
