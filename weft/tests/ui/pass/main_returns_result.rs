// `?` converts into the declared error type, as in a synchronous `main`.
use std::error::Error;

#[weft::main]
async fn main() -> Result<(), Box<dyn Error>> {
    let port: u16 = "8080".parse()?;
    assert_eq!(port, 8080);
    let joined = weft::spawn(async { "done" }).await?;
    assert_eq!(joined, "done");
    Ok(())
}
