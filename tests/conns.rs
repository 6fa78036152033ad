//! Connection hygiene of `secaudit serve` (issue 16): clients that open a
//! connection and never finish their request head cannot starve the server.
//!
//! Both tests run the real binary (`ServerProc`) on loopback and open raw
//! TCP connections that send a partial request line and nothing more.
//! Bounded: at most [`FLOOD`] connections, every wait has a deadline.
//! Against plain `axum::serve` both fail: the half-open connections are
//! never closed, and with the descriptor limit below the flood `/health`
//! times out.

use crate::util::{ServeOpts, ServerProc};
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Half-open connections of the first test: more than its server's
/// descriptor limit ([`FLOOD_NOFILE`]), so without a cap the server runs
/// out of descriptors.
const FLOOD: usize = 1500;

/// `RLIMIT_NOFILE` (soft and hard) of the first test's server.
const FLOOD_NOFILE: u64 = 1024;

/// What a half-open client sends: the start of a request line, never ended.
const PARTIAL: &[u8] = b"GET /health HT";

/// `/health` must answer within this, whatever the flood (the bar).
const HEALTH_TIMEOUT: Duration = Duration::from_secs(1);

/// Opens `n` connections to `url`'s host and sends each [`PARTIAL`].
async fn half_open(url: &str, n: usize) -> Vec<TcpStream> {
    let addr = url.trim_start_matches("http://");
    let mut v = Vec::with_capacity(n);
    for i in 0..n {
        let mut s = tokio::time::timeout(Duration::from_secs(5), TcpStream::connect(addr))
            .await
            .unwrap_or_else(|_| {
                panic!("connect #{i} timed out: the server stopped accepting (out of descriptors?)")
            })
            .unwrap_or_else(|e| {
                panic!("connect #{i}: {e} (is the test's own RLIMIT_NOFILE > {n}?)")
            });
        // A write to a socket the server already closed may fail; that
        // connection simply counts as closed later.
        let _ = s.write_all(PARTIAL).await;
        v.push(s);
    }
    v
}

/// Whether the server closed `s` (EOF or reset, after whatever reply it
/// sent) within `wait`.
async fn closed_within(s: &mut TcpStream, wait: Duration) -> bool {
    let deadline = tokio::time::Instant::now() + wait;
    let mut buf = [0u8; 1024];
    loop {
        match tokio::time::timeout_at(deadline, s.read(&mut buf)).await {
            Err(_) => return false,
            Ok(Ok(0)) | Ok(Err(_)) => return true,
            Ok(Ok(_)) => continue,
        }
    }
}

/// How many of `conns` the server has closed by `deadline`.
async fn count_closed(conns: &mut [TcpStream], deadline: Instant) -> usize {
    let mut n = 0;
    for s in conns.iter_mut() {
        let left = deadline.saturating_duration_since(Instant::now());
        if closed_within(s, left).await {
            n += 1;
        }
    }
    n
}

/// `GET /health` on a fresh connection within [`HEALTH_TIMEOUT`]; up to
/// three tries (a loaded CI machine may lose one to scheduling, a starved
/// server loses all three). Returns the status and the time of the good
/// try.
async fn health(url: &str) -> Result<(u16, Duration), String> {
    let mut errs = Vec::new();
    for _ in 0..3 {
        let http = reqwest::Client::builder()
            .timeout(HEALTH_TIMEOUT)
            .pool_max_idle_per_host(0)
            .build()
            .expect("client");
        let t = Instant::now();
        match http.get(format!("{url}/health")).send().await {
            Ok(r) => return Ok((r.status().as_u16(), t.elapsed())),
            Err(e) => errs.push(format!("{e:?}")),
        }
    }
    Err(errs.join("; "))
}

/// Sends a whole `GET /health` on `s` and reads the reply.
async fn request(s: &mut TcpStream) -> std::io::Result<(String, String)> {
    s.write_all(b"GET /health HTTP/1.1\r\nhost: x\r\n\r\n")
        .await?;
    read_reply(s).await
}

/// Reads one HTTP reply (head and `content-length` body); returns the
/// status line and the body.
async fn read_reply(s: &mut TcpStream) -> std::io::Result<(String, String)> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        let n = s.read(&mut chunk).await?;
        if n == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        buf.extend_from_slice(&chunk[..n]);
        let text = String::from_utf8_lossy(&buf).into_owned();
        let Some((head, body)) = text.split_once("\r\n\r\n") else {
            continue;
        };
        let len: usize = head
            .lines()
            .find_map(|l| {
                let (k, v) = l.split_once(':')?;
                k.eq_ignore_ascii_case("content-length")
                    .then(|| v.trim().parse().ok())?
            })
            .unwrap_or(0);
        if body.len() >= len {
            let status = head.lines().next().unwrap_or("").to_string();
            return Ok((status, body.to_string()));
        }
    }
}

/// Open descriptors of process `pid`.
fn fds(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .map(|d| d.count())
        .unwrap_or(0)
}

/// 1,500 half-open connections against a server allowed 1,024 descriptors:
/// `/health` still answers within a second, and every half-open connection
/// is closed by the server within the header timeout (plus slack).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn half_open_flood_neither_starves_health_nor_outlives_the_header_timeout() {
    const HEADER_TIMEOUT_S: u64 = 3;
    let srv = ServerProc::start_with(ServeOpts {
        max_sessions: Some(2),
        nofile: Some(FLOOD_NOFILE),
        env: vec![(
            "SECAUDIT_HEADER_TIMEOUT_S".into(),
            HEADER_TIMEOUT_S.to_string(),
        )],
        ..Default::default()
    })
    .await;
    let t = Instant::now();
    let mut conns = half_open(&srv.url, FLOOD).await;
    let opened = t.elapsed();
    let peak_fds = fds(srv.pid());
    let h = health(&srv.url).await;
    let (status, took) = h.unwrap_or_else(|e| {
        panic!(
            "/health starved by {FLOOD} half-open connections: {e}\n{}",
            srv.log_tail()
        )
    });
    assert_eq!(status, 200, "/health status under the flood");
    // The newest connections were opened `opened` ago at most; the header
    // timeout runs from their accept.
    let deadline = Instant::now() + Duration::from_secs(HEADER_TIMEOUT_S + 5);
    let closed = count_closed(&mut conns, deadline).await;
    let all_closed = t.elapsed();
    eprintln!(
        "half-open flood: {FLOOD} opened in {opened:?}; server fds {peak_fds}; \
         /health in {took:?}; {closed} closed by the server after {all_closed:?}"
    );
    assert_eq!(
        closed,
        FLOOD,
        "half-open connections left open {:?} after the flood began (header timeout {HEADER_TIMEOUT_S} s)\n{}",
        t.elapsed(),
        srv.log_tail()
    );
    assert!(
        fds(srv.pid()) < 200,
        "server still holds {} descriptors after every client closed",
        fds(srv.pid())
    );
}

/// With a cap of 50 and a long header timeout: excess half-open
/// connections are closed at once (the oldest half-open one gives way to
/// each newcomer), the server never holds much more than the cap, and
/// `/health` answers. When every slot holds a connection that has sent a
/// request, a newcomer gets a prompt JSON 503 `too_many_connections`; one
/// slot freed, `/health` answers again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connection_cap_closes_excess_promptly_and_keeps_health_answerable() {
    const CAP: usize = 50;
    const EXCESS: usize = 200;
    let mut srv = ServerProc::start_with(ServeOpts {
        max_sessions: Some(2),
        env: vec![
            ("SECAUDIT_MAX_CONNECTIONS".into(), CAP.to_string()),
            // Far beyond the test: whatever closes early is the cap's doing.
            ("SECAUDIT_HEADER_TIMEOUT_S".into(), "120".into()),
        ],
        ..Default::default()
    })
    .await;
    let base_fds = fds(srv.pid());
    let t = Instant::now();
    let mut conns = half_open(&srv.url, CAP + EXCESS).await;
    // The oldest EXCESS gave way to newer ones; the newest CAP hold the
    // slots until the header timeout.
    let deadline = Instant::now() + Duration::from_secs(3);
    let closed = count_closed(&mut conns[..EXCESS], deadline).await;
    let held_fds = fds(srv.pid());
    eprintln!(
        "cap {CAP}: {} half-open opened, {closed} of the oldest {EXCESS} closed within {:?}; \
         server fds {base_fds} -> {held_fds}",
        CAP + EXCESS,
        t.elapsed()
    );
    assert_eq!(
        closed,
        EXCESS,
        "excess connections not closed promptly\n{}",
        srv.log_tail()
    );
    assert!(
        held_fds <= base_fds + CAP + 5,
        "server holds {held_fds} descriptors (before the flood {base_fds}, cap {CAP})"
    );
    for _ in 0..5 {
        let (status, _) = health(&srv.url)
            .await
            .unwrap_or_else(|e| panic!("/health at the cap: {e}\n{}", srv.log_tail()));
        assert_eq!(status, 200, "/health at the cap");
    }

    // Fill every slot with connections that have sent a request (each
    // newcomer takes a half-open one's slot), keeping them open.
    let addr = srv.url.trim_start_matches("http://").to_string();
    let mut active = Vec::new();
    for i in 0..CAP {
        let mut s = TcpStream::connect(&addr).await.expect("connect");
        let (status, body) = request(&mut s)
            .await
            .unwrap_or_else(|e| panic!("active #{i}: {e}\n{}", srv.log_tail()));
        assert!(status.contains(" 200 "), "active #{i}: {status} {body}");
        active.push(s);
    }
    let remaining = count_closed(
        &mut conns[EXCESS..],
        Instant::now() + Duration::from_secs(3),
    )
    .await;
    assert_eq!(
        remaining, CAP,
        "every half-open slot went to an active client"
    );

    // The refusal is written on accept, before any request: read it without
    // sending one (a request already sent and unread when the server closes
    // turns its close into a reset, which may discard the reply).
    let mut extra = TcpStream::connect(&addr).await.expect("connect");
    let t = Instant::now();
    let reply = tokio::time::timeout(Duration::from_secs(2), read_reply(&mut extra)).await;
    let (status, body) = match reply {
        Ok(Ok(r)) => r,
        Ok(Err(e)) => panic!("refused connection gave no reply: {e}"),
        Err(_) => panic!("a connection past the cap hung\n{}", srv.log_tail()),
    };
    eprintln!("cap {CAP}: refusal in {:?}: {status}", t.elapsed());
    assert!(status.contains(" 503 "), "past the cap: {status} {body}");
    let v: serde_json::Value = serde_json::from_str(&body).expect("JSON 503 body");
    assert_eq!(v["error"]["code"], "too_many_connections", "{body}");
    assert!(
        closed_within(&mut extra, Duration::from_secs(2)).await,
        "refused connection closed"
    );

    // One active client leaves: its slot serves /health again.
    drop(active.pop());
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        match health(&srv.url).await {
            Ok((200, _)) => break,
            other => assert!(
                Instant::now() < deadline,
                "/health after a slot was freed: {other:?}"
            ),
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }

    // SIGTERM with half-open and idle keep-alive connections open: they
    // must not hold the drain until the shutdown grace (10 s) runs out.
    let _half = half_open(&srv.url, 10).await;
    let (st, took) = srv.signal_and_wait("TERM").await;
    eprintln!("cap {CAP}: SIGTERM to exit with open connections took {took:?}");
    assert!(st.success(), "SIGTERM exit status {st}");
    assert!(
        took < Duration::from_secs(3),
        "SIGTERM took {took:?}: open connections held the drain\n{}",
        srv.log_tail()
    );
    for (i, s) in active.iter_mut().enumerate() {
        assert!(
            closed_within(s, Duration::from_secs(1)).await,
            "keep-alive connection #{i} still open after exit"
        );
    }
}
