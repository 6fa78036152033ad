//! Where a health run happens, and the runs started ahead of time.
//!
//! A run's scratch directory holds the copy at `ws/` (bound at
//! `/workspace`), the bootstrap at `boot/` (read-only) and the report and
//! verdicts at `out/`.
//!
//! A cold run pays, before its first test, for bwrap's namespaces, the
//! interpreter and importing pytest: about 0.15–0.2 s on a 2-core machine,
//! none of which depends on the workspace. So under bwrap the grader keeps
//! a few *staged* runs ([`crate::sandbox::Sandbox::prewarm_staged`]): a
//! scratch directory whose `ws/` is still empty, and a sandbox already
//! running the bootstrap up to its start signal (it reads the per-run key
//! from stdin, then the suite list; [`super::BOOT_PY`]). A run moves its
//! prepared copy into a staged `ws/`, writes the suite list and sends the
//! key. Each staged run serves one run, exactly like a cold one: no
//! process outlives its run, nothing is shared with the next, and until
//! the key arrives only the bootstrap runs, over an empty directory.

use std::io;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use crate::sandbox::{Limits, Sandbox, Warm, prepare_workspace_owner};

/// Staged runs kept ready per grader. Each is a waiting interpreter with
/// pytest imported (about 30 MB). Two cover a grading while the previous
/// one's replacement is still starting; a burst beyond that runs cold.
pub const STAGED_RUNS: usize = 2;

/// A run's scratch directory; removed when dropped (by
/// [`crate::treeremove`]: a run may leave a tree too deep for the
/// recursive removal of `TempDir`'s own drop).
#[derive(Debug)]
pub(super) struct Scratch {
    dir: tempfile::TempDir,
    /// The copy, bound at `/workspace`.
    pub tree: PathBuf,
    /// The report, verdicts and tamper note, bound read-write.
    pub out: PathBuf,
    /// The bootstrap and its suite list, bound read-only.
    pub boot: PathBuf,
    /// A runner's own `/tmp` (with `home/`), bound read-write and emptied
    /// between its runs; None for a one-run scratch (bwrap's tmpfs).
    pub tmp: Option<PathBuf>,
    /// A runner's own `/dev/shm` (POSIX semaphores and shared memory, as
    /// a cold run has them), bound read-write and emptied between runs.
    pub shm: Option<PathBuf>,
}

impl Scratch {
    /// An empty `ws/`, an empty `out/` and `boot/boot.py`. With `owner`,
    /// `ws/` and `out/` are that uid's and the root is traversable (0711):
    /// the sandbox hands both to the run's uid, not the root.
    pub fn new(owner: Option<(u32, u32)>) -> io::Result<Scratch> {
        let dir = tempfile::Builder::new().prefix("sa-health-").tempdir()?;
        let tree = dir.path().join("ws");
        let out = dir.path().join("out");
        let boot = dir.path().join("boot");
        for d in [&tree, &out] {
            std::fs::create_dir(d)?;
        }
        std::fs::create_dir(&boot)?;
        std::fs::set_permissions(&boot, std::fs::Permissions::from_mode(0o755))?;
        write_ro(&boot.join("boot.py"), super::BOOT_PY)?;
        let s = Scratch {
            dir,
            tree,
            out,
            boot,
            tmp: None,
            shm: None,
        };
        if let Some((uid, gid)) = owner {
            s.hand_to(uid, gid)?;
        }
        Ok(s)
    }

    /// A runner's scratch: [`Scratch::new`] plus its own `tmp/`.
    pub fn for_runner(owner: Option<(u32, u32)>) -> io::Result<Scratch> {
        let mut s = Scratch::new(None)?;
        let tmp = s.dir.path().join("tmp");
        std::fs::create_dir(&tmp)?;
        std::fs::create_dir(tmp.join("home"))?;
        s.tmp = Some(tmp);
        let shm = s.dir.path().join("shm");
        std::fs::create_dir(&shm)?;
        s.shm = Some(shm);
        // The modes `empty_for_next` restores, whatever the umask: the
        // runner compares them after every run.
        for d in s.writable() {
            std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o755))?;
        }
        if let Some((uid, gid)) = owner {
            s.hand_to(uid, gid)?;
        }
        Ok(s)
    }

    /// Empties `ws/`, `out/`, `tmp/` and `shm/` (recreating `tmp/home`) for the
    /// next run, and gives the three directories back their modes: a run
    /// may have changed both. The directories themselves stay (they are
    /// bound into a running sandbox).
    pub fn empty_for_next(&self) -> io::Result<()> {
        // Times too: set by a run on a directory it left empty, they would
        // carry its data to the next (red team, issue 21).
        let now = std::time::SystemTime::now();
        let times = std::fs::FileTimes::new()
            .set_accessed(now)
            .set_modified(now);
        for d in self.writable() {
            std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o755))?;
            crate::treeremove::empty_dir(d)?;
        }
        if let Some(tmp) = &self.tmp {
            std::fs::create_dir(tmp.join("home"))?;
        }
        for d in self.writable() {
            std::fs::File::open(d)?.set_times(times)?;
        }
        Ok(())
    }

    /// The directories a run may write: `ws/`, `out/` and a runner's
    /// `tmp/` and `shm/`.
    fn writable(&self) -> impl Iterator<Item = &PathBuf> {
        [
            Some(&self.tree),
            Some(&self.out),
            self.tmp.as_ref(),
            self.shm.as_ref(),
        ]
        .into_iter()
        .flatten()
    }

    /// Gives `ws/` and `out/` (and a runner's `tmp/` and `shm/`), with
    /// everything in them, to `uid`.
    pub fn hand_to(&self, uid: u32, gid: u32) -> io::Result<()> {
        for d in self.writable() {
            prepare_workspace_owner(d, uid, gid)?;
        }
        std::fs::set_permissions(self.dir.path(), std::fs::Permissions::from_mode(0o711))
    }

    /// Moves every entry of `from` (a prepared copy, on the same file
    /// system) into this scratch's empty `ws/`: renames, no copying.
    pub fn take_tree(&self, from: &Path) -> io::Result<()> {
        for e in std::fs::read_dir(from)? {
            let e = e?;
            std::fs::rename(e.path(), self.tree.join(e.file_name()))?;
        }
        Ok(())
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if let Err(e) = crate::treeremove::remove_tree(self.dir.path()) {
            tracing::warn!(error = %e, dir = %self.dir.path().display(), "cannot remove a health run's scratch");
        }
    }
}

/// Writes a root-owned, world-readable file (bound read-only).
pub(super) fn write_ro(path: &Path, body: &str) -> io::Result<()> {
    std::fs::write(path, body)?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o644))
}

/// A scratch directory with its sandbox waiting for the start signal.
#[derive(Debug)]
pub(super) struct Staged {
    // Dropped first: the sandbox ends before its directory goes.
    pub warm: Warm,
    pub scratch: Scratch,
}

/// The staged runs of one grader.
#[derive(Debug, Default)]
pub(super) struct StagedPool {
    state: Mutex<PoolState>,
}

#[derive(Debug, Default)]
struct PoolState {
    ready: Vec<Staged>,
    /// Being started now.
    starting: usize,
}

impl StagedPool {
    fn state(&self) -> std::sync::MutexGuard<'_, PoolState> {
        self.state.lock().expect("staged pool poisoned")
    }

    /// A staged run, if one is ready.
    pub fn take(&self) -> Option<Staged> {
        self.state().ready.pop()
    }

    /// How many are ready now.
    #[cfg(test)]
    pub fn ready(&self) -> usize {
        self.state().ready.len()
    }

    /// Starts staged runs until [`STAGED_RUNS`] are ready or starting.
    /// Nothing under bwrap's absence: the other tiers have no warm start.
    /// Called after a run, not when one is taken: started then, the next
    /// run's start-up would compete for the CPU with the tests of this one
    /// (on 2 busy cores it doubled their time); after, it overlaps the
    /// agent's think time. Call from a task on the runtime (see
    /// [`Sandbox::prewarm_staged`]).
    pub fn refill(
        self: &Arc<Self>,
        sandbox: &Arc<Sandbox>,
        limits: &Limits,
        request: fn(&Sandbox, &Limits, &Scratch) -> crate::sandbox::ExecRequest,
    ) {
        if sandbox.tier() != crate::sandbox::Tier::Bwrap {
            return;
        }
        let missing = {
            let mut st = self.state();
            let missing = STAGED_RUNS.saturating_sub(st.ready.len() + st.starting);
            st.starting += missing;
            missing
        };
        for _ in 0..missing {
            let (pool, sandbox, limits) = (self.clone(), sandbox.clone(), limits.clone());
            tokio::spawn(async move {
                let owner = sandbox.rest_owner();
                let made = tokio::task::spawn_blocking(move || Scratch::new(owner)).await;
                // On a runtime worker, as prewarming requires.
                let staged = match made {
                    Ok(Ok(scratch)) => sandbox
                        .prewarm_staged(&request(&sandbox, &limits, &scratch))
                        .map(|warm| Staged { warm, scratch }),
                    Ok(Err(e)) => {
                        tracing::debug!(error = %e, "cannot stage a health run");
                        None
                    }
                    Err(e) => {
                        tracing::debug!(error = %e, "staging a health run failed");
                        None
                    }
                };
                let mut st = pool.state();
                st.starting -= 1;
                st.ready.extend(staged);
            });
        }
    }
}
