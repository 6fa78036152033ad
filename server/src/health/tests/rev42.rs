//! Review rev42 of a459081 (pluggy's dispatch state frozen, the test object
//! tied to the suite's binding, unittest outcomes from unittest's own
//! reports). Each payload is an app graded against the honest broken app
//! (`review::no_gain`, `plugins::unittest_no_gain`), with runners and cold.

use super::plugins::{REACH, unittest_no_gain};
use super::review::{BROKEN, no_gain, scores};
use super::*;

async fn assert_no_gain(hack_tail: &str) {
    let hack = format!("{REACH}{BROKEN}{hack_tail}");
    let Some(runs) = scores("rev42", &hack).await else {
        return;
    };
    no_gain(&runs);
}

/// pytest's own capture plugin (an instance plugin, its hook implementations
/// pytest's and untouched) wraps every phase in `with self.item_capture(..)`:
/// the app shadows that method on the instance with a library callable
/// whose context manager swallows any exception (`contextlib.suppress`),
/// inside the grader's phase wrapper. The frozen hook state is intact; the
/// plugin object's state is not. Measured on a459081 (bwrap): honest broken
/// 0/3 runner and cold; hack 0/3 with the canary tripped in both (the
/// hidden must-fail test passes too): held by the canary only.
#[tokio::test]
async fn capture_plugin_method_shadowed_on_its_instance() {
    assert_no_gain(
        r#"
import contextlib as _cl
import functools as _ft

_pm().get_plugin('capturemanager').item_capture = _ft.partial(_cl.suppress, BaseException)
"#,
    )
    .await;
}

/// The same through an instance attribute holding an app object that is
/// no function (its `__exit__` is the app's): pytest's logging plugin runs
/// every phase as `yield from self._runtest_for(item, when)`. Measured on
/// a459081 (bwrap): honest broken 0/3; hack 0/3, 5 errors, refused ("JUnit
/// report counts disagree with its test cases") runner and cold.
#[tokio::test]
async fn logging_plugin_method_shadowed_by_an_app_generator() {
    assert_no_gain(
        r#"
class _Swallow:
    def __init__(self, item, when):
        self.it = iter((None,))

    def __iter__(self):
        return self

    def __next__(self):
        return next(self.it)

    def send(self, v):
        return next(self.it)

    def throw(self, *a):
        raise StopIteration

    def close(self):
        pass


_pm().get_plugin('logging-plugin')._runtest_for = _Swallow
"#,
    )
    .await;
}

/// unittest swallows `unittest.case._ShouldStop` in every test part
/// (`_Outcome.testPartExecutor`: `except _ShouldStop: pass`) and then
/// reports success from `TestCase.run` for the item's own instance: the
/// app raises it instead of returning a wrong value. Measured on a459081
/// (bwrap): honest broken 0/6 runner and cold; hack 2/6 runner and cold
/// (both TestCase tests), no error.
#[tokio::test]
async fn unittest_should_stop_raised_by_the_app() {
    unittest_no_gain(
        r#"
import unittest.case as _uc


def add(a, b):
    raise _uc._ShouldStop()


def mul(a, b):
    raise _uc._ShouldStop()
"#,
    )
    .await;
}

/// The running TestCase's outcome object is reachable from the test's own
/// frame (`self._outcome`): the app marks it as expecting a failure, so
/// the assertion's failure is stored as an expected one, and `TestCase.run`
/// (whose own `expecting_failure` is False) reports success. Measured on
/// a459081 (bwrap): honest broken 0/6; hack 2/6 runner and cold, no error.
#[tokio::test]
async fn unittest_outcome_told_to_expect_a_failure() {
    unittest_no_gain(
        r#"
import heapq as _hq
import sys as _sys


def _expect():
    f = _hq.nsmallest(1, map(_sys._getframe, [0]))[0]
    while f is not None:
        o = getattr(f.f_locals.get('self'), '_outcome', None)
        if o is not None:
            o.expecting_failure = True
            return
        f = f.f_back


def add(a, b):
    _expect()
    return a - b


def mul(a, b):
    _expect()
    return a + b + 100
"#,
    )
    .await;
}

/// A suite test decorated by a library decorator (`mock.patch.dict`) is the
/// library's wrapper, which calls the suite's function from its closure;
/// `test_object_clean` follows `__wrapped__` only. The app points the
/// closure cell at a function of its own (a cell's contents are writable
/// and raise no audit event), so the suite's body never runs. Measured on
/// a459081 (bwrap): honest broken 0/6; hack 2/6 runner and cold, no error.
#[tokio::test]
async fn decorated_test_closure_cell_repointed() {
    unittest_no_gain(
        r#"
import sys as _sys


def _skip(*a, **k):
    return None


def _repoint():
    for m in list(_sys.modules.values()):
        if not str(getattr(m, '__file__', '')).endswith('test_c.py'):
            continue
        fns = [m.__dict__.get('test_patched_module_level')]
        cls = m.__dict__.get('TestBoth')
        if cls is not None:
            fns.append(cls.__dict__.get('test_mul'))
        for fn in fns:
            for c in getattr(fn, '__closure__', None) or ():
                if callable(c.cell_contents) and getattr(c.cell_contents, '__name__', '').startswith('test_'):
                    c.cell_contents = _skip


def add(a, b):
    _repoint()
    return a - b


def mul(a, b):
    _repoint()
    return a + b + 100
"#,
    )
    .await;
}

/// pytest's runner calls `item.runtest()`, a method of the item's class:
/// the app shadows it on every later item with a library callable (a C
/// method: no code to judge; the item dict check looks for code of the
/// app only), so their bodies never run. Measured on a459081 (bwrap):
/// honest broken 0/3 runner and cold; hack 2/3 runner (no error), cold 0/3
/// with the canary tripped.
#[tokio::test]
async fn item_runtest_shadowed_with_a_library_callable() {
    assert_no_gain(
        r#"
_add0 = add


def add(a, b):
    f = _hq.nsmallest(1, map(_sys._getframe, [0]))[0]
    while f is not None:
        it = f.f_locals.get('pyfuncitem') or f.f_locals.get('item')
        if it is not None and hasattr(it, 'session'):
            for other in it.session.items:
                if other is not it:
                    other.runtest = {}.clear
            break
        f = f.f_back
    return _add0(a, b)
"#,
    )
    .await;
}

/// Grades the honest app and the honest broken app on the fixture plus
/// `test_c` (its tests count `extra`): each must keep its score (all of
/// them, none of them), and neither be refused.
async fn honest_suite_keeps_scores(label: &str, test_c: &str, extra: u32) {
    let Some(g) = grader(30) else {
        return;
    };
    let cold = grader(30).unwrap().without_staging();
    let (_d, ws, pristine) = fixture();
    for root in [&ws, &pristine] {
        write(root, "tests/test_c.py", test_c);
    }
    let exp = manifest(&g, &ws, &pristine).await;
    let total = 3 + extra;
    assert_eq!(exp.total, total, "{exp:?}");
    let mut bad = Vec::new();
    for (what, app, want) in [("honest", APP, total), ("honest broken", BROKEN, 0)] {
        write(&ws, "app.py", app);
        for (kind, g) in [("runner", &g), ("cold", &cold)] {
            let s = grade(g, &ws, &pristine, &exp).await;
            eprintln!(
                "rev42 {label} {what} ({kind}, tier {:?}): {s:?}",
                g.sandbox.tier()
            );
            if (s.passed, s.total) != (want, total) || s.error.is_some() {
                bad.push(format!("{what} ({kind}): {s:?}"));
            }
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// A decorator the suite defines itself (with `functools.wraps`, as people
/// write them): the item's function is the suite's wrapper, whose code is
/// the suite's but named `wrapper`, not the test's name. Measured on
/// a459081 (bwrap): the pristine manifest run itself is refused ("test
/// tests/test_c.py::test_twice runs the suite's wrapper").
#[tokio::test]
async fn suite_defined_decorator_keeps_its_scores() {
    honest_suite_keeps_scores(
        "suite decorator",
        r#"import functools

from app import add


def twice(f):
    @functools.wraps(f)
    def wrapper(*a, **k):
        f(*a, **k)
        return f(*a, **k)
    return wrapper


@twice
def test_twice():
    assert add(1, 2) == 3
"#,
        1,
    )
    .await;
}

/// A parametrized test whose id holds `::` (an IPv6 address): the node id
/// `test_c.py::test_host[::1]` split on `::` names no class of the suite.
/// Measured on a459081 (bwrap): the pristine manifest run itself is
/// refused ("test_host[ is no class of the suite").
#[tokio::test]
async fn parametrize_id_with_double_colon_keeps_its_scores() {
    honest_suite_keeps_scores(
        "param ::",
        r#"import pytest

from app import add


@pytest.mark.parametrize("host", ["::1", "127.0.0.1"])
def test_host(host):
    assert add(len(host), 1) == len(host) + 1
"#,
        2,
    )
    .await;
}

/// `lib_class_written` exempts, on a suite TestCase class, every name any
/// code of `unittest.case` writes on its first argument, whichever class
/// that code belongs to: `failureException` (written by
/// `_AssertRaisesBaseContext.__init__`) among them. The app rebinds it on
/// the suite's class to unittest's `_ShouldStop`, so every failed
/// assertion raises the exception unittest's executor swallows. Measured on
/// rev42 d40b4aa (bwrap): honest broken 0/6; hack 0/6 refused runner and
/// cold ("name failureException added to test_c.TestBoth": the exemption
/// covers no name the class did not already hold; not a finding).
#[tokio::test]
async fn unittest_failure_exception_rebound_on_the_suite_class() {
    unittest_no_gain(
        r#"
import sys as _sys
import unittest.case as _uc


def _rebind():
    for m in list(_sys.modules.values()):
        if str(getattr(m, '__file__', '')).endswith('test_c.py'):
            cls = m.__dict__.get('TestBoth')
            if cls is not None:
                cls.failureException = _uc._ShouldStop


def add(a, b):
    _rebind()
    return a - b


def mul(a, b):
    _rebind()
    return a + b + 100
"#,
    )
    .await;
}

/// The known false positive (not fixed here): a suite class attribute
/// written by the suite's own `setUpClass` (`cls.x = ...`). Confirmed on
/// rev42 08b69d5 (bwrap): the pristine manifest run is refused ("name base
/// added to test_c.TestShared").
#[tokio::test]
#[ignore = "open: known pre-existing FP, the strict sweep refuses a name the suite's own setUpClass adds to its class"]
async fn suite_set_up_class_attribute_keeps_its_scores() {
    honest_suite_keeps_scores(
        "setUpClass attr",
        r#"import unittest

from app import add


class TestShared(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.base = add(1, 1)

    def test_base(self):
        self.assertEqual(self.base, 2)
"#,
        1,
    )
    .await;
}
