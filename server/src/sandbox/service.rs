//! A sandbox that serves one request after another: its command was
//! started ahead of time, like a staged one ([`Sandbox::prewarm_staged`]),
//! but stays up, reading a line per request on stdin and answering a line
//! on stdout. The health grader's runner ([`crate::health`]) is the one
//! user: what runs between two requests, and what a request may leave
//! behind, is the command's own business and its caller's (the runner
//! confines and sweeps each run, the grader empties the writable binds).
//!
//! Containment is a staged sandbox's: a fresh bwrap with the full flag
//! set, a uid of the pool for its whole life. The wall limit and the
//! watchdog's bounds apply to each request, counted over every process of
//! the sandbox; a request past either ends the whole sandbox.
//!
//! Everything in it shares one uid and one set of namespaces for the
//! sandbox's life, so bwrap also installs [`confine::shared_uid_filter`]:
//! no call that changes another process (rlimits, priority, scheduling,
//! affinity, I/O priority), no System V IPC or keyring object (they live
//! as long as the namespace, outside the watchdog's count), no extended
//! attribute or inode flag (they stay on a bound directory whose contents
//! are emptied). Red team of the health runner: each of those carried a
//! run's doing into later runs of other sessions.

use super::*;
use tokio::io::{AsyncBufReadExt, BufReader};

/// Longest answer line read.
const MAX_ANSWER_BYTES: u64 = 256;

/// A running service sandbox. Dropping it closes its stdin and kills it,
/// init first, like an unused [`Warm`].
#[derive(Debug)]
pub struct Service {
    // Dropped first: with stdin closed the command ends on its own.
    stdin: Option<std::fs::File>,
    reply: BufReader<tokio::process::ChildStdout>,
    drain: tokio::task::JoinHandle<()>,
    tree: Tree,
    limits: Limits,
    dirs: Vec<PathBuf>,
    ids: Option<(u32, u32)>,
    dead: bool,
}

/// How a request ended.
#[derive(Debug)]
pub enum Answer {
    /// The command's answer line, without its newline.
    Line(String),
    /// Past the wall limit: the sandbox was killed.
    Timeout,
    /// Over a watchdog bound (memory, processes, disk): the sandbox was
    /// killed. The bound's message.
    Over(String),
    /// The command closed stdout or exited without an answer.
    Closed,
}

impl Sandbox {
    /// Starts `template`'s command as a service (bwrap only; None in the
    /// other tiers or when the spawn fails). Call from a task on the
    /// runtime, like [`Sandbox::prewarm_staged`].
    pub fn spawn_service(&self, template: &ExecRequest) -> Option<Service> {
        if !matches!(self.mode, Mode::Bwrap { .. }) {
            return None;
        }
        let filter = match confine::shared_uid_filter() {
            Ok(f) => f,
            Err(e) => {
                tracing::warn!(error = %e, "no seccomp program for a service sandbox");
                return None;
            }
        };
        let mut w = match self.spawn_warm(template, true, Some(filter)) {
            Ok(w) => w,
            Err(e) => {
                tracing::debug!(error = %e, "cannot start a service sandbox");
                return None;
            }
        };
        let child = w.tree.child();
        let stdout = child.stdout.take()?;
        let stderr = child.stderr.take();
        // Nothing reads the command's stderr, but a full pipe would stall it.
        let drain = tokio::spawn(async move {
            if let Some(mut e) = stderr {
                let _ = tokio::io::copy(&mut e, &mut tokio::io::sink()).await;
            }
        });
        let Warm {
            cmd_w,
            tree,
            limits,
            ids,
            ..
        } = w;
        Some(Service {
            stdin: Some(std::fs::File::from(cmd_w)),
            reply: BufReader::new(stdout),
            drain,
            tree,
            limits,
            dirs: watchdog::writable(&template.workspace, &template.extra_rw_binds),
            ids,
            dead: false,
        })
    }
}

impl Service {
    /// The uid and gid the command runs as (None: the server's own): what
    /// to give the files a request needs.
    pub fn ids(&self) -> Option<(u32, u32)> {
        self.ids
    }

    /// Still able to take a request: no request failed, the command runs.
    pub fn is_alive(&mut self) -> bool {
        !self.dead && self.tree.is_running()
    }

    /// Sends `line` (a newline is added) and waits for the answer line,
    /// under the wall limit and the watchdog. After anything but
    /// [`Answer::Line`] the service is dead.
    pub async fn call(&mut self, line: &str) -> io::Result<Answer> {
        if self.dead {
            return Ok(Answer::Closed);
        }
        let mut msg = line.as_bytes().to_vec();
        msg.push(b'\n');
        // One short line into a pipe the command has emptied (it answered
        // the last one): the write does not block.
        let sent = match self.stdin.as_mut() {
            Some(f) => f.write_all(&msg),
            None => Err(io::ErrorKind::BrokenPipe.into()),
        };
        if sent.is_err() {
            self.dead = true;
            return Ok(Answer::Closed);
        }
        let root = self.tree.root_pid();
        let limits = self.limits.clone();
        let dirs = self.dirs.clone();
        let reply = &mut self.reply;
        let read = async move {
            let mut buf = Vec::new();
            reply
                .take(MAX_ANSWER_BYTES)
                .read_until(b'\n', &mut buf)
                .await
                .map(|_| buf)
        };
        let end = watched(read, root, &dirs, &limits).await;
        let answer = match end {
            Watched::Done(Ok(buf)) if buf.ends_with(b"\n") => {
                let line = String::from_utf8_lossy(&buf[..buf.len() - 1]).into_owned();
                // What the request left on disk, as a cold run's last walk.
                let (d, l) = (dirs, limits);
                match tokio::task::spawn_blocking(move || watchdog::disk_breach(&d, &l, 0))
                    .await
                    .ok()
                    .flatten()
                {
                    Some(b) => Answer::Over(b.message),
                    None => return Ok(Answer::Line(line)),
                }
            }
            Watched::Done(_) => Answer::Closed,
            Watched::Timeout => Answer::Timeout,
            Watched::Over(b) => Answer::Over(b.message),
        };
        self.dead = true;
        self.stdin = None;
        let _ = self.tree.kill().await;
        Ok(answer)
    }
}

impl Drop for Service {
    fn drop(&mut self) {
        self.drain.abort();
    }
}
