#[weft::test(tokio_compat)]
async fn checks_something() {}

fn main() {}
