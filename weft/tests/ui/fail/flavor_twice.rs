#[weft::main(flavor = "current_thread", flavor = "multi_thread")]
async fn main() {}
