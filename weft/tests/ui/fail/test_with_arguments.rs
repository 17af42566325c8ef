#[weft::test]
async fn checks_something(input: u32) {
    assert_eq!(input, 1);
}

fn main() {}
