// `flavor = "current_thread"`: the body and its tasks run on the main thread.
#[weft::main(flavor = "current_thread")]
async fn main() {
    let here = std::thread::current().id();
    let there = weft::spawn(async { std::thread::current().id() }).await.unwrap();
    assert_eq!(here, there);
    assert_eq!(
        weft::runtime::Handle::current().runtime_flavor(),
        weft::runtime::RuntimeFlavor::CurrentThread
    );
}
