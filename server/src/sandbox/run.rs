//! Running a started command: its payload, spawning it, supervising its
//! process tree against the bounds, and capturing its bounded output.

use super::*;

/// What the sandbox's bash runs.
#[derive(Debug, Clone, Copy)]
pub(super) enum Payload<'a> {
    /// `bash -lc COMMAND`.
    Command(&'a str),
    /// A warm sandbox: wait for the command on this fd, then exec
    /// `bash -lc COMMAND` ([`await_script`]).
    Await(i32),
}

/// The waiting script of a warm sandbox: reads the whole command from
/// `fd` up to EOF, closes the fd, and replaces itself with exactly the
/// process a cold sandbox starts (`/usr/bin/bash -lc COMMAND`, pid 2
/// under bwrap's init, same environment: the script exports nothing).
/// The sender appends [`COMMAND_END`] and the script `y`, so trailing
/// newlines survive `$(...)`, and a sender that closed early (a warm
/// sandbox dropped unused) runs nothing: exit 125. The command never
/// contains NUL ([`Sandbox::run_warm`]).
///
/// `cat` on the inherited fd rather than bash's own `$(< /dev/fd/N)`
/// (0.4 ms faster): reopening the pipe through /proc is a permission
/// check against its owner, root, and the script runs unprivileged.
/// Nor `read -d ''`: bash reads a pipe a byte per syscall.
pub(super) fn await_script(fd: i32) -> String {
    format!(
        "c=\"$(/usr/bin/cat <&{fd}; printf y)\"; exec {fd}<&-; case \"$c\" in *{COMMAND_END}y) ;; \
         *) echo 'secaudit: warm sandbox got no command' >&2; exit 125;; esac; \
         exec /usr/bin/bash -lc \"${{c%{COMMAND_END}y}}\""
    )
}

/// Sentinel after a command sent to a warm sandbox ([`await_script`]).
pub(super) const COMMAND_END: &str = "x";

/// Spawns with `stdin` and piped, capped stdout/stderr. Not
/// `kill_on_drop`: a [`Tree`] ends what it spawned, in the right order.
pub(super) fn spawn(cmd: std::process::Command, stdin: Stdio) -> io::Result<tokio::process::Child> {
    let mut cmd = tokio::process::Command::from(cmd);
    cmd.stdin(stdin)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    cmd.spawn()
}

/// A cold command's stdin: `/dev/null`, or a pipe already holding the
/// request's bytes, its write end closed (so the reader meets EOF after
/// them). The bytes fit the pipe ([`MAX_STDIN_BYTES`]): the write
/// completes before anyone reads.
pub(super) fn stdin_of(req: &ExecRequest) -> io::Result<Stdio> {
    let Some(bytes) = &req.stdin else {
        return Ok(Stdio::null());
    };
    if bytes.len() > MAX_STDIN_BYTES {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("stdin of {} bytes exceeds {MAX_STDIN_BYTES}", bytes.len()),
        ));
    }
    let (r, w) = sys::pipe()?;
    std::fs::File::from(w).write_all(bytes)?;
    Ok(Stdio::from(r))
}

/// Reads bwrap's `--info-fd` JSON (`{"child-pid": N, ...}`) and returns the
/// host pid of the sandbox's pid 1. Bounded to 4 KiB.
pub(super) fn read_info_pid(fd: OwnedFd) -> Option<i32> {
    let mut buf = Vec::new();
    std::fs::File::from(fd)
        .take(4096)
        .read_to_end(&mut buf)
        .ok()?;
    let v: serde_json::Value = serde_json::from_slice(&buf).ok()?;
    v.get("child-pid")?
        .as_i64()
        .and_then(|p| i32::try_from(p).ok())
}

/// How a watched wait ended.
pub(super) enum Watched<T> {
    /// The awaited future finished first.
    Done(T),
    /// The wall limit passed.
    Timeout,
    /// The processes under `root` (or the writable dirs) broke a bound.
    Over(watchdog::Breach),
}

/// Awaits `fut` under `limits`: the wall limit, and the [`watchdog`]'s
/// bounds checked every tick over the processes under `root` and the
/// writable `dirs`. Whoever called it kills what it watched on anything
/// but [`Watched::Done`].
pub(super) async fn watched<T>(
    fut: impl std::future::Future<Output = T>,
    root: i32,
    dirs: &[PathBuf],
    limits: &Limits,
) -> Watched<T> {
    tokio::pin!(fut);
    let deadline = tokio::time::sleep(limits.wall);
    tokio::pin!(deadline);
    let mut tick =
        tokio::time::interval_at(tokio::time::Instant::now() + watchdog::TICK, watchdog::TICK);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut n: u32 = 0;
    loop {
        tokio::select! {
            r = &mut fut => return Watched::Done(r),
            _ = &mut deadline => return Watched::Timeout,
            _ = tick.tick() => {
                n += 1;
                let (d, l) = (dirs.to_vec(), limits.clone());
                let breach = tokio::task::spawn_blocking(move || watchdog::check(root, &d, &l, n))
                    .await
                    .ok()
                    .flatten();
                if let Some(b) = breach {
                    return Watched::Over(b);
                }
            }
        }
    }
}

/// Waits for the command (killing it at the wall limit, or when the
/// [`watchdog`] finds it over a bound), collects capped output, and waits
/// until every process it started is gone: in bwrap mode the sandbox's pid
/// 1 (its exit tears down the pid namespace), in the landlock tier every
/// descendant of the supervisor. Nothing the command started survives the
/// return. Cancelled, it leaves the tree to its reaper.
pub(super) async fn supervise(
    mut tree: Tree,
    limits: &Limits,
    dirs: Vec<PathBuf>,
) -> io::Result<ExecOutput> {
    let start = Instant::now();
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let cap = limits.output_cap_bytes;
    let root = tree.root_pid();
    let child = tree.child();
    let out_task = child
        .stdout
        .take()
        .map(|s| tokio::spawn(capture(s, cap, stop_rx.clone())));
    let err_task = child
        .stderr
        .take()
        .map(|s| tokio::spawn(capture(s, cap, stop_rx.clone())));

    let end = watched(tree.wait_main(), root, &dirs, limits).await;
    let (status, timed_out, mut breach) = match end {
        Watched::Done(st) => (st?, false, None),
        Watched::Timeout => (tree.kill().await?, true, None),
        Watched::Over(b) => (tree.kill().await?, false, Some(b)),
    };
    // Killed by us: in every tier the sandbox was killed (no exit code,
    // SIGKILL), whatever the supervisor reported for its command.
    let (exit_code, signal) = if timed_out || breach.is_some() {
        (None, Some(libc::SIGKILL))
    } else {
        (status.code(), status.signal())
    };
    tree.settle().await;
    tree.finish();

    let collect = |task: Option<tokio::task::JoinHandle<Capture>>| async move {
        match task {
            Some(t) => t.await.unwrap_or_default(),
            None => Capture::default(),
        }
    };
    // Readers normally hit EOF as soon as the last process is gone; a
    // stray holder of the pipe (fallback mode) gets DRAIN_GRACE, then the
    // readers stop with what they have.
    let stopper = tokio::spawn(async move {
        tokio::time::sleep(DRAIN_GRACE).await;
        let _ = stop_tx.send(true);
        // Keep the sender alive until aborted: a dropped sender would also
        // wake the readers.
        std::future::pending::<()>().await;
    });
    let (out, err) = tokio::join!(collect(out_task), collect(err_task));
    stopper.abort();
    let duration = start.elapsed();
    if breach.is_none() {
        // A command that ended between two ticks may still have filled
        // the disk: one walk at the end (bounded, like every walk).
        breach = tokio::task::spawn_blocking({
            let l = limits.clone();
            move || {
                if !sys::is_root() {
                    // Sized to what a command stopped at the inode bound
                    // can leave, with room for one tick's overshoot.
                    watchdog::unlock_tree(&dirs, l.inodes.saturating_mul(10));
                }
                // Every process is gone: no open file holds bytes now.
                watchdog::disk_breach(&dirs, &l, 0)
            }
        })
        .await
        .ok()
        .flatten();
    }
    let stderr_dropped = err.dropped;
    let mut stderr = err.into_string();
    if let Some(b) = &breach {
        stderr.push_str(&format!(
            "\n[secaudit: the command was stopped at the {} bound: {}]",
            b.bound.name(),
            b.message
        ));
    }
    Ok(ExecOutput {
        exit_code,
        signal,
        stdout_dropped: out.dropped,
        stderr_dropped,
        stdout: out.into_string(),
        stderr,
        timed_out,
        duration,
        owner_walk: Duration::ZERO,
        warm: false,
        bound: breach.map(|b| b.bound),
    })
}

/// One output stream: the first and last `cap/2` bytes and a count of the
/// rest.
#[derive(Debug, Default)]
pub(super) struct Capture {
    pub(super) head: Vec<u8>,
    pub(super) tail: Vec<u8>,
    pub(super) dropped: u64,
}

impl Capture {
    pub(super) fn push(&mut self, mut data: &[u8], half: usize) {
        if self.head.len() < half {
            let n = (half - self.head.len()).min(data.len());
            self.head.extend_from_slice(&data[..n]);
            data = &data[n..];
        }
        if data.is_empty() {
            return;
        }
        self.tail.extend_from_slice(data);
        if self.tail.len() > 2 * half.max(1) {
            let excess = self.tail.len() - half;
            self.dropped += excess as u64;
            self.tail.drain(..excess);
        }
    }

    pub(super) fn finish(&mut self, half: usize) {
        if self.tail.len() > half {
            let excess = self.tail.len() - half;
            self.dropped += excess as u64;
            self.tail.drain(..excess);
        }
    }

    pub(super) fn into_string(self) -> String {
        let mut s = String::from_utf8_lossy(&self.head).into_owned();
        if self.dropped > 0 {
            s.push_str(&format!("\n[... {} bytes omitted ...]\n", self.dropped));
        }
        s.push_str(&String::from_utf8_lossy(&self.tail));
        s
    }
}

/// Drains a pipe to EOF (or until told to stop), keeping head and tail.
pub(super) async fn capture<R: tokio::io::AsyncRead + Unpin>(
    mut r: R,
    cap: usize,
    mut stop: tokio::sync::watch::Receiver<bool>,
) -> Capture {
    let half = cap / 2;
    let mut c = Capture::default();
    let mut buf = vec![0u8; 16 << 10];
    loop {
        tokio::select! {
            n = r.read(&mut buf) => match n {
                Ok(0) | Err(_) => break,
                Ok(n) => c.push(&buf[..n], half),
            },
            _ = stop.changed() => break,
        }
    }
    c.finish(half);
    c
}
