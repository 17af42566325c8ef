#[weft::test(flavor = current_thread)]
async fn checks() {}

fn main() {}
