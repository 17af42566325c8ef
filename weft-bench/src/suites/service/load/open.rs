//! The open loop of seed 004: a pacer thread hands each arrival to the
//! runtime, which sends it as a point read on an idle connection of the
//! pool (or a new one).

use super::*;

/// The open loop: a pacer thread hands each arrival (until the window's
/// end) to the runtime, which sends it on an idle connection.
pub(super) fn open_loop(
    shared: Arc<Shared>,
    start: Instant,
    per_s: f64,
    seed: u64,
) -> tokio::task::JoinHandle<()> {
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<Instant>();
    let end = shared.span.end;
    std::thread::spawn(move || {
        let mut schedule = Poisson::new(per_s, seed);
        loop {
            let arrival = start + schedule.pop();
            if arrival >= end {
                return;
            }
            let now = Instant::now();
            if arrival > now {
                std::thread::sleep(arrival - now);
            }
            if tx.send(arrival).is_err() {
                return;
            }
        }
    });
    tokio::spawn(async move {
        let mut rng = fastrand::Rng::with_seed(seed);
        while let Some(arrival) = rx.recv().await {
            let path = format!("/users/{}", rng.u32(1..=10_000));
            let shared = Arc::clone(&shared);
            drop(tokio::spawn(async move {
                let id = shared.start(arrival);
                let result = within(&shared, point_read(&shared, &path)).await;
                shared.finish(id, arrival, result);
            }));
        }
    })
}

/// One point read, once it has a turn, on an idle connection (or a new
/// one), put back after.
///
/// A server may close a keep-alive connection that stayed idle (weft's
/// `serve` after its 30 s header-read timeout): closed ones are dropped,
/// and a request found unsent on a reused connection (closed as it was
/// taken) goes again once on a new one, as an HTTP client's pool does.
/// Neither is an error of the server's. Connections idle for
/// [`IDLE_TIMEOUT`] are closed here too, the longest idle first.
pub(super) async fn point_read(shared: &Shared, path: &str) -> Result<(), Failure> {
    let _turn = Arc::clone(&shared.turns)
        .acquire_owned()
        .await
        .map_err(Failure::io)?;
    let idle = {
        let now = Instant::now();
        let mut state = shared.lock();
        while state
            .idle
            .front()
            .is_some_and(|idle| now - idle.since >= IDLE_TIMEOUT)
        {
            state.idle.pop_front();
        }
        loop {
            match state.idle.pop_back() {
                Some(idle) if idle.conn.sender.is_closed() => continue,
                other => break other.map(|idle| idle.conn),
            }
        }
    };
    let reused = idle.is_some();
    let mut conn = match idle {
        Some(conn) => conn,
        None => connect(shared.address, &shared.connections)
            .await
            .map_err(Failure::io)?,
    };
    let mut result = get(&mut conn.sender, shared.address, path, "\"email\":").await;
    if reused && result.as_ref().is_err_and(|failure| failure.unsent) {
        conn = connect(shared.address, &shared.connections)
            .await
            .map_err(Failure::io)?;
        result = get(&mut conn.sender, shared.address, path, "\"email\":").await;
    }
    if result.is_ok() {
        shared.lock().idle.push_back(Idle {
            conn,
            since: Instant::now(),
        });
    }
    result
}
