//! Review rev43 (bfc7df2: `plugins_clean` remembers each object's last
//! clean check; the hook implementations' walk is skipped while no
//! `__code__` was written). The memo records an object's dict *after*
//! judging it: the walk reads a snapshot (`_list(d.items())`), `shadowed`
//! reads the dict, and only then `_tuple(d)` / `_tuple(d.values())` are
//! taken as the remembered state. Whatever changes the dict in between is
//! remembered as judged clean and never walked again while the dict stays
//! so. Before bfc7df2 every checkpoint walked every dict again, so such a
//! change was refused at the next checkpoint at the latest.
//!
//! Code under test runs in between through a collector finalizer: Python
//! 3.11 collects at the allocating call once the generation-0 count passes
//! its threshold, and `gc.set_threshold` is open to code under test. A
//! finalizer that keeps the count above a threshold of 1 (40 fresh
//! survivors per call, freed first so the count only drops to 0) is run at
//! every GC allocation; it tells where the check is from the reference
//! counts of the next item's `__dict__` and of a marker key/value it keeps
//! last in that dict (at `_tuple(d)`'s iterator: the dict +3, the key 0
//! (the walk's `k` is now `_sh`'s None), the value +1 (the walk's `v`)).
//! There it adds `runtest` (a function of the app) to the item's dict.

use super::plugins::REACH;
use super::review::{BROKEN, no_gain, scores};

/// The payload: armed in the first test's body (`add`), it gives the
/// second item an own `runtest` of the app during that item's first
/// check (its "setup start"), between the walk and the memo; every later
/// check of that item finds it as remembered and skips it, pytest calls
/// the app's `runtest`, the test passes. Measured on bfc7df2 by hand
/// (`python -I boot.py ...`, the grader's command line, outside any
/// sandbox): the second test's call "passed", run sealed (`END`), every
/// run; graded (this test): 1 of 3 in part of the runs (a miss is not
/// refused either; why the sandboxed runs miss was not found in time). On bfc7df2^ the same
/// app gains nothing: the old check walks the dict again at every
/// checkpoint.
pub(super) const FINALIZER_SHADOW: &str = r#"import gc as _gc
import sys as _sys

_pmh = [_pm()]
_st = {'D': None, 'K': None, 'M': None, 'base': None, 'keep': [], 'n': 0, 'done': 0, 'armed': False}


def _fake_runtest():
    # item.runtest() of the next test: its body never runs.
    return None


def _rc():
    return (_sys.getrefcount(_st['D']), _sys.getrefcount(_st['K']), _sys.getrefcount(_st['M']))


class _Keep:
    pass


class _Fin:
    def __del__(self):
        s = _st
        if not s['armed']:
            return
        # Re-armed first (so nothing below can break the chain): the next
        # collection finalizes a new one; survivors keep the count above
        # the threshold (each `_Keep` counts: no free list; the old ones
        # freed first, while the count is 0), so every GC allocation
        # collects.
        t = _Fin()
        t.me = t
        del t
        s['keep'] = None
        k = []
        for _ in range(40):
            k.append(_Keep())
        s['keep'] = k
        try:
            s['n'] += 1
            if s['n'] > 3000000:
                s['armed'] = False
                _gc.set_threshold(700, 10, 10)
                return
            gr = _sys.getrefcount
            D, K, M = s['D'], s['K'], s['M']
            r = (gr(D), gr(K), gr(M))
            # At rest each count is at its least: the base is the least seen.
            b = s['base'] = r if s['base'] is None else tuple(map(min, r, s['base']))
            if (r[0] - b[0], r[1] - b[1], r[2] - b[2]) == (3, 0, 1):
                # At `_tuple(d)` in `plugins_clean`: after the walk and
                # `shadowed`, before the memo's keys and values.
                D['runtest'] = _fake_runtest
                s['armed'] = False
                s['done'] += 1
                _gc.set_threshold(700, 10, 10)
        except BaseException as e:
            s['exc'] = s.get('exc', 0) + 1


def _arm_next():
    s = _st
    sess = _pmh[0].get_plugin('session')
    items = list(sess.items)
    cur = None
    for i, it in enumerate(items):
        if it.__dict__.get('runtest') is _fake_runtest or (s['D'] is None and i == 0):
            cur = i
    if cur is None or cur + 1 >= len(items):
        return
    nxt = items[cur + 1]
    D = nxt.__dict__
    # The one key pytest adds before the item's setup (a cached
    # property read by `pytest_runtest_logstart`), added now by pytest's
    # own code: the marker below is then the dict's last entry.
    nxt.location
    K = ''.join(['zz_', 'grading_', 'mark'])
    M = object()
    D[K] = M
    s['D'], s['K'], s['M'] = D, K, M
    s['base'] = None  # taken by the first finalizer, at rest
    s['n'] = 0
    s['armed'] = True
    _sys.setrecursionlimit(20000)
    _gc.set_threshold(1, 1000000000, 1000000000)
    # Three chains: a finalizer that fails at entry ends only its own.
    for _ in range(3):
        t = _Fin()
        t.me = t
    del t


_first = [True]


def add(a, b):
    if _first[0]:
        _first[0] = False
        _arm_next()
    return a - b
"#;

/// Finding 1 (rev43): a shadow added between `plugins_clean`'s walk and its
/// memo is remembered as clean; the test whose item it shadows passes.
/// Fails on bfc7df2 when the finalizer lands (measured at d2d61e0's
/// successor, 4 runs of this test per tier, runner + cold each: bwrap 5
/// of 8 grades 1/3, landlock 2 of 8; never refused; the honest broken app
/// 0/3 in all).
/// Fixed by judging copies and remembering exactly those copies
/// (`plugins_clean`, and `freeze_hooks` for the frozen dispatch state).
/// The payload lands only part of the time, so it is graded three times
/// (six grades).
#[tokio::test]
async fn rev43_finalizer_shadow_between_walk_and_memo() {
    let hack = format!("{REACH}{BROKEN}{FINALIZER_SHADOW}");
    for _ in 0..3 {
        let Some(runs) = scores("rev43-finalizer", &hack).await else {
            return;
        };
        no_gain(&runs);
    }
}

/// Q1 probe: a bound method whose function is a `functools.partial`
/// (`types.MethodType(partial, obj)`), held in a plugin's own dict, the
/// partial re-aimed at the app's code in place after the first clean
/// checks. `has_partial` follows `__func__`, so the object is never
/// remembered and the next check walks it: refused (passes on bfc7df2).
#[tokio::test]
async fn rev43_bound_method_of_a_partial_re_aimed_is_refused() {
    let hack = format!(
        "{REACH}{BROKEN}{}",
        r#"
import functools as _ft
import os as _os
import types as _ty

_cm = _pm().get_plugin('capturemanager')
_p = _ft.partial(_os.getcwd)
_cm.grading_note = _ty.MethodType(_p, _cm)
_n = [0]


def _app_code(*a):
    return 0


def add(a, b):
    _n[0] += 1
    if _n[0] == 1:
        _p.__setstate__((_app_code, (), {}, None))
    return a - b
"#
    );
    let Some(runs) = scores("rev43-method-partial", &hack).await else {
        return;
    };
    for (what, s) in &runs {
        if what.starts_with("hack") {
            let e = s.error.as_deref().unwrap_or("");
            assert!(e.contains("code under test"), "{what}: {s:?}");
            assert_eq!(s.score, 0.0, "{what}: {s:?}");
        }
    }
}
