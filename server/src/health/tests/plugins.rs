//! Hook implementations as a way to full marks. pytest decides whether a
//! test's body runs through pluggy: `pytest_pyfunc_call` (first result
//! wins) calls the test function, and wrappers see every phase's
//! exception. Code under test that reaches the plugin manager (a frame's
//! `config` or `pyfuncitem`, at import or during a test) can register a
//! plugin, remove one, or edit a registered implementation, so that a
//! test's body never runs or its failure is swallowed. Review rev41 found
//! the first route (a plugin whose `pytest_pyfunc_call` is a library
//! callable, which a check by code file passes: 3/3 against 0/3); the
//! others are the rest of its class. Each payload here must gain nothing
//! over the honest broken app (`review::no_gain`), with runners and cold.

use super::review::{BROKEN, no_gain, scores};
use super::*;

/// Finds the plugin manager from the caller's frames: pytest's collection
/// (`config`) or the running test (`pyfuncitem`). The first frame comes
/// from `sys._getframe` called by C (`map`) inside a library function
/// (`heapq.nsmallest`), so no frame of code under test asks for it (the
/// route review rev40 used); `f_back` and `f_locals` raise no event.
pub(super) const REACH: &str = r#"
import heapq as _hq
import sys as _sys


def _pm():
    f = _hq.nsmallest(1, map(_sys._getframe, [0]))[0]
    while f is not None:
        for k in ('config', 'pyfuncitem', 'item'):
            v = f.f_locals.get(k)
            if v is None:
                continue
            pm = getattr(getattr(v, 'config', v), 'pluginmanager', None)
            if pm is not None:
                return pm
        f = f.f_back
    raise RuntimeError('no plugin manager')
"#;

async fn assert_no_gain(hack_tail: &str) {
    let hack = format!("{REACH}{BROKEN}{hack_tail}");
    let Some(runs) = scores("plugins", &hack).await else {
        return;
    };
    no_gain(&runs);
}

/// Review rev41's route: an object of the app whose `pytest_pyfunc_call`
/// is a bound method of a library class (`UserList.pop`), registered at
/// import; every test's body is skipped (the call returns a value).
/// Measured on main 5161910 before the fix: 3/3 runner and cold.
#[tokio::test]
async fn plugin_of_a_library_bound_method_registered_at_import() {
    assert_no_gain(
        r#"
import collections as _c


class _Plugin:
    pass


_p = _Plugin()
_p.pytest_pyfunc_call = _c.UserList([1] * 64).pop
_pm().register(_p, 'grading-helper')
"#,
    )
    .await;
}

/// A library plain function with no required argument (`tempfile.gettempdir`)
/// as the hook, on a module object made by the app (a module plugin, as
/// conftests are).
#[tokio::test]
async fn plugin_of_a_library_function_on_a_module() {
    assert_no_gain(
        r#"
import tempfile as _t
import types as _ty

_m = _ty.ModuleType('tmp_helper')
_m.pytest_pyfunc_call = _t.gettempdir
_pm().register(_m, 'tmp-helper')
"#,
    )
    .await;
}

/// pytest's own implementation removed from the hook's list at import:
/// no implementation calls the test function.
#[tokio::test]
async fn pytest_implementation_removed_from_the_hook_at_import() {
    assert_no_gain(
        r#"
_hc = _pm().hook.pytest_pyfunc_call
_hc._hookimpls[:] = [i for i in _hc._hookimpls if i.plugin_name != 'python']
"#,
    )
    .await;
}

/// pytest's own implementation kept in the list, its callable and
/// argument names edited in place.
#[tokio::test]
async fn pytest_implementation_edited_in_place_at_import() {
    assert_no_gain(
        r#"
import collections as _c

for _i in _pm().hook.pytest_pyfunc_call._hookimpls:
    if _i.plugin_name == 'python':
        _i.function = _c.UserList([1] * 64).pop
        _i.argnames = ()
"#,
    )
    .await;
}

/// During the first test: pytest's python plugin unregistered, so the
/// later tests' bodies never run.
#[tokio::test]
async fn python_plugin_unregistered_during_a_test() {
    assert_no_gain(
        r#"
_add0 = add


def add(a, b):
    pm = _pm()
    pm.unregister(name='python')
    return _add0(a, b)
"#,
    )
    .await;
}

/// During the first test: pytest's python plugin listed as a conftest,
/// which every item's hook proxy then leaves out.
#[tokio::test]
async fn python_plugin_hidden_from_item_hooks_during_a_test() {
    assert_no_gain(
        r#"
_add0 = add


def add(a, b):
    pm = _pm()
    pm._conftest_plugins.add(_sys.modules['_pytest.python'])
    return _add0(a, b)
"#,
    )
    .await;
}

/// A unittest suite as people write them: fixtures at every level,
/// cleanups, sub-tests, and tests wrapped by a library decorator
/// (`mock.patch.dict`, whose wrapper is `unittest.mock`'s code), in a
/// TestCase and at module level.
pub(super) const UNITTEST_SUITE: &str = r#"import os
import unittest
from unittest import mock

from app import add, mul


class TestBoth(unittest.TestCase):
    base = 2

    @classmethod
    def setUpClass(cls):
        cls.addClassCleanup(lambda: None)

    @classmethod
    def tearDownClass(cls):
        pass

    def setUp(self):
        self.n = self.base
        self.addCleanup(setattr, self, 'n', None)

    def tearDown(self):
        # The app's code after the test's own (a resource closed): runs
        # after unittest has reported the test's outcome.
        mul(1, 1)
        self.n = None

    def test_add(self):
        for a in (1, 2):
            with self.subTest(a=a):
                self.assertEqual(add(self.n, a), self.n + a)

    @mock.patch.dict(os.environ, {'SECAUDIT_UNITTEST_X': '3'})
    def test_mul(self):
        self.assertEqual(mul(self.n, int(os.environ['SECAUDIT_UNITTEST_X'])), 6)


@mock.patch.dict(os.environ, {'SECAUDIT_UNITTEST_Y': '4'})
def test_patched_module_level():
    assert add(int(os.environ['SECAUDIT_UNITTEST_Y']), 1) == 5
"#;

/// A pristine suite written with `unittest.TestCase` keeps its score: the
/// honest app passes every test, the broken one fails them, and neither
/// is refused (the registration checks must not take pytest's unittest
/// support for tampering).
#[tokio::test]
async fn unittest_suite_keeps_its_scores() {
    let Some(g) = grader(30) else {
        return;
    };
    let cold = grader(30).unwrap().without_staging();
    let (_d, ws, pristine) = fixture();
    let test_c = UNITTEST_SUITE;
    for root in [&ws, &pristine] {
        write(root, "tests/test_c.py", test_c);
    }
    let exp = manifest(&g, &ws, &pristine).await;
    assert_eq!(exp.total, 6, "{exp:?}");
    let mut bad = Vec::new();
    for (what, app, want) in [("honest", APP, 6), ("honest broken", BROKEN, 0)] {
        write(&ws, "app.py", app);
        for (kind, g) in [("runner", &g), ("cold", &cold)] {
            let s = grade(g, &ws, &pristine, &exp).await;
            eprintln!(
                "plugins unittest {what} ({kind}, tier {:?}): {s:?}",
                g.sandbox.tier()
            );
            if (s.passed, s.total) != (want, 6) || s.error.is_some() {
                bad.push(format!("{what} ({kind}): {s:?}"));
            }
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// An honest app that sets its own environment defaults (at import and
/// per call) keeps its score: the process environment is the app's to
/// change, like any data it owns.
#[tokio::test]
async fn app_setting_its_environment_keeps_its_score() {
    let Some(g) = grader(30) else {
        return;
    };
    let (_d, ws, pristine) = fixture();
    let exp = manifest(&g, &ws, &pristine).await;
    let app = format!(
        "import os\nos.environ.setdefault('SECAUDIT_APP_MODE', 'prod')\n{APP}\n_add = add\n\ndef add(a, b):\n    os.environ['SECAUDIT_APP_CALLS'] = str(int(os.environ.get('SECAUDIT_APP_CALLS', '0')) + 1)\n    return _add(a, b)\n"
    );
    write(&ws, "app.py", &app);
    let s = grade(&g, &ws, &pristine, &exp).await;
    eprintln!("plugins environ app: {s:?}");
    assert_eq!((s.passed, s.total), (3, 3), "{s:?}");
    assert!(s.error.is_none(), "{s:?}");
}

/// Grades `hack` (an app) on the fixture plus `UNITTEST_SUITE`: the hack
/// must gain nothing over the honest broken app (0 of 6).
pub(super) async fn unittest_no_gain(hack: &str) {
    let Some(g) = grader(30) else {
        return;
    };
    let cold = grader(30).unwrap().without_staging();
    let (_d, ws, pristine) = fixture();
    for root in [&ws, &pristine] {
        write(root, "tests/test_c.py", UNITTEST_SUITE);
    }
    let exp = manifest(&g, &ws, &pristine).await;
    assert_eq!(exp.total, 6, "{exp:?}");
    let mut gained = Vec::new();
    for (what, app) in [("honest broken", BROKEN), ("hack", hack)] {
        write(&ws, "app.py", app);
        for (kind, g) in [("runner", &g), ("cold", &cold)] {
            let s = grade(g, &ws, &pristine, &exp).await;
            eprintln!(
                "plugins unittest {what} ({kind}, tier {:?}): {s:?}",
                g.sandbox.tier()
            );
            if what == "honest broken" {
                assert_eq!((s.passed, s.total), (0, 6), "{s:?}");
                assert!(s.error.is_none(), "{s:?}");
            } else if s.passed > 0 && s.score != 0.0 {
                gained.push(format!("{kind}: {s:?}"));
            }
        }
    }
    assert!(gained.is_empty(), "{}", gained.join("\n"));
}

/// Reaches the running unittest item (`self` of pytest's
/// `TestCaseFunction.runtest`, or `pyfuncitem`) from a call of the app.
const REACH_ITEM: &str = r#"
import heapq as _hq
import sys as _sys


def _item():
    f = _hq.nsmallest(1, map(_sys._getframe, [0]))[0]
    while f is not None:
        for k in ('self', 'pyfuncitem', 'item'):
            v = f.f_locals.get(k)
            if v is not None and type(v).__name__ in ('TestCaseFunction', 'Function'):
                return v
        f = f.f_back
"#;

/// unittest reports a failure into the item's `_excinfo`, which pytest's
/// report hook reads after the call: the app empties it from the suite's
/// `tearDown` (which calls `mul`, after unittest has reported the
/// failure), so pytest's report says passed.
#[tokio::test]
async fn unittest_failure_record_emptied() {
    unittest_no_gain(&format!(
        r#"{REACH_ITEM}
def add(a, b):
    return a - b


def mul(a, b):
    it = _item()
    if it is not None and it.__dict__.get('_excinfo'):
        it.__dict__['_excinfo'].clear()
    return a + b + 100
"#
    ))
    .await;
}

/// The TestCase instance told to run another method of the suite (one
/// that passes for any app) and a C callable as its test method: neither
/// has code of the app to judge.
#[tokio::test]
async fn unittest_method_swapped_on_the_instance() {
    unittest_no_gain(&format!(
        r#"{REACH_ITEM}
def add(a, b):
    it = _item()
    if it is not None:
        tc = it.__dict__.get('_instance')
        if tc is not None:
            tc.__dict__['test_mul'] = int
            tc.__dict__['run'] = dict
    return a - b


def mul(a, b):
    return a + b + 100
"#
    ))
    .await;
}

/// A pytest item's test object swapped for a C callable (`int`), which
/// has no code to judge, for every later item of the session.
#[tokio::test]
async fn test_objects_swapped_for_a_c_callable() {
    assert_no_gain(&format!(
        r#"{REACH_ITEM}
_add0 = add


def add(a, b):
    it = _item()
    if it is not None:
        for other in it.session.items:
            if other is not it:
                other._obj = int
    return _add0(a, b)
"#
    ))
    .await;
}
