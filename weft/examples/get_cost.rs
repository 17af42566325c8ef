//! What one HTTP GET costs from a task, four ways: reqwest on weft through
//! `tokio_compat`, reqwest on weft through `async_compat::Compat`, hyper's
//! client on weft natively (`weft::hyper::Io`), and reqwest on tokio.
//!
//! `cargo run --release -p weft --example get_cost --features hyper,tokio-compat -- [N] [RUNS]`
//!
//! N sequential GETs (default 2,000) over one kept-alive connection to the
//! hello server of `http_server.rs`, which runs on a weft runtime of its
//! own (1 worker) in this process; each client runs on a fresh 2-worker
//! runtime, inside a spawned task, after 100 GETs of warm-up. The ways take
//! turns, RUNS rounds (default 3). Printed for each way and round: the mean
//! (the run's time over N) and the median GET, in microseconds. On a
//! loaded machine the mean takes every preemption; the median shows the
//! path's own cost.

#[path = "http_server.rs"]
#[allow(dead_code)]
mod http_server;

use std::future::Future;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Empty};
use weft::hyper::Io;
use weft::net::{TcpListener, TcpStream};

const WARM_UP: usize = 100;
const WORKERS: usize = 2;

/// One way of making the GETs: its name and how it runs `n` of them,
/// returning each one's time (warm-up excluded).
struct Way {
    name: &'static str,
    run: fn(SocketAddr, usize) -> Vec<Duration>,
}

const WAYS: [Way; 4] = [
    Way {
        name: "reqwest on weft, tokio_compat",
        run: reqwest_tokio_compat,
    },
    Way {
        name: "reqwest on weft, async_compat::Compat",
        run: reqwest_async_compat,
    },
    Way {
        name: "hyper client on weft (native)",
        run: hyper_on_weft,
    },
    Way {
        name: "reqwest on tokio",
        run: reqwest_on_tokio,
    },
];

fn weft_runtime(tokio_compat: bool) -> weft::runtime::Runtime {
    let mut builder = weft::runtime::Builder::new_multi_thread();
    builder.worker_threads(WORKERS);
    if tokio_compat {
        builder.tokio_compat();
    }
    builder.build().expect("weft runtime")
}

/// Runs `client` in a task spawned on a fresh weft runtime.
fn on_weft<F>(tokio_compat: bool, client: F) -> Vec<Duration>
where
    F: Future<Output = Vec<Duration>> + Send + 'static,
{
    let rt = weft_runtime(tokio_compat);
    rt.block_on(rt.spawn(client)).expect("client task")
}

/// Runs `$get` (an expression awaiting one GET) `WARM_UP` times, then
/// `$n` times timed; evaluates to each timed GET's duration. (A macro: the
/// future of an async closure borrowing its captures is not `Send` for
/// every lifetime, which `spawn` asks.)
macro_rules! timed {
    ($n:expr, $get:expr) => {{
        for _ in 0..WARM_UP {
            $get;
        }
        let mut times = Vec::with_capacity($n);
        for _ in 0..$n {
            let start = Instant::now();
            $get;
            times.push(start.elapsed());
        }
        times
    }};
}

/// `WARM_UP` GETs, then `n` timed ones, with reqwest.
async fn reqwest_gets(addr: SocketAddr, n: usize) -> Vec<Duration> {
    let client = reqwest::Client::new();
    let url = format!("http://{addr}/");
    timed!(n, {
        let response = client.get(&url).send().await.unwrap();
        let body = response.bytes().await.unwrap();
        assert_eq!(&body[..], b"Hello, world!\n");
    })
}

fn reqwest_tokio_compat(addr: SocketAddr, n: usize) -> Vec<Duration> {
    on_weft(true, reqwest_gets(addr, n))
}

fn reqwest_async_compat(addr: SocketAddr, n: usize) -> Vec<Duration> {
    on_weft(false, async_compat::Compat::new(reqwest_gets(addr, n)))
}

fn hyper_on_weft(addr: SocketAddr, n: usize) -> Vec<Duration> {
    on_weft(false, async move {
        let stream = TcpStream::connect(addr).await.unwrap();
        stream.set_nodelay(true).unwrap();
        let (mut sender, connection) = hyper::client::conn::http1::handshake(Io::new(stream))
            .await
            .unwrap();
        drop(weft::spawn(connection));
        timed!(n, {
            let request = hyper::Request::get("/")
                .header(hyper::header::HOST, "127.0.0.1")
                .body(Empty::<Bytes>::new())
                .unwrap();
            let response = sender.send_request(request).await.unwrap();
            let body = response.into_body().collect().await.unwrap().to_bytes();
            assert_eq!(&body[..], b"Hello, world!\n");
        })
    })
}

fn reqwest_on_tokio(addr: SocketAddr, n: usize) -> Vec<Duration> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(WORKERS)
        .enable_all()
        .build()
        .expect("tokio runtime");
    rt.block_on(rt.spawn(reqwest_gets(addr, n)))
        .expect("client task")
}

fn main() {
    let mut args = std::env::args().skip(1);
    let n: usize = args.next().map_or(2000, |n| n.parse().expect("N"));
    let runs: usize = args.next().map_or(3, |r| r.parse().expect("RUNS"));

    let server = weft::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .thread_name("server")
        .build()
        .expect("server runtime");
    let addr = server.block_on(async {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        drop(weft::spawn(http_server::serve(
            listener,
            http_server::HEADER_READ_TIMEOUT,
            Duration::ZERO,
            std::future::pending(),
        )));
        addr
    });

    println!(
        "{n} sequential GETs per run, {runs} runs, server on 1 weft worker, \
         clients on {WORKERS} workers; µs per GET: mean / median GET"
    );
    let mut rows: Vec<Vec<(f64, f64)>> = vec![Vec::new(); WAYS.len()];
    for _ in 0..runs {
        for (way, row) in WAYS.iter().zip(&mut rows) {
            row.push(mean_and_median((way.run)(addr, n)));
        }
    }
    for (way, row) in WAYS.iter().zip(&rows) {
        let each: Vec<String> = row
            .iter()
            .map(|(mean, median)| format!("{mean:6.1} / {median:5.1}"))
            .collect();
        println!("{:<40} {}", way.name, each.join("   "));
    }
}

/// The mean and the median of `times`, in microseconds.
fn mean_and_median(mut times: Vec<Duration>) -> (f64, f64) {
    let micros = |d: Duration| d.as_secs_f64() * 1e6;
    let mean = micros(times.iter().sum::<Duration>()) / times.len() as f64;
    times.sort();
    (mean, micros(times[times.len() / 2]))
}
