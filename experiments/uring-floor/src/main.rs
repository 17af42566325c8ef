//! The HTTP lane's floor (`weft-bench/src/floor.rs`: the hello answer with
//! no async runtime and no hyper) over io_uring instead of epoll: what the
//! kernel's cost per request is when reads and writes are not system calls
//! of their own. An experiment of issue #38 (docs/experiments.md, "Server
//! cost per request"); serves until killed, for `scripts/server_cost.sh`:
//!
//! ```text
//! uring-floor [--workers N] [--multishot] [--spins N]
//! ```
//!
//! One ring per worker thread (`SINGLE_ISSUER`, `DEFER_TASKRUN`, no
//! SQPOLL). An acceptor thread deals connections round-robin through a
//! channel each worker drains once per loop (its wait ends after at most
//! 5 ms, so a new connection waits that long at worst). Per connection one
//! receive is armed: a single-shot `recv` into the connection's own buffer,
//! or with `--multishot` one multishot `recv` taking buffers from the
//! worker's provided-buffer ring. Every complete request read is answered
//! (httparse, hyper's bytes, the date rebuilt each second) with one `send`
//! per batch; a short send is resubmitted. `--spins N`: before it blocks,
//! a worker looks for completions N times more, yielding between looks (as
//! weft's workers spin before they sleep).
//!
//! Invariants: a buffer handed to the kernel (a connection's receive
//! buffer, its `sending` vector, a provided buffer) is not touched by this
//! program until the completion that returns it; the connection table and
//! the buffers outlive the ring's use of them (a worker never returns).

use std::io::Write;
use std::net::TcpListener;
use std::os::fd::IntoRawFd;
use std::sync::atomic::{AtomicU16, Ordering};
use std::sync::mpsc;
use std::time::{SystemTime, UNIX_EPOCH};

use io_uring::{IoUring, cqueue, opcode, squeue, types};

const BODY: &[u8] = b"Hello, world!\n";
/// A connection's own receive buffer (single-shot mode).
const RECV_BYTES: usize = 4096;
/// Provided buffers per worker, and the size of each (multishot mode).
const RING_BUFFERS: u16 = 512;
const RING_BUFFER_BYTES: usize = 2048;
/// The provided-buffer group of every worker's ring.
const GROUP: u16 = 0;
/// The longest a worker blocks before it drains its new connections.
const WAIT_NS: u32 = 5_000_000;

struct Options {
    workers: usize,
    multishot: bool,
    spins: u32,
}

fn options() -> Options {
    let mut options = Options {
        workers: 2,
        multishot: false,
        spins: 0,
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut number = || -> u32 {
            let value = args
                .next()
                .unwrap_or_else(|| panic!("{arg} takes a number"));
            value
                .parse()
                .unwrap_or_else(|_| panic!("{arg}: not a number: {value}"))
        };
        match arg.as_str() {
            "--workers" => options.workers = number().max(1) as usize,
            "--spins" => options.spins = number(),
            "--multishot" => options.multishot = true,
            _ => panic!(
                "unknown argument {arg}: uring-floor [--workers N] [--multishot] [--spins N]"
            ),
        }
    }
    options
}

/// hyper's answer to the hello request, dated `now`.
fn hello_at(now: SystemTime) -> Vec<u8> {
    let head = format!(
        "HTTP/1.1 200 OK\r\ncontent-length: {}\r\ndate: {}\r\n\r\n",
        BODY.len(),
        httpdate::fmt_http_date(now)
    );
    [head.as_bytes(), BODY].concat()
}

/// Appends an answer per complete request at the start of `input` to
/// `out`; returns the bytes those requests took (a malformed request takes
/// the rest, unanswered).
fn answer(input: &[u8], hello: &[u8], out: &mut Vec<u8>) -> usize {
    let mut start = 0;
    loop {
        let mut headers = [httparse::EMPTY_HEADER; 100];
        let mut request = httparse::Request::new(&mut headers);
        match request.parse(&input[start..]) {
            Ok(httparse::Status::Complete(n)) => {
                start += n;
                out.extend_from_slice(hello);
            }
            Ok(httparse::Status::Partial) => return start,
            Err(_) => return input.len(),
        }
    }
}

/// A connection: its socket, what it has read of an incomplete request,
/// and the answers waiting for or in a `send`.
struct Conn {
    fd: i32,
    /// Single-shot mode: the receive buffer, `filled` bytes in it.
    recv: Box<[u8; RECV_BYTES]>,
    filled: usize,
    /// Multishot mode: the bytes of an incomplete request.
    pending: Vec<u8>,
    out: Vec<u8>,
    sending: Vec<u8>,
    sent: usize,
}

/// user_data: the connection's index shifted left, and the low bit set
/// for a send.
fn tag(index: usize, send: bool) -> u64 {
    ((index as u64) << 1) | send as u64
}

/// One worker's ring and connections.
struct Worker {
    ring: IoUring,
    conns: Vec<Option<Conn>>,
    spins: u32,
    hello: Vec<u8>,
    second: u64,
    /// The provided-buffer ring: multishot mode if present.
    provided: Option<Provided>,
}

/// The provided-buffer ring of a worker (multishot mode).
struct Provided {
    entries: *mut types::BufRingEntry,
    buffers: Vec<u8>,
    tail: u16,
}

impl Provided {
    /// Registers `RING_BUFFERS` buffers with `ring` as group `GROUP`.
    fn register(ring: &IoUring) -> Provided {
        let layout = std::alloc::Layout::from_size_align(RING_BUFFERS as usize * 16, 4096).unwrap();
        // SAFETY: the layout has a non-zero size; the memory is never
        // freed (a worker never returns), so the kernel's use of it, from
        // the registration on, stays valid.
        let entries = unsafe { std::alloc::alloc_zeroed(layout) }.cast::<types::BufRingEntry>();
        assert!(!entries.is_null(), "out of memory");
        let mut provided = Provided {
            entries,
            buffers: vec![0; RING_BUFFERS as usize * RING_BUFFER_BYTES],
            tail: 0,
        };
        for id in 0..RING_BUFFERS {
            provided.give_back(id);
        }
        provided.publish();
        // SAFETY: `entries` is page-aligned memory for `RING_BUFFERS`
        // entries (a power of two) that outlives the ring, as above.
        unsafe {
            ring.submitter()
                .register_buf_ring_with_flags(entries as u64, RING_BUFFERS, GROUP, 0)
        }
        .expect("register the provided-buffer ring");
        provided
    }

    fn buffer(&self, id: u16, len: usize) -> &[u8] {
        let start = id as usize * RING_BUFFER_BYTES;
        &self.buffers[start..start + len]
    }

    /// Puts buffer `id` back in the ring (seen by the kernel after
    /// `publish`).
    fn give_back(&mut self, id: u16) {
        let slot = (self.tail & (RING_BUFFERS - 1)) as usize;
        // SAFETY: `slot` < `RING_BUFFERS`, inside the allocation; the
        // kernel reads only entries before the published tail, and this
        // one is past it until `publish`.
        let entry = unsafe { &mut *self.entries.add(slot) };
        entry.set_addr(self.buffers.as_ptr() as u64 + (id as usize * RING_BUFFER_BYTES) as u64);
        entry.set_len(RING_BUFFER_BYTES as u32);
        entry.set_bid(id);
        self.tail = self.tail.wrapping_add(1);
    }

    fn publish(&self) {
        // SAFETY: `entries` is the ring's first entry, initialized; its
        // `resv` field is the tail the kernel reads, a u16 aligned for an
        // `AtomicU16`.
        let tail = unsafe { &*types::BufRingEntry::tail(self.entries).cast::<AtomicU16>() };
        tail.store(self.tail, Ordering::Release);
    }
}

impl Worker {
    fn push(&mut self, entry: squeue::Entry) {
        // SAFETY: every buffer an entry names lives in a `Conn` that stays
        // in the table (boxed or in a vector not touched) until the
        // entry's completion, or in `Provided`, never freed.
        while unsafe { self.ring.submission().push(&entry) }.is_err() {
            self.ring.submit().expect("submit a full queue");
        }
    }

    fn arm_recv(&mut self, index: usize) {
        let conn = self.conns[index].as_mut().unwrap();
        let entry = if self.provided.is_some() {
            opcode::RecvMulti::new(types::Fd(conn.fd), GROUP).build()
        } else {
            let free = &mut conn.recv[conn.filled..];
            opcode::Recv::new(types::Fd(conn.fd), free.as_mut_ptr(), free.len() as u32).build()
        };
        self.push(entry.user_data(tag(index, false)));
    }

    fn send_rest(&mut self, index: usize) {
        let conn = self.conns[index].as_mut().unwrap();
        let rest = &conn.sending[conn.sent..];
        let entry = opcode::Send::new(types::Fd(conn.fd), rest.as_ptr(), rest.len() as u32);
        self.push(entry.build().user_data(tag(index, true)));
    }

    fn close(&mut self, index: usize) {
        if let Some(conn) = self.conns[index].take() {
            // SAFETY: the connection owned `fd`; it is closed once, here.
            unsafe { libc::close(conn.fd) };
        }
    }

    /// Submits, and waits for a completion (after `spins` looks).
    fn wait(&mut self) {
        let zero = types::Timespec::new();
        let most = types::Timespec::new().nsec(WAIT_NS);
        for round in 0..=self.spins {
            let timeout = if round == self.spins { &most } else { &zero };
            let args = types::SubmitArgs::new().timespec(timeout);
            match self.ring.submitter().submit_with_args(1, &args) {
                Ok(_) => {}
                Err(e)
                    if matches!(
                        e.raw_os_error(),
                        Some(libc::ETIME | libc::EINTR | libc::EBUSY)
                    ) => {}
                Err(e) => panic!("io_uring_enter: {e}"),
            }
            if !self.ring.completion().is_empty() {
                return;
            }
            if round < self.spins {
                std::thread::yield_now();
            }
        }
    }

    fn run(mut self, new_conns: mpsc::Receiver<i32>) {
        loop {
            while let Ok(fd) = new_conns.try_recv() {
                let index = self
                    .conns
                    .iter()
                    .position(Option::is_none)
                    .unwrap_or_else(|| {
                        self.conns.push(None);
                        self.conns.len() - 1
                    });
                self.conns[index] = Some(Conn {
                    fd,
                    recv: Box::new([0; RECV_BYTES]),
                    filled: 0,
                    pending: Vec::new(),
                    out: Vec::new(),
                    sending: Vec::new(),
                    sent: 0,
                });
                self.arm_recv(index);
            }
            self.wait();
            let now = SystemTime::now();
            let second = now.duration_since(UNIX_EPOCH).unwrap().as_secs();
            if second != self.second {
                self.second = second;
                self.hello = hello_at(now);
            }
            let done: Vec<(u64, i32, u32)> = self
                .ring
                .completion()
                .map(|c| (c.user_data(), c.result(), c.flags()))
                .collect();
            let mut gave_back = false;
            for (data, result, flags) in done {
                let index = (data >> 1) as usize;
                let buffer = cqueue::buffer_select(flags);
                if data & 1 == 1 {
                    self.on_send(index, result);
                } else {
                    self.on_recv(index, result, flags, buffer);
                    gave_back |= buffer.is_some();
                }
            }
            if gave_back {
                self.provided.as_ref().unwrap().publish();
            }
        }
    }

    fn on_send(&mut self, index: usize, result: i32) {
        let Some(conn) = self.conns[index].as_mut() else {
            return;
        };
        if result < 0 {
            return self.close(index);
        }
        conn.sent += result as usize;
        if conn.sent < conn.sending.len() {
            return self.send_rest(index);
        }
        conn.sending.clear();
        self.start_send(index);
    }

    fn on_recv(&mut self, index: usize, result: i32, flags: u32, buffer: Option<u16>) {
        if self.conns[index].is_none() || result <= 0 {
            assert_ne!(result, -libc::ENOBUFS, "out of provided buffers");
            if let Some(id) = buffer {
                self.provided.as_mut().unwrap().give_back(id);
            }
            return self.close(index);
        }
        let n = result as usize;
        let conn = self.conns[index].as_mut().unwrap();
        if let Some(id) = buffer {
            let provided = self.provided.as_mut().unwrap();
            let data = provided.buffer(id, n);
            if conn.pending.is_empty() {
                let used = answer(data, &self.hello, &mut conn.out);
                conn.pending.extend_from_slice(&data[used..]);
            } else {
                conn.pending.extend_from_slice(data);
                let used = answer(&conn.pending, &self.hello, &mut conn.out);
                conn.pending.drain(..used);
            }
            provided.give_back(id);
            if !cqueue::more(flags) {
                self.arm_recv(index);
            }
        } else {
            conn.filled += n;
            let used = answer(&conn.recv[..conn.filled], &self.hello, &mut conn.out);
            conn.recv.copy_within(used..conn.filled, 0);
            conn.filled -= used;
            self.arm_recv(index);
        }
        self.start_send(index);
    }

    /// Sends the waiting answers unless a send is under way.
    fn start_send(&mut self, index: usize) {
        let conn = self.conns[index].as_mut().unwrap();
        if !conn.sending.is_empty() || conn.out.is_empty() {
            return;
        }
        std::mem::swap(&mut conn.sending, &mut conn.out);
        conn.sent = 0;
        self.send_rest(index);
    }
}

fn main() {
    let options = options();
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    println!("http://{}", listener.local_addr().unwrap());
    std::io::stdout().flush().unwrap();
    let mut workers = Vec::new();
    for _ in 0..options.workers {
        let (sender, receiver) = mpsc::channel();
        workers.push(sender);
        let (multishot, spins) = (options.multishot, options.spins);
        std::thread::Builder::new()
            .name("uring-worker".into())
            .spawn(move || {
                let ring = IoUring::builder()
                    .setup_single_issuer()
                    .setup_defer_taskrun()
                    .build(1024)
                    .expect("io_uring (SINGLE_ISSUER, DEFER_TASKRUN: Linux 6.1 or later)");
                let provided = multishot.then(|| Provided::register(&ring));
                let worker = Worker {
                    ring,
                    conns: Vec::new(),
                    spins,
                    hello: hello_at(SystemTime::now()),
                    second: 0,
                    provided,
                };
                worker.run(receiver)
            })
            .expect("spawn a worker");
    }
    for (n, stream) in listener.incoming().enumerate() {
        let Ok(stream) = stream else { continue };
        stream.set_nodelay(true).expect("TCP_NODELAY");
        workers[n % workers.len()]
            .send(stream.into_raw_fd())
            .expect("a worker ended");
    }
}
