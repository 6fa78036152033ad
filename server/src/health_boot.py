"""Grader bootstrap for the health run (server/src/health.rs, "verdicts").

Run by the grader as ``python -I /grader-boot/boot.py <pytest args>`` before
any code of the workspace is imported. Code under test runs inside this
process, so it could rewrite how pytest reports outcomes (a patched
``TestReport``, a registered plugin, a frame walk to pytest's objects). This
file makes the verdicts independent of pytest's reporting and makes the
usual means of reaching into the process fatal:

* A PEP 578 audit hook, installed first; hooks cannot be removed. Events
  that an honest run of the suite never raises from code under test (frame
  access, ``gc`` object walks, ``ctypes``, compiling or unmarshalling code,
  code-object swaps, tracing, processes, extra audit hooks, import hooks,
  planted bytecode) end the process at once with exit code ``TAMPER_EXIT``:
  an exception could be caught by the code that caused it, ``os._exit``
  cannot. "Code under test" is any frame whose file is not in the venv, the
  standard library, this bootstrap or the pristine suite.
* Own verdicts: a first-called wrapper around the setup, call and teardown
  phases of every test records what the phase raised, straight into
  ``/grader-out/verdicts`` (one line per phase, written immediately). The
  grader scores from these lines and requires the JUnit report to agree.
  Before each record the wrapper checks that no frame of code under test is
  on the stack (a forged resume of the wrapper), that every registered hook
  implementation is trusted code, and that the modules and classes of
  pytest, pluggy and builtins still hold what they held before any code
  under test ran.
* The verdict file cannot be forged: every line carries a SHA-256 chain
  keyed by a per-run secret that the grader puts in ``/grader-out/key``;
  it is read and the file deleted before any code under test runs, kept
  only as a local of a suspended generator (reachable only through a frame,
  which the hook refuses), and the process is made non-dumpable so that
  processes the tests start cannot read it from memory. The last line,
  ``END``, is written after ``pytest.main`` returns and the final checks
  pass: a run cut short has no seal. Threads are refused (they would run
  outside the checked stack), as are signal handlers (they receive frames).

Everything the checks use is bound as default arguments or locals at start,
so later rebinding of module globals (``os._exit = ...``) does not reach
them. Known limits are listed in the Rust module doc.
"""


def _grader_main():
    import builtins
    import os
    import sys
    import types

    TAMPER_EXIT = 86
    boot_dir = os.path.dirname(os.path.abspath(__file__))
    out_dir = os.environ.get("SECAUDIT_GRADER_OUT", "/grader-out")
    verdict_path = out_dir + "/verdicts"
    tamper_path = out_dir + "/tamper"
    ws_root = os.getcwd().rstrip("/") + "/"

    # Trusted code: the venv's and the system's library trees, frozen
    # importlib, this bootstrap, the pristine suite (listed by the grader).
    import sysconfig

    prefixes = set()
    for key in ("stdlib", "platstdlib", "purelib", "platlib"):
        p = sysconfig.get_paths().get(key)
        if p:
            prefixes.add(os.path.realpath(p) + "/")
            prefixes.add(p.rstrip("/") + "/")
    prefixes.add(boot_dir + "/")
    prefixes = tuple(sorted(prefixes))
    suite = set()
    with open(boot_dir + "/suite.txt", encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if line:
                suite.add(line)
    suite = frozenset(suite)

    def trusted(fn, _p=prefixes, _s=suite, _str=str):
        if type(fn) is not _str:
            return False
        return fn.startswith(_p) or fn in _s or fn.startswith("<frozen ")

    getframe = sys._getframe
    _exit = os._exit
    o_open, o_write, o_close = os.open, os.write, os.close

    def die(reason, _open=o_open, _write=o_write, _exit=_exit, _tp=tamper_path,
            _flags=os.O_WRONLY | os.O_APPEND):
        try:
            fd = _open(_tp, _flags)
            _write(fd, (reason + "\n").encode("utf-8", "replace")[:4096])
        except BaseException:
            pass
        _exit(TAMPER_EXIT)

    # The per-run key: written by the grader into the output directory,
    # read and unlinked here before any code under test runs, so it lives
    # only in this process (made non-dumpable below, so no other process
    # of the sandbox uid can read its memory or ptrace it).
    kfd = o_open(out_dir + "/key", os.O_RDONLY)
    key = os.read(kfd, 256).strip()
    o_close(kfd)
    os.unlink(out_dir + "/key")
    for name in ("tamper", "verdicts"):
        o_close(o_open(out_dir + "/" + name, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600))

    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(4, 0, 0, 0, 0) != 0:  # PR_SET_DUMPABLE, 0
        die("could not make the test process non-dumpable")
    del libc
    for n in [n for n in sys.modules if n in ("ctypes", "_ctypes") or n.startswith("ctypes.")]:
        del sys.modules[n]
    del ctypes

    def frames_clean(start, _t=trusted):
        """The first frame of code under test from `start` up, or None."""
        f = start
        while f is not None:
            fn = f.f_code.co_filename
            if not _t(fn):
                return fn
            f = f.f_back
        return None

    import hashlib

    def chain(key, _sha=hashlib.sha256, _gf=getframe, _clean=frames_clean, _die=die):
        """Keyed hash chain over the verdict lines. The key is a local of
        this suspended generator: reachable only through its frame, which
        the audit hook refuses to code under test."""
        prev = b""
        line = yield None
        while True:
            bad = _clean(_gf(1))
            if bad is not None:
                _die("verdict chain driven with code under test on the stack: " + bad)
            prev = _sha(key + prev + b" " + line).hexdigest().encode()
            line = yield prev

    macs = chain(key)
    next(macs)
    del key

    def write_verdict(line, _gf=getframe, _clean=frames_clean, _die=die, _macs=macs,
                      _open=o_open, _write=o_write, _close=o_close, _vp=verdict_path,
                      _flags=os.O_WRONLY | os.O_APPEND):
        bad = _clean(_gf(1))
        if bad is not None:
            _die("verdict write with code under test on the stack: " + bad)
        data = line.encode("utf-8")
        mac = _macs.send(data)
        fd = _open(_vp, _flags)
        try:
            _write(fd, data + b" " + mac + b"\n")
        finally:
            _close(fd)

    # ---- the audit hook -------------------------------------------------

    frame_attrs = frozenset(("tb_frame", "gi_frame", "cr_frame", "ag_frame",
                             "f_back", "gi_code", "cr_code", "ag_code", "f_code"))
    code_attrs = frozenset(("__code__", "__defaults__", "__kwdefaults__",
                            "__globals__", "__closure__", "__builtins__"))
    walkers = ("/inspect.py", "/traceback.py")
    always = frozenset((
        "sys.addaudithook", "sys.settrace", "sys.setprofile",
        "sys._current_frames", "sys._current_exceptions",
        "gc.get_objects", "gc.get_referrers", "gc.get_referents",
    ))
    meta0 = tuple(sys.meta_path)
    hooks0 = tuple(sys.path_hooks)
    sealed_modules = frozenset(("_thread", "_signal", "ctypes", "_ctypes"))

    def safe(x, _type=type, _str=str):
        return x if _type(x) is _str else "<%s>" % _type(x).__name__
    state = [False, False]  # [busy, started]

    mro_of = type.__dict__["__mro__"].__get__

    def hook(ev, args, _gf=getframe, _t=trusted, _die=die, _state=state,
             _always=always, _fa=frame_attrs, _ca=code_attrs, _walk=walkers,
             _meta0=meta0, _hooks0=hooks0, _sealed=sealed_modules,
             _clean=frames_clean, _type=type, _str=str, _safe=safe,
             _bytes=bytes, _ws=ws_root):
        if _state[0]:
            return
        _state[0] = True
        try:
            if ev in _always:
                _die("audit event " + ev)
            if ev == "import":
                if not _state[1]:
                    return
                name = args[0]
                if _type(name) is not _str:
                    _die("import of a non-str module name")
                if name in _sealed or name.split(".")[0] in _sealed:
                    _die("import of " + name + " during the run")
                for m in args[3] or ():
                    if not any(m is x for x in _meta0):
                        _die("import hook added to sys.meta_path: " + _safe(_type(m).__name__))
                for h in args[4] or ():
                    if not any(h is x for x in _hooks0):
                        _die("import hook added to sys.path_hooks")
                return
            if ev.startswith("ctypes."):
                _die("audit event " + ev)
            caller = _gf(1)  # the Python frame that raised the event
            cfn = caller.f_code.co_filename if caller is not None else "<c>"
            app = not _t(cfn)
            if ev == "sys._getframe":
                if app:
                    _die("sys._getframe from " + cfn)
                fr = args[0]
                if fr is not None and not _t(fr.f_code.co_filename):
                    _die("frame of code under test handed out by " + cfn)
                if cfn.endswith(_walk) and _clean(caller) is not None:
                    _die("stack walk for code under test via " + cfn)
                return
            if ev == "object.__getattr__":
                name = args[1]
                if _type(name) is not _str:
                    return
                if name in _fa or name in _ca:
                    if app:
                        _die("read of " + _str(name) + " from " + cfn)
                    if name in _fa and cfn.endswith(_walk):
                        f = caller
                        while f is not None and f.f_code.co_filename.endswith(_walk):
                            f = f.f_back
                        if f is not None and not _t(f.f_code.co_filename):
                            _die("frames for code under test via " + cfn)
                return
            if ev in ("object.__setattr__", "object.__delattr__"):
                if app:
                    _die(ev + " " + _safe(args[1]) + " from " + cfn)
                return
            if ev in ("compile", "exec", "code.__new__", "function.__new__"):
                if app:
                    _die(ev + " from " + cfn)
                if ev == "compile" and _state[1]:
                    fn = args[1]
                    if _type(fn) is _bytes:
                        fn = fn.decode("utf-8", "replace")
                    if _type(fn) is _str and _t(fn) and _clean(caller) is not None:
                        _die("compile under a trusted file name (" + fn + ") for code under test")
                return
            if ev == "marshal.loads" or ev == "marshal.load":
                if app or cfn.startswith("<frozen zipimport"):
                    _die(ev + " from " + cfn)
                f = caller
                for _ in range(4):
                    if f is None:
                        break
                    co = f.f_code
                    if co.co_name in ("get_code", "_read_pyc", "_compile_bytecode"):
                        loc = f.f_locals
                        for k in ("bytecode_path", "pyc", "path"):
                            v = loc.get(k)
                            if v is not None:
                                p = v if _type(v) is _str else "?"
                                if not _t(p) or p.startswith(_ws):
                                    _die("bytecode loaded from " + p)
                                return
                    f = f.f_back
                if _state[1] and _clean(caller) is not None:
                    _die(ev + " for code under test via " + cfn)
                return
        finally:
            _state[0] = False

    sys.addaudithook(hook)

    # Bytecode: the run writes none; bytecode from the copy is refused by
    # the hook (the cleaner deleted every cache, so any is planted).
    sys.dont_write_bytecode = True

    # Threads would run code under test off the checked stack.
    import _thread
    import threading

    def no_threads(*a, _die=die, **k):
        _die("thread start")

    _thread.start_new_thread = no_threads
    _thread.start_new = no_threads
    threading._start_new_thread = no_threads
    # Signal handlers receive the interrupted frame.
    import signal
    import _signal

    def no_signals(*a, _die=die, **k):
        _die("signal handler or timer")

    for mod in (signal, _signal):
        for n in ("signal", "setitimer", "alarm", "set_wakeup_fd", "pthread_kill"):
            if hasattr(mod, n):
                setattr(mod, n, no_signals)

    # ---- pytest, imported and snapshotted before any code under test -----

    import pkgutil

    import _pytest
    import pluggy
    import pytest

    for pkg in (_pytest, pluggy):
        for info in pkgutil.walk_packages(pkg.__path__, pkg.__name__ + "."):
            try:
                __import__(info.name)
            except Exception:
                pass
    from _pytest.junitxml import mangle_test_address
    from _pytest.outcomes import Skipped

    watched = [m for n, m in sorted(sys.modules.items())
               if m is not None and (n in ("pytest", "builtins", "_pytest", "pluggy")
                                     or n.startswith(("_pytest.", "pluggy.")))]

    # Names that honest runs (re)bind in these namespaces: measured over
    # every task's suite.
    volatile = frozenset(("__builtins__", "__warningregistry__", "_",
                          # _pytest.assertion.util, set per test; read only by
                          # rewritten asserts, which --assert=plain turns off.
                          "_reprcompare", "_assertion_pass", "_config"))

    from operator import is_

    def snapshot(_w=tuple(watched), _type=type, _vol=volatile, _tuple=tuple):
        # Holds the objects themselves: compared by identity (`is`), never
        # by `==` (which could call code of the run) nor `id()` (audited,
        # so slow under the hook).
        snap = []

        def take(d):
            snap.append((d, _tuple(d), _tuple(d.values()),
                         {k: v for k, v in d.items() if k not in _vol}))

        for m in _w:
            take(m.__dict__)
            for v in list(m.__dict__.values()):
                if _type(v) is type and getattr(v, "__module__", "") == m.__name__:
                    take(v.__dict__)
        return tuple(snap)

    baseline = snapshot()

    def slow_diff(d, items, _vol=volatile, _len=len, _type=type, _str=str):
        n = 0
        for k in d:
            if _type(k) is not _str:
                return "a non-str name in a watched namespace"
            if k in _vol:
                continue
            n += 1
            if k not in items:
                return "name %s added to a namespace of pytest, pluggy or builtins" % k
            if d[k] is not items[k]:
                return "%s rebound in a namespace of pytest, pluggy or builtins" % k
        if n != _len(items):
            return "a name removed from a namespace of pytest, pluggy or builtins"
        return None

    def state_clean(_b=baseline, _len=len, _all=all, _map=map, _is=is_, _slow=slow_diff):
        """Every watched namespace holds exactly the objects it held before
        code under test ran. None if so, else what changed. The common case
        is a C-level identity sweep per namespace; only a namespace that
        differs is walked name by name (measured volatile names aside)."""
        for d, keys, vals, items in _b:
            if _len(d) == _len(keys) and _all(_map(_is, d, keys)) \
                    and _all(_map(_is, d.values(), vals)):
                continue
            bad = _slow(d, items)
            if bad is not None:
                return bad
        return None

    def code_of(v, _ft=types.FunctionType, _mt=types.MethodType, _type=type):
        for _ in range(4):
            t = _type(v)
            if t is _ft:
                return v.__code__
            if t is _mt:
                v = v.__func__
                continue
            f = getattr(v, "func", None) if t.__name__ == "partial" else None
            if f is None:
                return None
            v = f
        return None

    def impls_clean(item, _t=trusted, _code=code_of):
        pm = item.config.pluginmanager
        hooks = [getattr(pm.hook, n) for n in vars(pm.hook)]
        ih = item.ihook
        for n in ("pytest_runtest_setup", "pytest_runtest_call", "pytest_runtest_teardown",
                  "pytest_runtest_makereport", "pytest_runtest_logreport",
                  "pytest_pyfunc_call", "pytest_runtest_protocol"):
            hooks.append(getattr(ih, n))
        for h in hooks:
            for impl in h.get_hookimpls():
                c = _code(impl.function)
                if c is None or not _t(c.co_filename):
                    return "hook implementation from " + (c.co_filename if c else repr(impl.function))
        for obj in (item, item.session, item.config, pm):
            for k, v in vars(obj).items():
                c = _code(v)
                if c is not None and not _t(c.co_filename):
                    return "%s.%s is code under test (%s)" % (type(obj).__name__, k, c.co_filename)
        fn = getattr(item, "obj", None)
        c = _code(fn)
        if c is not None and c.co_filename not in suite:
            return "test function %s comes from %s" % (item.nodeid, c.co_filename)
        return None

    def checkpoint(item, where, _gf=getframe, _clean=frames_clean, _die=die,
                   _state_clean=state_clean, _impls=impls_clean):
        bad = _clean(_gf(1))
        if bad is not None:
            _die("%s: code under test on the stack (%s)" % (where, bad))
        bad = _state_clean()
        if bad is not None:
            _die("%s: %s" % (where, bad))
        bad = _impls(item)
        if bad is not None:
            _die("%s: %s" % (where, bad))

    def key_of(item, _mangle=mangle_test_address):
        names = _mangle(item.nodeid)
        return (".".join(names[:-1]) + "::" + names[-1]).encode("utf-8").hex()

    import _pytest.assertion.util as assert_util

    def phase(item, when, _cp=checkpoint, _wv=write_verdict, _key=key_of,
              _skip=Skipped, _mro=mro_of, _type=type, _au=assert_util):
        # Set per test by the assertion plugin and read only by rewritten
        # asserts (off here): a module-global path to the config otherwise.
        _au._config = None
        _cp(item, when + " start")
        try:
            res = yield
        except BaseException as e:
            _cp(item, when + " end")
            _wv("P %s %s %s" % (when, "skipped" if _skip in _mro(_type(e)) else "failed", _key(item)))
            raise
        _cp(item, when + " end")
        _wv("P %s passed %s" % (when, _key(item)))
        return res

    class GraderVerdicts:
        @pytest.hookimpl(trylast=True)
        def pytest_configure(self, config):
            # `pytest.mark` keeps the config for marker validation; from
            # there, module globals lead to every pytest object without
            # a frame. Validation of marker names is not a grading concern.
            pytest.mark._config = None

        @pytest.hookimpl(wrapper=True, tryfirst=True)
        def pytest_runtest_setup(self, item, _p=phase):
            return (yield from _p(item, "setup"))

        @pytest.hookimpl(wrapper=True, tryfirst=True)
        def pytest_runtest_call(self, item, _p=phase):
            return (yield from _p(item, "call"))

        @pytest.hookimpl(wrapper=True, tryfirst=True)
        def pytest_runtest_teardown(self, item, _p=phase):
            return (yield from _p(item, "teardown"))

    state[1] = True
    args = sys.argv[1:]
    try:
        rc = pytest.main(args, plugins=[GraderVerdicts()])
    except SystemExit as e:
        rc = e.code if type(e.code) is int else 2
    except BaseException as e:
        sys.stderr.write("grader bootstrap: pytest.main raised %s\n" % type(e).__name__)
        rc = 3
    rc = int(rc)
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except BaseException:
            pass
    bad = frames_clean(getframe(0)) or state_clean()
    if bad is not None:
        die("after the run: " + bad)
    write_verdict("END %d" % rc)
    # No atexit handler, no finalizer of code under test runs after the seal.
    _exit(rc)


_grader_main()
