#[weft::test]
#[test]
async fn checks_something() {}

fn main() {}
