#[weft::test]
fn checks_something() {}

fn main() {}
