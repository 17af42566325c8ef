#[weft::test]
#[weft::test(worker_threads = 2)]
async fn checks_something() {}

fn main() {}
