//! Health runs forked from a runner that paid the start-up once.
//!
//! A staged run ([`super::scratch`]) takes the interpreter's and pytest's
//! start-up off a grading's latency but not off the machine: every run
//! still starts a sandbox, an interpreter and imports pytest (about
//! 0.13 s of CPU of a 0.36 s run, task 1). Under load that is a third of
//! the grading's CPU. A *runner* is a service sandbox
//! ([`crate::sandbox::Service`]) running the bootstrap in runner mode
//! ([`super::BOOT_PY`], "The runner"): started once, it forks one run per
//! key line. Each fork is what a staged run is from its start signal on,
//! plus a Landlock domain of its own:
//!
//! - writes only beneath `/workspace`, `/grader-out` and `/tmp`, which are
//!   this runner's scratch directories, emptied by the grader between two
//!   runs ([`Scratch::empty_for_next`]): nothing a run writes survives it;
//! - no signal, ptrace or abstract socket to any process outside the run:
//!   the runner and the sandbox's init cannot be reached, so nothing a run
//!   does reaches the next one through them;
//! - every process a run leaves is killed by the runner (the sandbox's
//!   subreaper) before it answers.
//!
//! The runner itself runs only the grader's bootstrap and never imports
//! the app; the sandbox is a staged one's (same flags, a pool uid for its
//! life), one run at a time, with the wall limit and the watchdog's
//! bounds applied to each run. Everything in the sandbox shares one uid
//! and one set of namespaces, so bwrap installs a seccomp program there
//! ([`crate::sandbox::Service`]): no call that changes another process,
//! no IPC or keyring object, no extended attribute or inode flag; and the
//! runner compares its own limits, priority, scheduling, CPU set and the
//! sandbox's IPC objects after every run (a change retires it: `DIRTY`).
//! A runner that answers anything but a run's exit code, dies, or cannot
//! confine a run (it learns that from a pipe the fork closes before any
//! code under test runs, never from the exit code) is dropped and the copy
//! is graded again, cold ([`Outcome::Retry`]); a kernel without Landlock
//! signal scoping gets no runners at all (the bootstrap answers
//! `NORUNNER`) and grades staged, as before.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use super::HealthGrader;
use super::copy::Prepared;
use super::run::{Ended, arm_copy, read_back, run_key};
use super::scratch::Scratch;
use crate::sandbox::{Answer, Service, Tier};
use graders::health_score::{Canary, RunResult};

/// Runners kept per grader (the environment has one, shared by every
/// task and session): runs beyond this many at once wait for one. Each is an idle interpreter with pytest imported (about 30
/// MB); on a 2-core machine three already keep both cores busy.
pub const RUNNERS_PER_GRADER: usize = 3;

/// A runner and the scratch directories bound into it.
#[derive(Debug)]
struct Runner {
    // Dropped first: the sandbox ends before its directories go.
    service: Service,
    scratch: Scratch,
    /// Runs it has answered.
    runs: u32,
}

/// The runners of one grader.
#[derive(Debug)]
pub(super) struct Runners {
    idle: Arc<Mutex<Vec<Runner>>>,
    /// Runners whose directories are being emptied after a run, off the
    /// reply's path: each goes back to `idle` only once they are empty.
    returning: Arc<AtomicUsize>,
    /// A runner holds its slot until it is idle again.
    slots: Arc<tokio::sync::Semaphore>,
    /// No runner can work here (no bwrap, no Landlock scoping): set once,
    /// for good.
    off: AtomicBool,
}

impl Default for Runners {
    fn default() -> Self {
        Runners {
            idle: Arc::default(),
            returning: Arc::default(),
            slots: Arc::new(tokio::sync::Semaphore::new(RUNNERS_PER_GRADER)),
            off: AtomicBool::new(false),
        }
    }
}

/// What a run through a runner came to.
pub(super) enum Outcome {
    /// The run happened (its result may be a failure of the suite).
    Ran(RunResult, Canary),
    /// No runner took the copy; it is untouched.
    NotStarted(Prepared),
    /// A runner took the copy and failed: grade a fresh copy cold.
    Retry(String),
}

impl Runners {
    pub(super) fn usable(&self) -> bool {
        !self.off.load(Ordering::Relaxed)
    }

    fn idle(&self) -> std::sync::MutexGuard<'_, Vec<Runner>> {
        self.idle.lock().expect("runner pool poisoned")
    }

    /// An idle runner that is still alive; waits (briefly) for one being
    /// emptied rather than starting another.
    async fn take_idle(&self) -> Option<Runner> {
        for _ in 0..100 {
            // Read first: a runner is pushed before it stops counting.
            let returning = self.returning.load(Ordering::Acquire);
            // An idle runner that died meanwhile is dropped here.
            let taken = std::iter::from_fn(|| self.idle().pop())
                .find_map(|mut r| r.service.is_alive().then_some(r));
            if taken.is_some() || returning == 0 {
                return taken;
            }
            tokio::time::sleep(std::time::Duration::from_millis(2)).await;
        }
        None
    }
}

impl HealthGrader {
    /// Runs the suite on `prepared` in one of this grader's runners.
    pub(super) async fn run_in_runner(&self, runners: &Runners, prepared: Prepared) -> Outcome {
        if self.sandbox.tier() != Tier::Bwrap {
            runners.off.store(true, Ordering::Relaxed);
            return Outcome::NotStarted(prepared);
        }
        let Ok(slot) = runners.slots.clone().acquire_owned().await else {
            return Outcome::NotStarted(prepared);
        };
        let mut runner = match runners.take_idle().await {
            Some(r) => r,
            None => match self.start_runner().await {
                Some(r) => r,
                None => return Outcome::NotStarted(prepared),
            },
        };
        let owner = runner.service.ids();
        let Prepared {
            scratch: cold,
            pristine_files,
            ..
        } = prepared;
        let Runner {
            service,
            scratch,
            runs,
        } = runner;
        let armed = tokio::task::spawn_blocking(move || -> std::io::Result<(Scratch, Canary)> {
            scratch.take_tree(&cold.tree)?;
            let inside = PathBuf::from(crate::sandbox::WORKSPACE_MOUNT);
            let canary = arm_copy(&scratch, &pristine_files, &inside, owner)?;
            Ok((scratch, canary))
        })
        .await
        .map_err(std::io::Error::other)
        .and_then(|r| r);
        let (scratch, canary) = match armed {
            Ok(x) => x,
            Err(e) => return Outcome::Retry(format!("arming a runner: {e}")),
        };
        runner = Runner {
            service,
            scratch,
            runs: runs + 1,
        };
        let key = run_key();
        let start = Instant::now();
        let answer = runner.service.call(&key).await;
        let duration = start.elapsed();
        let (exit_code, timed_out) = match answer {
            Ok(Answer::Line(l)) => match l.strip_prefix("R ").and_then(|c| c.parse::<i32>().ok()) {
                Some(c) if c >= 0 => (Some(c), false),
                Some(_) => (None, false),
                None => {
                    // Said by the runner itself, never by a run. Before
                    // any run (`NORUNNER`), or a fresh runner's first fork
                    // unconfined: this kernel cannot, so no runners, for
                    // good. After a run (a run may have broken what the
                    // next fork needs) or `DIRTY` (a run changed the
                    // runner): this runner only.
                    if l == "NORUNNER" || (l == "NOCONFINE" && runs == 0) {
                        runners.off.store(true, Ordering::Relaxed);
                    }
                    return Outcome::Retry(format!("a runner answered {l:?}"));
                }
            },
            // As a cold run that was stopped: no exit code.
            Ok(Answer::Timeout) => (None, true),
            Ok(Answer::Over(_)) => (None, false),
            Ok(Answer::Closed) => return Outcome::Retry("a runner ended".into()),
            Err(e) => return Outcome::Retry(format!("a runner failed: {e}")),
        };
        self.runner_runs.fetch_add(1, Ordering::Relaxed);
        let run = read_back(
            &runner.scratch,
            Ended {
                staged: true,
                duration,
                exit_code,
                timed_out,
            },
            key,
        );
        // Empty the directories for the next run, off the reply's path:
        // the runner (and its slot) is idle again only once they are
        // empty; a runner whose directories cannot be emptied is dropped.
        let alive = runner.service.is_alive();
        let (idle, returning) = (runners.idle.clone(), runners.returning.clone());
        returning.fetch_add(1, Ordering::AcqRel);
        tokio::task::spawn_blocking(move || {
            if alive && runner.scratch.empty_for_next().is_ok() {
                idle.lock().expect("runner pool poisoned").push(runner);
            } else {
                drop(runner);
            }
            returning.fetch_sub(1, Ordering::AcqRel);
            drop(slot);
        });
        Outcome::Ran(run, canary)
    }

    /// Starts a runner: its scratch (given to the uid it will run as)
    /// and the sandbox, the bootstrap in runner mode.
    async fn start_runner(&self) -> Option<Runner> {
        let owner = self.sandbox.rest_owner();
        let scratch = tokio::task::spawn_blocking(move || Scratch::for_runner(owner))
            .await
            .ok()?
            .ok()?;
        let mut req = Self::request_for(&self.sandbox, &self.limits, &scratch, false);
        req.env.push(("SECAUDIT_RUNNER".into(), "1".into()));
        let tmp = scratch.tmp.clone()?;
        req.extra_rw_binds.push((tmp, PathBuf::from("/tmp")));
        let shm = scratch.shm.clone()?;
        req.extra_rw_binds.push((shm, PathBuf::from("/dev/shm")));
        let service = self.sandbox.spawn_service(&req)?;
        Some(Runner {
            service,
            scratch,
            runs: 0,
        })
    }

    /// How many pytest runs so far a runner served.
    pub fn runner_runs(&self) -> u64 {
        self.runner_runs.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
impl HealthGrader {
    /// The uids of this grader's idle runners (tests: to kill only these).
    pub(super) fn idle_runner_uids(&self) -> Vec<u32> {
        self.runners.as_ref().map_or_else(Vec::new, |r| {
            // Runners still being emptied are idle in a moment.
            while r.returning.load(Ordering::Acquire) > 0 {
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
            r.idle()
                .iter()
                .filter_map(|x| x.service.ids().map(|i| i.0))
                .collect()
        })
    }
}
