#[weft::main(tokio_compat = "yes")]
async fn main() {}
