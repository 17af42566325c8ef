#[weft::test(start_paused = 1)]
async fn checks_something() {}

fn main() {}
