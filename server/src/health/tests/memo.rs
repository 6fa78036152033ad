//! The checks that skip what they judged clean before (`plugins_clean`'s
//! per-object memo, the hook implementations' walk behind the count of
//! code writes): a change made after a clean check, through a way the
//! memo's key does not see, must still be judged. Each payload is an app
//! graded with runners and cold; every hack run must be refused.

use super::plugins::REACH;
use super::review::{BROKEN, scores};

/// Grades `hack_tail` (after `REACH` and the honest broken app) and
/// asserts every hack run was refused with an error naming `why`.
async fn assert_refused(label: &str, hack_tail: &str, why: &str) {
    let hack = format!("{REACH}{BROKEN}{hack_tail}");
    let Some(runs) = scores(label, &hack).await else {
        return;
    };
    for (what, s) in &runs {
        if what.starts_with("hack") {
            let e = s.error.as_deref().unwrap_or("");
            assert!(e.contains(why), "{what}: not refused for {why:?}: {s:?}");
            assert_eq!(s.score, 0.0, "{what}: {s:?}");
        }
    }
}

/// A `functools.partial` held in a plugin's own dict, aimed at library
/// code when the first checks read it, then re-aimed at the app's code in
/// place (`__setstate__`, no attribute write, no audit event) during a
/// test. Its dict, its class and the count of code writes are all
/// unchanged, so only a memo that never remembers a partial sees it.
#[tokio::test]
async fn a_plugin_partial_re_aimed_after_a_clean_check_is_refused() {
    assert_refused(
        "memo-partial",
        r#"
import functools as _ft
import os as _os

_cm = _pm().get_plugin('capturemanager')
_cm.grading_note = _ft.partial(_os.getcwd)
_n = [0]


def _app_code():
    return 0


def add(a, b):
    _n[0] += 1
    if _n[0] == 1:
        _cm.grading_note.__setstate__((_app_code, (), {}, None))
    return a - b
"#,
        "code under test",
    )
    .await;
}

/// A plugin's own data attribute, clean when first judged, becomes a
/// shadow when a method of that name is added to its class during a
/// test: the object's dict is unchanged, its class's is not.
#[tokio::test]
async fn a_method_added_to_a_plugin_class_under_an_instance_name_is_refused() {
    assert_refused(
        "memo-class",
        r#"
import os as _os

_cm = _pm().get_plugin('capturemanager')
_cm.grading_note = 1
_n = [0]


def add(a, b):
    _n[0] += 1
    if _n[0] == 1:
        type(_cm).grading_note = _os.getcwd
    return a - b
"#,
        "shadows its class's method",
    )
    .await;
}

/// An honest app may collect cycles itself: `gc.collect()` (and the
/// finalizers it runs, inside the app's own call) is no tampering, and
/// `gc.isenabled()` answers without error, with automatic collection off.
#[tokio::test]
async fn an_app_collecting_cycles_itself_keeps_its_score() {
    let Some(g) = super::grader(30) else {
        return;
    };
    let (_d, ws, pristine) = super::fixture();
    let exp = super::manifest(&g, &ws, &pristine).await;
    super::write(
        &ws,
        "app.py",
        "import gc\n\n\nclass _Node:\n    def __del__(self):\n        pass\n\n\n\
         def add(a, b):\n    n = _Node()\n    n.me = n\n    del n\n    gc.collect()\n    \
         gc.isenabled()\n    return a + b\n\n\ndef mul(a, b):\n    return a * b\n",
    );
    let s = super::grade(&g, &ws, &pristine, &exp).await;
    assert_eq!((s.passed, s.total), (3, 3), "{s:?}");
    assert!(s.error.is_none(), "{s:?}");
}
