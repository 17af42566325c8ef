#[weft::test(worker_threads = 2, flavor = "current_thread")]
async fn checks() {}

fn main() {}
