// Runs: `tokio_compat = true` gives `main` tokio's timers and `tokio::spawn`.
#[weft::main(tokio_compat = true, worker_threads = 1)]
async fn main() {
    tokio::time::sleep(std::time::Duration::from_millis(1)).await;
    assert_eq!(tokio::spawn(async { 7 }).await.unwrap(), 7);
}
