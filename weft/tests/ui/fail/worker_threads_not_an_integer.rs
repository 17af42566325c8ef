#[weft::test(worker_threads = "4")]
async fn checks_something() {}

fn main() {}
