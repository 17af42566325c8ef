//! tokio's parts that need no tokio runtime, on weft without the bridge:
//! `tokio::sync` (mpsc, oneshot, Mutex, Semaphore, Notify) on 1, 2 and 4
//! workers, `tokio::select!` and `join!`, `tokio::task_local!`, a TLS handshake and
//! echo with tokio-rustls over weft's `TcpStream`, and a tokio-util
//! `Framed` codec over it (`tokio-io`). Every runtime here is built
//! without `tokio_compat`, and each test checks that no tokio runtime is
//! reachable, so none of this leans on the bridge.

#![cfg(all(not(loom), feature = "tokio-io"))]

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use weft::net::{TcpListener, TcpStream};
use weft::runtime::{Builder, Runtime};

fn runtime(workers: usize) -> Runtime {
    Builder::new_multi_thread()
        .worker_threads(workers)
        .build()
        .unwrap()
}

/// Runs `body` on 1, 2 and 4 workers, checking no tokio runtime is there.
fn on_1_2_4_workers<F, Fut>(body: F)
where
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = ()> + Send + 'static,
{
    for workers in [1, 2, 4] {
        eprintln!("{workers} workers");
        runtime(workers).block_on(async {
            assert!(tokio::runtime::Handle::try_current().is_err());
            weft::spawn(body()).await.unwrap();
        });
    }
}

#[test]
fn mpsc_carries_every_message_of_many_producers() {
    on_1_2_4_workers(|| async {
        let (tx, mut rx) = tokio::sync::mpsc::channel::<u64>(4);
        for producer in 0..8u64 {
            let tx = tx.clone();
            drop(weft::spawn(async move {
                for i in 0..100 {
                    tx.send(producer * 1000 + i).await.unwrap();
                }
            }));
        }
        drop(tx);
        let (mut count, mut sum) = (0, 0);
        while let Some(value) = rx.recv().await {
            count += 1;
            sum += value;
        }
        let expected: u64 = (0..8u64)
            .map(|p| (0..100).map(|i| p * 1000 + i).sum::<u64>())
            .sum();
        assert_eq!((count, sum), (800, expected));
    });
}

#[test]
fn oneshot_answers_across_tasks_and_reports_a_dropped_sender() {
    on_1_2_4_workers(|| async {
        let (tx, rx) = tokio::sync::oneshot::channel();
        drop(weft::spawn(async move {
            weft::time::sleep(Duration::from_millis(1)).await;
            tx.send("answer").unwrap();
        }));
        assert_eq!(rx.await.unwrap(), "answer");
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        drop(weft::spawn(async move { drop(tx) }));
        assert!(rx.await.is_err());
    });
}

#[test]
fn mutex_serialises_increments_held_across_awaits() {
    on_1_2_4_workers(|| async {
        let counter = Arc::new(tokio::sync::Mutex::new(0u32));
        let tasks: Vec<_> = (0..16)
            .map(|_| {
                let counter = counter.clone();
                weft::spawn(async move {
                    for _ in 0..50 {
                        let mut guard = counter.lock().await;
                        let seen = *guard;
                        weft::task::yield_now().await;
                        *guard = seen + 1;
                    }
                })
            })
            .collect();
        for task in tasks {
            task.await.unwrap();
        }
        assert_eq!(*counter.lock().await, 800);
    });
}

#[test]
fn semaphore_bounds_concurrency() {
    on_1_2_4_workers(|| async {
        let permits = Arc::new(tokio::sync::Semaphore::new(3));
        let inside = Arc::new(AtomicUsize::new(0));
        let most = Arc::new(AtomicUsize::new(0));
        let tasks: Vec<_> = (0..24)
            .map(|_| {
                let (permits, inside, most) = (permits.clone(), inside.clone(), most.clone());
                weft::spawn(async move {
                    let _permit = permits.acquire().await.unwrap();
                    let now = inside.fetch_add(1, Ordering::SeqCst) + 1;
                    most.fetch_max(now, Ordering::SeqCst);
                    weft::time::sleep(Duration::from_millis(1)).await;
                    inside.fetch_sub(1, Ordering::SeqCst);
                })
            })
            .collect();
        for task in tasks {
            task.await.unwrap();
        }
        assert!(most.load(Ordering::SeqCst) <= 3);
        assert_eq!(permits.available_permits(), 3);
    });
}

#[test]
fn notify_ping_pongs_between_two_tasks() {
    on_1_2_4_workers(|| async {
        let ping = Arc::new(tokio::sync::Notify::new());
        let pong = Arc::new(tokio::sync::Notify::new());
        let rounds = 200;
        let other = {
            let (ping, pong) = (ping.clone(), pong.clone());
            weft::spawn(async move {
                for _ in 0..rounds {
                    ping.notified().await;
                    pong.notify_one();
                }
            })
        };
        for _ in 0..rounds {
            ping.notify_one();
            pong.notified().await;
        }
        other.await.unwrap();
    });
}

#[test]
fn select_takes_the_first_ready_branch_and_join_waits_for_both() {
    runtime(2).block_on(async {
        let (tx, mut rx) = tokio::sync::mpsc::channel::<u32>(1);
        let sender = weft::spawn(async move {
            weft::time::sleep(Duration::from_millis(5)).await;
            tx.send(7).await.unwrap();
        });
        let mut timeouts = 0;
        let value = loop {
            tokio::select! {
                biased;
                value = rx.recv() => break value,
                _ = weft::time::sleep(Duration::from_millis(1)) => timeouts += 1,
            }
        };
        assert_eq!(value, Some(7));
        assert!(timeouts >= 1, "the sleep branch won while nothing was sent");
        sender.await.unwrap();
        // Both ready: `biased` takes the first.
        let first = tokio::select! {
            biased;
            a = async { 1 } => a,
            b = async { 2 } => b,
        };
        assert_eq!(first, 1);
        // `join!` polls both to the end.
        let (a, b) = tokio::join!(
            async {
                weft::time::sleep(Duration::from_millis(2)).await;
                "slept"
            },
            weft::spawn(async { 5 }),
        );
        assert_eq!((a, b.unwrap()), ("slept", 5));
    });
}

tokio::task_local! {
    static REQUEST_ID: u64;
}

#[test]
fn task_local_holds_across_awaits_and_is_not_inherited_by_spawned_tasks() {
    runtime(2).block_on(async {
        let seen = REQUEST_ID
            .scope(42, async {
                weft::time::sleep(Duration::from_millis(1)).await;
                weft::task::yield_now().await;
                let inner = weft::spawn(async { REQUEST_ID.try_with(|id| *id).is_ok() });
                (REQUEST_ID.get(), inner.await.unwrap())
            })
            .await;
        assert_eq!(
            seen,
            (42, false),
            "as in tokio: a spawned task starts without it"
        );
        assert!(REQUEST_ID.try_with(|id| *id).is_err());
        // In a weft task, moved between workers by its awaits.
        let in_task = weft::spawn(REQUEST_ID.scope(7, async {
            for _ in 0..10 {
                weft::task::yield_now().await;
            }
            REQUEST_ID.get()
        }));
        assert_eq!(in_task.await.unwrap(), 7);
    });
}

mod tls {
    use std::sync::Arc;

    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
    use tokio_rustls::rustls::{self, ClientConfig, RootCertStore, ServerConfig};
    use tokio_rustls::{TlsAcceptor, TlsConnector};

    /// A server and a client config trusting one self-signed certificate
    /// for `localhost`, made here.
    pub fn configs() -> (Arc<ServerConfig>, Arc<ClientConfig>) {
        let certified = rcgen::generate_simple_self_signed(vec!["localhost".to_owned()]).unwrap();
        let cert: CertificateDer<'static> = certified.cert.der().clone();
        let key =
            PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(certified.key_pair.serialize_der()));
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let server = ServerConfig::builder_with_provider(provider.clone())
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_no_client_auth()
            .with_single_cert(vec![cert.clone()], key)
            .unwrap();
        let mut roots = RootCertStore::empty();
        roots.add(cert).unwrap();
        let client = ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_root_certificates(roots)
            .with_no_client_auth();
        (Arc::new(server), Arc::new(client))
    }

    /// Accepts one connection and echoes what it reads until end of stream.
    pub async fn echo_server(listener: weft::net::TcpListener, config: Arc<ServerConfig>) {
        let (stream, _) = listener.accept().await.unwrap();
        let mut tls = TlsAcceptor::from(config).accept(stream).await.unwrap();
        let mut buf = vec![0; 4096];
        loop {
            let n = tls.read(&mut buf).await.unwrap();
            if n == 0 {
                break;
            }
            tls.write_all(&buf[..n]).await.unwrap();
        }
        tls.shutdown().await.unwrap();
    }

    pub async fn client(stream: weft::net::TcpStream, config: Arc<ClientConfig>) -> Vec<u8> {
        let name = rustls::pki_types::ServerName::try_from("localhost").unwrap();
        let mut tls = TlsConnector::from(config)
            .connect(name, stream)
            .await
            .unwrap();
        let message: Vec<u8> = (0..100_000u32).map(|i| (i % 251) as u8).collect();
        let mut echoed = vec![0; message.len()];
        // Written and read at once (the stream split), so neither side
        // waits for the other's buffer to drain.
        let (mut reader, mut writer) = tokio::io::split(&mut tls);
        let write = async {
            writer.write_all(&message).await.unwrap();
        };
        let read = async {
            reader.read_exact(&mut echoed).await.unwrap();
        };
        futures_lite::future::zip(write, read).await;
        assert!(echoed == message, "the echo differs");
        tls.shutdown().await.unwrap();
        echoed
    }
}

#[test]
fn tls_handshake_and_echo_with_tokio_rustls_over_weft_streams() {
    runtime(2).block_on(async {
        assert!(tokio::runtime::Handle::try_current().is_err());
        let (server_config, client_config) = tls::configs();
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let server = weft::spawn(tls::echo_server(listener, server_config));
        let stream = TcpStream::connect(addr).await.unwrap();
        let echoed = weft::spawn(tls::client(stream, client_config))
            .await
            .unwrap();
        assert_eq!(echoed.len(), 100_000);
        server.await.unwrap();
    });
}

#[test]
fn tls_with_an_untrusted_certificate_fails_the_handshake() {
    runtime(1).block_on(async {
        let (server_config, _) = tls::configs();
        let (_, other_client) = tls::configs();
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        drop(weft::spawn(async move {
            let (stream, _) = listener.accept().await.unwrap();
            let _ = tokio_rustls::TlsAcceptor::from(server_config)
                .accept(stream)
                .await;
        }));
        let stream = TcpStream::connect(addr).await.unwrap();
        let name = tokio_rustls::rustls::pki_types::ServerName::try_from("localhost").unwrap();
        let refused = tokio_rustls::TlsConnector::from(other_client)
            .connect(name, stream)
            .await;
        assert!(
            refused.is_err(),
            "a certificate from another root is refused"
        );
    });
}

#[test]
fn lines_codec_frames_over_a_weft_tcp_stream() {
    use futures_util::{SinkExt, StreamExt};
    use tokio_util::codec::{Framed, LinesCodec};

    runtime(2).block_on(async {
        assert!(tokio::runtime::Handle::try_current().is_err());
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let server = weft::spawn(async move {
            let (stream, _) = listener.accept().await.unwrap();
            let mut lines = Framed::new(stream, LinesCodec::new());
            while let Some(line) = lines.next().await {
                lines.send(line.unwrap().to_uppercase()).await.unwrap();
            }
        });
        let stream = TcpStream::connect(addr).await.unwrap();
        let mut lines = Framed::new(stream, LinesCodec::new());
        for word in ["weft", "runs", "tokio-util"] {
            lines.send(word).await.unwrap();
        }
        // Two frames in one write.
        lines.feed("a").await.unwrap();
        lines.feed("b").await.unwrap();
        SinkExt::<&str>::flush(&mut lines).await.unwrap();
        let mut answers = Vec::new();
        for _ in 0..5 {
            answers.push(lines.next().await.unwrap().unwrap());
        }
        assert_eq!(answers, ["WEFT", "RUNS", "TOKIO-UTIL", "A", "B"]);
        drop(lines);
        server.await.unwrap();
    });
}
