//! The accept loop of `secaudit serve`: connection hygiene that
//! `axum::serve` does not have.
//!
//! Why: with `axum::serve`, a client that opens a connection and never
//! finishes its request headers holds a file descriptor and a task forever.
//! 20,000 such half-open connections (measured, issue 16) used every
//! descriptor the process had; new clients, `/health` included, timed out
//! until the attackers closed theirs. Two bounds close that class:
//!
//! - **Header read timeout** ([`ConnLimits::header_read_timeout`]): hyper's
//!   HTTP/1 `header_read_timeout`, which runs whenever the connection waits
//!   for a request head: for the first request, and between keep-alive
//!   requests. A connection that does not deliver a complete head in time is
//!   closed.
//! - **Connection cap** ([`ConnLimits::max_connections`]): at most this many
//!   HTTP connections are served at once, well under the descriptor limit
//!   (see [`fd_budget`]). When the cap is reached, a newcomer takes the slot
//!   of the *oldest connection that has not yet sent a complete request
//!   head* (that one is closed): the attacker's half-open connections are
//!   the ones that give way, and a real client, which sends its request at
//!   once, gets served, so `/health` stays answerable under a flood. Only
//!   when every slot holds a connection that has sent a request is the
//!   newcomer refused, at once, with a JSON 503 `too_many_connections` and a
//!   close: it never hangs.
//!
//! A WebSocket leaves the cap when it is upgraded (hyper hands the socket
//! over and the connection's task ends); open WebSockets are bounded by the
//! session limit instead (`AppState`'s WebSocket slots) and have their own
//! idle timeout.
//!
//! Graceful shutdown: when the shutdown future resolves the listener is
//! closed, connections that have not sent a request are dropped, the others
//! finish their request in flight and close (hyper's graceful shutdown);
//! [`serve`] returns when the last one has.

use axum::Router;
use axum::body::Body;
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use std::collections::{BTreeMap, HashSet};
use std::future::Future;
use std::pin::pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{oneshot, watch};

/// Default of [`ConnLimits::header_read_timeout`] (seconds): hyper's own
/// default, and long enough that a keep-alive client idle between two steps
/// rarely loses its connection.
pub const DEFAULT_HEADER_READ_TIMEOUT_S: u64 = 30;

/// Default of [`ConnLimits::max_connections`]: far above what a trainer
/// needs (one connection per concurrent session, plus health checks), far
/// below common descriptor limits; [`fd_budget`] lowers it where the limit
/// is smaller.
pub const DEFAULT_MAX_CONNECTIONS: usize = 4096;

/// Fewest connections [`fd_budget`] ever leaves, however low the
/// descriptor limit: a server that cannot take a few dozen clients is of no
/// use anyway.
const MIN_CONNECTIONS: usize = 64;

/// Descriptors kept back from connections for everything else: the
/// listener, logs, the task registry and, per session, its workspace files,
/// git repository and sandbox pipes (a command's sandbox and a prewarmed
/// one). Generous: running out of descriptors mid-step is much worse than
/// refusing a connection.
fn fd_reserve(max_sessions: usize) -> u64 {
    256 + 32 * max_sessions as u64
}

/// Bounds on the HTTP connections [`serve`] accepts.
#[derive(Debug, Clone, Copy)]
pub struct ConnLimits {
    /// Connections served at once (see the module doc for what happens at
    /// the cap). At least 1.
    pub max_connections: usize,
    /// Longest wait for a complete request head, first request or next
    /// keep-alive one.
    pub header_read_timeout: Duration,
}

impl Default for ConnLimits {
    fn default() -> Self {
        Self {
            max_connections: DEFAULT_MAX_CONNECTIONS,
            header_read_timeout: Duration::from_secs(DEFAULT_HEADER_READ_TIMEOUT_S),
        }
    }
}

/// Raises the soft `RLIMIT_NOFILE` to the hard limit and returns the soft
/// limit now in force. Many systems start processes with a soft limit of
/// 1024 and a hard one far higher; the higher one is ours to take, and every
/// descriptor is a connection we can serve.
pub fn raise_nofile_limit() -> std::io::Result<u64> {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit/setrlimit only read or write the struct passed, which
    // lives on this stack frame for the whole call.
    #[allow(unsafe_code)]
    let got = unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) };
    if got != 0 {
        return Err(std::io::Error::last_os_error());
    }
    if lim.rlim_cur < lim.rlim_max {
        let raised = libc::rlimit {
            rlim_cur: lim.rlim_max,
            rlim_max: lim.rlim_max,
        };
        // SAFETY: as above.
        #[allow(unsafe_code)]
        let set = unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &raised) };
        if set == 0 {
            lim.rlim_cur = lim.rlim_max;
        } else {
            tracing::warn!(
                soft = lim.rlim_cur,
                hard = lim.rlim_max,
                error = %std::io::Error::last_os_error(),
                "could not raise RLIMIT_NOFILE to its hard limit"
            );
        }
    }
    Ok(lim.rlim_cur)
}

/// The connection cap that fits `nofile` descriptors next to `max_sessions`
/// sessions: `wanted`, lowered to `nofile` minus [`fd_reserve`] (never below
/// [`MIN_CONNECTIONS`], nor above `wanted`).
pub fn fd_budget(wanted: usize, nofile: u64, max_sessions: usize) -> usize {
    let room = nofile.saturating_sub(fd_reserve(max_sessions));
    let room = usize::try_from(room).unwrap_or(usize::MAX);
    wanted.min(room.max(MIN_CONNECTIONS))
}

/// What the connection table decided for a newcomer.
enum Admit {
    /// Serve it under this id.
    Yes(u64),
    /// Every slot holds a connection that has sent a request: refuse it.
    Full,
}

/// Open connections, and which of them have not yet sent a complete
/// request head (the ones a newcomer may evict).
struct Table {
    max: usize,
    /// Connections counted against the cap.
    open: usize,
    next_id: u64,
    /// Connections still waiting for their first request head, oldest
    /// first (ids grow), with the sender that closes each.
    pending: BTreeMap<u64, oneshot::Sender<()>>,
    /// Evicted connections whose slot went to a newcomer; their task must
    /// not give the slot back a second time.
    evicted: HashSet<u64>,
}

impl Table {
    fn admit(&mut self, evict: oneshot::Sender<()>) -> Admit {
        if self.open >= self.max {
            let Some((old, tx)) = self.pending.pop_first() else {
                return Admit::Full;
            };
            // The slot passes from the oldest half-open connection to the
            // newcomer; `open` does not change.
            let _ = tx.send(());
            self.evicted.insert(old);
        } else {
            self.open += 1;
        }
        let id = self.next_id;
        self.next_id += 1;
        self.pending.insert(id, evict);
        Admit::Yes(id)
    }

    /// The connection delivered a request head: no longer evictable.
    fn active(&mut self, id: u64) {
        self.pending.remove(&id);
    }

    /// The connection's task ended.
    fn closed(&mut self, id: u64) {
        if !self.evicted.remove(&id) {
            self.pending.remove(&id);
            self.open -= 1;
        }
    }

    /// Closes every connection that has not sent a request (shutdown).
    fn evict_all_pending(&mut self) {
        for (_, tx) in std::mem::take(&mut self.pending) {
            let _ = tx.send(());
        }
    }
}

/// Gives a connection's slot back when its task ends, however it ends.
struct Slot {
    table: Arc<Mutex<Table>>,
    id: u64,
}

impl Drop for Slot {
    fn drop(&mut self) {
        lock(&self.table).closed(self.id);
    }
}

fn lock(t: &Mutex<Table>) -> std::sync::MutexGuard<'_, Table> {
    // The table's invariants hold between statements, so a panic elsewhere
    // while it was held leaves it usable.
    t.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The reply to a connection refused at the cap (the JSON error shape of
/// every other error), written without waiting so a refusal costs no task.
static FULL_REPLY: std::sync::LazyLock<Vec<u8>> = std::sync::LazyLock::new(|| {
    let body = serde_json::json!({"error": {
        "code": "too_many_connections",
        "message": "connection limit reached; retry in a moment",
    }})
    .to_string();
    format!(
        "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\n\
         connection: close\r\nretry-after: 1\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
});

/// Serves `app` on `listener` within `limits` until `shutdown` resolves,
/// then drains (see the module doc). Returns when every connection has
/// closed; the caller bounds that wait if it must.
pub async fn serve(
    listener: TcpListener,
    app: Router,
    limits: ConnLimits,
    shutdown: impl Future<Output = ()>,
) {
    let table = Arc::new(Mutex::new(Table {
        max: limits.max_connections.max(1),
        open: 0,
        next_id: 0,
        pending: BTreeMap::new(),
        evicted: HashSet::new(),
    }));
    // Dropped (sender side) to start every connection's graceful shutdown;
    // each task holds a receiver, so `closed()` resolves when all are gone.
    let (stop_tx, stop_rx) = watch::channel(());
    let (done_tx, done_rx) = watch::channel(());
    let mut shutdown = pin!(shutdown);
    let mut refused: u64 = 0;
    loop {
        let (stream, _peer) = tokio::select! {
            () = &mut shutdown => break,
            r = listener.accept() => match r {
                Ok(c) => c,
                Err(e) => {
                    // EMFILE/ENFILE (descriptors gone despite the cap) or a
                    // connection reset before accept: back off briefly rather
                    // than spin.
                    tracing::warn!(error = %e, "accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
        };
        let (evict_tx, evict_rx) = oneshot::channel();
        let admitted = lock(&table).admit(evict_tx);
        let id = match admitted {
            Admit::Yes(id) => id,
            Admit::Full => {
                refused += 1;
                if refused.is_power_of_two() {
                    tracing::warn!(
                        max = limits.max_connections,
                        refused,
                        "connection limit reached; refusing new connections"
                    );
                }
                // tokio's `try_write` needs readiness the reactor has not
                // seen yet on a fresh socket; a plain non-blocking write
                // goes straight to the (empty) send buffer.
                if let Ok(mut s) = stream.into_std() {
                    let _ = std::io::Write::write(&mut s, &FULL_REPLY);
                }
                continue;
            }
        };
        let slot = Slot {
            table: table.clone(),
            id,
        };
        tokio::spawn(serve_one(
            stream,
            app.clone(),
            limits.header_read_timeout,
            slot,
            evict_rx,
            stop_rx.clone(),
            done_rx.clone(),
        ));
    }
    drop(listener);
    lock(&table).evict_all_pending();
    drop(stop_tx);
    drop(stop_rx);
    drop(done_rx);
    done_tx.closed().await;
}

/// Serves one connection until it closes, is evicted, or the server stops.
async fn serve_one(
    stream: TcpStream,
    app: Router,
    header_read_timeout: Duration,
    slot: Slot,
    evicted: oneshot::Receiver<()>,
    mut stop: watch::Receiver<()>,
    _done: watch::Receiver<()>,
) {
    let seen = Arc::new(AtomicBool::new(false));
    let table = slot.table.clone();
    let id = slot.id;
    let svc = hyper::service::service_fn(move |req: hyper::Request<Incoming>| {
        if !seen.swap(true, Ordering::Relaxed) {
            lock(&table).active(id);
        }
        let mut router = app.clone();
        async move { tower::Service::call(&mut router, req.map(Body::new)).await }
    });
    let mut conn = pin!(
        hyper::server::conn::http1::Builder::new()
            .timer(TokioTimer::new())
            .header_read_timeout(header_read_timeout)
            .serve_connection(TokioIo::new(stream), svc)
            .with_upgrades()
    );
    let mut evicted = evicted;
    // The eviction sender is dropped, without a send, when the connection
    // delivers its first request; a finished receiver must not be polled
    // again.
    let mut evict_armed = true;
    let mut stopping = false;
    loop {
        tokio::select! {
            r = conn.as_mut() => {
                if let Err(e) = r {
                    tracing::debug!(error = %e, "connection ended with an error");
                }
                break;
            }
            // Evicted for a newcomer, or dropped at shutdown before sending a
            // request: close without a reply (it asked for nothing).
            r = &mut evicted, if evict_armed => {
                evict_armed = false;
                if r.is_ok() {
                    break;
                }
            }
            _ = stop.changed(), if !stopping => {
                stopping = true;
                conn.as_mut().graceful_shutdown();
            }
        }
    }
    drop(slot);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(max: usize) -> Table {
        Table {
            max,
            open: 0,
            next_id: 0,
            pending: BTreeMap::new(),
            evicted: HashSet::new(),
        }
    }

    #[test]
    fn at_the_cap_the_oldest_pending_connection_gives_way() {
        let mut t = table(2);
        let (a_tx, mut a_rx) = oneshot::channel();
        let (b_tx, mut b_rx) = oneshot::channel();
        let Admit::Yes(a) = t.admit(a_tx) else {
            panic!("a refused")
        };
        let Admit::Yes(b) = t.admit(b_tx) else {
            panic!("b refused")
        };
        let (c_tx, _c_rx) = oneshot::channel();
        let Admit::Yes(c) = t.admit(c_tx) else {
            panic!("c refused while a and b were half-open")
        };
        assert!(a_rx.try_recv().is_ok(), "oldest pending (a) evicted");
        assert!(b_rx.try_recv().is_err(), "b kept");
        assert_eq!(t.open, 2);
        // a's task ends: its slot went to c, so the count stays.
        t.closed(a);
        assert_eq!(t.open, 2);
        // b and c send requests: nothing is evictable, a newcomer is refused.
        t.active(b);
        t.active(c);
        let (d_tx, _d_rx) = oneshot::channel();
        assert!(matches!(t.admit(d_tx), Admit::Full));
        t.closed(b);
        assert_eq!(t.open, 1);
        let (e_tx, _e_rx) = oneshot::channel();
        assert!(matches!(t.admit(e_tx), Admit::Yes(_)));
        assert_eq!(t.open, 2);
    }

    #[test]
    fn fd_budget_keeps_a_reserve_and_a_floor() {
        assert_eq!(fd_budget(4096, 1 << 20, 64), 4096);
        assert_eq!(fd_budget(4096, 20_000, 64), 4096);
        assert_eq!(fd_budget(4096, 4096, 64), 4096 - 256 - 32 * 64);
        assert_eq!(fd_budget(4096, 1024, 64), MIN_CONNECTIONS);
        assert_eq!(fd_budget(10, 1024, 4), 10);
    }

    #[test]
    fn full_reply_length_matches_its_body() {
        let s = std::str::from_utf8(&FULL_REPLY).unwrap();
        let (head, body) = s.split_once("\r\n\r\n").unwrap();
        assert!(head.contains(&format!("content-length: {}", body.len())));
        let v: serde_json::Value = serde_json::from_str(body).unwrap();
        assert_eq!(v["error"]["code"], "too_many_connections");
    }
}
