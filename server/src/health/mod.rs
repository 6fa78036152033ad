//! The health grader: does the task's pristine test suite still pass on the
//! agent's workspace?
//!
//! Everything about the workspace is untrusted (an agent may delete, skip
//! or rewrite tests, patch pytest, tamper at run time from the code under
//! test, plant symlinks and special files, or ship its own tools: spec.md
//! §6, the health bullets and "Verdicts code under test cannot forge"), so
//! the grader never runs pytest on the workspace itself:
//!
//! 1. It copies the workspace into a fresh scratch directory: no `.git`,
//!    symlinks copied as symlinks and never followed, FIFOs, sockets and
//!    devices skipped, files opened with `O_NOFOLLOW|O_NONBLOCK`, and the
//!    whole copy bounded in entries, bytes and depth (over budget = an
//!    error, score 0, never a partial grade).
//! 2. It deletes whatever could steer pytest: every `conftest.py`, pytest
//!    config file (`pytest.ini`, `pyproject.toml`, `setup.cfg`, `tox.ini`),
//!    `pytest.py`, `sitecustomize.py`/`usercustomize.py`, `*.pth`,
//!    `_pytest/`/`pytest/` packages, bytecode caches, and test files
//!    (`test_*.py`, `*_test.py`) the task did not ship. Then it restores the
//!    pristine suite (conftests and config included) from `pristine_dir`, at
//!    the same relative paths, replacing whatever the agent put there.
//! 3. It runs pytest from the read-only venv inside the sandbox through a
//!    grader-owned bootstrap ([`BOOT_PY`], bound read-only, never in the
//!    workspace: `python -I /grader-boot/boot.py`), with plugin autoload
//!    off, `addopts` cleared, no cache, `--assert=plain`, the copy at
//!    `/workspace` and a separate writable `/grader-out` for the JUnit
//!    report and the bootstrap's verdicts.
//! 4. It trusts only ground truth: the score is the fraction of the
//!    *pristine manifest* ([`ExpectedTests`]) that passed. Skipped, xfailed,
//!    missing and deleted tests count as failed; any error scores 0; a
//!    missing, oversized, malformed or self-contradictory report, or one
//!    that disagrees with pytest's exit code (an `os._exit(0)` at import
//!    leaves no report), scores 0 with `error` set.
//!
//! Results are cached by a SHA-256 over the prepared copy (sorted paths,
//! modes and bytes), so an unchanged tree is never retested and re-grading
//! a snapshot is bitwise identical.
//!
//! Code the tests import runs inside pytest's process and can patch pytest
//! at run time: `sys.modules['_pytest.reports'].TestReport` rewritten from
//! the agent's `archiver/__init__.py` turned a broken fix into health 1.0
//! (tests/hacks.rs `runtime-patch-from-code`). No sandbox flag can stop
//! that, so [`HealthGrader::grade_linted_timed`] adds a diff lint (spec.md
//! §6, the lint for pytest-internals tampering): every Python file outside
//! the pristine suite is
//! searched for [`TAMPER_TOKENS`] (pytest internals, `sys.modules`,
//! `importlib`, frames, `gc`, `atexit`, `os._exit`, `exec`, processes, the
//! report path, ...), for source encodings other than UTF-8/ASCII/Latin-1
//! and for NFKC look-alike letters (`_ｐytest` imports `_pytest`). A file
//! that has more of any of them than the same file of the task's template
//! fails health with the reason; the suite never runs. Native extension
//! modules (`*.so`) are deleted with the bytecode. Known gap: a heuristic,
//! so an obfuscation it does not spell out can still pass.
//!
//! A second layer is a hidden canary in every run ([`graders::health_score::Canary`]): the
//! prepared copy (never the workspace) gets one extra test module with a
//! random per-run name, next to a pristine test module, holding one test
//! that must fail and one that must pass, both named by per-run nonces. A
//! report in which the must-fail test passed, or either is missing or has
//! another outcome, means something rewrote outcomes or the report: health
//! 0 with the reason in `error`. The canary is never part of the score or
//! the manifest. It cannot see a force-pass aimed at the pristine test
//! names only (issue 17: a data file run with `runpy` from
//! `archiver/__init__.py`, past the lint, scored 1.0).
//!
//! The mechanism that closes that class is the bootstrap (issue 17 item 2,
//! `health/boot.py`), in the test process before any workspace code:
//!
//! - **Own verdicts.** A first-called wrapper around every test's setup,
//!   call and teardown records what the phase raised, where the exception
//!   reaches pluggy's outermost wrapper, before pytest builds a report.
//!   Each line carries a SHA-256 chain keyed by a per-run secret that the
//!   grader sends on the bootstrap's stdin (it never touches a file) and
//!   the bootstrap reads before any code under test runs, having made
//!   itself non-dumpable, so no other process of the sandbox uid can read
//!   its memory. A run that
//!   ends early has no seal (`END <exit code>`). [`graders::health_score::check_verdicts`]: a
//!   test counts as passed only if the report and the chain both say so,
//!   and any disagreement is health 0 ("verdict forged").
//! - **Checkpoints** before and after each phase: no frame of code under
//!   test on the stack (a forged resume of the wrapper, a wrapped runner
//!   function), every registered hook implementation and every callable
//!   in the instance dicts of the item, session, config and plugin
//!   manager is trusted code (venv, standard library, bootstrap, pristine
//!   suite), and every name in the modules and classes of pytest, pluggy
//!   and `builtins` still holds the object it held before any code under
//!   test ran (identity; measured volatile names excepted).
//! - **An audit hook** (PEP 578, cannot be removed) that ends the run with
//!   `os._exit(86)`, which code under test cannot catch, on: frame access
//!   from code under test (`sys._getframe`, `tb_frame`, `gi_frame`, ...,
//!   including through `inspect`/`traceback`), `gc` object walks,
//!   `ctypes`, `compile`/`exec`/`marshal.loads`/`code.__new__` called by
//!   code under test, a trusted file name compiled for it (`codeop`),
//!   bytecode loaded from the workspace or a zip, `__code__`/`__class__`/
//!   `__defaults__` writes and reads from it; during the run and whoever
//!   does it (a trusted helper such as `unittest.mock.patch.object` can do
//!   it for code under test, now or later from a callback, and the changed
//!   object stays the one every sweep expects): a function given code of
//!   code under test, a library function's defaults changed, a library
//!   object's class changed to one with code under test; tracing and
//!   profiling, extra
//!   audit hooks, import hooks added to `sys.meta_path`/`sys.path_hooks`,
//!   and re-imports of `_thread`/`_signal`/`ctypes`. Threads and signal
//!   handlers are refused outright (they run off the checked stack or hand
//!   out frames). An exit code 86 or a tamper note is health 0 with the
//!   reason ([`graders::health_score::tamper_error`]).
//!
//! - **Strict suite.** The pristine suite is compiled by the bootstrap from
//!   the bytes it read at start (never the file as code under test may have
//!   left it), with every comparison and `assert` routed through the
//!   bootstrap: values of code under test are compared as what they hold,
//!   never through their own `__eq__`/`__contains__`/`__bool__`, and each
//!   comparison sweeps the namespaces the suite computes with (builtins,
//!   the library modules it reaches, its own modules and their classes);
//!   each test's end sweeps every library module and class. pytest's
//!   monkeypatch is wrapped: the suite's own patches are the sanctioned
//!   changes (`strict_suite_stops_lying_values_and_patches`).
//!
//! Known gaps (an in-process defence; a white-box attacker has the same
//! interpreter, spec.md "Honest limits of the health grader"): a library
//! patch installed and removed inside one statement of the suite, driven
//! by an operation on an object of code under test within it; modules the
//! suite reaches only through lazy imports, and `sys`, are swept at test
//! boundaries at most; methods the suite calls on a value of code under
//! test. The bootstrap costs about 0.3-0.6 s per run; the strict suite adds
//! about 0.1-0.2 s more (13 tasks' suites, 9-34 tests each, same run: 4.9 s
//! for all 13 before, 7.3 s after, interpreter start-up included).
//!
//! Under bwrap most runs are *staged* ([`scratch`]): started before their
//! copy exists, with the interpreter up and pytest imported, waiting for
//! the key. A run moves its prepared copy into a staged one's empty
//! directory and sends the key; the bootstrap reads the suite list only
//! then. A staged run serves one run and nothing outlives it, as cold.
//! Its wall limit counts from the key's delivery, so the grader adds back
//! the start-up the bootstrap recorded (its first verdict line): a tree
//! gets the same budget staged or cold.
//!
//! Before the key (a runner: before its fork), when there is time, the
//! bootstrap also makes pytest's configuration object (plugin manager,
//! default plugins, options) with the run's own arguments, and walks the
//! library's namespaces once, remembering what its snapshot made of each
//! with the objects it was made from. After the key it reuses a
//! namespace's walk only if every object is still the same one (a C-level
//! identity sweep) and walks the rest again; the memo is dropped before
//! pytest starts. Only the bootstrap, pytest's own code and the library
//! run before the key, over an empty workspace, so both are what the run
//! itself would have made (issue 21).

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::models::HealthSummary;
use crate::sandbox::{Limits, Sandbox};

mod cache;
mod canary;
mod copy;
mod lint;
mod manifest;
mod run;
mod runner;
mod scratch;

pub use crate::treecopy::CopyBudget;
use cache::{Cache, cache_key};
use copy::{Prepared, list_pristine, prepare_copy};
pub use graders::health_score::ExpectedTests;
use graders::health_score::{HealthScore, score};
pub use lint::TAMPER_TOKENS;
use lint::lint_tree;
use run::BOOT_PY;
pub use runner::RUNNERS_PER_GRADER;
pub use scratch::STAGED_RUNS;
use scratch::StagedPool;

/// Runs the pristine suite on restored copies of workspaces.
#[derive(Debug)]
pub struct HealthGrader {
    sandbox: Arc<Sandbox>,
    limits: Limits,
    budget: CopyBudget,
    cache: Mutex<Cache>,
    /// Runs started ahead of time ([`scratch`]); None: every run cold.
    staged: Option<Arc<StagedPool>>,
    /// Runs that a staged sandbox served (for tests and benchmarks).
    staged_runs: std::sync::atomic::AtomicU64,
    /// Runners that fork each run ([`runner`]); None: staged or cold.
    runners: Option<runner::Runners>,
    /// Runs that a runner served (for tests and benchmarks).
    runner_runs: std::sync::atomic::AtomicU64,
    /// Tests only: run plain pytest without the bootstrap, to show what a
    /// payload does to an unguarded run.
    bare: bool,
}

/// A grade, and the suite's own time inside pytest when pytest ran (its
/// JUnit report's session time; the rest of the run is start-up and
/// grading). For profiles and benchmarks: nothing is scored from it.
#[derive(Debug, Clone, PartialEq)]
pub struct TimedGrade {
    /// The grade.
    pub summary: HealthSummary,
    /// pytest's own session time; None when served from the cache or
    /// when no readable report came back.
    pub in_pytest: Option<Duration>,
}

/// Health 0 of `total` with the reason: a grade that could not be made.
fn failed_grade(total: u32, error: String) -> TimedGrade {
    TimedGrade {
        summary: HealthSummary {
            passed: 0,
            failed: total,
            errors: 0,
            total,
            score: 0.0,
            cached: false,
            error: Some(error),
        },
        in_pytest: None,
    }
}

/// A fresh (never cached) summary of a scored run.
impl From<HealthScore> for HealthSummary {
    fn from(s: HealthScore) -> Self {
        HealthSummary {
            passed: s.passed,
            failed: s.failed,
            errors: s.errors,
            total: s.total,
            score: s.score,
            cached: false,
            error: s.error,
        }
    }
}

impl HealthGrader {
    /// A grader with a 60 s wall limit per run and the default copy budget.
    pub fn new(sandbox: Arc<Sandbox>) -> Self {
        let limits = Limits {
            wall: Duration::from_secs(60),
            ..sandbox.config().limits.clone()
        };
        HealthGrader {
            sandbox,
            limits,
            budget: CopyBudget::default(),
            cache: Mutex::default(),
            staged: Some(Arc::default()),
            staged_runs: Default::default(),
            runners: Some(runner::Runners::default()),
            runner_runs: Default::default(),
            bare: false,
        }
    }

    /// Every run cold: no runners, no staged runs ([`scratch`]), for
    /// comparisons.
    pub fn without_staging(mut self) -> Self {
        self.staged = None;
        self.runners = None;
        self
    }

    /// Staged or cold runs only, no runners ([`runner`]), for comparisons.
    pub fn without_runners(mut self) -> Self {
        self.runners = None;
        self
    }

    /// How many pytest runs so far were served by a staged sandbox.
    pub fn staged_runs(&self) -> u64 {
        self.staged_runs.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Overrides the limits of each pytest run.
    pub fn with_limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// Overrides the copy budget.
    pub fn with_copy_budget(mut self, budget: CopyBudget) -> Self {
        self.budget = budget;
        self
    }

    /// Grades `workspace` against the manifest, the one entry point. `pristine_dir`
    /// holds exactly the task's suite files (tests, conftests, pytest
    /// config) at their workspace-relative paths; every regular file in it
    /// is restored. The tamper lint runs against `template`, the task's
    /// generated workspace: a Python file outside the suite with more
    /// [`TAMPER_TOKENS`], odd source encodings or look-alike letters than
    /// the template's file at the same path scores 0 with the reason in
    /// `error`, and pytest is not run. Never fails: problems become
    /// `score: 0` with `error` set. Returns pytest's own time too.
    pub async fn grade_linted_timed(
        &self,
        workspace: &Path,
        pristine_dir: &Path,
        template: &Path,
        expected: &ExpectedTests,
    ) -> TimedGrade {
        self.grade_inner(workspace, pristine_dir, template, expected)
            .await
    }

    async fn grade_inner(
        &self,
        workspace: &Path,
        pristine_dir: &Path,
        template: &Path,
        expected: &ExpectedTests,
    ) -> TimedGrade {
        let fail = |error: String| failed_grade(expected.total, error);
        if expected.total == 0 || expected.names.is_empty() {
            return fail("empty test manifest".into());
        }
        // A runner that fails once it has the copy gets no second chance:
        // the grade starts over from a fresh copy, without runners.
        let mut retried = None;
        for with_runner in [true, false] {
            match self
                .grade_once(workspace, pristine_dir, template, expected, with_runner)
                .await
            {
                Ok(graded) => return graded,
                Err(why) => retried = Some(why),
            }
        }
        fail(format!(
            "the health run failed twice ({})",
            retried.unwrap_or_default()
        ))
    }

    /// One attempt of [`HealthGrader::grade_inner`]; `Err` only when a
    /// runner took the copy and failed (the reason).
    async fn grade_once(
        &self,
        workspace: &Path,
        pristine_dir: &Path,
        template: &Path,
        expected: &ExpectedTests,
        with_runner: bool,
    ) -> Result<TimedGrade, String> {
        let fail = |error: String| Ok(failed_grade(expected.total, error));
        let prepared = match self.prepare(workspace, pristine_dir).await {
            Ok(p) => p,
            Err(e) => return fail(e),
        };
        let tree = prepared.scratch.tree.clone();
        let template = template.to_path_buf();
        let pristine = pristine_dir.to_path_buf();
        let budget = self.budget.clone();
        let lint = tokio::task::spawn_blocking(move || {
            let shipped = list_pristine(&pristine, &budget)?;
            lint_tree(&tree, &template, &shipped, &budget)
        })
        .await
        .unwrap_or_else(|e| Err(format!("lint task failed: {e}")));
        if let Err(e) = lint {
            return fail(e);
        }
        let key = cache_key(&prepared.hash, expected);
        if let Some(mut hit) = self.cache.lock().expect("health cache poisoned").get(&key) {
            hit.cached = true;
            return Ok(TimedGrade {
                summary: hit,
                in_pytest: None,
            });
        }
        let runners = self
            .runners
            .as_ref()
            .filter(|r| with_runner && !self.bare && r.usable());
        let prepared = match runners {
            Some(r) => match self.run_in_runner(r, prepared).await {
                runner::Outcome::Ran(run, canary) => Err((run, canary)),
                runner::Outcome::NotStarted(p) => Ok(p),
                runner::Outcome::Retry(why) => {
                    tracing::warn!(reason = %why, "a health runner failed; grading again cold");
                    return Err(why);
                }
            },
            None => Ok(prepared),
        };
        let (run, canary) = match prepared {
            Err(ran) => ran,
            Ok(p) => match self.run_pytest(p).await {
                Ok(r) => r,
                // The sandbox could not start: an infrastructure error, not
                // a property of the tree, so it is not cached.
                Err(e) => return fail(format!("sandbox failed to run pytest: {e}")),
            },
        };
        let scored = score(&run, expected, self.limits.wall, &canary);
        let graded = TimedGrade {
            summary: scored.summary.into(),
            in_pytest: scored.in_pytest,
        };
        self.cache
            .lock()
            .expect("health cache poisoned")
            .put(key, graded.summary.clone());
        Ok(graded)
    }

    /// Copies, cleans and restores the tree in a scratch directory
    /// (blocking work on the blocking pool).
    async fn prepare(&self, workspace: &Path, pristine_dir: &Path) -> Result<Prepared, String> {
        let ws = workspace.to_path_buf();
        let pristine = pristine_dir.to_path_buf();
        let budget = self.budget.clone();
        tokio::task::spawn_blocking(move || prepare_copy(&ws, &pristine, &budget))
            .await
            .map_err(|e| format!("health copy task failed: {e}"))?
    }
}

#[cfg(test)]
mod tests;
