//! The HTTP suite's floor ([`crate::serve::floor`]): the hello request answered
//! with the bytes hyper's server sends for it (`HTTP/1.1 200 OK`,
//! `content-length`, `date`, [`BODY`]), parsed with httparse (hyper's own
//! parser), with no runtime and no hyper around it.
//!
//! Every complete request in a read is answered, in order (pipelined ones
//! too); a request with a `content-length` body is answered once its body
//! is in. A request it cannot answer as hyper would (a malformed one, a
//! chunked body) gets `400 Bad Request` and the connection ends, as does
//! one asking for it to (`connection: close`, HTTP/1.0 without
//! keep-alive). The `date` header follows the wall clock to the second, as
//! hyper's cached one does: the answer is rebuilt when the second changes.

use std::time::{SystemTime, UNIX_EPOCH};

use super::server::BODY;
use crate::serve::floor::{Answer, Protocol};

/// The most headers a request may have (hyper's default limit is 100).
const MAX_HEADERS: usize = 100;

/// The answer to a request the floor cannot serve; the connection ends
/// after it.
const BAD_REQUEST: &[u8] =
    b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\nconnection: close\r\n\r\n";

/// One worker's hello answer, rebuilt each second.
#[derive(Debug, Default)]
pub struct Hello {
    /// The second `response` is dated.
    second: u64,
    /// The whole answer to one request.
    response: Vec<u8>,
}

impl Hello {
    /// The answer dated `now`.
    fn response_at(now: SystemTime) -> Vec<u8> {
        let head = format!(
            "HTTP/1.1 200 OK\r\ncontent-length: {}\r\ndate: {}\r\n\r\n",
            BODY.len(),
            httpdate::fmt_http_date(now)
        );
        [head.as_bytes(), BODY].concat()
    }
}

/// What one request asks of the connection.
struct Request {
    /// Bytes of its head and body.
    length: usize,
    /// Whether the connection ends after its answer.
    close: bool,
}

/// The request at the start of `input`: `Ok(None)` if not complete yet,
/// `Err` if the floor cannot serve it.
fn parse(input: &[u8]) -> Result<Option<Request>, ()> {
    let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut request = httparse::Request::new(&mut headers);
    let head = match request.parse(input) {
        Ok(httparse::Status::Complete(head)) => head,
        Ok(httparse::Status::Partial) => return Ok(None),
        Err(_) => return Err(()),
    };
    let mut close = request.version != Some(1);
    let mut body = 0usize;
    for header in request.headers.iter() {
        let value = header.value;
        if header.name.eq_ignore_ascii_case("content-length") {
            let text = std::str::from_utf8(value).map_err(|_| ())?;
            body = text.trim().parse().map_err(|_| ())?;
        } else if header.name.eq_ignore_ascii_case("transfer-encoding") {
            return Err(());
        } else if header.name.eq_ignore_ascii_case("connection") {
            for option in value.split(|b| *b == b',') {
                let option = option.trim_ascii();
                if option.eq_ignore_ascii_case(b"close") {
                    close = true;
                } else if option.eq_ignore_ascii_case(b"keep-alive") {
                    close = false;
                }
            }
        }
    }
    let length = head.checked_add(body).ok_or(())?;
    Ok((input.len() >= length).then_some(Request { length, close }))
}

impl Protocol for Hello {
    fn tick(&mut self) {
        let now = SystemTime::now();
        let second = now.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
        if second != self.second || self.response.is_empty() {
            self.second = second;
            self.response = Hello::response_at(now);
        }
    }

    fn answer(&mut self, input: &[u8], out: &mut Vec<u8>) -> Answer {
        if self.response.is_empty() {
            self.tick();
        }
        let mut consumed = 0;
        while consumed < input.len() {
            match parse(&input[consumed..]) {
                Ok(None) => break,
                Ok(Some(request)) => {
                    out.extend_from_slice(&self.response);
                    consumed += request.length;
                    if request.close {
                        return Answer {
                            consumed,
                            close: true,
                        };
                    }
                }
                Err(()) => {
                    out.extend_from_slice(BAD_REQUEST);
                    return Answer {
                        consumed: input.len(),
                        close: true,
                    };
                }
            }
        }
        Answer {
            consumed,
            close: false,
        }
    }
}

#[cfg(test)]
mod tests {
    use std::io::{Read, Write};
    use std::net::{SocketAddr, TcpStream};
    use std::time::Duration;

    use super::*;
    use crate::common::runtimes::Weft;
    use crate::serve::floor::Floor;

    const GET: &[u8] = b"GET / HTTP/1.1\r\nhost: 127.0.0.1:8080\r\n\r\n";

    fn answers(input: &[u8]) -> (Answer, Vec<u8>) {
        let mut hello = Hello::default();
        let mut out = Vec::new();
        (hello.answer(input, &mut out), out)
    }

    fn count(out: &[u8]) -> usize {
        out.windows(BODY.len()).filter(|w| *w == BODY).count()
    }

    #[test]
    fn every_complete_request_is_answered_and_a_partial_one_kept() {
        let two = [GET, GET, &GET[..10]].concat();
        let (answer, out) = answers(&two);
        assert_eq!(
            answer,
            Answer {
                consumed: 2 * GET.len(),
                close: false
            }
        );
        assert_eq!(count(&out), 2);
        assert!(out.starts_with(b"HTTP/1.1 200 OK\r\ncontent-length: 13\r\ndate: "));
        let post = b"POST / HTTP/1.1\r\ncontent-length: 3\r\n\r\nab";
        assert_eq!(answers(post).0.consumed, 0, "its body is not all in");
        let post = b"POST / HTTP/1.1\r\ncontent-length: 3\r\n\r\nabc";
        assert_eq!(answers(post).0.consumed, post.len());
    }

    /// On one keep-alive connection to `address`: `GET /` alone three
    /// times, then two pipelined in one write; each answer as read.
    fn exchange(address: SocketAddr) -> Vec<Vec<u8>> {
        let mut stream = TcpStream::connect(address).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        let mut answers = Vec::new();
        for requests in [1, 1, 1, 2] {
            stream.write_all(&GET.repeat(requests)).unwrap();
            let mut answer = Vec::new();
            while count(&answer) < requests {
                let mut buffer = [0u8; 1024];
                let read = stream.read(&mut buffer).unwrap();
                assert!(read > 0, "the server closed a keep-alive connection");
                answer.extend_from_slice(&buffer[..read]);
            }
            answers.push(answer);
        }
        answers
    }

    /// `answer` with every date's value starred out, and its dates.
    fn undated(answer: &[u8]) -> (String, Vec<SystemTime>) {
        let mut text = String::from_utf8(answer.to_vec()).unwrap();
        let mut dates = Vec::new();
        let mut from = 0;
        while let Some(at) = text[from..].find("date: ") {
            let start = from + at + "date: ".len();
            let end = start + text[start..].find("\r\n").unwrap();
            dates.push(httpdate::parse_http_date(&text[start..end]).unwrap());
            text.replace_range(start..end, "*");
            from = start;
        }
        (text, dates)
    }

    #[test]
    fn the_floor_answers_with_hypers_bytes_over_keep_alive() {
        let floor = Floor::start::<Hello>(2).unwrap();
        let hyper = crate::suites::http::server::start::<Weft>(1).unwrap();
        let (ours, theirs) = (exchange(floor.address()), exchange(hyper.address()));
        floor.stop().unwrap();
        hyper.stop().unwrap();
        for (ours, theirs) in ours.iter().zip(&theirs) {
            let ((ours, dates), (theirs, _)) = (undated(ours), undated(theirs));
            assert_eq!(ours, theirs);
            for date in dates {
                let off = SystemTime::now().duration_since(date).unwrap();
                assert!(off < Duration::from_secs(60), "dated {off:?} ago");
            }
        }
        assert_eq!(ours.len(), 4);
    }

    #[test]
    fn close_http10_and_bad_requests_end_the_connection() {
        let close = b"GET / HTTP/1.1\r\nconnection: close\r\n\r\n";
        assert!(answers(&[&close[..], GET].concat()).0.close);
        assert_eq!(count(&answers(&[&close[..], GET].concat()).1), 1);
        assert!(answers(b"GET / HTTP/1.0\r\n\r\n").0.close);
        assert!(
            !answers(b"GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
                .0
                .close
        );
        let (answer, out) = answers(b"NOT HTTP\r\n\r\n");
        assert!(answer.close && out == BAD_REQUEST);
        let chunked = b"POST / HTTP/1.1\r\ntransfer-encoding: chunked\r\n\r\n";
        assert!(answers(chunked).0.close);
    }
}
