#[weft::main]
fn main() {}
