// Runs: `main` sees the two workers it asked for.
#[weft::main(worker_threads = 2)]
async fn main() {
    assert_eq!(weft::runtime::Handle::current().metrics().num_workers, 2);
    assert_eq!(weft::spawn(async { 6 * 7 }).await.unwrap(), 42);
}
