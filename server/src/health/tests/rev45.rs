//! Review rev45 (read-only, of 923f16f and 8f8ca71): with automatic
//! collection off, code under test still runs inside trusted code when
//! trusted code drops the last reference to one of its objects (a weak
//! reference's callback fires there, with no frame of the app). Two routes
//! it named, each graded with runners and cold:
//! - the app's own `MonkeyPatch`, driven by a C callable from such a
//!   callback, passed the monkeypatch wrapper's frame check, and what it
//!   set (`Function.runtest`) became the baseline;
//! - the lead's counter-check of the first route: `Function.runtest`
//!   rebound by the app directly, in a test's body, was never judged at
//!   all: pytest's node classes have a metaclass (`NodeMeta`) that the
//!   namespace watch left out, so their class dicts were not swept;
//! - hook-call monitoring (`pm.add_hookcall_monitoring`) installed at
//!   import: pluggy's own closure replaces the plugin manager's hook
//!   executor, and the app's `after` may force any hook's result.

use super::plugins::REACH;
use super::review::{BROKEN, no_gain, scores};

async fn assert_no_gain(label: &str, tail: &str) {
    let hack = format!("{REACH}{BROKEN}{tail}");
    for _ in 0..2 {
        let Some(runs) = scores(label, &hack).await else {
            return;
        };
        no_gain(&runs);
    }
}

/// Route 1: `functools.partial(mp.setattr, Function, 'runtest', _noop)` as
/// the callback of a weak reference to the log-capture handler's stream,
/// which pytest's logging plugin replaces at the start of the next phase.
#[tokio::test]
async fn rev45_app_monkeypatch_from_a_weakref_callback() {
    assert_no_gain(
        "rev45-monkeypatch",
        r#"
import functools as _ft
import logging as _lg
import weakref as _wr

from _pytest.monkeypatch import MonkeyPatch as _MP
from _pytest.python import Function as _Fn

_orig = _Fn.__dict__['runtest']


def _noop(self):
    g = getattr(getattr(self, 'module', None), '__dict__', {})
    if g.get('add') is add or g.get('mul') is mul:
        return None
    return _orig(self)


_mp = _MP()
_keep = []
_cb = _ft.partial(_mp.setattr, _Fn, 'runtest', _noop)


def add(a, b):
    if not _keep:
        for h in _lg.getLogger().handlers:
            if type(h).__name__ == 'LogCaptureHandler':
                _keep.append(_wr.ref(h.stream, _cb))
                break
    return a - b
"#,
    )
    .await;
}

/// Route 2: hook-call monitoring at import; `after` runs once
/// `pytest_pyfunc_call` has run the test body and replaces its outcome (a
/// failed assertion) with a result, so the call phase passes.
#[tokio::test]
async fn rev45_hook_call_monitoring_installed_at_import() {
    assert_no_gain(
        "rev45-monitoring",
        r#"
def _before(hook_name, hook_impls, kwargs):
    return None


def _after(outcome, hook_name, hook_impls, kwargs):
    if hook_name == 'pytest_pyfunc_call':
        try:
            outcome.force_result(True)
        except Exception:
            pass


_pm().add_hookcall_monitoring(_before, _after)
"#,
    )
    .await;
}

/// The counter-check: `Function.runtest` rebound in the first test's body
/// (an app function that skips the suite's own tests and runs the rest,
/// the hidden canary included). Measured by hand on 8f8ca71 (the
/// fixture, the grader's command line): 2 of 3 passed, not refused. Now
/// refused: "call end: _pytest.python.Function.runtest rebound".
#[tokio::test]
async fn rev45_node_class_method_rebound_by_the_app() {
    assert_no_gain(
        "rev45-node-class",
        r#"
from _pytest.python import Function as _Fn

_orig = _Fn.__dict__['runtest']


def _noop(self):
    g = getattr(getattr(self, 'module', None), '__dict__', {})
    if g.get('add') is add or g.get('mul') is mul:
        return None
    return _orig(self)


_n = [0]


def add(a, b):
    if not _n[0]:
        _n[0] = 1
        _Fn.runtest = _noop
    return a - b
"#,
    )
    .await;
}
