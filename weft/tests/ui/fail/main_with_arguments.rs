#[weft::main]
async fn main(args: Vec<String>) {
    drop(args);
}
