// `flavor = "multi_thread"` with `worker_threads`, as tokio writes it.
#[weft::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    assert_eq!(
        weft::runtime::Handle::current().runtime_flavor(),
        weft::runtime::RuntimeFlavor::MultiThread
    );
    assert_eq!(weft::runtime::Handle::current().num_workers(), 2);
}
