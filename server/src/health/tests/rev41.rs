//! Review rev41 (seed 001: a reviewer who did not write the code) of the
//! rev40 fixes to the bootstrap (`run` returned before pytest starts,
//! verdict writers by code identity, bootstrap frames only to its own
//! `_getframe` sites, trusted file names only from the suite loader and
//! importlib). Each `rev41_*` test that fails is a finding; its doc
//! comment gives the measured scores.

use super::review::{no_gain, scores};
use super::*;

/// Writes every remaining verdict line with the chain's own key and last
/// link (`key`, `prev`: the chain generator's frame locals), the seal,
/// and a JUnit report that agrees, then ends the process. Shared by the
/// payloads below, which differ in how they reach the key.
const FORGE: &str = r#"
import hashlib as _hl
import os as _os


def _forge(key, prev, vp):
    out = _os.path.dirname(vp)
    tests = _os.path.join(_os.path.dirname(_os.path.abspath(__file__)), 'tests')
    canary = [n for n in _os.listdir(tests) if n not in ('test_a.py', 'test_b.py') and n.endswith('.py')][0]
    cmod = 'tests.' + canary[:-3]
    src = open(_os.path.join(tests, canary)).read()
    names = [l[4:l.index('(')] for l in src.splitlines() if l.startswith('def ')]
    cases = [(cmod, names[0], True), (cmod, names[1], False), ('tests.test_a', 'test_add', True),
             ('tests.test_a', 'test_add_neg', True), ('tests.test_b.TestMul', 'test_mul', True)]
    done = {}
    for line in open(vp).read().splitlines()[1:]:
        f = line.split(' ')
        if len(f) > 3:
            done.setdefault(f[3], set()).add(f[1])
    lines = []
    for cls, name, ok in cases:
        k = (cls + '::' + name).encode().hex()
        for ph in ('setup', 'call', 'teardown'):
            if ph not in done.get(k, ()):
                lines.append('P %s %s %s' % (ph, 'passed' if ok or ph != 'call' else 'failed', k))
    lines.append('END 1')
    fd = _os.open(vp, _os.O_WRONLY | _os.O_APPEND)
    for line in lines:
        data = line.encode()
        prev = _hl.sha256(key + prev + b' ' + data).hexdigest().encode()
        _os.write(fd, data + b' ' + prev + b'\n')
    _os.close(fd)
    xml = ['<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest" errors="0" failures="1" skipped="0" tests="5" time="0.1">']
    for cls, name, ok in cases:
        body = '' if ok else '<failure message="AssertionError">AssertionError</failure>'
        xml.append('<testcase classname="%s" name="%s" time="0.001">%s</testcase>' % (cls, name, body))
    xml.append('</testsuite></testsuites>')
    with open(out + '/report.xml', 'w') as fh:
        fh.write(''.join(xml))
    _os._exit(1)


def _take(f):
    # From any frame of the run's stack, up to `run` (f_back and f_locals
    # raise no event), then `end`'s defaults: `write_verdict`, whose first
    # default is the chain generator, whose frame holds the key.
    while f is not None and '_end' not in f.f_locals:
        f = f.f_back
    end = f.f_locals['_end']
    d = end.__defaults__
    wv = d[list(end.__code__.co_varnames[end.__code__.co_argcount - len(d):end.__code__.co_argcount]).index('_wv')]
    wd = wv.__defaults__
    macs, vp = wd[0], wd[4]
    loc = macs.gi_frame.f_locals
    _forge(loc['key'], loc['prev'], vp)
"#;

/// Q1, a builtin looked up by name inside the audit hook. The hook's
/// "import" branch checks each `sys.meta_path` entry with `any(m is x for
/// x in _meta0)` (and the `object.__setattr__` branch calls `len(args)`):
/// `any` and `len` are the bootstrap module's globals, so `builtins.any`
/// decides. The app rebinds `builtins.any`, imports a missing module, and
/// restores `builtins.any` from inside its replacement, which the hook
/// called with its busy flag set (nothing raised there is judged; the
/// builtins sweep at the next phase boundary finds nothing). There,
/// `sys._getframe(1)` is the hook's own frame; up the stack, `run`'s
/// locals hold `end`, whose defaults hold `write_verdict`, whose first
/// default is the chain generator; its frame holds the run's key and the
/// last link. The app writes every remaining verdict line with valid
/// links, the seal and an agreeing JUnit report, and exits.
///
/// Measured on main f21c2d6 (bubblewrap runner and cold; landlock
/// runner and cold): honest broken 0/3, hack 3/3 (score 1.0), no error.
/// The same root cause: `trusted` (called by the hook on every event)
/// reads the global `type`, the hook `range` in its marshal branch.
#[tokio::test]
async fn rev41_builtins_any_called_by_the_busy_hook_leaks_the_key() {
    let hack = format!(
        "{FORGE}{}",
        r#"
import builtins
import sys

_any0 = builtins.any


def _any(it):
    builtins.any = _any0
    # Called by the audit hook, busy: nothing here is judged.
    _take(sys._getframe(1))
    return _any0(it)


def add(a, b):
    builtins.any = _any
    try:
        import secaudit_rev41_missing
    except ImportError:
        pass
    builtins.any = _any0
    return a - b


def mul(a, b):
    return a + b + 100
"#
    );
    let Some(runs) = scores("rev41", &hack).await else {
        return;
    };
    no_gain(&runs);
}

/// Q1, the same class as the test above through library code the hook
/// calls: for every `open` during the run the hook runs `proc_open`, whose
/// `os.fsdecode` and `os.path.realpath` are library Python functions that
/// read `os.fspath` (and `os.lstat`, `posixpath.join`, ...) from their
/// module at call time. The app rebinds `os.fspath`, opens its own file,
/// and restores `os.fspath` from inside its replacement, which the hook's
/// `proc_open` called with the busy flag set: the same walk to `run`,
/// `end`, `write_verdict`, the chain's key, a forged chain. (Defaults
/// for the hook's own builtins, the fix proposed with the test above, do
/// not reach the library functions it calls.)
///
/// Measured with that first proposed fix applied (c6617b2; main's hook
/// takes the same path): bubblewrap runner and cold, landlock runner and
/// cold: honest broken 0/3, hack 3/3 (score 1.0), no error.
#[tokio::test]
async fn rev41_os_fspath_called_by_the_busy_hook_leaks_the_key() {
    let hack = format!(
        "{FORGE}{}",
        r#"
import os
import sys

_fspath0 = os.fspath


def _fspath(p):
    os.fspath = _fspath0
    # Called by the audit hook's proc_open (os.fsdecode), busy.
    _take(sys._getframe(1))
    return _fspath0(p)


def add(a, b):
    os.fspath = _fspath
    try:
        open(__file__).close()
    finally:
        os.fspath = _fspath0
    return a - b


def mul(a, b):
    return a + b + 100
"#
    );
    let Some(runs) = scores("rev41", &hack).await else {
        return;
    };
    no_gain(&runs);
}

// Open, kept on branch `rev41`: `rev41_plugin_registered_with_a_library_function_as_pyfunc_call`
// (2/3 against 0/3; README, review rev41).

/// The honest app of `rev41_honest_library_groups_keep_their_scores`: one
/// function per group of library use that the rev40 fixes touch (C
/// descriptors for dicts and slots, compile and marshal rules, exact
/// ModuleSpec, kwdefaults kept, plain `sys.meta_path`).
const GROUPS_APP: &str = r#"import asyncio
import contextlib
import dataclasses
import decimal
import enum
import functools
import importlib
import io
import json
import logging
import os
import pkgutil
import re
import sys
from typing import NamedTuple

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), 'vendor'))
import helper  # noqa: E402


@dataclasses.dataclass
class P:
    x: int
    y: int


@dataclasses.dataclass(frozen=True, slots=True)
class Q:
    a: int


class Color(enum.Enum):
    RED = 1
    GREEN = 2


class Perm(enum.IntFlag):
    R = 4
    W = 2


class Pt(NamedTuple):
    x: int
    y: int


class Slotted:
    __slots__ = ('a', 'b')

    def __init__(self, a, b):
        self.a, self.b = a, b

    def __eq__(self, other):
        return type(other) is Slotted and (self.a, self.b) == (other.a, other.b)

    __hash__ = None


class Rect:
    def __init__(self, w, h):
        self._w, self._h = w, h

    @property
    def area(self):
        return self._w * self._h


PLUGINS = []


def register(fn):
    PLUGINS.append(fn)
    return fn


@register
def double(v):
    return v * 2


def dataclass_point():
    return P(1, 2), Q(3), dataclasses.asdict(P(1, 2))


def enum_pick():
    return Color(2), Perm.R | Perm.W


def named():
    return Pt(1, 2)._replace(y=5)


def slotted():
    return Slotted(1, [2])


def rect_area():
    return Rect(2, 3).area


@functools.lru_cache(maxsize=None)
def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)


def from_json(s):
    return json.loads(s, object_hook=lambda d: P(**d) if set(d) == {'x', 'y'} else d)


def plugins():
    import plugins as pkg
    names = sorted(m.name for m in pkgutil.iter_modules(pkg.__path__))
    mods = [importlib.import_module('plugins.' + n) for n in names]
    return [m.NAME for m in mods], [f(3) for f in PLUGINS]


async def _sq(v):
    await asyncio.sleep(0)
    return v * v


def gathered():
    async def main():
        return await asyncio.gather(*(_sq(i) for i in range(4)))
    return asyncio.run(main())


@contextlib.contextmanager
def _tag(out):
    out.append('in')
    yield out
    out.append('out')


def contexts():
    out = []
    with contextlib.ExitStack() as st:
        st.enter_context(_tag(out))
        with contextlib.suppress(KeyError):
            {}['x']
    return out


def logged():
    buf = io.StringIO()
    log = logging.getLogger('rev41.app')
    h = logging.StreamHandler(buf)
    h.setFormatter(logging.Formatter('%(levelname)s %(message)s'))
    log.addHandler(h)
    log.setLevel(logging.INFO)
    log.info('hello %s', 'world')
    log.removeHandler(h)
    return buf.getvalue()


def parsed(s):
    m = re.compile(r'(?P<k>\w+)=(?P<v>\d+)').search(s)
    return m.groupdict(), re.findall(r'\d', s)


def money():
    with decimal.localcontext() as ctx:
        ctx.prec = 6
        return decimal.Decimal('1.10') + decimal.Decimal('2.20'), decimal.Decimal(1) / decimal.Decimal(3)


def vendored():
    return helper.greet('x')
"#;

const GROUPS_TEST: &str = r#"import decimal

import app
from app import Color, P, Perm, Pt, Q, Slotted


def test_dataclass():
    assert app.dataclass_point() == (P(1, 2), Q(3), {'x': 1, 'y': 2})


def test_enum():
    c, p = app.enum_pick()
    assert c is Color.GREEN and c == Color.GREEN
    assert p == Perm.R | Perm.W and p == 6


def test_namedtuple():
    assert app.named() == Pt(1, 5) and app.named() == (1, 5)


def test_slots():
    assert app.slotted() == Slotted(1, [2])


def test_property():
    assert app.rect_area() == 6


def test_lru_cache():
    assert app.fib(30) == 832040


def test_json_hook():
    assert app.from_json('{"p": {"x": 1, "y": 2}}') == {'p': P(1, 2)}


def test_plugins():
    assert app.plugins() == (['alpha', 'beta'], [6])


def test_asyncio():
    assert app.gathered() == [0, 1, 4, 9]


def test_contextlib():
    assert app.contexts() == ['in', 'out']


def test_logging():
    assert app.logged() == 'INFO hello world\n'


def test_re():
    assert app.parsed('a k=42 b') == ({'k': 'k', 'v': '42'}, ['4', '2'])


def test_decimal():
    s, third = app.money()
    assert s == decimal.Decimal('3.30') and str(third) == '0.333333'


def test_sys_path_insert():
    assert app.vendored() == 'hello x'
"#;

/// Q3 guard: an honest app per group of library use scores full, runner
/// and cold (the rev40 fixes must not turn honest values into
/// `Ident`s that compare unequal, nor refuse honest imports); seven of
/// the groups broken with values of the same types still fail.
///
/// Measured, runner and cold each: 197b646 (before the rev40 fixes) and
/// main f21c2d6 (bubblewrap), this branch with its proposed fixes
/// (bubblewrap and landlock): honest 14/14 and honest broken 7/14, no
/// error, on all of them: no false positive introduced.
#[tokio::test]
async fn rev41_honest_library_groups_keep_their_scores() {
    let Some(g) = grader(60) else {
        return;
    };
    let cold = grader(60).unwrap().without_staging();
    let d = tempfile::tempdir().unwrap();
    let ws = d.path().join("ws");
    let pristine = d.path().join("pristine");
    for root in [&ws, &pristine] {
        write(root, "tests/test_groups.py", GROUPS_TEST);
        write(
            root,
            "pytest.ini",
            "[pytest]\npythonpath = .\ntestpaths = tests\n",
        );
    }
    write(&ws, "app.py", GROUPS_APP);
    write(&ws, "plugins/__init__.py", "");
    write(&ws, "plugins/alpha.py", "NAME = 'alpha'\n");
    write(&ws, "plugins/beta.py", "NAME = 'beta'\n");
    write(
        &ws,
        "vendor/helper.py",
        "def greet(n):\n    return 'hello ' + n\n",
    );
    let exp = manifest(&g, &ws, &pristine).await;
    assert_eq!(exp.total, 14, "{exp:?}");
    // Seven groups broken with values of the same types: they must fail.
    let mut broken = GROUPS_APP.to_string();
    for (from, to) in [
        ("P(1, 2), Q(3),", "P(1, 2), Q(4),"),
        ("return Color(2),", "return Color(1),"),
        ("_replace(y=5)", "_replace(y=6)"),
        ("return Slotted(1, [2])", "return Slotted(1, [3])"),
        ("P(**d) if", "P(d['y'], d['x']) if"),
        ("'hello %s', 'world'", "'hello %s', 'there'"),
        ("Decimal('2.20')", "Decimal('2.21')"),
    ] {
        assert!(broken.contains(from), "{from}");
        broken = broken.replace(from, to);
    }
    let mut bad = Vec::new();
    for (what, app, want) in [
        ("honest", GROUPS_APP, 14),
        ("honest broken", &broken[..], 7),
    ] {
        write(&ws, "app.py", app);
        for (kind, g) in [("runner", &g), ("cold", &cold)] {
            let s = grade(g, &ws, &pristine, &exp).await;
            eprintln!(
                "rev41 {what} groups ({kind}, tier {:?}): {s:?}",
                g.sandbox.tier()
            );
            if (s.passed, s.total) != (want, 14) || s.error.is_some() {
                bad.push(format!("{what} ({kind}): {s:?}"));
            }
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

// Open, kept on branch `rev41`: `rev41_plugin_registered_at_import_scores_full`
// (3/3 against 0/3; README, review rev41).

/// Q2 (`types.FunctionType` over a trusted code object) meets Q1: the
/// verdict chain accepts a line when the writer's caller *runs the code*
/// of `phase` or `end` (`verdict_writers`, by code identity), and the hook
/// lets any trusted frame make a function (`function.__new__` is refused
/// only to app frames), whatever code and defaults it is given. From the
/// suite's test frame (heapq) the app walks to pluggy's `_multicall`,
/// takes the bootstrap's suspended `pytest_runtest_call` wrapper, its
/// `phase` (`_p`), and from the running phase generator's frame
/// `write_verdict` (`_wv`); from `run`'s frame, `end`. Through `heapq`
/// (a trusted caller) it reads their `__code__` and `__globals__` and makes
/// `phase` and `end` again with its own defaults: C callables for the
/// checks (`operator.is_`, `{}.get`, `[].clear`), `str` as the key
/// function (the "item" is the hex key itself). A weak reference's
/// callback of a collected cycle (C callables only, so no frame of code
/// under test is on the stack when it runs inside the suite's own
/// comparison) drives the copies: each remaining phase written as passed
/// (the canary's failing call through `close()`, which the copy writes
/// as failed), then the copy of `end` writes `END 1` and exits (a JUnit report that
/// agrees written beforehand).
///
/// Measured on this branch (main 2086176 with the fixes proposed above,
/// which this does not touch), bubblewrap runner and cold, landlock
/// runner and cold: honest broken 0/3, hack 3/3 (score 1.0), no error.
#[tokio::test]
async fn rev41_phase_and_end_remade_by_function_new_write_verdicts() {
    let hack = r#"import gc
import heapq
import os
import sys
import types
import weakref
from collections import deque
from functools import partial
from itertools import chain, repeat
from operator import attrgetter, is_, methodcaller

OUT = os.environ.get('SECAUDIT_GRADER_OUT', '/grader-out')
TESTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'tests')


def _via(fn, *args):
    # A trusted frame (heapq's) makes the call: function.__new__ and
    # __code__ reads are refused only to app frames.
    return heapq.nsmallest(1, map(fn, *[[a] for a in args]))[0]


def _remake(fn, **defaults):
    code = _via(attrgetter('__code__'), fn)
    glb = _via(attrgetter('__globals__'), fn)
    names = code.co_varnames[:code.co_argcount]
    first = code.co_argcount - len(defaults)
    return _via(types.FunctionType, code, glb, code.co_name, tuple(defaults[n] for n in names[first:]))


def _plan():
    canary = [n for n in os.listdir(TESTS) if n not in ('test_a.py', 'test_b.py') and n.endswith('.py')][0]
    cmod = 'tests.' + canary[:-3]
    src = open(os.path.join(TESTS, canary)).read()
    names = [l[4:l.index('(')] for l in src.splitlines() if l.startswith('def ')]
    cases = [(cmod, names[0], True), (cmod, names[1], False), ('tests.test_a', 'test_add', True),
             ('tests.test_a', 'test_add_neg', True), ('tests.test_b.TestMul', 'test_mul', True)]
    done = {}
    for line in open(OUT + '/verdicts').read().splitlines()[1:]:
        f = line.split(' ')
        if len(f) > 3:
            done.setdefault(f[3], set()).add(f[1])
    out = []
    for cls, name, ok in cases:
        k = (cls + '::' + name).encode().hex()
        for ph in ('setup', 'call', 'teardown'):
            if ph not in done.get(k, ()):
                out.append((k, ph, ok or ph != 'call'))
    xml = ['<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest" errors="0" failures="1" skipped="0" tests="5" time="0.1">']
    for cls, name, ok in cases:
        body = '' if ok else '<failure message="AssertionError">AssertionError</failure>'
        xml.append('<testcase classname="%s" name="%s" time="0.001">%s</testcase>' % (cls, name, body))
    xml.append('</testsuite></testsuites>')
    with open(OUT + '/report.xml', 'w') as fh:
        fh.write(''.join(xml))
    return out


class _Cycle:
    pass


_keep = []


def _arm():
    f = heapq.nsmallest(1, map(sys._getframe, [3]))[0]
    wrapper = end = None
    while f is not None:
        loc = f.f_locals
        if '_end' in loc:
            end = loc['_end']
        for v in loc.values():
            for g in (v if type(v) is list else [v]):
                if type(g) is types.GeneratorType and wrapper is None:
                    gl = _via(attrgetter('gi_frame'), g).f_locals
                    if '_p' in gl:
                        wrapper = g
        f = f.f_back
    inner = wrapper.gi_yieldfrom
    pl = _via(attrgetter('gi_frame'), inner).f_locals
    wv = pl['_wv']
    phase = _via(attrgetter('gi_frame'), wrapper).f_locals['_p']
    fake_phase = _remake(phase, _cp=is_, _wv=wv, _key=str, _skip=KeyError, _mro=pl['_mro'],
                         _type=type, _au=types.SimpleNamespace())
    fake_end = _remake(end, _fc={}.get, _gf=id, _sc=[].clear, _cc=[].clear, _tc={}.get,
                       _die=print, _wv=wv, _exit=os._exit, _sys=types.SimpleNamespace(stdout=None, stderr=None))
    steps = []
    for k, ph, ok in _plan():
        g = fake_phase(k, ph)
        steps.append(partial(next, g, None))
        steps.append(partial(next, g, None) if ok else g.close)
    run = map(deque, [chain(map(methodcaller('__call__'), steps), map(fake_end, [1]))], [0])
    _keep.append(run)
    c = _Cycle()
    c.me = c
    _keep.append(weakref.ref(c, partial(next, run)))
    gc.set_threshold(1)


_done = []


def add(a, b):
    if not _done:
        _done.append(1)
        _arm()
    return a - b


def mul(a, b):
    return a + b + 100
"#;
    let Some(runs) = scores("rev41", hack).await else {
        return;
    };
    no_gain(&runs);
}

/// The same without making any function (so the fix proposed with the
/// test above does not close it): the real `phase`, taken from the
/// wrapper generator's frame, is called with a forged item (a namespace
/// holding the real item's `config`, `ihook` and `session`, and the
/// `nodeid` of the test whose verdict is wanted); its checkpoint finds a
/// clean stack (a weakref callback, C callables only, inside the suite's
/// comparison) and a clean state, and `key_of` keys the line by the forged
/// `nodeid`. Every remaining phase is written as passed (the canary's
/// failing call through `close()`), then the real `end` (from `run`'s
/// frame) finds nothing wrong, writes `END 1` and exits.
///
/// Measured on main 2086176 and on this branch with the fixes proposed
/// before this test (bubblewrap runner and cold, landlock runner and
/// cold): honest broken 0/3, hack 3/3 (score 1.0), no error. Refused
/// ("a test phase run outside pytest's hook call for its item") with the
/// `phase_driven` check proposed after it (56e09dc).
#[tokio::test]
async fn rev41_real_phase_driven_with_a_forged_item_writes_verdicts() {
    let hack = r#"import gc
import heapq
import os
import sys
import types
import weakref
from collections import deque
from functools import partial
from itertools import chain, repeat
from operator import attrgetter, is_, methodcaller

OUT = os.environ.get('SECAUDIT_GRADER_OUT', '/grader-out')
TESTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'tests')


def _via(fn, *args):
    # A trusted frame (heapq's) makes the call: function.__new__ and
    # __code__ reads are refused only to app frames.
    return heapq.nsmallest(1, map(fn, *[[a] for a in args]))[0]


def _remake(fn, **defaults):
    code = _via(attrgetter('__code__'), fn)
    glb = _via(attrgetter('__globals__'), fn)
    names = code.co_varnames[:code.co_argcount]
    first = code.co_argcount - len(defaults)
    return _via(types.FunctionType, code, glb, code.co_name, tuple(defaults[n] for n in names[first:]))


def _plan():
    canary = [n for n in os.listdir(TESTS) if n not in ('test_a.py', 'test_b.py') and n.endswith('.py')][0]
    cmod = 'tests.' + canary[:-3]
    src = open(os.path.join(TESTS, canary)).read()
    names = [l[4:l.index('(')] for l in src.splitlines() if l.startswith('def ')]
    cases = [(cmod, names[0], True), (cmod, names[1], False), ('tests.test_a', 'test_add', True),
             ('tests.test_a', 'test_add_neg', True), ('tests.test_b.TestMul', 'test_mul', True)]
    def nodeid(cls, name):
        parts = cls.split('.')
        return '/'.join(parts[:2]) + '.py::' + '::'.join(parts[2:] + [name])

    done = {}
    for line in open(OUT + '/verdicts').read().splitlines()[1:]:
        f = line.split(' ')
        if len(f) > 3:
            done.setdefault(f[3], set()).add(f[1])
    out = []
    for cls, name, ok in cases:
        k = (cls + '::' + name).encode().hex()
        for ph in ('setup', 'call', 'teardown'):
            if ph not in done.get(k, ()):
                out.append((nodeid(cls, name), ph, ok or ph != 'call'))
    xml = ['<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest" errors="0" failures="1" skipped="0" tests="5" time="0.1">']
    for cls, name, ok in cases:
        body = '' if ok else '<failure message="AssertionError">AssertionError</failure>'
        xml.append('<testcase classname="%s" name="%s" time="0.001">%s</testcase>' % (cls, name, body))
    xml.append('</testsuite></testsuites>')
    with open(OUT + '/report.xml', 'w') as fh:
        fh.write(''.join(xml))
    return out


class _Cycle:
    pass


_keep = []


def _arm():
    f = heapq.nsmallest(1, map(sys._getframe, [3]))[0]
    wrapper = end = None
    while f is not None:
        loc = f.f_locals
        if '_end' in loc:
            end = loc['_end']
        for v in loc.values():
            for g in (v if type(v) is list else [v]):
                if type(g) is types.GeneratorType and wrapper is None:
                    gl = _via(attrgetter('gi_frame'), g).f_locals
                    if '_p' in gl:
                        wrapper = g
        f = f.f_back
    inner = wrapper.gi_yieldfrom
    pl = _via(attrgetter('gi_frame'), inner).f_locals
    wv = pl['_wv']
    phase = _via(attrgetter('gi_frame'), wrapper).f_locals['_p']
    # The real ones, no copy: `phase` trusts the item it is given (its
    # checkpoint reads `config`, `ihook`, `session`, `obj` of it; its key
    # is the item's `nodeid`).
    real = pl['item']
    fake_phase = lambda nodeid, ph: phase(types.SimpleNamespace(
        config=real.config, ihook=real.ihook, session=real.session, nodeid=nodeid), ph)
    fake_end = end
    steps = []
    for k, ph, ok in _plan():
        g = fake_phase(k, ph)
        steps.append(partial(next, g, None))
        steps.append(partial(next, g, None) if ok else g.close)
    run = map(deque, [chain(map(methodcaller('__call__'), steps), map(fake_end, [1]))], [0])
    _keep.append(run)
    c = _Cycle()
    c.me = c
    _keep.append(weakref.ref(c, partial(next, run)))
    gc.set_threshold(1)


_done = []


def add(a, b):
    if not _done:
        _done.append(1)
        _arm()
    return a - b


def mul(a, b):
    return a + b + 100
"#;
    let Some(runs) = scores("rev41", hack).await else {
        return;
    };
    no_gain(&runs);
}

const KINDS_TEST: &str = r#"import pytest

from app import f


@pytest.fixture
def val():
    yield f(1)


def test_fixture(val):
    assert val == 2


@pytest.mark.parametrize('x,y', [(1, 2), (2, 4)])
def test_param(x, y):
    assert f(x) == y


def test_tmp(tmp_path):
    (tmp_path / 'a').write_text('1')
    assert f(0) == 0
"#;

/// Guard for the proposed `phase` check (each phase driven by pluggy's
/// `_multicall` for its item): a yield fixture, parametrize and `tmp_path`
/// (the manifest run needs every pristine test to pass), graded with the
/// right app (4/4) and a broken one (3/4), runner and cold.
#[tokio::test]
async fn rev41_phase_check_keeps_pytest_outcome_kinds() {
    let Some(g) = grader(60) else {
        return;
    };
    let cold = grader(60).unwrap().without_staging();
    let d = tempfile::tempdir().unwrap();
    let ws = d.path().join("ws");
    let pristine = d.path().join("pristine");
    for root in [&ws, &pristine] {
        write(root, "tests/test_kinds.py", KINDS_TEST);
        write(
            root,
            "pytest.ini",
            "[pytest]\npythonpath = .\ntestpaths = tests\n",
        );
    }
    write(&ws, "app.py", "def f(x):\n    return 2 * x\n");
    let exp = manifest(&g, &ws, &pristine).await;
    assert_eq!(exp.total, 4, "{exp:?}");
    for (app, want) in [
        ("def f(x):\n    return 2 * x\n", 4),
        ("def f(x):\n    return 2 * x + (x > 1)\n", 3),
    ] {
        write(&ws, "app.py", app);
        for (kind, g) in [("runner", &g), ("cold", &cold)] {
            let s = grade(g, &ws, &pristine, &exp).await;
            eprintln!("rev41 kinds ({kind}, tier {:?}): {s:?}", g.sandbox.tier());
            assert!(s.error.is_none(), "{kind}: {s:?}");
            assert_eq!((s.passed, s.total), (want, 4), "{kind}: {s:?}");
        }
    }
}

// Open, kept on branch `rev41`: `rev41_unittest_case_in_the_suite_is_graded`, an
// honest false positive older than rev40 (README, review rev41).

/// Guard, residual of the proposed `phase` check (56e09dc): the verdict
/// wrapper run by pluggy itself for a forged item. A weakref callback (C
/// callables only) calls the real `ihook.pytest_runtest_call(item=...)`
/// for each later test with a namespace item (the real item's config,
/// ihook and session, the wanted `nodeid`, a stash that satisfies the
/// skipping and logging plugins, `runtest=list`, `add_report_section=slice`):
/// `phase` is then driven by its wrapper inside `_multicall` for that
/// item and writes "P call passed"; a second callback removes the
/// plugin's call wrapper so the real call phases write nothing.
///
/// Measured with every proposed fix (bubblewrap, runner and cold): the
/// chain and the phase check accept the forged lines, but the grader's
/// JUnit cross-check refuses the run ("verdict forged: the JUnit report
/// says tests.test_a::test_add_neg Failed, but the grader saw its phases
/// ... passed"): no gain. Only that cross-check stands here; an app that
/// also reaches pytest's junitxml reporter is not ruled out.
#[tokio::test]
async fn rev41_forged_item_through_pluggy_call_hook() {
    let hack = r#"import gc
import heapq
import os
import sys
import types
import weakref
from collections import deque
from functools import partial
from itertools import chain, repeat
from operator import attrgetter, is_, methodcaller

OUT = os.environ.get('SECAUDIT_GRADER_OUT', '/grader-out')
TESTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'tests')


def _via(fn, *args):
    # A trusted frame (heapq's) makes the call: function.__new__ and
    # __code__ reads are refused only to app frames.
    return heapq.nsmallest(1, map(fn, *[[a] for a in args]))[0]


def _remake(fn, **defaults):
    code = _via(attrgetter('__code__'), fn)
    glb = _via(attrgetter('__globals__'), fn)
    names = code.co_varnames[:code.co_argcount]
    first = code.co_argcount - len(defaults)
    return _via(types.FunctionType, code, glb, code.co_name, tuple(defaults[n] for n in names[first:]))


def _plan():
    canary = [n for n in os.listdir(TESTS) if n not in ('test_a.py', 'test_b.py') and n.endswith('.py')][0]
    cmod = 'tests.' + canary[:-3]
    src = open(os.path.join(TESTS, canary)).read()
    names = [l[4:l.index('(')] for l in src.splitlines() if l.startswith('def ')]
    cases = [(cmod, names[0], True), (cmod, names[1], False), ('tests.test_a', 'test_add', True),
             ('tests.test_a', 'test_add_neg', True), ('tests.test_b.TestMul', 'test_mul', True)]
    def nodeid(cls, name):
        parts = cls.split('.')
        return '/'.join(parts[:2]) + '.py::' + '::'.join(parts[2:] + [name])

    done = {}
    for line in open(OUT + '/verdicts').read().splitlines()[1:]:
        f = line.split(' ')
        if len(f) > 3:
            done.setdefault(f[3], set()).add(f[1])
    out = []
    for cls, name, ok in cases:
        k = (cls + '::' + name).encode().hex()
        for ph in ('setup', 'call', 'teardown'):
            if ph not in done.get(k, ()):
                out.append((nodeid(cls, name), ph, ok or ph != 'call'))
    xml = ['<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest" errors="0" failures="1" skipped="0" tests="5" time="0.1">']
    for cls, name, ok in cases:
        body = '' if ok else '<failure message="AssertionError">AssertionError</failure>'
        xml.append('<testcase classname="%s" name="%s" time="0.001">%s</testcase>' % (cls, name, body))
    xml.append('</testsuite></testsuites>')
    with open(OUT + '/report.xml', 'w') as fh:
        fh.write(''.join(xml))
    return out


class _Cycle:
    pass


_keep = []


def _arm():
    f = heapq.nsmallest(1, map(sys._getframe, [3]))[0]
    wrapper = end = None
    while f is not None:
        loc = f.f_locals
        if '_end' in loc:
            end = loc['_end']
        for v in loc.values():
            for g in (v if type(v) is list else [v]):
                if type(g) is types.GeneratorType and wrapper is None:
                    gl = _via(attrgetter('gi_frame'), g).f_locals
                    if '_p' in gl:
                        wrapper = g
        f = f.f_back
    inner = wrapper.gi_yieldfrom
    pl = _via(attrgetter('gi_frame'), inner).f_locals
    wv = pl['_wv']
    phase = _via(attrgetter('gi_frame'), wrapper).f_locals['_p']
    from _pytest.logging import caplog_records_key
    from _pytest.skipping import xfailed_key
    real = pl['item']
    hc = real.ihook.pytest_runtest_call
    steps, last = [], []
    for k, ph, ok in _plan():
        if ph != 'call' or k.endswith('::test_add'):
            continue
        fake = types.SimpleNamespace(
            config=real.config, ihook=real.ihook, session=real.session, nodeid=k,
            stash={xfailed_key: 0, caplog_records_key: {}}, runtest=list if ok else [].pop,
            add_report_section=slice)
        (steps if ok else last).append(partial(hc, item=fake))
    gv = [i for i in hc._hookimpls if type(i.plugin).__name__ == 'GraderVerdicts'][0]
    run = map(deque, [map(methodcaller('__call__'), steps + last)], [0])
    drop = map(deque, [map(hc._hookimpls.remove, [gv])], [0])
    _keep.append(drop)
    c0 = _Cycle()
    c0.me = c0
    _keep.append(weakref.ref(c0, partial(next, run)))
    del c0
    c = _Cycle()
    c.me = c
    _keep.append(weakref.ref(c, partial(next, drop)))
    gc.set_threshold(1)
    return
    _keep.append(run)
    c = _Cycle()
    c.me = c
    _keep.append(weakref.ref(c, partial(next, run)))
    gc.set_threshold(1)


_done = []


def add(a, b):
    if not _done:
        _done.append(1)
        _arm()
    return a - b


def mul(a, b):
    return a + b + 100
"#;
    let Some(runs) = scores("rev41", hack).await else {
        return;
    };
    no_gain(&runs);
}
