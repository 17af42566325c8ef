#[weft::test(tokio_compat = true, tokio_compat = false)]
async fn checks_something() {}

fn main() {}
