#[weft::test(start_pause = true)]
async fn checks_something() {}

fn main() {}
