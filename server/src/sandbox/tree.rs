//! A started sandbox's processes, and how to end them without stranding
//! any.
//!
//! bwrap (our child, "the outer bwrap") clones a child into the new
//! namespaces, writes that child's host pid to `--info-fd`, and only then
//! releases it through an eventfd. The child makes the mounts, becomes the
//! namespace's init, and only there asks for PR_SET_PDEATHSIG. So killing
//! the outer bwrap does not end a sandbox at every moment of its start:
//! - before the release, the child waits on the eventfd forever;
//! - after it, until the init's `prctl`, the child goes on reparented to
//!   the host's init and runs its command to the end: a warm sandbox's
//!   waiting script exits once its pipe is closed, a cold command does not.
//!
//! Both were seen here. The first under full-suite load, as an unused warm
//! sandbox outliving its session; the second by killing bwrap 0–9 ms after
//! its start from a shell loop (23 of 80 left behind). So a [`Tree`] is
//! ended from its init down, by the pid from the info pipe, which bwrap
//! writes before the release ([`Tree::kill`]); and a tree dropped while
//! running (a warm sandbox never used, a cancelled command) is ended that
//! way by a reaper task, which also holds the command's uid until then.

use std::io;
use std::process::ExitStatus;
use std::time::{Duration, Instant};

use std::os::fd::OwnedFd;

use tokio::io::unix::AsyncFd;

use super::{UidLease, procs, sys, uids};
use std::os::unix::process::ExitStatusExt;

/// How long the landlock tier's kill rounds may take before the
/// supervisor itself is killed (its tree is then reparented upward).
const REAP_WAIT: Duration = Duration::from_secs(5);

/// How long to wait for bwrap to report its init's pid. bwrap writes it
/// right after the clone; waiting longer means bwrap died before that, and
/// then it had no child to strand.
const INFO_WAIT: Duration = Duration::from_secs(5);

/// The processes of one sandboxed command: the outer process (bwrap, or
/// bash in fallback mode), the host pid of bwrap's init once reported,
/// and the uid leased for the command. A tree still running when dropped
/// is killed by a reaper ([`Drop`]); call [`Tree::finish`] once it ended.
#[derive(Debug)]
pub(super) struct Tree {
    child: Option<tokio::process::Child>,
    /// The outer process's pid, which is also its process group
    /// (`process_group(0)`).
    pgid: i32,
    /// bwrap's `--info-fd` reader; None in fallback mode or once read.
    info: Option<tokio::task::JoinHandle<Option<i32>>>,
    init: Option<i32>,
    /// Landlock tier: the supervisor's status pipe, readable once the
    /// command's main process exited ([`sys::ChildSetup::supervise`]).
    /// Its presence marks a supervised tree.
    main: Option<AsyncFd<OwnedFd>>,
    supervised: bool,
    lease: Option<UidLease>,
    /// Owned by a reaper task: if that task is dropped too (a runtime
    /// shutting down drops its tasks, and drops at once any task spawned
    /// meanwhile), the drop must not spawn another, or each would drop
    /// the next, recursively.
    reaping: bool,
}

impl Tree {
    /// Takes charge of a spawned outer process.
    pub(super) fn new(
        child: tokio::process::Child,
        info: Option<tokio::task::JoinHandle<Option<i32>>>,
        lease: Option<UidLease>,
    ) -> Tree {
        let pgid = child.id().map(|p| p as i32).unwrap_or(0);
        Tree {
            child: Some(child),
            pgid,
            info,
            init: None,
            main: None,
            supervised: false,
            lease,
            reaping: false,
        }
    }

    /// Takes charge of a landlock-tier supervisor and the read end of its
    /// status pipe.
    pub(super) fn supervised(
        child: tokio::process::Child,
        main: AsyncFd<OwnedFd>,
        lease: Option<UidLease>,
    ) -> Tree {
        let mut t = Tree::new(child, None, lease);
        t.main = Some(main);
        t.supervised = true;
        t
    }

    /// The pid of the process the server spawned (bwrap, the supervisor
    /// or bash): every process of the command descends from it.
    pub(super) fn root_pid(&self) -> i32 {
        self.pgid
    }

    /// Waits for the command's end. Outside the landlock tier that is
    /// the spawned process's exit. In it, the main process's exit (the
    /// supervisor's status pipe), after which whatever the command left
    /// running is killed, as a pid namespace's end would kill it, and the
    /// supervisor's exit status (the command's code) is returned.
    pub(super) async fn wait_main(&mut self) -> io::Result<ExitStatus> {
        if let Some(main) = &self.main {
            let _ = main.readable().await;
            self.main = None;
            return self.reap().await;
        }
        self.child().wait().await
    }

    /// Landlock tier: kills every descendant of the supervisor, in rounds
    /// (orphans of killed processes are reparented to it), until the
    /// supervisor, which exits once it has no child left, is gone.
    async fn reap(&mut self) -> io::Result<ExitStatus> {
        let root = self.pgid;
        let deadline = Instant::now() + REAP_WAIT;
        // Every process signalled, pinned by its pidfd: the supervisor
        // exits once it has no child left, which can come before a
        // grandchild with a SIGKILL pending has finished dying. The
        // command is over only when all of them are gone.
        let mut killed: Vec<OwnedFd> = Vec::new();
        let st = loop {
            if let Some(st) = self.child().try_wait()? {
                break Ok(st);
            }
            killed.extend(
                tokio::task::spawn_blocking(move || procs::kill_descendants(root))
                    .await
                    .map_err(io::Error::other)?,
            );
            if Instant::now() > deadline {
                let _ = self.child().start_kill();
                break self.child().wait().await;
            }
            if let Ok(st) =
                tokio::time::timeout(Duration::from_millis(2), self.child().wait()).await
            {
                break st;
            }
        };
        for fd in killed {
            if let Ok(afd) = sys::async_fd(fd) {
                let _ = tokio::time::timeout_at(deadline.into(), afd.readable()).await;
            }
        }
        // The supervisor exits by itself only once it has no child left,
        // and as the subreaper it inherits every orphan: then nothing of
        // the command is left. Killed (by us at the deadline, by anything
        // else), its orphans went to the host's init; they still run as
        // the leased uid, which no other command holds, so they are found
        // by uid and killed before the lease is given back.
        if let (Ok(st), Some(lease)) = (&st, &self.lease)
            && st.signal().is_some()
        {
            let uid = lease.uid;
            let n = tokio::task::spawn_blocking(move || uids::kill_uid(uid))
                .await
                .unwrap_or(0);
            if n > 0 {
                tracing::warn!(uid, killed = n, signal = ?st.signal(), "a killed supervisor's orphans were found by uid and killed");
            }
        }
        st
    }

    /// The outer process. Present until [`Tree::finish`] or drop.
    pub(super) fn child(&mut self) -> &mut tokio::process::Child {
        self.child
            .as_mut()
            .expect("a tree's child is present until it is finished")
    }

    /// True while the outer process has not exited.
    pub(super) fn is_running(&mut self) -> bool {
        matches!(self.child().try_wait(), Ok(None))
    }

    /// The host pid of bwrap's init, waiting (bounded) for bwrap to report
    /// it; None in fallback mode or when bwrap died before reporting.
    pub(super) async fn init_pid(&mut self) -> Option<i32> {
        if let Some(h) = self.info.take() {
            self.init = tokio::time::timeout(INFO_WAIT, h)
                .await
                .ok()
                .and_then(Result::ok)
                .flatten();
        }
        self.init
    }

    /// Kills the whole tree and waits for the outer process to exit. The
    /// init goes first, while the outer bwrap (its parent) is alive, so
    /// nothing is left to run unparented (see the module notes); then the
    /// outer process and its group.
    pub(super) async fn kill(&mut self) -> io::Result<ExitStatus> {
        if self.supervised {
            // The status pipe stays open until the tree is gone: the
            // supervisor writes to it when the main process dies.
            let _status = self.main.take();
            return self.reap().await;
        }
        let init = self.init_pid().await;
        let pgid = self.pgid;
        let child = self.child();
        if let (Some(init), Some(outer)) = (init, child.id()) {
            kill_child_of(init, outer as i32);
        }
        if child.id().is_some() {
            sys::killpg(pgid);
        }
        let _ = child.start_kill();
        child.wait().await
    }

    /// After the outer process exited: waits until bwrap's init is gone
    /// too (bwrap exits as soon as the command does, while its init still
    /// tears the namespace down), so nothing the command started survives.
    /// In fallback mode there is no namespace: kills what is left in the
    /// process group (a `setsid` child escapes that; hence bwrap).
    pub(super) async fn settle(&mut self) {
        if self.supervised {
            // The reap waited for every process, and the supervisor's
            // pid (its process group's id), reaped, may be anyone's by
            // now: a group kill could hit another process.
            return;
        }
        match self.init_pid().await {
            Some(init) => wait_gone(init).await,
            None => sys::killpg(self.pgid),
        }
    }

    /// Marks the tree ended: the drop kills nothing and frees the uid.
    pub(super) fn finish(mut self) {
        self.child = None;
    }
}

impl Drop for Tree {
    fn drop(&mut self) {
        let Some(child) = self.child.take() else {
            return;
        };
        let mut tree = Tree {
            child: Some(child),
            pgid: self.pgid,
            info: self.info.take(),
            init: self.init,
            main: None,
            supervised: self.supervised,
            lease: self.lease.take(),
            reaping: true,
        };
        match tokio::runtime::Handle::try_current() {
            Ok(rt) if !self.reaping => {
                rt.spawn(async move {
                    if tree.is_running() {
                        let _ = tree.kill().await;
                    }
                    tree.settle().await;
                    // Landlock tier: whatever ended the supervisor before
                    // this drop (a signal, then the caller's cancel; an
                    // error of the reap), its orphans may run as the
                    // leased uid: none outlives the lease (review rev34).
                    if tree.supervised
                        && let Some(lease) = &tree.lease
                    {
                        let uid = lease.uid;
                        let _ = tokio::task::spawn_blocking(move || uids::kill_uid(uid)).await;
                    }
                    tree.finish();
                });
            }
            _ => {
                // No runtime to wait on (the process is ending): what can
                // be done without waiting. bwrap dies with the server anyway
                // (PR_SET_PDEATHSIG); a start-up in the window above may
                // be stranded.
                if let (Some(init), Some(outer)) = (tree.init, tree.child().id()) {
                    kill_child_of(init, outer as i32);
                }
                sys::killpg(tree.pgid);
                let _ = tree.child().start_kill();
                // Landlock tier: the supervisor's orphans (`setsid`
                // children are not in its group) go to the host's init;
                // found by the leased uid, as after any killed supervisor,
                // before the lease goes back.
                if tree.supervised
                    && let Some(lease) = &tree.lease
                {
                    uids::kill_uid(lease.uid);
                }
                tree.finish();
            }
        }
    }
}

/// SIGKILLs `pid` if it is still a child of `parent`. The pid is pinned
/// with a pidfd first, then its parent checked: a pid read earlier could
/// otherwise have been reaped and reused by then.
fn kill_child_of(pid: i32, parent: i32) {
    let Ok(fd) = sys::pidfd_open(pid) else {
        return;
    };
    if parent_of(pid) == Some(parent) {
        let _ = sys::pidfd_kill(&fd);
    }
}

/// The state letter and parent pid in `/proc/PID/stat`.
fn stat_of(pid: i32) -> Option<(char, i32)> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // "pid (comm) state ppid ...": comm may hold spaces and parens.
    let mut rest = s.rsplit_once(')')?.1.split_whitespace();
    let state = rest.next()?.chars().next()?;
    let ppid = rest.next()?.parse().ok()?;
    Some((state, ppid))
}

pub(super) fn parent_of(pid: i32) -> Option<i32> {
    stat_of(pid).map(|(_, ppid)| ppid)
}

/// Waits until `pid` is gone or a zombie (bounded: 5 s, then SIGKILL). A
/// zombie pid 1 of a pid namespace has already outlived every other
/// member. bwrap's outer process exits as soon as the command does, while
/// its init is still tearing the namespace down, so this wait is on every
/// command's path: a pidfd wakes it the moment the process exits, where
/// polling `/proc` cost half a 2 ms tick on average. Polling remains for
/// kernels without pidfds (before 5.3).
async fn wait_gone(pid: i32) {
    let deadline = Instant::now() + Duration::from_secs(5);
    match sys::pidfd_open(pid) {
        Ok(fd) => {
            if let Ok(afd) = sys::async_fd(fd) {
                if tokio::time::timeout_at(deadline.into(), afd.readable())
                    .await
                    .is_err()
                {
                    sys::kill(pid);
                }
                return;
            }
        }
        Err(e) if e.raw_os_error() == Some(libc::ESRCH) => return,
        Err(_) => {}
    }
    loop {
        if matches!(stat_of(pid), None | Some(('Z' | 'X', _))) {
            return;
        }
        if Instant::now() > deadline {
            sys::kill(pid);
            return;
        }
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
}
