//! Review rev40 (seed 001: a reviewer who did not write the code) of the
//! bootstrap's native-module, file-name and signal rules and of the
//! runner's isolation between runs. Each `rev40_*` test that fails is a
//! finding; its doc comment gives the measured scores.

use super::review::{json_dump_no_gain, no_gain, scores};
use super::*;

/// Q2 (a new route to a trusted-looking stack): the suite's strict
/// comparisons live as the keyword default `_secaudit_strict_` of every
/// suite function, in the function's live `__kwdefaults__` dict, and the
/// only guard on that dict is the hook's refusal of a read of
/// `__kwdefaults__` "with code under test on the stack". Code under test
/// that is only C callables has no frame: the bootstrap's own `plain`,
/// normalising a value the app returned, reads `object.__getattribute__(x,
/// '__dict__')`, which runs the app class's `__dict__` *property*; its
/// getter is `functools.partial(next, map(...))`, a pipeline of
/// `operator.attrgetter('….__kwdefaults__')` and `operator.setitem` run
/// with only trusted frames on the stack (`plain` is the caller). It
/// replaces the strict comparisons of every later test with `lambda *a:
/// True`; no check reads a suite function's kwdefaults after `pin`.
///
/// Measured (bubblewrap, runner and cold; and `SECAUDIT_SANDBOX=landlock`,
/// cold both times since that tier has no runners): honest broken 0/3,
/// hack 2/3 (0.667; the first test, whose value carried the payload,
/// fails), no error. Every later test of the suite would pass whatever
/// the app returns.
#[tokio::test]
async fn rev40_suite_strict_defaults_rewritten_from_a_dict_property() {
    let hack = r#"import sys
from collections import deque
from functools import partial
from itertools import chain
from operator import attrgetter, setitem

FAKE = (lambda ops, vals: True, lambda e: True, lambda m, n, v: v, lambda o, a: getattr(o, a))

def _pipe(mod, path):
    return map(setitem, map(attrgetter(path + '.__kwdefaults__'), map(sys.modules.get, [mod])),
               ['_secaudit_strict_'], [FAKE])

_run = map(deque, [chain(_pipe('test_b', 'TestMul.test_mul'), _pipe('test_a', 'test_add_neg'))], [0])

class Trojan:
    def __eq__(self, other):
        return False
    __dict__ = property(partial(next, _run))

_first = [True]

def add(a, b):
    if _first[0]:
        _first[0] = False
        return Trojan()
    return a - b

def mul(a, b):
    return a + b + 100
"#;
    let Some(runs) = scores("rev40", hack).await else {
        return;
    };
    no_gain(&runs);
}

/// Q2, a fifth route to a library file name on the app's own code (same
/// root cause as the test above: C callables driven by a trusted frame
/// leave no frame of code under test for `_clean`). The getter compiles
/// the app's source as the standard library's `os.py` (the hook's
/// `compile` rule refuses a trusted name only "for code under test",
/// judged by the stack), `exec`s it, and points the app's `add` (a
/// `functools.partial`, retargeted with `__setstate__`, no audit event)
/// at the result. The suite's next `add(-1, 1)` then runs the app's code
/// as "library" code with only trusted frames on the stack, where it may
/// read and rewrite a suite function's `__kwdefaults__` itself (any check
/// keyed on file names trusts it).
///
/// Measured (bubblewrap, runner and cold; landlock cold): honest broken
/// 0/3, hack 1/3 (test_mul forged; test_add carried the getter, test_add_neg
/// ran the renamed code, which still subtracts), no error.
#[tokio::test]
async fn rev40_app_code_compiled_under_a_library_name_by_c_callables() {
    let hack = r#"import os
import sys
from collections import deque
from functools import partial
from itertools import chain

# Compiled under the standard library's os.py by C callables only (the
# bootstrap's own plain() runs the getter), so no frame of code under test
# is on the stack when the hook judges the compile.
SRC = """def f(a, b):
    sys.modules[B].TestMul.test_mul.__kwdefaults__['_secaudit_strict_'] = FAKE
    return a - b
"""
LIB = os.path.dirname(os.__file__) + "/os.py"
A = [n for n, m in list(sys.modules.items()) if str(getattr(m, '__file__', '')).endswith('test_a.py')][0]
NS = {'sys': sys, 'B': A[:-1] + 'b',
      'FAKE': (lambda ops, vals: True, lambda e: True, lambda m, n, v: v, lambda o, a: getattr(o, a))}


def _add(a, b):
    _add.__dict__.setdefault('n', 0)
    _add.n += 1
    if _add.n == 1:
        return Trojan()
    return a - b


# The suite calls `add` through a partial; the getter points it at f.
add = partial(_add)
_made = map(exec, map(compile, [SRC], [LIB], ['exec']), [NS])
_aim = map(add.__setstate__, zip(map(NS.get, ['f']), [()], [{}], [None]))
_run = map(deque, [chain(_made, _aim)], [0])


class Trojan:
    def __eq__(self, other):
        return False
    __dict__ = property(partial(next, _run))


def mul(a, b):
    return a + b + 100
"#;
    let Some(runs) = scores("rev40", hack).await else {
        return;
    };
    no_gain(&runs);
}

/// Q2 again, against the library rather than the suite: the same getter
/// (C callables only, run by the bootstrap's `plain`) rewrites
/// `json.loads.__kwdefaults__['object_hook']` in place. The hook refuses
/// a library function's defaults *set* (`object.__setattr__`), and a read
/// of a trusted function's `__kwdefaults__` with code under test on the
/// stack; a change of the live dict itself raises no event, and no sweep
/// compares library functions' keyword defaults. The suite's own
/// `json.loads(dump())` then returns what the app chose.
///
/// Measured (bubblewrap, runner and cold; landlock cold): honest broken
/// 0/4, hack 1/4 (test_dump, whose module the suite imports itself), no
/// error.
#[tokio::test]
async fn rev40_library_keyword_defaults_changed_in_place() {
    let hack = r#"import json
from collections import deque
from functools import partial
from operator import attrgetter, setitem

_run = map(deque, [map(setitem, map(attrgetter('__kwdefaults__'), [json.loads]),
                       ['object_hook'], [partial(dict, a=1)])], [0])

class Trojan:
    def __eq__(self, other):
        return False
    __dict__ = property(partial(next, _run))

_first = [True]

def add(a, b):
    if _first[0]:
        _first[0] = False
        return Trojan()
    return a - b

def mul(a, b):
    return a + b + 100

def dump():
    return '{}'
"#;
    json_dump_no_gain("rev40", hack).await;
}

/// The test above with another trigger (found open with every fix
/// proposed here; closed by the lead in stop 35: reads cannot be judged
/// by who asks, since C callables have no frame, so every library
/// function's keyword-default dict is held exactly from the baseline and
/// compared at every check).
/// The last thing the app does at import is leave a reference cycle whose weak reference's callback is
/// `functools.partial(next, map(...))`; the collector frees it at some
/// later allocation in pytest's or the bootstrap's code, where the
/// pipeline rewrites `json.loads`'s `object_hook` default in place.
///
/// Measured with the proposed fixes, before the lead's: honest broken
/// 0/4; hack 1/4, no error, in the runner (3 of 3 runs) and landlock (2 of 2); cold bwrap
/// 1/4 in 1 of 3 runs, 0/4 in the others (when the collector runs is
/// allocation timing: there it ran after `test_dump`'s comparison).
#[tokio::test]
async fn rev40_library_keyword_defaults_changed_by_a_weakref_callback() {
    let hack = r#"import json
import weakref
from collections import deque
from functools import partial
from operator import attrgetter, setitem

_run = map(deque, [map(setitem, map(attrgetter('__kwdefaults__'), [json.loads]),
                       ['object_hook'], [partial(dict, a=1)])], [0])


class _Cycle:
    pass


def add(a, b):
    return a - b


def mul(a, b):
    return a + b + 100


def dump():
    return '{}'


# Last thing at import: a reference cycle whose weak reference's callback
# is a C callable; the collector frees it later, inside whatever trusted
# frame allocates then, with no frame of code under test on the stack.
_c = _Cycle()
_c.me = _c
_wr = weakref.ref(_c, partial(next, _run))
del _c
"#;
    json_dump_no_gain("rev40", hack).await;
}

/// The same finalizer route through `unittest.mock._copy_func_details`
/// (a library reader of `__kwdefaults__` that hands the dict on): driven
/// by the collector, it copies `json.loads`' live dict onto a function of
/// the app, which then changes it in place while the suite's call runs.
/// The held dict's change is seen at the comparison's check (stop 35).
/// A guard, not a demonstrated finding: with the held check switched off
/// it scored 0/4 too in the lead's run (the collector had not run the
/// copy before `test_dump`), while the test above scored 1/4 against 0/4
/// then in both runner and cold bwrap runs.
#[tokio::test]
async fn rev40_library_keyword_defaults_copied_to_the_app_by_mock() {
    let hack = r#"import json
import weakref
from collections import deque
from functools import partial
from unittest import mock


def _f(*, object_hook=None):
    return object_hook


_own = _f.__kwdefaults__
_run = map(deque, [map(mock._copy_func_details, [json.loads], [_f])], [0])


class _Cycle:
    pass


def add(a, b):
    return a - b


def mul(a, b):
    return a + b + 100


def dump():
    kd = _f.__kwdefaults__
    if kd is not _own and kd is not None and 'object_hook' in kd:
        kd['object_hook'] = partial(dict, a=1)
    return '{}'


_c = _Cycle()
_c.me = _c
_wr = weakref.ref(_c, partial(next, _run))
del _c
"#;
    json_dump_no_gain("rev40", hack).await;
}

/// Q1/Q2, the worst of the C-callable route: the audit hook switched off.
/// The hook hands a frame of the bootstrap to "the caller's frame or its
/// parent" (`sys._getframe` from a bootstrap function). Inside the
/// bootstrap's `plain`, the app's getter (`functools.partial(next,
/// map(...))`, C only) calls `sys._getframe(0)`: the caller *is* `plain`, so
/// `plain`'s own frame is handed out. `f_back` and `f_locals` raise no audit
/// event on 3.11 (the hook's `f_back` branches never run), so plain app
/// code walks up to `_grader_main` and sets `state[0]`, the hook's busy
/// flag: every later event returns at once. The app then reads and sets
/// `__code__`, compiles under the suite's file name, walks `gc`, takes
/// frames, all unrefused; it gives the later tests a passing body.
///
/// Measured (bubblewrap, runner and cold; landlock cold): honest broken
/// 0/3, hack 2/3, no error.
#[tokio::test]
async fn rev40_grader_frame_from_a_c_getter_switches_the_hook_off() {
    let hack = r#"import sys
from collections import deque
from functools import partial
from itertools import chain

BOX = []


def _off():
    # A frame of the bootstrap (`plain`'s own, handed to the getter as the
    # caller's frame); `f_back` and `f_locals` raise no audit event.
    f = BOX[0]
    while f is not None and 'state' not in f.f_locals:
        f = f.f_back
    state = f.f_locals['state']
    state[0] = True  # the hook's "busy" flag: every later event returns at once
    BOX.append(state)
    # Each of these ends the run while the hook is on.
    sys._getframe(0)
    import gc
    gc.get_objects()
    for m in list(sys.modules.values()):
        for fn in (getattr(m, 'test_add_neg', None), getattr(getattr(m, 'TestMul', None), 'test_mul', None)):
            if fn is not None:
                ns = {}
                exec(compile('def t(*a, _secaudit_strict_=None, **k):\n    pass\n', m.__file__, 'exec'), ns)
                fn.__code__ = ns['t'].__code__


_run = map(deque, [chain(map(BOX.append, map(sys._getframe, [0])), iter(_off, None))], [0])


class Trojan:
    def __eq__(self, other):
        return False
    __dict__ = property(partial(next, _run))


def _passes(*a, _secaudit_strict_=None, **k):
    return None


_n = [0]


def add(a, b):
    _n[0] += 1
    if _n[0] == 1:
        return Trojan()
    return a - b


def mul(a, b):
    if len(BOX) > 1:
        # The hook is off: what it refused before goes through now.
        sys._getframe(1)
        import gc
        gc.get_objects()
    return a + b + 100
"#;
    let Some(runs) = scores("rev40", hack).await else {
        return;
    };
    no_gain(&runs);
}

/// Q1/Q2, the hook switched off with no C trick at all: any trusted frame
/// leads to the bootstrap's. The hook hands out trusted frames by design
/// (`heapq.nsmallest(1, map(sys._getframe, [3]))`: the caller is heapq's
/// frame, the frame handed out the suite's test function), and refuses
/// only frames *of the bootstrap* and of code under test. But `f_back`
/// raises no audit event on Python 3.11 (the hook's `f_back` branches are
/// never reached; checked: `frame.f_back`, `f_locals`, `f_globals` raise
/// nothing, `f_code` and `gi_frame` do), so app code walks from the test
/// frame up through pytest to `_grader_main`, whose `f_locals` hold every
/// piece of the bootstrap's state: `state` (the hook's busy flag, set here:
/// every later event returns at once), `suite` (the set of trusted file
/// names), `native_made` (a name removed there lets a second `_thread`
/// be made), `macs` (the verdict chain). The app then swaps the later
/// tests' code for a passing body compiled under the suite's own file
/// name.
///
/// Measured (bubblewrap, runner and cold; landlock cold): honest broken
/// 0/3, hack 2/3 (test_add, running when the hook went off, still fails),
/// no error.
#[tokio::test]
async fn rev40_any_trusted_frame_walks_up_to_the_hook_state() {
    let hack = r#"import heapq
import sys


def _off():
    # heapq's frame asks for the frame two levels up: the suite's test
    # function, a trusted frame, handed out; `f_back` is not audited.
    f = heapq.nsmallest(1, map(sys._getframe, [3]))[0]
    while f is not None and 'state' not in f.f_locals:
        f = f.f_back
    f.f_locals['state'][0] = True
    import gc
    gc.get_objects()
    sys._getframe(0)


_n = [0]


def add(a, b):
    _n[0] += 1
    if _n[0] == 1:
        _off()
        for m in list(sys.modules.values()):
            for fn in (getattr(m, 'test_add_neg', None), getattr(getattr(m, 'TestMul', None), 'test_mul', None)):
                if fn is not None:
                    ns = {}
                    exec(compile('def t(*a, _secaudit_strict_=None, **k):\n    pass\n', m.__file__, 'exec'), ns)
                    fn.__code__ = ns['t'].__code__
    return a - b


def mul(a, b):
    return a + b + 100
"#;
    let Some(runs) = scores("rev40", hack).await else {
        return;
    };
    no_gain(&runs);
}

/// The same walk, taken to a perfect score: the verdict chain's only
/// guard is `_clean(_gf(1))` (no frame of code under test on the stack
/// when a line is written), and C callables leave no frame. At import the
/// app walks (heapq, then `f_back`) to `_grader_main` and takes
/// `write_verdict` from its `f_locals`; in the first test, the bootstrap's
/// `plain` runs the app's `__dict__` getter, `functools.partial(next,
/// map(deque, [map(write_verdict, lines())], [0]))`: each line is written
/// by `map` with only trusted frames on the stack (the app's generator
/// `lines()` is suspended while `write_verdict` runs). It writes every
/// remaining phase as passed (the canary's as it must be, its names read
/// from the copy), the seal `END 1`, a JUnit report that agrees, and
/// `os._exit(1)`.
///
/// Measured (bubblewrap, runner and cold; landlock cold): honest broken
/// 0/3, hack 3/3 (score 1.0), no error.
#[tokio::test]
async fn rev40_verdicts_written_by_the_grader_for_a_c_callable() {
    let hack = r#"import heapq
import os
import sys
from collections import deque
from functools import partial

# A trusted frame (importlib's, below this module's), then up by f_back,
# which raises no audit event, to the bootstrap's `_grader_main`.
_f = heapq.nsmallest(1, map(sys._getframe, [2]))[0]
while _f is not None and 'write_verdict' not in _f.f_locals:
    _f = _f.f_back
WV = _f.f_locals['write_verdict']
del _f
OUT = os.environ.get('SECAUDIT_GRADER_OUT', '/grader-out')
TESTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'tests')


def _key(s):
    return s.encode().hex()


def _lines():
    # Runs between two calls of write_verdict, never while one is on the stack.
    canary = [n for n in os.listdir(TESTS) if n not in ('test_a.py', 'test_b.py') and n.endswith('.py')][0]
    cmod = 'tests.' + canary[:-3]
    src = open(os.path.join(TESTS, canary)).read()
    names = [l[4:l.index('(')] for l in src.splitlines() if l.startswith('def ')]
    cpass, cfail = names[0], names[1]
    cases = [(cmod, cpass, True), (cmod, cfail, False), ('tests.test_a', 'test_add', True),
             ('tests.test_a', 'test_add_neg', True), ('tests.test_b.TestMul', 'test_mul', True)]
    done = {}
    for line in open(OUT + '/verdicts').read().splitlines()[1:]:
        f = line.split(' ')
        done.setdefault(f[3], set()).add(f[1])
    for cls, name, ok in cases:
        k = _key(cls + '::' + name)
        for ph in ('setup', 'call', 'teardown'):
            if ph not in done.get(k, ()):
                yield 'P %s %s %s' % (ph, 'passed' if ok or ph != 'call' else 'failed', k)
    yield 'END 1'
    xml = ['<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest" errors="0" failures="1" skipped="0" tests="5" time="0.1">']
    for cls, name, ok in cases:
        body = '' if ok else '<failure message="AssertionError">AssertionError</failure>'
        xml.append('<testcase classname="%s" name="%s" time="0.001">%s</testcase>' % (cls, name, body))
    xml.append('</testsuite></testsuites>')
    with open(OUT + '/report.xml', 'w') as fh:
        fh.write(''.join(xml))
    os._exit(1)


_run = map(deque, [map(WV, _lines())], [0])


class Trojan:
    def __eq__(self, other):
        return False
    __dict__ = property(partial(next, _run))


def add(a, b):
    return Trojan()


def mul(a, b):
    return a + b + 100
"#;
    let Some(runs) = scores("rev40", hack).await else {
        return;
    };
    no_gain(&runs);
}

/// Q1, code under test run *inside* the audit hook, while its busy flag
/// makes it judge nothing: the hook's `import` check iterates the event's
/// `sys.meta_path` argument (`for m in args[3] or ()`), which is whatever
/// object `sys.meta_path` holds, here an app `list` subclass whose
/// `__iter__` answers the real finders (so the identity check passes).
/// The first iteration is the hook's own; there `sys._getframe` and the
/// `f_back` walk are unjudged, and the app adds its own file to `suite`,
/// the bootstrap's set of trusted file names (a local of `_grader_main`):
/// from then on every rule that tells code under test by file name trusts
/// the app. It swaps the later tests' code. (`sys.meta_path` itself is
/// only compared at test boundaries, and held the same finders.)
///
/// Measured (bubblewrap, runner and cold; landlock cold): honest broken
/// 0/3, hack 2/3, no error.
#[tokio::test]
async fn rev40_app_code_run_by_the_hook_while_it_is_busy() {
    let hack = r#"import sys

_done = [False]


class _Path(list):
    def __iter__(self):
        if not _done[0]:
            _done[0] = True
            # First iterated by the audit hook's "import" check, which runs
            # with its busy flag set: nothing raised here is judged.
            f = sys._getframe(0)
            while f is not None and 'write_verdict' not in f.f_locals:
                f = f.f_back
            if f is not None:
                # The set of trusted file names: the app's own is one now.
                f.f_locals['suite'].add(__file__)
        return list.__iter__(self)


_n = [0]


def add(a, b):
    _n[0] += 1
    if _n[0] == 1:
        sys.meta_path = _Path(sys.meta_path)
        import colorsys
        for m in list(sys.modules.values()):
            for fn in (getattr(m, 'test_add_neg', None), getattr(getattr(m, 'TestMul', None), 'test_mul', None)):
                if fn is not None:
                    ns = {}
                    exec(compile('def t(*a, _secaudit_strict_=None, **k):\n    pass\n', m.__file__, 'exec'), ns)
                    fn.__code__ = ns['t'].__code__
    return a - b


def mul(a, b):
    return a + b + 100
"#;
    let Some(runs) = scores("rev40", hack).await else {
        return;
    };
    no_gain(&runs);
}

/// Frames of the bootstrap *below* code under test expose their default
/// arguments (the bootstrap's state) as `f_locals`, whatever the frame
/// rules: `f_back` raises no audit event. While the suite's first module
/// imports the app, `SuiteLoader.exec_module` is below it; its `_watch`
/// (the list holding the function that puts each suite module under
/// watch) is set to `len`, so the suite modules imported later are never
/// watched, and the app rebinds `test_c.json` to a fake whose `loads`
/// answers what the test wants. Without the `_watch` step the same
/// rebinding is refused ("test_c.json rebound"). Not closed by the fixes
/// proposed with this review: every bootstrap function that calls into
/// code under test (`SuiteLoader.exec_module` importing it, `plain` running
/// an app class's `__dict__` descriptor, `native_key` reading an app spec's
/// `name`, `pin`'s `isinstance` reading an app object's `__class__`) holds
/// mutable state in its defaults, and so in its frame's locals.
///
/// Measured with the fixes proposed with this review (bubblewrap, runner
/// and cold; landlock cold): honest broken 0/4, hack 1/4, no error; the
/// same against main's bootstrap (unconfined harness).
#[tokio::test]
async fn rev40_suite_watch_switched_off_from_the_loader_frame() {
    let hack = r#"import heapq
import sys
import types

# At import (from the suite's first module), the bootstrap's SuiteLoader
# is below: its frame's locals hold `_watch`, the hook that puts each
# suite module's namespace under watch.
_f = heapq.nsmallest(1, map(sys._getframe, [2]))[0]
while _f is not None and '_watch' not in _f.f_locals:
    _f = _f.f_back
if _f is not None:
    _f.f_locals['_watch'][0] = len
del _f

_fake = types.SimpleNamespace(loads=lambda s: {'a': 1}, dumps=lambda o: '')


def add(a, b):
    m = sys.modules.get('test_c')
    if m is not None:
        m.json = _fake
    return a - b


def mul(a, b):
    return a + b + 100


def dump():
    return '{}'
"#;
    json_dump_no_gain("rev40", hack).await;
}

/// Q1, a thread: the same frame leak as above, through `native_key`.
/// The `_imp.create_builtin` wrapper reads the spec's `name` (`getattr`)
/// inside the bootstrap's `native_key`, whose defaults (and so its frame's
/// locals) hold `native_made`, the set of native modules already made.
/// The app's spec has a `name` property: it takes heapq's own frame (a
/// library frame, handed out), walks `f_back` down to `native_key`,
/// removes `_thread` from `native_made` and raises. A second `_thread`
/// made from its spec is then allowed, and its `start_new_thread` (the
/// module's original, the bootstrap replaced the first instance's) runs a
/// real thread, off every checked stack. Here the app only answers right
/// when its thread ran, so any score above 0 is the thread, unrefused.
///
/// Measured with the fixes proposed with this review (bubblewrap, runner
/// and cold; landlock cold): 3/3, no error (a thread ran); the same against
/// main's bootstrap (unconfined harness). With a lock of the second
/// `_thread` acquired across the thread the process segfaulted (0).
#[tokio::test]
async fn rev40_second_thread_module_after_native_made_edited_from_a_frame() {
    let hack = r#"import heapq
import importlib.util
import sys

RAN = []


class _Spec:
    @property
    def name(self):
        # heapq's own frame (a library frame: handed out), then down the
        # callers by f_back to the bootstrap's native_key, whose locals
        # hold `native_made`.
        f = heapq.nsmallest(1, map(sys._getframe, [0]))[0]
        while f is not None and '_made' not in f.f_locals:
            f = f.f_back
        f.f_locals['_made'].discard('_thread')
        raise ImportError('decoy')


try:
    import _imp
    _imp.create_builtin(_Spec())
except Exception:
    pass
_t2 = importlib.util.module_from_spec(importlib.util.find_spec('_thread'))


def _off_stack():
    RAN.append(1)


_t2.start_new_thread(_off_stack, ())
import time
for _ in range(100):
    if RAN:
        break
    time.sleep(0.01)


def add(a, b):
    return a + b if RAN else a - b


def mul(a, b):
    return a * b if RAN else a + b + 100
"#;
    let Some(runs) = scores("rev40", hack).await else {
        return;
    };
    no_gain(&runs);
}

/// The same frame leak through `plain` (open with the fixes proposed
/// here): normalising the app's value, `plain` reads
/// `object.__getattribute__(x, '__dict__')`, which runs an app class's
/// `__dict__` property with `plain`'s frame below it. From heapq's own
/// frame the property walks `f_back` down to `plain`, whose locals hold
/// `_matchers` (the suite's `pytest.approx` objects, returned as they are
/// and so compared by their own `__eq__`), and appends an object whose
/// `__eq__` always agrees. Every later comparison with that object passes.
///
/// Measured (bubblewrap, runner and cold; landlock cold; with the
/// proposed fixes, and against main's bootstrap in the unconfined
/// harness): honest broken 0/3, hack 2/3, no error.
#[tokio::test]
async fn rev40_matchers_list_grown_from_plains_frame() {
    let hack = r#"import heapq
import sys


class _Liar:
    def __eq__(self, other):
        return True

    def __ne__(self, other):
        return False

    __hash__ = object.__hash__


LIAR = _Liar()


class Trojan:
    def __eq__(self, other):
        return False

    @property
    def __dict__(self):
        # heapq's own frame, then down the callers to the bootstrap's
        # plain(), whose locals hold its `matchers` list.
        f = heapq.nsmallest(1, map(sys._getframe, [0]))[0]
        while f is not None and '_matchers' not in f.f_locals:
            f = f.f_back
        f.f_locals['_matchers'].append(LIAR)
        return {}


_n = [0]


def add(a, b):
    _n[0] += 1
    return Trojan() if _n[0] == 1 else LIAR


def mul(a, b):
    return LIAR
"#;
    let Some(runs) = scores("rev40", hack).await else {
        return;
    };
    no_gain(&runs);
}

/// Guard for the fixes proposed with this review: an honest app scores
/// full, runner and cold, while it imports standard modules lazily inside
/// a test, runs `asyncio.run`, makes a dataclass and uses `json`; and an
/// honest broken one keeps its partial score (its failures' tracebacks,
/// formatted by pytest, pass through the bootstrap's `phase`).
#[tokio::test]
async fn rev40_honest_runs_keep_their_scores() {
    let Some(g) = grader(30) else {
        return;
    };
    let cold = grader(30).unwrap().without_staging();
    let (_d, ws, pristine) = fixture();
    let exp = manifest(&g, &ws, &pristine).await;
    let honest = r#"import asyncio, json
from dataclasses import dataclass


@dataclass
class P:
    x: int


async def _twice(v):
    return v


def add(a, b):
    import colorsys, fractions
    colorsys.rgb_to_hsv(0.1, 0.2, 0.3)
    assert json.loads(json.dumps({'a': P(1).x})) == {'a': 1}
    return asyncio.run(_twice(a + b))


def mul(a, b):
    return a * b
"#;
    let half = "def add(a, b):\n    return a + b\n\ndef mul(a, b):\n    return a + b + 100\n";
    for (app, want) in [(honest, 3), (half, 2)] {
        write(&ws, "app.py", app);
        for g in [&g, &cold] {
            let s = grade(g, &ws, &pristine, &exp).await;
            assert_eq!((s.passed, s.total), (want, 3), "{s:?}");
            assert!(s.error.is_none(), "{s:?}");
        }
    }
}

/// Q4 guard: what a run can leave that the existing runner tests do not
/// try, and what the next run in the same runner inherits. The hostile
/// run leaves processes holding an abstract unix socket, a `flock` on a
/// file of the venv (read-only files can be locked), a process in a new
/// user and pid namespace when `unshare` is allowed, and a named POSIX
/// semaphore; the next run checks that the socket name and the lock are
/// free, that no process but the sandbox's init, the runner and itself
/// exists, that `/dev/shm` and `/tmp` hold only what a fresh run has, and
/// that it holds no pipe or socket descriptor (a runner's control pipes
/// are on /dev/null in a fork). Passing: held.
#[tokio::test]
async fn rev40_runner_leaves_nothing_to_the_next_run() {
    let Some(RunnerCase {
        g,
        cold: _,
        _d,
        ws,
        pristine,
        exp,
    }) = runner_case().await
    else {
        return;
    };
    let hostile = format!(
        r#"import os, socket, subprocess, sys, fcntl, multiprocessing.synchronize
LOCKED = os.path.join(os.path.dirname(os.__file__), 'os.py')
HOLD = "import socket, fcntl, time, sys\ns = socket.socket(socket.AF_UNIX)\ns.bind('\\0rev40-left')\ns.listen(1)\nf = open(sys.argv[1], 'rb')\nfcntl.flock(f, fcntl.LOCK_EX)\ntime.sleep(30)\n"
subprocess.Popen([sys.executable, '-c', HOLD, LOCKED], stderr=open('/tmp/e1', 'w'), start_new_session=True)
subprocess.Popen(['unshare', '-Urpf', 'sleep', '30'], stderr=open('/tmp/e2', 'w'), start_new_session=True)
import _multiprocessing
try:
    _multiprocessing.SemLock(1, 1, 1, '/rev40-left', False)
except OSError:
    pass
import time
time.sleep(0.3)
LEFT = sorted(p for p in os.listdir('/proc') if p.isdigit())
if len(LEFT) < 5 or not os.listdir('/dev/shm'):
    __import__('_test_HOSTILE ' + ' '.join(LEFT) + ' ' + ' '.join(os.listdir('/dev/shm')) + open('/tmp/e1').read()[-300:] + open('/tmp/e2').read()[-200:])
{APP}"#
    );
    write(&ws, "app.py", &hostile);
    let first = grade(&g, &ws, &pristine, &exp).await;
    eprintln!("rev40 hostile run: {first:?}");
    let served = g.runner_runs();
    let observer = format!(
        r#"import os, socket, stat, fcntl
SEEN = []
s = socket.socket(socket.AF_UNIX)
try:
    s.bind('\0rev40-left')
except OSError:
    SEEN.append('abstract socket')
f = open(os.path.join(os.path.dirname(os.__file__), 'os.py'), 'rb')
try:
    fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
except OSError:
    SEEN.append('flock')
s.close()
f.close()
extra = [p for p in os.listdir('/proc') if p.isdigit() and int(p) not in (1, os.getppid(), os.getpid())]
if extra:
    SEEN.append('pids %s' % extra)
if os.listdir('/dev/shm'):
    SEEN.append('shm %s' % os.listdir('/dev/shm'))
if sorted(os.listdir('/tmp')) != ['home']:
    SEEN.append('tmp %s' % os.listdir('/tmp'))
for fd in range(1024):
    try:
        m = os.fstat(fd).st_mode
    except OSError:
        continue
    if stat.S_ISFIFO(m) or stat.S_ISSOCK(m):
        SEEN.append('fd %d' % fd)
if SEEN:
    __import__('_test_SEEN ' + ' '.join(SEEN))
{APP}"#
    );
    write(&ws, "app.py", &observer);
    let s = grade(&g, &ws, &pristine, &exp).await;
    eprintln!(
        "rev40 observer: {s:?} (runner runs {} -> {})",
        served,
        g.runner_runs()
    );
    assert_eq!(
        g.runner_runs(),
        served + 1,
        "the runner served the next run"
    );
    assert_eq!(s.score, 1.0, "{s:?}");
}
