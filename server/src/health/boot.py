"""Grader bootstrap for the health run (server/src/health/mod.rs; spec.md §6,
"Verdicts code under test cannot forge").

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
  keyed by a per-run secret that the grader sends on stdin (it never
  touches a file); it is read before any code under test runs, kept only
  as a local of a suspended generator (reachable only through a frame,
  which the hook refuses), and the process is made non-dumpable so that
  processes the tests start cannot read it from memory. The last line,
  ``END``, is written after ``pytest.main`` returns and the final checks
  pass: a run cut short has no seal. Threads are refused (they would run
  outside the checked stack), as are signal handlers (they receive frames).

Everything the checks use is bound as default arguments or locals at start,
so later rebinding of module globals (``os._exit = ...``) does not reach
them. Known limits are listed in the Rust module doc.

The start signal: everything up to importing pytest is the same for every
run, so the grader may start this process before the copy exists (a staged
run, server/src/health/scratch.rs) and it waits at the start signal, the
key arriving on stdin. The suite list and the suite's sources are read
after it. A cold run gets the key on stdin at once: both runs are the same
process doing the same things in the same order.

The runner (``SECAUDIT_RUNNER=1``, server/src/health/runner.rs): the same
start-up, once, then a loop that forks one run per key line instead of
running one itself. Each fork is the process a staged run would be from
its start signal on, plus, before any code under test: stdin, stdout and
stderr on /dev/null (they are the runner's control pipes), and a Landlock
domain of its own (``make_confiner``) that lets it write only beneath the
copy, the output directory and /tmp (all three emptied by the grader
between runs) and refuses it any signal, ptrace or abstract socket to a
process outside the run: the runner cannot be reached, and a later run
inherits nothing but the runner's untouched memory. After each run the
runner, the sandbox's subreaper, kills every other process of the sandbox
before it answers. A kernel without Landlock signal scoping (ABI < 6)
gets no runner: it answers ``NORUNNER`` and the grader runs staged.
"""


def _grader_main():
    import builtins
    import os
    import sys
    import types

    import time

    started = time.monotonic()
    TAMPER_EXIT = 86
    # The key's bounds (the grader sends 64 hex digits), and the exit code
    # of a run that got none.
    MIN_KEY, MAX_KEY, NO_START = 32, 256, 125
    # A forked run that could not be confined (the runner reports it; the
    # grader runs the copy again cold).
    CONFINE_EXIT = 124
    MAX_SUITE_FILE = 4 << 20
    boot_dir = os.path.dirname(os.path.abspath(__file__))
    boot_file = sys._getframe(0).f_code.co_filename
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
    # The suite's files and their sources: filled at the start signal,
    # before any code under test runs (below). Only closures of this
    # function hold them.
    suite = set()
    suite_src = {}

    def trusted(fn, _p=prefixes, _s=suite, _str=str, _type=type):
        if _type(fn) is not _str:
            return False
        return fn.startswith(_p) or fn in _s or fn.startswith("<frozen ")

    import _stat

    def real_path(path, _lstat=os.lstat, _readlink=os.readlink, _getcwd=os.getcwd,
                  _islnk=_stat.S_ISLNK, _oserror=OSError, _str=str, _type=type,
                  _split=str.split, _join=str.join, _sw=str.startswith, _add=str.__add__,
                  _list=list):
        """`os.path.realpath` of a str path with C functions only.
        `posixpath.realpath` and what it calls read `os.lstat`, `os.fspath`,
        `posixpath.join`... from their modules at call time, which code
        under test can rebind: the audit hook called them with its busy
        flag set, so the replacement ran unjudged (review rev41). Symlinks
        are followed (40 at most); missing components are kept, like the
        non-strict `realpath`."""
        if _type(path) is not _str:
            path = _add("", path)  # an exact copy, no method of a subclass runs
        if not _sw(path, "/"):
            path = _add(_add(_getcwd(), "/"), path)
        todo = _split(path, "/")
        todo.reverse()
        out = []
        hops = 0
        while todo:
            c = todo.pop()
            if c == "" or c == ".":
                continue
            if c == "..":
                if out:
                    out.pop()
                continue
            cand = _add("/", _join("/", out + [c]))
            try:
                link = hops < 40 and _islnk(_lstat(cand).st_mode)
            except _oserror:
                link = False
            if not link:
                out.append(c)
                continue
            hops += 1
            try:
                target = _readlink(cand)
            except _oserror:
                out.append(c)
                continue
            if _sw(target, "/"):
                out = []
            more = _split(target, "/")
            more.reverse()
            todo.extend(more)
        return _add("/", _join("/", out))

    getframe = sys._getframe
    _exit = os._exit
    o_open, o_write, o_close, o_read = os.open, os.write, os.close, os.read

    def die(reason, _open=o_open, _write=o_write, _exit=_exit, _tp=tamper_path,
            _flags=os.O_WRONLY | os.O_APPEND):
        try:
            fd = _open(_tp, _flags)
            _write(fd, (reason + "\n").encode("utf-8", "replace")[:4096])
        except BaseException:
            pass
        _exit(TAMPER_EXIT)

    def fresh_outputs(_open=o_open, _close=o_close, _od=out_dir,
                      _flags=os.O_WRONLY | os.O_CREAT | os.O_TRUNC):
        for name in ("tamper", "verdicts"):
            _close(_open(_od + "/" + name, _flags, 0o600))

    fresh_outputs()
    runner = os.environ.get("SECAUDIT_RUNNER") == "1"

    def make_confiner(ct, libc):
        """The Landlock confinement of one forked run, or None when the
        kernel cannot scope signals (Landlock ABI < 6): writes only beneath
        the run's own directories (the copy, the output, its /tmp) and to
        existing device files, no file read in /proc's process directories,
        no signal to and no abstract socket of any process outside the run
        (the runner, the sandbox's init). Landlock also refuses ptrace of a process outside
        the run's domain."""
        import struct

        sc = libc.syscall
        sc.restype = ct.c_long
        u32, i32, size = ct.c_uint32, ct.c_int, ct.c_size_t
        if sc(444, None, size(0), u32(1)) < 6:  # LANDLOCK_CREATE_RULESET_VERSION
            return None
        # WRITE_FILE, REMOVE_DIR/FILE, MAKE_CHAR/DIR/REG/SOCK/FIFO/BLOCK/SYM,
        # REFER, TRUNCATE: every right that changes the file system.
        write = 2 | 16 | 32 | 64 | 128 | 256 | 512 | 1024 | 2048 | 4096 | 8192 | 16384
        dev = 2 | 16384  # writing existing device files (/dev/null)
        # READ_FILE everywhere but in the process directories of /proc
        # (`/proc/<pid>`, `self`, `thread-self` and the links into them):
        # /proc/<pid>/mem is the run's own memory (the verdict's key; any
        # object, written), and the hook's check of opens cannot follow
        # `os.open`'s `dir_fd`. The rest of /proc (`sysvipc`, `meminfo`,
        # `sys`) stays readable.
        read = 4
        scope = 1 | 2  # ABSTRACT_UNIX_SOCKET, SIGNAL
        attr = struct.pack("=QQQ", write | read, 0, scope)
        own = ((ws_root, write | read), (out_dir, write | read), ("/tmp", write | read),
               ("/dev/shm", write | read), ("/dev", dev | read))
        tops = tuple(("/" + n, read) for n in sorted(os.listdir("/"))
                     if n != "proc" and os.path.exists("/" + n)
                     and not any(p == "/" + n for p, _ in own))
        procs = tuple(("/proc/" + n, read) for n in sorted(os.listdir("/proc"))
                      if not n.isdigit() and n not in ("self", "thread-self")
                      and not os.path.islink("/proc/" + n))
        dirs = own + tops + procs

        def confine(_sc=sc, _buf=ct.create_string_buffer, _pack=struct.pack, _u32=u32,
                    _i32=i32, _size=size, _attr=attr, _dirs=dirs, _prctl=libc.prctl,
                    _open=o_open, _close=o_close, _path=os.O_PATH):
            rs = _sc(444, _buf(_attr, len(_attr)), _size(len(_attr)), _u32(0))
            if rs < 0:
                return False
            try:
                for path, access in _dirs:
                    fd = _open(path, _path)
                    try:
                        rule = _pack("=Qi", access, fd)
                        if _sc(445, _i32(rs), _i32(1), _buf(rule, len(rule)), _u32(0)) != 0:
                            return False
                    finally:
                        _close(fd)
                if _prctl(38, 1, 0, 0, 0) != 0:  # PR_SET_NO_NEW_PRIVS
                    return False
                return _sc(446, _i32(rs), _u32(0)) == 0
            finally:
                _close(rs)

        return confine

    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(4, 0, 0, 0, 0) != 0:  # PR_SET_DUMPABLE, 0
        die("could not make the test process non-dumpable")
    # A runner (see "The runner" in the module notes) keeps what confines
    # each run it forks, and adopts whatever a run leaves behind.
    confine = None
    if runner:
        confine = make_confiner(ctypes, libc)
        if confine is None or libc.prctl(36, 1, 0, 0, 0) != 0:  # PR_SET_CHILD_SUBREAPER
            o_write(1, b"NORUNNER\n")
            _exit(NO_START)
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
    from itertools import repeat
    from operator import is_

    # The code that may have a line written (filled as each is defined: the
    # start-up, `phase`, the seal). A C callable of code under test leaves
    # no frame for `_clean` to see (review rev40: `map(write_verdict, ...)`
    # run by the bootstrap's own `plain` wrote every phase as passed), so
    # the writer's caller is also checked by its code.
    verdict_writers = [sys._getframe(0).f_code]

    def chain(key, _sha=hashlib.sha256, _gf=getframe, _clean=frames_clean, _die=die,
              _writers=verdict_writers, _any=any, _map=map, _is=is_, _rep=repeat):
        """Keyed hash chain over the verdict lines. The key is a local of
        this suspended generator: reachable only through its frame, which
        the audit hook refuses to code under test."""
        prev = b""
        line = yield None
        while True:
            f = _gf(1)
            bad = _clean(f)
            if bad is not None:
                _die("verdict chain driven with code under test on the stack: " + bad)
            up = f.f_back if f is not None else None
            if up is None or not _any(_map(_is, _rep(up.f_code), _writers)):
                _die("verdict line written for a caller that is not the grader's")
            prev = _sha(key + prev + b" " + line).hexdigest().encode()
            line = yield prev


    chain_code = chain.__code__

    # ---- the pristine suite, compiled with strict comparisons -----------
    #
    # Code under test hands the tests its values, and a value can lie: a
    # str subclass or any object whose `__eq__`, `__contains__` or
    # `__bool__` says what the test wants to hear passes `assert
    # settings.KEY == deployed["KEY"]` without holding the key. So every
    # comparison and every assert in the suite is compiled to call the
    # bootstrap instead (`STRICT`): both sides are first normalised to
    # values whose comparison no code under test defines (exact builtins,
    # builtin subclasses copied to their base type, objects of trusted
    # types as they are, objects of code under test as a record of their
    # type and fields, or as themselves if their type compares by
    # identity), then compared. Each such call is also a checkpoint of the
    # watched namespaces (below), so a patch that is in force while the
    # suite checks a value is seen there, not only at phase boundaries.
    import ast
    import importlib.machinery as machinery

    STRICT_NAME = "_secaudit_strict_"
    HEAP = 1 << 9
    flags_of = type.__dict__["__flags__"].__get__
    tdict_of = type.__dict__["__dict__"].__get__
    mro_of = type.__dict__["__mro__"].__get__
    qualname_of = type.__dict__["__qualname__"].__get__
    FT = types.FunctionType
    NATIVE = (types.BuiltinFunctionType, types.WrapperDescriptorType,
              types.MethodDescriptorType, types.MethodWrapperType,
              types.ClassMethodDescriptorType)
    SCALARS = (str, bytes, int, float, bool, type(None), complex, bytearray)
    DUNDERS = ("__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__",
               "__contains__", "__bool__", "__len__", "__iter__", "__hash__",
               "__reduce_ex__", "__reduce__", "__getstate__", "__getnewargs__",
               "__getnewargs_ex__", "__getattribute__", "__getattr__")
    # C value types compared as they are: their `==` is C code over values
    # they hold themselves (never an object of code under test).
    import datetime as _dt
    import decimal as _dec
    import re as _re
    LEAVES = (_dt.date, _dt.datetime, _dt.time, _dt.timedelta, _dt.timezone,
              _dec.Decimal, range, _re.Pattern)

    def private_re_compile(_re=_re):
        """A private copy of `re`'s compiler: its parser, constants and case
        tables loaded again from the library's files under a name no one
        else has, then taken out of `sys.modules`, so no table code under
        test can reach changes what it compiles (poisoning
        `re._parser.CATEGORIES` and purging the cache made the suite's
        own placeholder regex match anything, and a coherence check
        through the same parser agreed). Loaded once, before a runner
        forks (about 15 ms)."""
        import importlib.util as iutil
        base = "_secaudit_sre"
        d = os.path.dirname(getattr(_re, "__file__", "") or "")
        if not os.path.isfile(os.path.join(d, "_compiler.py")):
            return None
        pkg = types.ModuleType(base)
        pkg.__path__ = [d]
        pkg.__package__ = base
        sys.modules[base] = pkg
        try:
            for sub in ("_constants", "_casefix", "_parser", "_compiler"):
                spec = iutil.spec_from_file_location(base + "." + sub, os.path.join(d, sub + ".py"))
                mod = iutil.module_from_spec(spec)
                sys.modules[spec.name] = mod
                spec.loader.exec_module(mod)
                setattr(pkg, sub, mod)
            return pkg._compiler.compile
        finally:
            for k in [k for k in sys.modules if k == base or k.startswith(base + ".")]:
                del sys.modules[k]

    re_private0 = private_re_compile()

    matchers = []  # pytest.approx results made by the suite (below)
    obj_getattr = object.__getattribute__
    check_ref = [None]  # state_clean, once it exists
    watch_ref = [None]  # adds a suite module's namespace to the watched ones
    # Honest runs rebind these library globals (measured over every task's
    # suite); any other rebinding is tampering.
    VOLATILE_AT = (
        # pytest's per-test warning capture (warnings.catch_warnings) and
        # thread-exception hook.
        "warnings._showwarnmsg_impl", "warnings.filters", "warnings.showwarning",
        "threading.excepthook",
        # Caches filled on first use.
        "tempfile.tempdir", "tempfile._name_sequence",
        "urllib.parse._typeprog", "urllib.parse._hostprog", "urllib.parse._hextobyte",
        # time.tzset(), which tests of local time call.
        "time.tzname", "time.timezone", "time.altzone", "time.daylight",
        # logging's documented class-level settings of its formatter
        # (the logging cookbook sets them on the class).
        "logging.Formatter.default_time_format", "logging.Formatter.default_msec_format",
        # logging's documented module-level switches (the HOWTO's
        # "optimization" section, production's `raiseExceptions = False`).
        "logging.raiseExceptions", "logging.logThreads", "logging.logProcesses",
        "logging.logMultiprocessing", "logging.logAsyncioTasks",
    )

    # Module-level containers of the library that honest runs empty or
    # change in place: caches (re's is checked for coherence instead).
    GROWING = frozenset((
        "re._cache", "re._cache2", "_strptime._regex_cache", "linecache.cache",
    ))
    # The process's own state that lives in a library dict: the environment
    # (`os.environ`'s data). Honest code changes it both ways: the suite
    # (`mock.patch.dict(os.environ, ...)` clears and refills it with new
    # objects), the app (defaults, a variable it consumes and removes).
    # No library constant is computed from it; the task suites compare
    # credentials against their own copies, never against the environment.
    PROCESS_STATE = frozenset(("posix.environ",))

    def one_of(t, kinds):
        for k in kinds:
            if t is k:
                return True
        return False

    def impl_trusted(f, _t=trusted, _ft=FT, _native=NATIVE, _one=one_of, _type=type,
                     _sm=staticmethod, _cm=classmethod):
        k = _type(f)
        if k is _sm or k is _cm:
            f = f.__func__
            k = _type(f)
        if f is None or _one(k, _native):
            return True
        if k is _ft:
            return _t(f.__code__.co_filename)
        return False

    def type_trusted(t, _mro=mro_of, _td=tdict_of, _fl=flags_of, _heap=HEAP,
                     _names=DUNDERS, _ok=impl_trusted):
        """No comparison or truth dunder of `t` comes from code under test
        (static types are C code; heap types are checked per method)."""
        for name in _names:
            for c in _mro(t):
                d = _td(c)
                if name in d:
                    if (_fl(c) & _heap) and not _ok(d[name]):
                        return False
                    break
        return True

    def foreign_code(t, _mro=mro_of, _td=tdict_of, _fl=flags_of, _heap=HEAP, _ok=impl_trusted,
                     _type=type, _prop=property, _kinds=(FT, staticmethod, classmethod),
                     _one=one_of, _list=list):
        """True when a class of `t`'s MRO holds a method or property
        accessor of code under test."""
        for c in _mro(t):
            if not (_fl(c) & _heap):
                continue
            for v in _list(_td(c).values()):
                k = _type(v)
                if k is _prop:
                    if not (_ok(v.fget) and _ok(v.fset) and _ok(v.fdel)):
                        return True
                elif _one(k, _kinds) and not _ok(v):
                    return True
        return False

    class Ident:
        """An object of code under test whose type compares by identity."""
        __slots__ = ("o",)

        def __init__(self, o):
            self.o = o

        def __eq__(self, other, _type=type):
            return _type(other) is Ident and self.o is other.o

        def __ne__(self, other):
            return not self.__eq__(other)

        def __hash__(self):
            return 0

        def __repr__(self):
            return "<object of code under test>"

    class Rec:
        """An object of code under test with its own `__eq__`: compared as
        its exact type and its fields, never through its methods."""
        __slots__ = ("t", "f")

        def __init__(self, t, f):
            self.t, self.f = t, f

        def __eq__(self, other, _type=type):
            return _type(other) is Rec and self.t is other.t and self.f == other.f

        def __ne__(self, other):
            return not self.__eq__(other)

        def __hash__(self):
            return 0

        def __repr__(self, _qn=qualname_of):
            return "<%s of code under test>" % _qn(self.t)

    BASE_COPY = (
        (str, str.__str__), (int, int.__int__), (float, float.__float__),
        (complex, complex.__complex__), (bytes, lambda x: bytes(memoryview(x))),
        (bytearray, lambda x: bytearray(memoryview(x))), (list, list.copy),
        (tuple, lambda x: tuple(tuple.__iter__(x))), (dict, dict.copy),
        (set, set.copy), (frozenset, frozenset.copy),
    )

    # What `object.__getattribute__(x, name)` would run for a data
    # attribute: only the type's own slot or instance-dict descriptors are
    # read. Anything else (an app class's `__dict__` property, a property
    # shadowing a slot) would run code under test with this bootstrap's
    # frames, and their locals, below it (review rev40: `plain`'s
    # `_matchers` grown from such a property).
    gsd_type = types.GetSetDescriptorType
    mbd_type = types.MemberDescriptorType

    def plain_descr(mro, name, _td=tdict_of, _type=type, _gsd=gsd_type, _mbd=mbd_type):
        """True when reading `name` of an instance runs no code of its
        class: the first class in `mro` defining it holds a C getset
        (`__dict__`) or member (slot) descriptor, or none does."""
        for c in mro:
            dd = _td(c)
            if name in dd:
                k = _type(dd[name])
                return k is _gsd or k is _mbd
        return True

    def by_reduce(x, t, d, _type=type, _td=tdict_of, _mro=mro_of, _dict=dict, _str=str,
                  _tuple=tuple, _len=len, _ga=obj_getattr, _list=list, _pd=plain_descr):
        """An object of a trusted type as its value: what pickle would
        record of it (its type's own `__reduce_ex__`, trusted code), each
        part normalised in turn. A trusted type can still hold, or compare
        through, values of code under test (`UserString.data`, a deque's
        items) or compare with anything (`mock.ANY`): its methods never
        decide. An instance that shadows a dunder in its own dict is not
        reduced (pickle would call that one)."""
        if not _pd(_mro(t), "__dict__"):
            return Ident(x)
        try:
            inst = _ga(x, "__dict__")
        except BaseException:
            inst = None
        if _type(inst) is _dict:
            for k in inst:
                if _type(k) is not _str or (k[:2] == "__" and k[-2:] == "__"):
                    return Rec(t, (("<dunder in instance dict>", Ident(x)),))
        fn = None
        for c in _mro(t):
            dd = _td(c)
            if "__reduce_ex__" in dd:
                fn = dd["__reduce_ex__"]
                break
        try:
            r = fn(x, 2)
        except BaseException:
            return Ident(x)
        if _type(r) is not _tuple or _len(r) < 2:
            return Ident(x)
        parts = [Ident(r[0]), plain(r[1], d)]
        if _len(r) > 2:
            parts.append(plain(r[2], d))
        for it in r[3:5]:
            items = None
            if it is not None:
                items = []
                for e in it:
                    items.append(plain(e, d))
                    if _len(items) > 100000:
                        raise ValueError("value too large to compare")
            parts.append(items)
        return Rec(t, _tuple(parts))

    def plain(x, depth=0, _type=type, _one=one_of, _sc=SCALARS, _tt=type_trusted,
              _mro=mro_of, _td=tdict_of, _bc=BASE_COPY, _fl=flags_of, _heap=HEAP,
              _ga=obj_getattr, _matchers=matchers, _leaves=LEAVES,
              _str=str, _sorted=sorted, _tuple=tuple, _dict=dict, _pd=plain_descr):
        t = _type(x)
        if _one(t, _sc):
            return x
        if depth > 40:
            raise RecursionError("value nested too deep to compare")
        d = depth + 1
        if t is list:
            return [plain(e, d) for e in x]
        if t is tuple:
            return _tuple(plain(e, d) for e in x)
        if t is dict:
            return {plain(k, d): plain(v, d) for k, v in _dict.items(x)}
        if t is set or t is frozenset:
            return t(plain(e, d) for e in x)
        mro = _mro(t)
        eq_owner = None
        for c in mro:
            dd = _td(c)
            if "__eq__" in dd:
                eq_owner = c
                break
        for base, copy in _bc:
            for c in mro:
                if c is base:
                    return plain(copy(x), d)
        # pytest.approx objects the suite itself made: matchers, by design.
        for m in _matchers:
            if m is x:
                return x
        if t is type or _one(t, _leaves):
            return x
        if _tt(t):
            return by_reduce(x, t, d)
        if eq_owner is object:
            return Ident(x)
        if not _pd(mro, "__dict__"):
            return Ident(x)
        fields = []
        try:
            inst = _ga(x, "__dict__")
        except BaseException:
            inst = None
        if _type(inst) is _dict:
            for k, v in _dict.items(inst):
                if _type(k) is _str:
                    fields.append((k, plain(v, d)))
        for c in mro:
            slots = _td(c).get("__slots__", ())
            if _type(slots) is _str:
                slots = (slots,)
            for k in slots if _one(_type(slots), (tuple, list)) else ():
                if _type(k) is _str and k not in ("__dict__", "__weakref__"):
                    if not _pd(mro, k):
                        return Ident(x)
                    try:
                        fields.append((k, plain(_ga(x, k), d)))
                    except AttributeError:
                        pass
        return Rec(t, _tuple(_sorted(fields, key=lambda kv: kv[0])))

    def s_check(_ref=check_ref, _die=die):
        f = _ref[0]
        if f is not None:
            bad = f()
            if bad is not None:
                _die("during a check of the suite: " + bad)

    def s_cmp(ops, vals, _plain=plain, _check=s_check, _len=len, _range=range, _type=type,
              _bool=bool, _te=TypeError):
        _check()
        ps = [_plain(v) for v in vals]
        for i in _range(_len(ops)):
            op, a, b = ops[i], ps[i], ps[i + 1]
            if op == "==":
                r = a == b
            elif op == "!=":
                r = a != b
            elif op == "in":
                r = a in b
            elif op == "not in":
                r = a not in b
            elif op == "is":
                r = vals[i] is vals[i + 1]
            elif op == "is not":
                r = vals[i] is not vals[i + 1]
            elif op == "<":
                r = a < b
            elif op == "<=":
                r = a <= b
            elif op == ">":
                r = a > b
            else:
                r = a >= b
            if _type(r) is not _bool:
                r = _plain(r)
                if _type(r) is not _bool:
                    raise _te("a comparison returned a non-bool value")
            if not r:
                return False
        return True

    def s_truth(x, _plain=plain, _check=s_check, _type=type, _rec=Rec, _ident=Ident,
                _mro=mro_of, _td=tdict_of, _qn=qualname_of, _bool=bool, _te=TypeError):
        _check()
        p = _plain(x)
        if _type(p) is _rec or _type(p) is _ident:
            t = _type(x)
            for name in ("__bool__", "__len__"):
                for c in _mro(t):
                    if name in _td(c):
                        if c is not object:
                            raise _te(
                                "the truth value of an object of code under test (%s) is "
                                "not taken from its own __bool__/__len__" % _qn(t))
                        break
            return True
        return _bool(p)

    hot_ref = [None]  # the hot namespaces' entries (a list, once built)
    behaviour_ref = [None]  # `behaviour`, defined with the sweeps
    entry_ix = {}  # namespace name -> index of its entry in that list
    MISSING = object()

    def s_global(mod, name, value, _ref=hot_ref, _ix=entry_ix, _die=die,
                 _beh=lambda v: behaviour_ref[0](v)):
        """A global name the suite reads inside a function: it must still
        be what the suite's module bound (or, for a builtin, what builtins
        held), at the moment of the read, not only at the next sweep."""
        hot = _ref[0]
        if hot is None:
            return value
        i = _ix.get(mod)
        if i is not None:
            items = hot[i][4]
            if name in items:
                if value is not items[name]:
                    _die("%s.%s rebound (read by the suite)" % (mod, name))
                return value
        i = _ix.get("builtins")
        if i is not None:
            items = hot[i][4]
            if name in items and value is not items[name]:
                if _beh(items[name]):
                    _die("builtins.%s rebound (read by the suite)" % name)
        return value

    def s_attr(obj, attr, _ref=hot_ref, _ix=entry_ix, _die=die, _type=type,
               _mt=types.ModuleType, _callable=callable, _missing=MISSING,
               _getattr=getattr, _fl=flags_of, _heap=HEAP, _mro=mro_of, _td=tdict_of,
               _bc=BASE_COPY, _ok=impl_trusted, _bref=behaviour_ref, _str=str):
        """`x.attr` read by the suite. A watched module's function, class
        or submodule must be the one it held (module notes). A method of a
        builtin base (`str.startswith`, `dict.get`) that a subclass of code
        under test overrides is taken from the base, bound to the base
        value: the suite asks the value, not the subclass's opinion."""
        t = _type(obj)
        if t is not _mt and (_fl(t) & _heap):
            mro = _mro(t)
            for base, copy in _bc:
                for c in mro:
                    if c is base:
                        if attr in _td(base):
                            for k in mro:
                                d = _td(k)
                                if attr in d:
                                    if k is not base and not _ok(d[attr]):
                                        return _getattr(copy(obj), attr)
                                    break
                        return _getattr(obj, attr)
            return _getattr(obj, attr)
        hot = _ref[0]
        if hot is not None and t is _mt:
            name = obj.__dict__.get("__name__")
            i = _ix.get(name) if _type(name) is _str else None
            if i is not None:
                e = hot[i]
                items = e[4]
                old = items.get(attr, _missing)
                if old is not _missing and obj.__dict__.get(attr, _missing) is not old \
                        and (e[5] or _bref[0](old)):
                    _die("%s.%s rebound (read by the suite)" % (name, attr))
        return _getattr(obj, attr)

    STRICT = (s_cmp, s_truth, s_global, s_attr)
    OPS = {ast.Eq: "==", ast.NotEq: "!=", ast.In: "in", ast.NotIn: "not in",
           ast.Is: "is", ast.IsNot: "is not", ast.Lt: "<", ast.LtE: "<=",
           ast.Gt: ">", ast.GtE: ">="}

    import symtable

    def global_reads(source, filename):
        """(scope name, line) -> the names that function scope reads as
        globals, from the compiler's own symbol tables (intersected where
        two scopes share a key, so a name is never taken for a global
        where it is local)."""
        out = {}

        def walk(tb):
            for ch in tb.get_children():
                if ch.get_type() == "function":
                    key = (ch.get_name(), ch.get_lineno())
                    g = frozenset(sym.get_name() for sym in ch.get_symbols()
                                  if sym.is_global() and sym.is_referenced())
                    out[key] = g if key not in out else out[key] & g
                walk(ch)
        walk(symtable.symtable(source, filename, "exec"))
        return out

    SCOPES = {ast.ListComp: "listcomp", ast.SetComp: "setcomp", ast.DictComp: "dictcomp",
              ast.GeneratorExp: "genexpr", ast.Lambda: "lambda"}

    class Strict(ast.NodeTransformer):
        def __init__(self, modname, reads):
            self.modname, self.reads, self.scopes = modname, reads, []

        def _scoped(self, node, name):
            self.scopes.append(self.reads.get((name, node.lineno), frozenset()))
            try:
                self.generic_visit(node)
            finally:
                self.scopes.pop()
            return node

        def _global(self, name):
            return bool(self.scopes) and name in self.scopes[-1] and name != STRICT_NAME

        def visit_Name(self, node):
            if isinstance(node.ctx, ast.Load) and self._global(node.id):
                return self._call(2, [ast.Constant(self.modname), ast.Constant(node.id), node], node)
            return node

        def visit_Attribute(self, node):
            self.generic_visit(node)
            if self.scopes and isinstance(node.ctx, ast.Load):
                return self._call(3, [node.value, ast.Constant(node.attr)], node)
            return node

        def visit_ListComp(self, node):
            return self._scoped(node, SCOPES[type(node)])

        visit_SetComp = visit_DictComp = visit_GeneratorExp = visit_ListComp

        def _call(self, i, args, node):
            fn = ast.Subscript(value=ast.Name(id=STRICT_NAME, ctx=ast.Load()),
                               slice=ast.Constant(i), ctx=ast.Load())
            return ast.copy_location(ast.Call(func=fn, args=args, keywords=[]), node)

        def truth(self, e):
            if isinstance(e, ast.BoolOp):
                e.values = [self.truth(v) for v in e.values]
                return e
            if isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.Not):
                e.operand = self.truth(e.operand)
                return e
            return self._call(1, [e], e)

        def visit_Compare(self, node):
            self.generic_visit(node)
            ops = tuple(OPS[type(o)] for o in node.ops)
            vals = ast.List(elts=[node.left] + node.comparators, ctx=ast.Load())
            return self._call(0, [ast.Constant(ops), vals], node)

        def visit_Assert(self, node):
            self.generic_visit(node)
            node.test = self.truth(node.test)
            return node

        def _param(self, node):
            self._scoped(node, getattr(node, "name", "lambda"))
            node.args.kwonlyargs.append(ast.arg(arg=STRICT_NAME))
            node.args.kw_defaults.append(ast.Name(id=STRICT_NAME, ctx=ast.Load()))
            return node

        visit_FunctionDef = visit_AsyncFunctionDef = visit_Lambda = _param

    # The suite's functions given STRICT (`pin`) and their keyword-default
    # dicts: the hook refuses their code and defaults set, and every check
    # requires each dict to still hold STRICT (review rev40: C callables
    # of code under test, with no frame for `_clean` to see, read a test's
    # `__kwdefaults__` and put a comparison that always agrees there).
    pinned_fns = set()
    pinned_kds = []

    def pin(v, origin, depth=0, _type=type, _ft=FT, _td=tdict_of, _pf=pinned_fns,
            _pk=pinned_kds):
        """Sets STRICT as the keyword default of every function the module
        defined, whatever the module-level name held when the def ran."""
        if depth > 4:
            return
        k = _type(v)
        if k is staticmethod or k is classmethod:
            v, k = v.__func__, _type(v.__func__)
        if k is _ft:
            if v.__code__.co_filename == origin:
                kd = v.__kwdefaults__
                if kd is not None and STRICT_NAME in kd:
                    kd[STRICT_NAME] = STRICT
                    _pf.add(v)
                    _pk.append(kd)
            w = getattr(v, "__pytest_wrapped__", None)
            if w is not None:
                pin(getattr(w, "obj", None), origin, depth + 1)
            w = v.__dict__.get("__wrapped__")
            if w is not None:
                pin(w, origin, depth + 1)
        elif k is property:
            for f in (v.fget, v.fset, v.fdel):
                pin(f, origin, depth + 1)
        elif issubclass(k, type):
            for x in list(_td(v).values()):
                pin(x, origin, depth + 1)

    class SuiteLoader:
        def __init__(self, origin, source):
            self.origin, self.source = origin, source

        def create_module(self, spec):
            return None

        def get_source(self, name):
            return self.source.decode("utf-8", "replace")

        def exec_module(self, module, _die=die, _ast=ast, _reads=global_reads, _strict=Strict,
                        _compile=compile, _exec=exec, _name=STRICT_NAME, _st=STRICT, _list=list,
                        _pin=pin, _watch=watch_ref):
            tree = _ast.parse(self.source, self.origin)
            reads = _reads(self.source.decode("utf-8", "replace"), self.origin)
            tree = _ast.fix_missing_locations(_strict(module.__name__, reads).visit(tree))
            code = _compile(tree, self.origin, "exec", dont_inherit=True)
            ns = module.__dict__
            ns[_name] = _st
            _exec(code, ns)
            if ns.get(_name) is not _st:
                _die("the suite's strict comparisons were rebound in " + self.origin)
            for v in _list(ns.values()):
                _pin(v, self.origin)
            _watch[0](ns)

    # A library module first imported during the run (lazily by the
    # library, `datetime.strptime` imports `_strptime` per call, or by the
    # app) is watched like the baseline's from the moment its own code has
    # run: its loader (the import system's own, subclassed) hands it to
    # `loaded_ref[0]` (set with the baseline, below). Without this, a
    # library function the suite reaches only through such a module could
    # be rebound by the app with no sweep looking.
    # [watch the module now run, admit the module about to run] (set with
    # the baseline). A module is admitted once, for a spec this finder
    # made and nobody has run yet, with nothing in it but what the import
    # system puts there: a loader's `exec_module` called by the app on a
    # module of its own (extra names would shadow builtins for the
    # library's code), or twice, must not make that module the library's.
    loaded_ref = [None, None]
    pending_specs = []

    class LibSourceLoader(machinery.SourceFileLoader):
        def exec_module(self, module, _ref=loaded_ref, _base=machinery.SourceFileLoader):
            fresh = _ref[1] is not None and _ref[1](module)
            _base.exec_module(self, module)
            if fresh:
                _ref[0](module)

    class LibExtensionLoader(machinery.ExtensionFileLoader):
        def exec_module(self, module, _ref=loaded_ref, _base=machinery.ExtensionFileLoader):
            fresh = _ref[1] is not None and _ref[1](module)
            _base.exec_module(self, module)
            if fresh:
                _ref[0](module)

    class LibSourcelessLoader(machinery.SourcelessFileLoader):
        def exec_module(self, module, _ref=loaded_ref, _base=machinery.SourcelessFileLoader):
            fresh = _ref[1] is not None and _ref[1](module)
            _base.exec_module(self, module)
            if fresh:
                _ref[0](module)

    class LibNamespaceLoader(machinery.NamespaceLoader):
        def exec_module(self, module, _ref=loaded_ref, _base=machinery.NamespaceLoader):
            fresh = _ref[1] is not None and _ref[1](module)
            _base.exec_module(self, module)
            if fresh:
                _ref[0](module)

    class LibBuiltinImporter(machinery.BuiltinImporter):
        @staticmethod
        def exec_module(module, _ref=loaded_ref, _base=machinery.BuiltinImporter):
            fresh = _ref[1] is not None and _ref[1](module)
            _base.exec_module(module)
            if fresh:
                _ref[0](module)

    class LibFrozenImporter(machinery.FrozenImporter):
        @staticmethod
        def exec_module(module, _ref=loaded_ref, _base=machinery.FrozenImporter):
            fresh = _ref[1] is not None and _ref[1](module)
            _base.exec_module(module)
            if fresh:
                _ref[0](module)

    # Loader type -> the watching subclass (its instance takes the
    # original's attributes). Builtin and frozen importers are classes.
    lib_loaders = {machinery.SourceFileLoader: LibSourceLoader,
                   machinery.ExtensionFileLoader: LibExtensionLoader,
                   machinery.SourcelessFileLoader: LibSourcelessLoader,
                   machinery.NamespaceLoader: LibNamespaceLoader}

    def lib_file(o, _rp=real_path, _t=trusted, _ws=ws_root, _type=type, _str=str):
        """A file of the library trees (not of the workspace, even when a
        library tree lies under it)."""
        if _type(o) is not _str:
            return False
        r = _rp(o)
        return _t(r) and not r.startswith(_ws)

    import _imp

    def lib_file_of(name, path, _lib=lib_file, _type=type, _str=str, _base=os.path.basename,
                    _dir=os.path.dirname):
        """`path` is a library file that holds module `name` (`tail.py`,
        `tail.cpython-….so`, or `tail/__init__.py`): the library's own
        file for that name, not any library file."""
        if _type(name) is not _str or _type(path) is not _str or not _lib(path):
            return False
        tail = name.rpartition(".")[2]
        b = _base(path)
        if b.startswith(tail + "."):
            return True
        return b.startswith("__init__.") and _base(_dir(path)) == tail

    class SuiteFinder:
        """First on sys.meta_path: the pristine suite's modules get the
        strict loader and the bytes read at start; library modules the
        loader that watches them."""

        @staticmethod
        def find_spec(name, path=None, target=None, _src=suite_src,
                      _rp=real_path, _pf=machinery.PathFinder, _loader=SuiteLoader,
                      _type=type, _str=str, _libl=lib_loaders, _lib=lib_file, _new=object.__new__,
                      _bi=machinery.BuiltinImporter, _fi=machinery.FrozenImporter,
                      _lbi=LibBuiltinImporter, _lfi=LibFrozenImporter, _all=all, _list=list,
                      _ref=loaded_ref, _pend=pending_specs, _ms=machinery.ModuleSpec,
                      _lns=LibNamespaceLoader, _len=len, _libf=lib_file_of):
            # Builtin, then frozen, then the path: the order of the
            # importers this one comes before.
            for imp, lib in ((_bi, _lbi), (_fi, _lfi)):
                spec = imp.find_spec(name, path, target)
                if spec is not None:
                    if spec.loader is imp:
                        spec.loader = lib
                        if _ref[0] is not None:
                            _pend.append(spec)
                    return spec
            spec = _pf.find_spec(name, path, target)
            if spec is None:
                return None
            hit = _src.get(_rp(spec.origin)) if _type(spec.origin) is _str else None
            if hit is not None:
                spec.loader = _loader(hit[0], hit[1])
                return spec
            w = _libl.get(_type(spec.loader))
            locs = spec.submodule_search_locations
            if w is None or not (_lib(spec.origin) if spec.origin is not None else (
                    locs is not None and _all(_lib(p) for p in _list(locs)))):
                return None
            # A fresh loader from the found one's plain values only: its
            # instance dict can carry methods of code under test (a finder
            # planted in `sys.path_importer_cache` whose loader's
            # `get_data` hands the library's import the app's source).
            if _type(spec) is not _ms or spec.name != name:
                return None
            od = spec.loader.__dict__
            if w is _lns:
                if _list(od) != ["_path"]:
                    return None
                new = _new(w)
                new.__dict__["_path"] = od["_path"]
            else:
                ln, lp = od.get("name"), od.get("path")
                if _len(od) != 2 or ln != name or lp != spec.origin or not _libf(name, lp):
                    return None
                new = w(ln, lp)
            spec.loader = new
            if _ref[0] is not None:
                _pend.append(spec)
            return spec

        @staticmethod
        def invalidate_caches():
            pass

    sys.meta_path.insert(0, SuiteFinder)

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
    # Native modules code under test may load during the run: the standard
    # library's extension modules that only compute, store or do I/O. Any
    # other is refused, whatever its name, so a module that reaches raw
    # memory or runs code where the hook cannot see it (`_testcapi`,
    # `_testinternalcapi`, `_xxsubinterpreters`, whose interpreters have
    # no audit hook and can import ctypes: review of 2026-12-05) is never
    # loaded, nor one a later Python adds. Compiled-in modules with those
    # prefixes are refused by name.
    safe_ext = frozenset("""
        _asyncio _bisect _blake2 _bz2 _codecs_cn _codecs_hk _codecs_iso2022
        _codecs_jp _codecs_kr _codecs_tw _contextvars _crypt _csv _curses
        _curses_panel _datetime _dbm _decimal _elementtree _gdbm _hashlib
        _heapq _json _lsprof _lzma _md5 _multibytecodec _multiprocessing
        _opcode _pickle _posixshmem _posixsubprocess _queue _random _sha1
        _sha256 _sha3 _sha512 _socket _sqlite3 _ssl _statistics _struct
        _typing _uuid _zoneinfo array audioop binascii cmath fcntl grp math
        mmap nis ossaudiodev pyexpat readline resource select spwd syslog
        termios unicodedata zlib""".split())
    native_prefixes = ("_test", "_xx", "xx", "_ctypes")
    ext_suffixes = tuple(machinery.EXTENSION_SUFFIXES)

    # The functions of the watched namespaces (filled with the baseline,
    # below): whose defaults the hook keeps.
    lib_fns = set()
    # The bootstrap's own code that asks `_getframe` for a frame of the
    # bootstrap during the run (filled as each is defined): the verdict
    # chain, the phase checkpoint and the final check of `_grader_main`.
    getframe_sites = [chain_code]
    # The classes of the watched namespaces: what a library object may be
    # re-classed to during the run.
    lib_types = []
    # The bootstrap's functions whose signatures pytest reads during the
    # run (its plugin's hooks, registered by pytest.main).
    sig_ok = []
    from itertools import repeat as repeat_h
    from operator import is_ as is_h

    def safe(x, _type=type, _str=str):
        return x if _type(x) is _str else "<%s>" % _type(x).__name__

    def is_dir(p, _st=os.stat, _isd=_stat.S_ISDIR, _oserror=OSError):
        try:
            return _isd(_st(p).st_mode)
        except _oserror:
            return False

    def fs_decode(p, _type=type, _bytes=bytes, _dec=bytes.decode, _issub=issubclass,
                  _enc=sys.getfilesystemencoding()):
        # `os.fsdecode` reads `fspath` from `os` at call time (review rev41).
        return _dec(p, _enc, "surrogateescape") if _issub(_type(p), _bytes) else p

    def proc_open(path, flags, _type=type, _int=int, _fsdecode=fs_decode,
                  _fspath=os.fspath, _rp=real_path, _isdir=is_dir, _exc=Exception,
                  _w=os.O_WRONLY | os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_TRUNC):
        """Why an open during the run reaches the process's own memory
        (`/proc/<pid>/mem`, read: the verdict's key is in it; written: any
        object), or None. Under /proc, refused: a file named `mem`, any
        write, and any directory (a directory fd would let `os.open`'s
        unaudited `dir_fd` reach `mem` by a relative name). The path is
        resolved first: a symlink in the copy may point there."""
        if _type(path) is _int:
            return None
        try:
            p = _rp(_fsdecode(_fspath(path)))
        except _exc:
            return "open of a path that cannot be resolved"
        if not (p == "/proc" or p.startswith("/proc/")):
            return None
        w = _type(flags) is _int and flags & _w
        if p.rsplit("/", 1)[-1] == "mem" or w or _isdir(p):
            return "open of " + p + (" for writing" if w else "") + " during the run"
        return None
    state = [False, False]  # [busy, started]
    # importlib's own bytecode reading (review rev39: `_compile_bytecode`
    # called by code under test with a library-looking `bytecode_path`
    # unmarshalled the app's code under a library file's name).
    bext_h = sys.modules["_frozen_importlib_external"]
    get_codes = (bext_h.SourceLoader.get_code.__code__,
                 bext_h.SourcelessFileLoader.get_code.__code__)
    compile_bc = bext_h._compile_bytecode.__code__
    coroutine_code = types.coroutine.__code__
    # How many times a function's `__code__` may have been written: bumped
    # by the hook (first thing, busy or not) on every `object.__setattr__`
    # event that can be one. CPython raises that event in `func_set_code`,
    # the only writer of a live function's code (there is no `__delattr__`
    # of it, and `ctypes`/`gc` are refused), so an unchanged count means no
    # function's code was rewritten since it was read (`impls_known`).
    code_writes = [0]

    def hook(ev, args, _gf=getframe, _t=trusted, _die=die, _state=state,
             _always=always, _fa=frame_attrs, _ca=code_attrs, _walk=walkers,
             _meta0=meta0, _hooks0=hooks0, _sealed=sealed_modules,
             _clean=frames_clean, _type=type, _str=str, _safe=safe,
             _bytes=bytes, _ws=ws_root, _codetype=types.CodeType, _ft=FT,
             _foreign=foreign_code, _issub=issubclass, _boot=boot_file, _libfns=lib_fns,
             _libtypes=lib_types, _any=any, _map=map, _is=is_h, _rep=repeat_h,
             _sigok=sig_ok, _safe_ext=safe_ext, _native=native_prefixes,
             _extsfx=ext_suffixes, _proc_open=proc_open, _cw=code_writes, _len=len,
             _rp=real_path, _gcodes=get_codes, _cbc=compile_bc, _coro=coroutine_code,
             _gsites=getframe_sites, _list=list, _suite_exec=SuiteLoader.exec_module.__code__,
             _cwfr=bext_h.__dict__["_bootstrap"]._call_with_frames_removed.__code__,
             _s2c=bext_h.SourceLoader.source_to_code.__code__, _prefixes=prefixes,
             _astparse=ast.parse.__code__,
             _symtab=__import__("symtable").symtable.__code__, _pinned=pinned_fns,
             _range=range, _tt=type):
        # Every builtin this hook (and what it calls) uses is a default:
        # a global name is read from `builtins` at call time, and the app
        # can rebind it there, so the hook would call code under test
        # with its busy flag set, unjudged (review rev41: `builtins.any`,
        # then this frame's and `run`'s locals, the verdict chain's key).
        # Before anything else (the busy flag included): counted for any
        # event that could be a `__code__` write, whoever raised it (a
        # forged `sys.audit` only costs the next check a full walk).
        if ev == "object.__setattr__" and not (
                _len(args) > 1 and _type(args[1]) is _str and args[1] != "__code__"):
            _cw[0] += 1
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
                if name.startswith(_native):
                    _die("import of native module " + name + " during the run")
                fn = args[1]
                if fn is not None and (_type(fn) is not _str or fn.endswith(_extsfx)) \
                        and name not in _safe_ext:
                    _die("extension module " + name + " loaded during the run")
                # Iterated here, while this hook judges nothing: only a
                # plain list (review rev40: an app list subclass as
                # `sys.meta_path` ran its `__iter__` in here, unjudged).
                for seq in (args[3], args[4]):
                    if seq is not None and _type(seq) is not _list:
                        _die("sys.meta_path or sys.path_hooks is not a list")
                for m in args[3] or ():
                    if not _any(_map(_is, _rep(m), _meta0)):
                        _die("import hook added to sys.meta_path: " + _safe(_type(m).__name__))
                for h in args[4] or ():
                    if not _any(_map(_is, _rep(h), _hooks0)):
                        _die("import hook added to sys.path_hooks")
                return
            if ev.startswith("ctypes."):
                _die("audit event " + ev)
            # A new interpreter runs code with no audit hook; the run_*
            # events start code outside the suite.
            if ev == "cpython.PyInterpreterState_New" or ev.startswith("cpython.run_"):
                _die("audit event " + ev)
            if ev == "open":
                if _state[1]:
                    why = _proc_open(args[0], args[2])
                    if why is not None:
                        _die(why)
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
                # A frame of this bootstrap (its locals hold the run's state
                # and, in the verdict chain, the key) handed to anyone
                # during the run: a trusted frame can be made to ask for it
                # (heapq driving `map(sys._getframe, ...)`, a finalizer).
                # The bootstrap's own questions are for the caller's frame
                # or its parent, never further up.
                # Asked from a frame of the bootstrap itself, only its own
                # call sites of `_getframe` may have one (review rev40: a
                # C callable of code under test run by `plain`, a
                # property's getter, has no frame of its own, so "the
                # caller" was `plain`, whose frame it was then handed;
                # `f_back` and `f_locals` raise no event, and the hook's
                # state was in reach).
                if (_state[1] and fr is not None and fr.f_code.co_filename == _boot
                        and (caller is None or (fr is not caller and fr is not caller.f_back)
                             or (cfn == _boot and not _any(_map(_is, _rep(caller.f_code),
                                                                _gsites))))):
                    _die("a frame of the grader handed out via " + cfn)
                return
            if ev == "object.__getattr__":
                name = args[1]
                if _type(name) is not _str:
                    return
                if name in _fa or name in _ca:
                    if app:
                        _die("read of " + _str(name) + " from " + cfn)
                    # The same walk one `f_back` at a time, from a frame
                    # below the bootstrap's (its own walks excepted).
                    if name == "f_back" and _state[1] and cfn != _boot:
                        up = args[0].f_back
                        if up is not None and up.f_code.co_filename == _boot:
                            _die("a frame of the grader handed out via " + cfn)
                    # A trusted frame reads for code under test (a C
                    # getter that a library frame drives: heapq over a
                    # map of attrgetter; inspect.signature). This
                    # bootstrap keeps its state in its functions' defaults
                    # (never in closures: `__closure__` raises no event):
                    # refused to any reader. Any trusted function's
                    # `__kwdefaults__` is its live dict (the suite's
                    # STRICT, `cls=` of json.loads), which changes in
                    # place without an event: refused unless the reader is
                    # inspect's signature builder, which hands out only
                    # the values (library objects; the suite's STRICT, a
                    # tuple of bootstrap functions).
                    if (name == "__defaults__" or name == "__kwdefaults__") \
                            and _type(args[0]) is _ft:
                        fn = args[0].__code__.co_filename
                        # During the run, whoever asks: a finalizer runs a C
                        # getter with only trusted frames on the stack, so
                        # the stack cannot tell who the reader works for.
                        # pluggy reads the signatures of the bootstrap's
                        # plugin as pytest starts (`sig_ok`).
                        if (fn == _boot and _state[1]
                                and not _any(_map(_is, _rep(args[0]), _sigok))):
                            _die("read of " + name + " of a grader function during the run"
                                 + " via " + cfn)
                        if (fn == _boot or (name == "__kwdefaults__" and _t(fn) and not (
                                caller.f_code.co_name == "_signature_from_function"
                                and cfn.endswith("/inspect.py")))) \
                                and _clean(caller) is not None:
                            _die("read of " + name + " of a trusted function for code under"
                                 + " test via " + cfn)
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
                # A function given code under test during the run, by
                # anyone: a trusted helper (`unittest.mock.patch.object`)
                # can do it for code under test, now or later from a
                # callback on a stack of trusted frames only (a finalizer),
                # and the function object stays where it was, so no sweep
                # would see it. (Libraries do rewrite their own functions'
                # code at import, `types.coroutine`: same file, allowed;
                # `collections.namedtuple` sets defaults for code under
                # test: allowed.)
                # The same for the other ways a helper can change what a
                # library object does without rebinding it: a library
                # function's defaults (`cls=` of `json.loads`), a library
                # object's class (its methods then come from code under
                # test).
                if _state[1] and _len(args) > 2 and _type(args[1]) is _str:
                    name, obj, v = args[1], args[0], args[2]
                    if (_type(obj) is _ft and obj in _pinned
                            and name in ("__code__", "__defaults__", "__kwdefaults__")):
                        _die(ev + " " + name + " of a suite function via " + cfn)
                    if name == "__code__":
                        if _type(v) is _codetype and not _t(v.co_filename):
                            _die(ev + " __code__ to code under test (" + _safe(v.co_filename)
                                 + ") via " + cfn)
                        # The library's own functions keep their code, like
                        # their defaults: a code object can carry a
                        # library file's name without being that file's
                        # (compiled by a trusted frame that a finalizer
                        # drives, with no code under test on the stack).
                        if _type(obj) is _ft and obj in _libfns:
                            _die(ev + " __code__ of a library function via " + cfn)
                    elif name == "__defaults__" or name == "__kwdefaults__":
                        # The library's own functions, as its namespaces
                        # held them before the run: a function a library
                        # makes during the run takes defaults by design
                        # (unittest.mock's autospec copies the spec'd
                        # function's onto its `checksig`).
                        if _type(obj) is _ft and obj in _libfns:
                            _die(ev + " " + name + " of a library function via " + cfn)
                    elif name == "__bases__":
                        # A library class given other bases: what it
                        # inherits comes from them (its own dict unchanged,
                        # so no sweep sees it).
                        if _any(_map(_is, _rep(obj), _libtypes)):
                            _die(ev + " __bases__ of a library class via " + cfn)
                    elif name == "__class__":
                        # To a class the library did not have before the
                        # run, whatever its methods are (a
                        # `functools.partial` over a builtin is no function
                        # yet behaves as code under test chose).
                        if (_issub(_type(v), _tt) and not _foreign(_type(obj))
                                and (_foreign(v) or not _any(_map(_is, _rep(v), _libtypes)))):
                            _die(ev + " __class__ of a library object to a class made"
                                 + " during the run via " + cfn)
                return
            if ev in ("compile", "exec", "code.__new__", "function.__new__"):
                if app:
                    _die(ev + " from " + cfn)
                # The bootstrap's own code made into a new function (or
                # run) during the run, by anyone: the verdict chain
                # accepts a line by its writer's *code* (`phase`, `end`),
                # and a copy takes the defaults it is given (review rev41:
                # `types.FunctionType(phase.__code__, ..., app defaults)`
                # driven by heapq, then by a weakref callback, wrote every
                # verdict through the real chain). The bootstrap makes its
                # functions by `def` (no event).
                if (_state[1] and (ev == "function.__new__" or ev == "exec") and _len(args) > 0
                        and _type(args[0]) is _codetype and args[0].co_filename == _boot):
                    _die(ev + " of the grader's own code during the run via " + cfn)
                if ev == "compile" and _state[1]:
                    fn = args[1]
                    if _type(fn) is _bytes:
                        fn = fn.decode("utf-8", "replace")
                    # Whoever asks (review rev40: C callables of code under
                    # test, run by the bootstrap's `plain`, compiled the
                    # app's source as os.py with no frame of theirs on the
                    # stack): during the run, code gets a trusted name only
                    # from this bootstrap compiling the suite, or from
                    # importlib compiling a library file it read itself
                    # (`source_to_code` through `_call_with_frames_removed`,
                    # a loader with no code under test, a library path).
                    # (`ast.parse` and `symtable.symtable` make a tree or a
                    # table, never code.)
                    if (_type(fn) is _str and _t(fn) and caller.f_code is not _suite_exec
                            and caller.f_code is not _astparse and caller.f_code is not _symtab):
                        up = caller.f_back
                        slf = up.f_locals.get("self") if up is not None else None
                        if (caller.f_code is not _cwfr or up.f_code is not _s2c
                                or _foreign(_type(slf)) or not _rp(fn).startswith(_prefixes)):
                            _die("compile under a trusted file name (" + fn + ") during the run"
                                 + " via " + cfn)
                # A code object copied under a library file's name
                # (`code.replace(co_filename=...)` driven from a library
                # frame: review rev39) is trusted by every check that goes
                # by file names. `types.coroutine` copies the library's
                # own code with other flags.
                if (ev == "code.__new__" and _state[1] and _len(args) > 1
                        and _type(args[1]) is _str and _t(args[1])
                        and caller.f_code is not _coro):
                    _die("code made under a trusted file name (" + args[1]
                         + ") for code under test via " + cfn)
                return
            if ev == "marshal.loads" or ev == "marshal.load":
                if app or cfn.startswith("<frozen zipimport"):
                    _die(ev + " from " + cfn)
                f = caller
                for _ in _range(4):
                    if f is None:
                        break
                    co = f.f_code
                    if co.co_name in ("get_code", "_read_pyc", "_compile_bytecode"):
                        # `_compile_bytecode`'s path is its caller's word:
                        # only importlib's `get_code`, for a loader with no
                        # code under test, reads the file it names.
                        if co is _cbc and _state[1]:
                            g = f.f_back
                            if (g is None or not (g.f_code is _gcodes[0] or g.f_code is _gcodes[1])
                                    or _foreign(_type(g.f_locals.get("self")))) \
                                    and _clean(caller) is not None:
                                _die("bytecode unmarshalled outside importlib's loaders"
                                     + " for code under test")
                        loc = f.f_locals
                        for k in ("bytecode_path", "pyc", "path"):
                            v = loc.get(k)
                            if v is not None:
                                p = v if _type(v) is _str else "?"
                                if not _t(p) or p.startswith(_ws) or not _t(_rp(p)):
                                    _die("bytecode loaded from " + p)
                                return
                    f = f.f_back
                # Whoever asks (`_imp.get_frozen_object(name, data)` driven by
                # C callables unmarshals any code, any file name: rev40).
                if _state[1]:
                    _die(ev + " outside importlib's loaders during the run via " + cfn)
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
    # Python 3.13 starts `threading`'s threads with this one (review rev39).
    for mod, n in ((_thread, "start_joinable_thread"), (threading, "_start_joinable_thread")):
        if hasattr(mod, n):
            setattr(mod, n, no_threads)
    # Signal handlers receive the interrupted frame.
    import signal
    import _signal

    def no_signals(*a, _die=die, **k):
        _die("signal handler or timer")

    # `asyncio.run` (its `Runner`) sets a SIGINT handler of its own for the
    # loop's run, while SIGINT still has Python's default, and puts the
    # default back after only if its own is still set. Here it is never
    # set: the call answers the current handler and installs nothing
    # (nothing sends the test process SIGINT; a handler, an app subclass's
    # `_on_sigint` included, would receive frames). Honest asyncio code
    # runs (review rev39: `asyncio.run` in an app or a suite was refused).
    # The arguments are judged by identity and type only (no code of
    # theirs runs), then the caller by its frame's code, whose file name
    # code under test cannot give its own code (the hook refuses that, and
    # hands no frame of code under test even to this function).
    import functools as functools_s

    def no_signals_but_asyncio(*a, _die=die, _gf=getframe, _t=trusted, _get=_signal.getsignal,
                               _int=signal.SIGINT, _len=len, _type=type,
                               _partial=functools_s.partial, **k):
        if not k and _len(a) == 2 and a[0] is _int and _type(a[1]) is _partial:
            f = _gf(1)
            fn = f.f_code.co_filename if f is not None else None
            if _t(fn) and fn.endswith("/asyncio/runners.py"):
                return _get(_int)
        _die("signal handler or timer")

    for mod in (signal, _signal):
        for n in ("signal", "setitimer", "alarm", "set_wakeup_fd", "pthread_kill"):
            if hasattr(mod, n):
                setattr(mod, n, no_signals_but_asyncio if n == "signal" else no_signals)

    # Collector callbacks run code under test wherever an allocation
    # triggers a collection, and can remove themselves before the next
    # check (rev36: a decimal context set at import, restored by one once
    # the suite's module-level arithmetic had used it). The collector
    # keeps its own reference to the list; code under test gets one that
    # no collection reads, and adding to it ends the run. The collector's
    # list is reachable only through a second `gc` module, refused below.
    import gc

    class NoCallbacks(list):
        def refuse(self, *a, _die=die, **k):
            _die("gc callback registered")

        append = extend = insert = __setitem__ = __iadd__ = refuse

    gc.callbacks = NoCallbacks()

    # Automatic collection runs code under test (`__del__`, weak-reference
    # callbacks of unreachable cycles) at whatever allocation crosses the
    # threshold, which code under test sets (`gc.set_threshold(1)`): inside
    # the grader's checks and inside pytest's own dispatch between two
    # checks. Reviews rev43 and rev44 timed such finalizers by reference
    # counts to act between a check's judgement and its record, and to
    # rebind `Function.runtest` after a check and restore it before the
    # next. So there is no automatic collection in this process: cycles
    # are freed only where code calls `gc.collect()` itself (inside its
    # own frames), and `gc.enable` does nothing (the original is reachable
    # only through the `gc` module, whose namespace is swept).
    gc.disable()

    def no_auto_gc():
        return None

    gc.enable = no_auto_gc

    # Native modules are made once. A second instance of one is a fresh
    # copy of what the lines above replaced (a single-phase module is
    # re-made from its first import's dictionary: `_thread`'s
    # `start_new_thread`, `_signal`'s `signal`, `gc`'s callback list) or
    # unloaded (`_ctypes`), and a spec that code under test writes names
    # any native file, one it wrote included. importlib makes modules from
    # a spec without an "import" event
    # (`importlib.util.module_from_spec(importlib.util.find_spec('_thread'))`
    # started threads and signal timers under a grader that refused them:
    # review of 2026-12-05), so the import event's rules for native modules
    # are enforced again where every native module is made: `_imp`'s create
    # and exec functions, which importlib looks up on `_imp` at each call.
    # A compiled-in module (found by its full name) or an extension file
    # (by its real path) made before is refused; during the run only the
    # standard library's computing modules (`safe_ext`) load, from a
    # trusted directory; a module is executed once, right after it is made
    # (a reload would run a multi-phase module's initialisation again).
    import _imp

    ext_types = (machinery.BuiltinImporter, machinery.ExtensionFileLoader)
    # `_ctypes`, unloaded above, is refused by its name (`native_prefixes`).
    native_made = set()
    for n, m in list(sys.modules.items()):
        spec = getattr(m, "__spec__", None)
        if n in sys.builtin_module_names or isinstance(getattr(spec, "loader", None), ext_types):
            f = getattr(m, "__file__", None)
            native_made.add(os.path.realpath(f) if type(f) is str else n)
    native_pending = []

    # The C functions read the spec's `name` and `origin` again (each
    # more than once), and a spec's attributes can answer differently at
    # each read (a property: a decoy name never made for the check, then
    # `_thread`; a trusted `safe_ext` file, then the app's own: review
    # rev39). They get a plain spec of exactly the values judged here, the
    # extension's path resolved (a symlink could be swapped between the
    # check and the load).
    def native_key(spec, dynamic, _made=native_made, _state=state, _die=die, _t=trusted,
                   _safe_ext=safe_ext, _native=native_prefixes, _type=type, _str=str,
                   _rp=real_path, _ga=getattr, _spec=machinery.ModuleSpec):
        # Only importlib's own spec type is read: an attribute of another
        # runs code under test with this frame, whose locals are this
        # function's defaults (`native_made`), below it (review rev40:
        # `_thread` removed from `native_made` by a spec's `name`
        # property, then a second `_thread` started a thread).
        if _type(spec) is not _spec:
            _die("native module made from a spec that is not a ModuleSpec")
        name = _ga(spec, "name", None)
        if _type(name) is not _str:
            _die("native module made from a spec without a str name")
        short = name.rpartition(".")[2]
        if short.startswith(_native) or name.startswith(_native):
            _die("native module " + name + " refused")
        key = name
        if dynamic:
            origin = _ga(spec, "origin", None)
            if _type(origin) is not _str:
                _die("extension module " + name + " without a str origin")
            key = _rp(origin)
            if _state[1] and (short not in _safe_ext or not _t(key)):
                _die("extension module " + name + " loaded during the run")
        if key in _made:
            _die("second instance of native module " + name)
        return key, _spec(name, None, origin=key if dynamic else "built-in")

    def native_made_one(m, key, _made=native_made, _pending=native_pending):
        _made.add(key)
        _pending.append(m)
        return m

    def create_builtin(spec, _orig=_imp.create_builtin, _key=native_key, _one=native_made_one):
        key, plain = _key(spec, False)
        return _one(_orig(plain), key)

    def create_dynamic(spec, file=None, _orig=_imp.create_dynamic, _key=native_key,
                       _one=native_made_one, _die=die):
        if file is not None:
            _die("create_dynamic with a file object")
        key, plain = _key(spec, True)
        return _one(_orig(plain), key)

    def native_exec(m, _pending=native_pending, _die=die, _range=range, _len=len):
        for i in _range(_len(_pending)):
            if _pending[i] is m:
                del _pending[i]
                return
        _die("native module executed again")

    def exec_builtin(m, _orig=_imp.exec_builtin, _once=native_exec):
        _once(m)
        return _orig(m)

    def exec_dynamic(m, _orig=_imp.exec_dynamic, _once=native_exec):
        _once(m)
        return _orig(m)

    _imp.create_builtin = create_builtin
    _imp.create_dynamic = create_dynamic
    _imp.exec_builtin = exec_builtin
    _imp.exec_dynamic = exec_dynamic

    # `_imp._fix_co_filename` renames a code object, and every code object
    # it holds, in place, and raises no audit event: code under test given
    # a library file's name is taken for the library's by every check that
    # tells them apart by file name (review rev39: the app's own `add`,
    # its code from `dis.Bytecode`, renamed to os.py, read its caller's
    # frame). During the run it renames only for importlib: called by
    # `_compile_bytecode` from `SourceLoader.get_code` (the functions
    # themselves), for a loader whose class holds no code under test (a
    # `get_data` of the app's hands importlib any bytecode), to a path
    # whose real path is as trusted as its name (`..` out of a library
    # directory). (Called by code under test itself, the hook refuses the
    # caller's frame handed to this function first.)
    bext = sys.modules["_frozen_importlib_external"]
    fix_callers = (bext._compile_bytecode.__code__, bext.SourceLoader.get_code.__code__)

    def fix_co_filename(code, path, _orig=_imp._fix_co_filename, _gf=getframe, _state=state,
                        _die=die, _callers=fix_callers, _foreign=foreign_code, _type=type,
                        _t=trusted, _rp=real_path, _str=str):
        if _state[1]:
            f = _gf(1)
            g = f.f_back if f is not None else None
            if f is None or f.f_code is not _callers[0] or g is None \
                    or g.f_code is not _callers[1]:
                _die("_imp._fix_co_filename outside importlib's loading of bytecode")
            if _foreign(_type(g.f_locals.get("self"))):
                _die("bytecode renamed for a loader of code under test")
            if _type(path) is not _str or (_t(path) and not _t(_rp(path))):
                _die("bytecode renamed to a path out of a trusted directory")
        return _orig(code, path)

    _imp._fix_co_filename = fix_co_filename

    # ---- pytest, imported and snapshotted before any code under test -----

    import pkgutil

    import _pytest
    import pluggy
    import operator

    import pluggy._hooks
    import pytest

    # pluggy's dispatch state, read slot by slot (C member descriptors of
    # its own classes; `hooks_frozen` checks the exact types first).
    HOOK_CALLER_T = pluggy._hooks.HookCaller
    SUBSET_CALLER_T = pluggy._hooks._SubsetHookCaller
    HOOK_RELAY_T = pluggy._hooks.HookRelay
    HOOK_IMPL_T = pluggy.HookImpl
    HOOK_SPEC_T = pluggy._hooks.HookSpec
    impl_rec = operator.attrgetter(*HOOK_IMPL_T.__slots__)
    _PLUGIN_SLOT = HOOK_IMPL_T.__slots__.index("plugin")
    spec_rec = operator.attrgetter(*HOOK_SPEC_T.__slots__)
    CALLER_SLOTS = ("name", "_hookexec", "_hookimpls", "spec", "_call_history")
    caller_rec = operator.attrgetter(*CALLER_SLOTS)

    def hook_snapshot(pm, _type=type, _tuple=tuple):
        """What pytest's plugin manager holds before any code under test
        has run: for each hook, its caller, that caller's slots, and its
        implementations with theirs."""
        out = {}
        for n, h in _tuple(vars(pm.hook).items()):
            if _type(h) is not HOOK_CALLER_T:
                continue
            impls = _tuple(h._hookimpls)
            out[n] = (h, caller_rec(h), impls, _tuple(impl_rec(i) for i in impls))
        return out

    for pkg in (_pytest, pluggy):
        for info in pkgutil.walk_packages(pkg.__path__, pkg.__name__ + "."):
            try:
                __import__(info.name)
            except Exception:
                pass
    from _pytest.junitxml import mangle_test_address
    from _pytest.outcomes import Skipped

    def lib_origin(o):
        if o in ("built-in", "frozen"):
            return True
        if type(o) is not str:
            return False
        r = os.path.realpath(o)
        return trusted(r) and not r.startswith(ws_root)

    # Before any run (a runner: before its fork; a staged run: before its
    # key), the library's namespaces are walked once and what `lib_module`
    # and `watch` made of each is remembered with the objects it was made
    # from. Until pytest starts (only the bootstrap and the library's own
    # imports run until then), a call whose namespace still holds exactly
    # those objects (identity, at C level) reuses it; anything else is
    # walked again. Dropped before pytest starts: nothing of a run is ever
    # memoised, and no code under test can reach it.
    lib_memo = {}
    watch_memo = {}
    memo_rec = [False]

    from operator import is_ as same_obj
    from itertools import repeat as _repeat_m

    def same_ns(d, keys, vals, _len=len, _all=all, _map=map, _is=same_obj):
        return _len(d) == _len(keys) and _all(_map(_is, d, keys)) \
            and _all(_map(_is, d.values(), vals))

    def lib_module(n, m, _memo=lib_memo):
        hit = _memo.get(n)
        if hit is not None and hit[0] is m:
            return hit[1]
        r = lib_module_(n, m)
        if memo_rec[0]:
            _memo[n] = (m, r)
        return r

    def lib_module_(n, m):
        if n in ("sys", "__main__") or m is None:
            return False
        spec = getattr(m, "__spec__", None)
        f = getattr(m, "__file__", None)
        if f is None:
            return n in sys.builtin_module_names or (
                spec is not None and spec.origin in ("built-in", "frozen"))
        return lib_origin(f)


    # Names that honest runs (re)bind in these namespaces: measured over
    # every task's suite. Plain names hold anywhere, dotted ones in that
    # namespace only.
    volatile = frozenset(("__builtins__", "__warningregistry__", "_", "__slotnames__",
                          # _pytest.assertion.util, set per test; read only by
                          # rewritten asserts, which --assert=plain turns off.
                          "_reprcompare", "_assertion_pass", "_config",
                          # set on an Item subclass by pytest's nodes once it
                          # has warned about it; only its truth is read.
                          "_pytest_diamond_inheritance_warning_shown"))
    volatile_at = frozenset(VOLATILE_AT)
    # Namespaces whose data is held too, and their containers: (name, the
    # container, its keys or items, its values) (filled with the hot set).
    tables_ns = set()
    tables = []

    import operator
    from itertools import repeat as _repeat
    from operator import is_

    # The library's module namespaces and class dicts among the watched
    # entries (entry name -> the class): a name added there shadows a
    # builtin for the module's functions, or what the class inherits.
    module_entries = set()
    class_of_entry = {}

    def entry(name, d, strict, _vol=volatile, _va=volatile_at, _tuple=tuple,
              _me=module_entries):
        # Holds the objects themselves: compared by identity (`is`), never
        # by `==` (which could call code of the run) nor `id()` (audited,
        # so slow under the hook). A library module's `__builtins__` is
        # held: the functions it makes per call take their builtins from
        # it (`string.Template.substitute`'s `convert`).
        # The keys, the values and the held items are all made from one
        # copy (review rev44: a collector finalizer run by an allocation
        # between two reads of the live dict made them disagree).
        lib_mod = not strict and name in _me
        keys = _tuple(d)
        vals = _tuple(d.values())
        return (name, d, keys, vals,
                {k: v for k, v in zip(keys, vals)
                 if (k not in _vol or (lib_mod and k == "__builtins__"))
                 and (name + "." + k) not in _va}, strict)

    def take(snap, name, d, strict, _entry=entry):
        snap.append(_entry(name, d, strict))

    from abc import ABCMeta

    def dict_of(v, _ga=obj_getattr, _type=type, _dict=dict):
        """An object's own attribute dict, or None."""
        try:
            d = _ga(v, "__dict__")
        except AttributeError:
            return None
        return d if _type(d) is _dict else None

    # Entry name of a library's module-level object -> its class: a name
    # added to the object's own dict that its class defines as a method
    # shadows that method (`json._default_decoder.decode`).
    class_of_obj = {}
    # Every library module-level object whose own dict is watched, and that
    # dict: replacing an object's `__dict__` raises no audit event, and the
    # sweeps would go on comparing the old dict while its methods read the
    # new one (review rev35: `json._default_decoder.__dict__ = {...}`).
    lib_objs = []
    lib_obj_ds = []

    def fns_types(vals, _ft=FT, _sm=staticmethod, _cm=classmethod, _type=type,
                  _issub=issubclass):
        """The functions and the classes among a namespace's values."""
        fns, tys = [], []
        for v in vals:
            if _type(v) is _sm or _type(v) is _cm:
                v = v.__func__
            if _type(v) is _ft:
                fns.append(v)
            elif _issub(_type(v), type):
                tys.append(v)
        return fns, tys

    from itertools import chain as chain_it
    from operator import methodcaller

    values_of = methodcaller("values")

    def watch_replay(snap, name, d, strict, fts, _memo=watch_memo, _me=module_entries,
                     _ce=class_of_entry, _co=class_of_obj, _dict_of=dict_of, _all=all,
                     _any=any, _map=map, _is=same_obj, _len=len, _list=list,
                     _flat=chain_it.from_iterable, _vals=values_of, _has=set.__contains__,
                     _rep=_repeat_m, _ro=lib_objs, _rd=lib_obj_ds):
        """What `watch` made of `d` before, if `d` and every namespace it
        took still hold exactly the same objects (one identity sweep over
        all of them); False otherwise."""
        rec = _memo.get((name, strict))
        if rec is None or rec[0] is not d:
            return False
        _d, entries, ds, lens, keys, vals, in_me, out_me, objs, obj_ds, ce, co, ft = rec
        if not (_list(_map(_len, ds)) == lens
                and _all(_map(_is, _flat(ds), keys))
                and _all(_map(_is, _flat(_map(_vals, ds)), vals))
                and _all(_map(_has, _rep(_me), in_me))
                and not _any(_map(_has, _rep(_me), out_me))
                and _all(_map(_is, _map(_dict_of, objs), obj_ds))):
            return False
        snap.extend(entries)
        if fts is not None:
            fts.extend(ft)
        _ce.update(ce)
        _co.update(co)
        _ro.extend(objs)
        _rd.extend(obj_ds)
        return True

    def watch(snap, name, d, strict=False, fts=None, _type=type, _take=take, _td=tdict_of,
              _abc=ABCMeta, _fl=flags_of, _heap=HEAP, _dict_of=dict_of, _co=class_of_obj,
              _me=module_entries, _ce=class_of_entry, _replay=watch_replay, _rec=memo_rec,
              _memo=watch_memo, _ft=fns_types, _len=len):
        """Adds namespace `d` and the classes defined in it to the watched
        ones (class attribute writes raise no audit event: only a sweep
        sees them). `strict` (the suite's own modules): any name rebound
        is tampering; otherwise (the library) only names that held code,
        a class or a module (behaviour; honest programs set library flags
        and fill lazy caches). `fts`: gets the functions and classes of
        each namespace taken."""
        if not strict:
            _me.add(name)
        if _memo and _replay(snap, name, d, strict, fts):
            return
        start = _len(snap)
        ce_new, co_new, objs = [], [], {}
        watch_(snap, name, d, strict, ce_new, co_new, objs)
        for k, v in ce_new:
            _ce[k] = v
        for k, v in co_new:
            _co[k] = v
        if fts is None and not _rec[0]:
            return
        new = snap[start:]
        ft = [_ft(e[3]) for e in new]
        if fts is not None:
            fts.extend(ft)
        if _rec[0]:
            # Entries are never changed in place (a changed namespace gets
            # a new entry), so the same tuples can be handed out again.
            ds = [e[1] for e in new]
            lib = [(e[0], not e[5] and e[0] in _me) for e in new]
            _memo[(name, strict)] = (
                d, new, ds, [_len(x) for x in ds],
                tuple(k for e in new for k in e[2]), tuple(v for e in new for v in e[3]),
                [n for n, m in lib if m], [n for n, m in lib if not m],
                list(objs.values()), [_dict_of(o) for o in objs.values()],
                ce_new, co_new, ft)

    # The suite's classes by entry name: what their library bases write on
    # them is their own bookkeeping (`lib_class_written`).
    suite_classes = {}

    def watch_(snap, name, d, strict, _ce, _co, objs, _type=type, _take=take, _td=tdict_of,
               _abc=ABCMeta, _fl=flags_of, _heap=HEAP, _dict_of=dict_of, _ro=lib_objs,
               _rd=lib_obj_ds, _sc=suite_classes, _issub=issubclass):
        _take(snap, name, d, strict)
        own_state = not strict and name.split(".")[0] not in ("pytest", "_pytest", "pluggy")
        for k, v in list(d.items()):
            kind = _type(v)
            # Any class, whatever its metaclass: pytest's nodes (`Function`,
            # `Item`, `Session`) have `NodeMeta`, an ABCMeta subclass, and
            # were left out, so `Function.runtest` rebound by code under
            # test was never judged (review rev45's counter-check).
            mod = _td(v).get("__module__") if _issub(kind, type) else None
            if _type(mod) is str and mod == name:
                if not strict:
                    _ce.append((name + "." + k, v))
                else:
                    _sc[name + "." + k] = v
                _take(snap, name + "." + k, _td(v), strict)
            elif own_state and _fl(kind) & _heap:
                # A library's module-level object (`json._default_decoder`):
                # its own attributes are what its methods run
                # (`scan_once`), and writing them raises no audit event.
                # pytest's own objects change during the run by design
                # (they are left to the core checks).
                od = _dict_of(v)
                if od is not None:
                    _take(snap, name + "." + k, od, False)
                    _co.append((name + "." + k, kind))
                    objs[name + "." + k] = v
                    _ro.append(v)
                    _rd.append(od)

    # The memo (above), filled before the start signal when the key is not
    # here yet (a runner, a staged run); a cold run has its key already
    # and walks once, as before.
    import select

    ahead = runner or not select.select([0], [], [], 0)[0]
    # pytest's configuration object, made as `pytest.main` makes it (its
    # plugin manager, the default plugins registered, their options
    # added), with the same arguments: before the start signal when there
    # is time, like importing pytest. Only pytest's own code runs; the
    # workspace is empty (a runner's between runs, a staged run's until
    # its copy moves in), and none of it is read. `pytest.main` takes it
    # through a one-shot `get_config` (below).
    import _pytest.config as pconf

    main_plugins = []
    preconf = [None]
    # Made here in a cold run too (pytest.main would make it after the key
    # with no code under test run either): the hook implementations it
    # holds are the baseline of what pytest registers by itself
    # (`hooks_frozen`, below).
    preconf[0] = pconf.get_config(sys.argv[1:], main_plugins)
    preconf_pm = [preconf[0].pluginmanager]
    hooks0 = hook_snapshot(preconf_pm[0])
    inner0 = [preconf_pm[0]._inner_hookexec]
    # Imported for the unittest wrappers (below, after the key): it
    # imports asyncio, ~17 ms, paid here before the start signal (a
    # runner: once, before its forks) rather than in every run.
    import unittest.async_case  # noqa: F401

    if ahead:
        memo_rec[0] = True
        _warm = []
        for _n, _m in sorted(sys.modules.items()):
            if lib_module(_n, _m):
                watch(_warm, _n, _m.__dict__)
        module_entries.clear()
        class_of_entry.clear()
        class_of_obj.clear()
        lib_objs.clear()
        lib_obj_ds.clear()
        memo_rec[0] = False
        del _warm, _n, _m

    # Library caches on the suites' paths, checked for coherence: each
    # entry must be what the library itself computes for its key. A forged
    # entry (a pattern that matches anything, cached under the suite's
    # placeholder regex) changes what the suite's own call returns while
    # every namespace holds the same objects. `re`'s compiled patterns are
    # compared with a fresh compile (`==` on two exact patterns compares
    # their programs in C); `urllib.parse`'s hex table entry by entry. A
    # verified state is remembered by identity, so a check costs little
    # until a cache changes. Other library containers are not covered.
    import re as re_mod
    import urllib.parse as url_parse
    re_compiler = sys.modules.get("re._compiler") or sys.modules.get("sre_compile")

    re_private = re_private0 or getattr(re_compiler, "compile", None)
    re_seen = {}
    # The hex table as last verified: (the dict, its keys, its values). Its
    # items were compared as `tuple(t.items())` before, whose pair tuples
    # are made afresh by every iteration: never the same objects, so the
    # table was verified in full at every check.
    hex_seen = [None, (), ()]
    # Per cache name: (the dict, its keys, its values) as the last check
    # verified them entry by entry. The same dict's items (the list the walk
    # takes) holding exactly those key and value objects, in that order, as
    # their first entries (a C-level identity sweep: `map` stops at the
    # shorter side) hold only pairs
    # already verified there: keys are exact tuples of exact str/bytes and
    # int, patterns are immutable, and what a key compiles to is fixed (the
    # private compiler), so the walk would pass them all again; it walks
    # the entries after them.
    re_clean = {}
    from itertools import islice as islice_c

    def caches_clean(_re=re_mod, _up=url_parse, _comp=re_private,
                     _seen=re_seen, _hex=hex_seen, _type=type, _tuple=tuple, _str=str,
                     _bytes=bytes, _int=int, _dict=dict, _len=len, _list=list, _all=all,
                     _map=map, _is=is_, _P=re_mod.Pattern, _rc=re_clean, _islice=islice_c,
                     _k0=operator.itemgetter(0), _k1=operator.itemgetter(1)):
        for name in ("_cache", "_cache2"):
            c = _re.__dict__.get(name)
            if _type(c) is not _dict:
                continue
            items = _list(c.items())
            # The verified snapshot as the prefix of what the dict holds now
            # (a cache grows at its end): only the entries after it are new.
            snap = _rc.get(name)
            start = 0
            if snap is not None and snap[0] is c:
                n = _len(snap[1])
                if _len(items) >= n and _all(_map(_is, _map(_k0, items), snap[1])) \
                        and _all(_map(_is, _map(_k1, items), snap[2])):
                    start = n
            for k, v in _islice(items, start, None):
                if not (_type(k) is _tuple and _len(k) == 3 and (k[0] is _str or k[0] is _bytes)
                        and _type(k[1]) is k[0] and _type(k[2]) is _int):
                    return "re.%s holds a key that is not a plain pattern" % name
                if _seen.get(k) is v:
                    continue
                try:
                    fresh = _comp(k[1], k[2]) if _comp is not None else None
                except Exception:
                    fresh = None
                if _type(v) is not _P or fresh is None or not (v == fresh):
                    return "re.%s holds a pattern that is not its key's" % name
                _seen[k] = v
            # What was verified (the list taken before the walk), not what
            # the dict holds now.
            _rc[name] = (c, _tuple(k for k, _v in items), _tuple(v for _k, v in items))
        t = _up.__dict__.get("_hextobyte")
        if _type(t) is _dict:
            if _hex[0] is not t or _len(t) != _len(_hex[1]) or not _all(
                    _map(_is, t, _hex[1])) or not _all(_map(_is, t.values(), _hex[2])):
                vals = _tuple(t.items())
                for k, v in vals:
                    if not (_type(k) is _bytes and _type(v) is _bytes and _len(k) == 2):
                        return "urllib.parse._hextobyte holds a foreign entry"
                    try:
                        ok = v == _bytes.fromhex(k.decode("ascii"))
                    except ValueError:
                        ok = False
                    if not ok:
                        return "urllib.parse._hextobyte[%r] is not its key's byte" % k
                _hex[:] = [t, _tuple(k for k, _v in vals), _tuple(v for _k, v in vals)]
        return None

    if ahead:
        # The caches as the library's start-up left them, before any code
        # under test exists (as the memo above): verified once here, so a
        # run's first check walks only what was compiled since instead of
        # compiling every cached pattern again (about 8 ms).
        if caches_clean() is not None:
            re_seen.clear()
            re_clean.clear()
            hex_seen[:] = [None, (), ()]

    # ---- the runner --------------------------------------------------------
    def sweep(me, _listdir=os.listdir, _kill=os.kill, _wait=os.waitpid, _int=int):
        """Kills and reaps every process of the sandbox but its init and
        this runner (what a run left behind is this runner's, its
        subreaper's, to reap). False if some survive."""
        keep = (1, me, os.getppid())
        for _ in range(200):
            others = [_int(p) for p in _listdir("/proc") if p.isdigit() and _int(p) not in keep]
            if not others:
                return True
            for p in others:
                try:
                    _kill(p, 9)
                except OSError:
                    pass
            while True:
                try:
                    pid, _st = _wait(-1, os.WNOHANG)
                except ChildProcessError:
                    break
                if pid == 0:
                    break
            time.sleep(0.001)
        return False

    import resource

    def lines_of(files, _open=open):
        """Lines of the kernel's tables in `files` together (unreadable: 0)."""
        n = 0
        for f in files:
            try:
                with _open(f, "rb") as fh:
                    n += sum(1 for _ in fh)
            except OSError:
                pass
        return n

    # System V IPC objects and keys in the sandbox's namespaces (the
    # seccomp program refuses making them; counted in case it did not).
    IPC_TABLES = ("/proc/sysvipc/shm", "/proc/sysvipc/msg", "/proc/sysvipc/sem", "/proc/keys")
    # Sockets of the sandbox's network namespace (TIME_WAIT ones too): a
    # later run would meet them where a fresh sandbox has none.
    SOCKET_TABLES = ("/proc/net/tcp", "/proc/net/tcp6", "/proc/net/udp", "/proc/net/udp6")

    # Everything of the sandbox that is not emptied between runs and that
    # the sandbox's uid could own: the mount points' and device nodes'
    # modes, and every directory above a bind (the venv's, this file's).
    def fixed_paths(_os=os):
        paths = {"/", "/dev", "/dev/pts", "/dev/pts/ptmx", "/dev/shm", "/dev/null",
                 "/etc", "/tmp", "/proc", ws_root.rstrip("/") or "/", out_dir}
        for p in (sys.prefix, boot_dir):
            while p not in ("", "/"):
                paths.add(p)
                p = _os.path.dirname(p)
        return tuple(sorted(paths))

    watched_paths = fixed_paths()

    def path_state(p, _os=os):
        try:
            st = _os.lstat(p)
            xattrs = tuple(sorted(_os.listxattr(p, follow_symlinks=False)))
        except OSError as e:
            return (p, e.errno)
        return (p, st.st_mode, st.st_uid, st.st_gid, xattrs)

    def runner_state(_res=resource, _os=os, _lines=lines_of, _paths=watched_paths,
                     _ps=path_state, _ipc=IPC_TABLES, _socks=SOCKET_TABLES):
        """What a run could change of the runner or the sandbox from
        outside its own directories: the runner's limits, priority,
        scheduling and CPU set; the sandbox's IPC objects and sockets; the
        modes, owners and extended attributes of every path the grader
        does not empty. Compared after every run: a change retires the
        runner (the seccomp program and the read-only root refuse each of
        these; this is the check that they did)."""
        return (
            tuple(_res.getrlimit(getattr(_res, n)) for n in sorted(dir(_res))
                  if n.startswith("RLIMIT_")),
            _os.getpriority(_os.PRIO_PROCESS, 0),
            _os.sched_getscheduler(0),
            _os.sched_getparam(0).sched_priority,
            tuple(sorted(_os.sched_getaffinity(0))),
            _lines(_ipc),
            _lines(_socks),
            tuple(_ps(p) for p in _paths),
        )

    def serve_runs(confine, fresh, st, _read=o_read, _write=o_write, _fork=os.fork,
                   _wait=os.waitpid, _code=os.waitstatus_to_exitcode, _sweep=sweep,
                   _open=o_open, _close=o_close, _dup2=os.dup2, _exit=_exit,
                   _pipe=os.pipe, _state=runner_state):
        """The runner's loop: one key per line on stdin; for each, a
        forked run confined by Landlock, then every process it left
        killed, then `R <exit code>` (negative: the signal) on stdout. End
        of file: exit. The key is read before the fork and lives only in
        that run (and, once the run is over, as garbage here).

        Whether the run was confined comes from a pipe the fork writes
        and closes before any code under test exists, never from its exit
        code, which code under test chooses (`NOCONFINE`). A runner whose
        own state a run changed answers `DIRTY` and exits."""
        me = os.getpid()
        before = _state()
        buf = b""
        while True:
            while b"\n" not in buf:
                if len(buf) > MAX_KEY + 1:
                    _exit(NO_START)
                chunk = _read(0, 4096)
                if not chunk:
                    _exit(0)
                buf += chunk
            line, _nl, buf = buf.partition(b"\n")
            key = line.strip()
            if not MIN_KEY <= len(key) <= MAX_KEY:
                _exit(NO_START)
            # The hook stays out of the fork and the confinement (its own
            # ctypes events): trusted code only, no code under test exists.
            st[0] = True
            ok_r, ok_w = _pipe()
            pid = _fork()
            if pid == 0:
                _close(ok_r)
                nul = _open(os.devnull, os.O_RDWR)
                for fd in (0, 1, 2):
                    _dup2(nul, fd)
                _close(nul)
                if not confine():
                    _exit(CONFINE_EXIT)
                _write(ok_w, b"1")
                _close(ok_w)
                os.environ.pop("SECAUDIT_RUNNER", None)
                fresh()
                st[0] = False
                return key
            st[0] = False
            _close(ok_w)
            confined = _read(ok_r, 1) == b"1"
            _close(ok_r)
            _pid, status = _wait(pid, 0)
            if not _sweep(me):
                _write(1, b"DIRTY processes\n")
                _exit(0)
            if not confined:
                _write(1, b"NOCONFINE\n")
                _exit(0)
            if _state() != before:
                _write(1, b"DIRTY state\n")
                _exit(0)
            _write(1, b"R %d\n" % _code(status))

    # ---- the start signal ------------------------------------------------
    # The per-run key, on stdin, then end of file: it lives only in this
    # process (non-dumpable, above: no other process of the sandbox uid
    # can read its memory or ptrace it). No key: the grader dropped this
    # run unused, and nothing runs.
    startup_ms = int((time.monotonic() - started) * 1000)
    if runner:
        # Returns only in a forked run, with its key; its start-up was
        # the fork.
        key = serve_runs(confine, fresh_outputs, state)
        startup_ms = 0
        del confine
    else:
        key = b""
        while len(key) <= MAX_KEY:
            chunk = os.read(0, MAX_KEY + 1 - len(key))
            if not chunk:
                break
            key += chunk
        key = key.strip()
        if not MIN_KEY <= len(key) <= MAX_KEY:
            _exit(NO_START)
        nul = o_open(os.devnull, os.O_RDONLY)
        os.dup2(nul, 0)
        o_close(nul)
    macs = chain(key)
    next(macs)
    del key

    def write_verdict(line, _macs=macs, _open=o_open, _write=o_write, _close=o_close,
                      _vp=verdict_path, _flags=os.O_WRONLY | os.O_APPEND):
        """Appends `line` with its link of the chain. The stack check is the
        chain's (`chain`, before it computes the link): its `_gf(1)` is this
        frame, and the walk from here up meets exactly the frames a walk
        from this function's caller would (this frame is the bootstrap's),
        before anything is written. A second walk here, as there was,
        found nothing the chain's does not."""
        data = line.encode("utf-8")
        mac = _macs.send(data)
        fd = _open(_vp, _flags)
        try:
            _write(fd, data + b" " + mac + b"\n")
        finally:
            _close(fd)

    # First line: the start-up before the wait, which a staged run's wall
    # limit (counted from the key's delivery) did not see; the grader adds
    # it back (health/mod.rs, score).
    write_verdict("S %d" % startup_ms)

    # The copy is in place now. The suite's sources are read at once,
    # before any code under test runs: the copy is writable by the
    # sandbox, so code under test could rewrite a test module on disk
    # before pytest imports it. The loader compiles these bytes, never
    # the file as it is later.
    import importlib

    importlib.invalidate_caches()
    with open(boot_dir + "/suite.txt", encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if line:
                suite.add(line)
    for p in suite:
        try:
            with open(p, "rb") as f:
                suite_src[os.path.realpath(p)] = (p, f.read(MAX_SUITE_FILE))
        except OSError:
            pass

    # The suite's own imports, imported now: every module the suite can
    # call into is then in sys.modules, and so in the snapshot, before any
    # code under test runs (a module that code under test imported first
    # could be patched before the suite ever saw it).
    import importlib.util as iutil

    wanted = set()
    # Every name the suite's sources spell (names, attributes, imported
    # names): what the suite can set itself (`suite_sets`, below).
    suite_words = set()
    for _p, (orig, src) in sorted(suite_src.items()):
        try:
            tree = ast.parse(src, orig)
        except (SyntaxError, ValueError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Name):
                suite_words.add(node.id)
            elif isinstance(node, ast.Attribute):
                suite_words.add(node.attr)
            elif isinstance(node, ast.alias):
                suite_words.update(node.name.split("."))
            if isinstance(node, ast.Import):
                wanted.update(a.name for a in node.names)
            elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
                wanted.add(node.module)
                wanted.update(node.module + "." + a.name for a in node.names if a.name != "*")

    for name in sorted(wanted):
        try:
            spec = iutil.find_spec(name.split(".")[0])
            if spec is not None and lib_origin(spec.origin):
                __import__(name)
        except Exception:
            pass


    # Every module of the standard library, the venv (pytest and pluggy
    # included) and builtins loaded by now: `sys` aside, whose streams
    # pytest's capture swaps, and which holds no code the suite calls.
    watched = [(n, m) for n, m in sorted(sys.modules.items()) if lib_module(n, m)]
    baseline = []
    base_fts = []
    for n, m in watched:
        watch(baseline, n, m.__dict__, fts=base_fts)
    for fns, tys in base_fts:
        lib_fns.update(fns)
        lib_types.extend(tys)
    # The library functions' keyword-default dicts, held exactly from here
    # on (`kwdefaults_clean`, at every check): a function's `__kwdefaults__`
    # is its live dict (`object_hook` of `json.loads`), changed in place
    # without an event, and reading it cannot be refused by who asks — a C
    # pipeline that the collector runs from a weak reference's callback
    # has no frame (review rev40), and honest introspection (mock's
    # autospec, `inspect.getmembers`) reads every attribute.
    held_kwd = []
    for f in lib_fns:
        kd = f.__kwdefaults__
        if kd:
            held_kwd.append((kd, tuple(kd), tuple(kd.values())))

    # The namespaces swept at every check of the suite (the full sweep runs
    # at phase boundaries): builtins, the modules the suite imports and
    # every module they reach through module-valued globals (a patched
    # module attribute matters only to code that looks it up through the
    # module), and the suite's own modules once loaded. pytest and pluggy
    # are left to the phase boundaries: the suite does not compute with
    # them.
    hot_names = set()
    todo = ["builtins"] + [n for n in wanted if n in sys.modules]
    while todo:
        n = todo.pop()
        if n in hot_names or n.split(".")[0] in ("pytest", "_pytest", "pluggy"):
            continue
        hot_names.add(n)
        for v in list(sys.modules[n].__dict__.values()):
            if type(v) is types.ModuleType:
                vn = v.__dict__.get("__name__")
                if type(vn) is str and sys.modules.get(vn) is v:
                    todo.append(vn)
    # The library modules the suite computes with (the hot ones but
    # builtins): their plain data is what their functions compute from
    # (`base64._b32alphabet`, `json.decoder.BACKSLASH`), so there a data
    # name rebound or removed is tampering as much as a function (names
    # honest runs rebind are in VOLATILE_AT), and their tables, the
    # module-level dicts and lists of constants (plain immutable values,
    # not empty), may grow but keep what they held (checked at
    # every full sweep). Containers of objects are registries and caches
    # that honest runs change (logging's handlers, importlib's locks):
    # left to the coherence checks below where the suites depend on them.
    CONST = (str, bytes, int, float, bool, type(None))

    def constant(x, _c=CONST, _one=one_of):
        if type(x) is tuple:
            return all(_one(type(y), _c) for y in x)
        return _one(type(x), _c)

    for n, m in watched:
        if n in hot_names and n != "builtins":
            tables_ns.add(n)
            for k, v in list(m.__dict__.items()):
                t = type(v)
                if not ((t is dict or t is list) and v and k not in volatile
                        and (n + "." + k) not in volatile_at and (n + "." + k) not in GROWING
                        and (n + "." + k) not in PROCESS_STATE):
                    continue
                if t is dict:
                    # Keys may be any library object (`http.client.responses`
                    # is keyed by HTTPStatus members); constant values are
                    # what make it a table rather than a registry or cache.
                    if all(constant(y) for y in v.values()):
                        tables.append((n + "." + k, v, tuple(v), tuple(v.values())))
                elif all(constant(x) for x in v):
                    tables.append((n + "." + k, v, tuple(v), ()))
    hot, core = [], []
    for n, m in watched:
        if n in hot_names:
            entry_ix[n] = len(hot)
            watch(hot, n, m.__dict__)
        if n in ("pytest", "builtins", "_pytest", "pluggy") or n.startswith(("_pytest.", "pluggy.")):
            watch(core, n, m.__dict__)

    # The library objects and classes the suite names itself: the values
    # of the namespaces of the modules it imports (`json._default_encoder`,
    # `json.JSONEncoder`), by their watched entry's name. Their plain data
    # is held (`slow_diff`); objects reached only further away are not
    # (an app's configuration of a library the suite does not import,
    # `logging.root.handlers = []`, is no concern of the suite's).
    entry_of_class = {id(c): en for en, c in class_of_entry.items()}
    direct_entries = set()
    for n in sorted(wanted):
        m = sys.modules.get(n)
        if type(m) is not types.ModuleType or not lib_module(n, m):
            continue
        for k, v in list(m.__dict__.items()):
            if (n + "." + k) in class_of_obj:
                direct_entries.add(n + "." + k)
            elif id(v) in entry_of_class:
                direct_entries.add(entry_of_class[id(v)])
    del entry_of_class

    # This bootstrap's own module (`__main__`): its functions look up
    # builtins by name through it, so a name added there shadows one.
    # Nothing of an honest run binds a name in it.
    main_ns = sys.modules["__main__"].__dict__
    entry_ix["__main__"] = len(hot)
    for snap in (baseline, hot, core):
        take(snap, "__main__", main_ns, True)

    # The suite's module namespaces by their path under the root (what a
    # test's node id starts with): which function a test item must run
    # (`test_object_clean`). Only `watch_suite`'s defaults hold it.
    suite_by_rel = {}
    ROOT = ""
    for _a in sys.argv[1:]:
        if _a.startswith("--rootdir="):
            ROOT = real_path(_a[len("--rootdir="):]).rstrip("/") + "/"

    # The closure cells of the suite's functions and of the wrappers that
    # library decorators made of them, as the suite's module left them: a
    # wrapper calls the suite's function from a cell (`mock.patch`'s
    # `_inner`), and a cell's contents are writable by anyone who holds
    # the function, with no audit event (`test_object_clean`).
    suite_cells = {}  # id(function) -> (function, its cells' contents)
    CELL_EMPTY = object()

    def cells_of(fn, _none=CELL_EMPTY):
        cl = fn.__closure__
        if cl is None:
            return ()
        out = []
        for c in cl:
            try:
                out.append(c.cell_contents)
            except ValueError:
                out.append(_none)
        return tuple(out)

    def keep_cells(ns, _sc=suite_cells, _type=type, _ft=FT, _td=tdict_of, _dict_of=dict_of,
                   _range=range, _list=list):
        todo = _list(ns.values())
        seen = 0
        while todo and seen < 10000:
            v = todo.pop()
            seen += 1
            if issubclass(_type(v), type):
                if _td(v).get("__module__") == ns.get("__name__"):
                    todo.extend(_td(v).values())
                continue
            if _type(v) in (staticmethod, classmethod):
                v = v.__func__
            for _ in _range(8):
                if _type(v) is not _ft or id(v) in _sc:
                    break
                _sc[id(v)] = (v, cells_of(v))
                d = _dict_of(v)
                v = d.get("__wrapped__") if _type(d) is dict else None

    def watch_suite(ns, _b=baseline, _h=hot, _w=watch, _ix=entry_ix, _sbr=suite_by_rel,
                    _root=ROOT, _rp=real_path, _type=type, _str=str, _kc=keep_cells):
        name = ns.get("__name__", "?")
        _kc(ns)
        f = ns.get("__file__")
        if _root and _type(f) is _str:
            f = _rp(f)
            if f.startswith(_root) and f[len(_root):] not in _sbr:
                _sbr[f[len(_root):]] = ns
        _w(_b, name, ns, True)
        _ix[name] = len(_h)
        _w(_h, name, ns, True)

    watch_ref[0] = watch_suite
    # The loader's frame is below the app while a suite module imports it,
    # and its locals are its defaults (review rev40: `_watch[0] = len`
    # from that frame left later suite modules unwatched): a tuple.
    SuiteLoader.exec_module.__defaults__ = SuiteLoader.exec_module.__defaults__[:-1] + (
        (watch_suite,),)

    PLAIN_DATA = (type(None), bool, int, float, complex, str, bytes, tuple, frozenset,
                  list, dict, set, bytearray)

    def behaviour(v, _type=type, _one=one_of, _pd=PLAIN_DATA):
        """Anything but plain data: functions, classes, modules, and every
        descriptor (a classmethod is not callable, yet it is code). Only
        baseline (trusted) objects are asked."""
        return not _one(_type(v), _pd)

    behaviour_ref[0] = behaviour

    METHODS = (FT, staticmethod, classmethod) + NATIVE

    builtin_names = frozenset(builtins.__dict__)

    # The names a held module's own functions rebind (`global x; x = …`,
    # `mimetypes.init` rebinding `inited` and its maps): state the library
    # changes itself, so a change of it is no evidence of tampering. Found
    # from the bytecode of the functions and methods the module defines,
    # once per module, only when a held data name is seen rebound.
    import opcode as opcode_mod
    STORE_G = opcode_mod.opmap["STORE_GLOBAL"]
    DEL_G = opcode_mod.opmap["DELETE_GLOBAL"]
    EXT_ARG = opcode_mod.EXTENDED_ARG
    stored_memo = {}

    CACHE_OP = opcode_mod.opmap.get("CACHE", -2)

    def instructions(code, _range=range, _len=len):
        """(opcode, argument) of each instruction of `code`, extended
        arguments folded in and inline cache entries left out."""
        b, arg = code.co_code, 0
        for i in _range(0, _len(b), 2):
            op, a = b[i], b[i + 1] | arg
            if op == EXT_ARG:
                arg = a << 8
                continue
            arg = 0
            if op != CACHE_OP:
                yield op, a

    def globals_stored(code, out, depth=0, _ct=types.CodeType, _type=type, _len=len,
                       _ins=instructions):
        if depth > 20:
            return
        names = code.co_names
        for op, a in _ins(code):
            if (op == STORE_G or op == DEL_G) and a < _len(names):
                out.add(names[a])
        for c in code.co_consts:
            if _type(c) is _ct:
                globals_stored(c, out, depth + 1)

    # The library's own code among a held namespace's values, for the two
    # exemption lists below: a function of the baseline whose globals are
    # that module's namespace (a property's accessors, which the baseline
    # does not list: code from the library's trees with those globals).
    # Never `__module__`, which any function can be given, nor the live
    # namespace alone, where a name added is no tampering (review rev36:
    # a planted function "of" `json.encoder` writing `sort_keys`).
    def own_code(f, md, accessor, _ft=FT, _type=type, _lf=lib_fns, _t=trusted):
        if _type(f) is not _ft or f.__globals__ is not md:
            return False
        if accessor:
            return _t(f.__code__.co_filename)
        return f in _lf

    def module_codes(name, d, _type=type, _td=tdict_of, _list=list, _str=str, _abc=ABCMeta,
                     _own=own_code):
        """The code of module `name`'s own functions and of the methods and
        property accessors of the classes it defines (`d`: its namespace)."""
        vals = _list(d.values())
        for v in _list(vals):
            if _type(v) is type or _type(v) is _abc:
                vm = _td(v).get("__module__")
                if _type(vm) is _str and vm == name:
                    vals.extend(_list(_td(v).values()))
        codes = []
        for v in vals:
            k = _type(v)
            if k is staticmethod or k is classmethod:
                v = v.__func__
            elif k is property:
                codes.extend(f.__code__ for f in (v.fget, v.fset, v.fdel) if _own(f, d, True))
                continue
            if _own(v, d, False):
                codes.append(v.__code__)
        return codes

    def stored_by(name, d, _memo=stored_memo, _codes=module_codes):
        out = _memo.get(name)
        if out is None:
            out = set()
            for c in _codes(name, d):
                globals_stored(c, out)
            _memo[name] = out
        return out

    # The attribute names a library class's own code writes on itself
    # after construction (`self.level = …` in `Logger.setLevel`, the
    # calendar's `_firstweekday` through its property): STORE_ATTR and
    # DELETE_ATTR on the first argument in the code of the modules that
    # define the class and its bases, `__init__` and `__new__` left out
    # (they build the object: an attribute only they set, such as
    # `JSONEncoder.sort_keys`, is configuration the library never changes
    # once built). Per class, once, and only when a held object's
    # attribute is seen changed.
    STORE_A = opcode_mod.opmap["STORE_ATTR"]
    DEL_A = opcode_mod.opmap["DELETE_ATTR"]
    LOAD_F = opcode_mod.opmap["LOAD_FAST"]
    SWAP_OP = opcode_mod.opmap.get("SWAP", -2)
    attrs_memo = {}
    BUILDERS = ("__init__", "__new__")

    def attrs_written(code, out, depth=0, _ct=types.CodeType, _type=type, _len=len,
                      _b=BUILDERS, _ins=instructions):
        """Names written on the first argument (`self.x = …`, `cls.x = …`,
        `self.x += …`): what an object's own methods change on it. A
        write on another object (`csv.Sniffer.sniff` setting a
        `delimiter` on a class of its own) exempts nothing (review rev36)."""
        if depth > 20 or code.co_name in _b:
            return
        names = code.co_names
        own = code.co_argcount > 0
        prev, prev_a = -1, 0
        for op, a in _ins(code):
            if (op == STORE_A or op == DEL_A) and a < _len(names) and own and (
                    (prev == LOAD_F and prev_a == 0) or prev == SWAP_OP):
                out.add(names[a])
            prev, prev_a = op, a
        for c in code.co_consts:
            if _type(c) is _ct:
                attrs_written(c, out, depth + 1)

    def class_codes(t, _mro=mro_of, _td=tdict_of, _type=type, _str=str, _mods=sys.modules,
                    _codes=module_codes):
        """The code of the modules that define `t` and its bases
        (`module_codes` of each, once)."""
        seen = set()
        for c in _mro(t):
            mn = _td(c).get("__module__")
            if _type(mn) is not _str or mn in seen:
                continue
            seen.add(mn)
            md = getattr(_mods.get(mn), "__dict__", None)
            if _type(md) is not dict:
                continue
            yield from _codes(mn, md)

    def class_written(t, collect, _memo=attrs_memo, _codes=class_codes):
        """What `collect` (`attrs_written`, `subs_written`) finds in the
        code of the modules defining `t` and its bases: once per (collector,
        class), and only when a check needs it."""
        key = (collect, t)
        out = _memo.get(key)
        if out is None:
            out = set()
            for code in _codes(t):
                collect(code, out)
            _memo[key] = out
        return out

    def lib_class_written(t, _memo=attrs_memo, _mro=mro_of, _td=tdict_of, _type=type,
                          _str=str, _mods=sys.modules, _codes=module_codes, _aw=attrs_written):
        """The names the *library* bases of suite class `t` write on their
        first argument (`unittest.TestCase.doClassCleanups` sets
        `cls.tearDown_exceptions`): a suite class's namespace is strict, but
        these are the library's own bookkeeping on it, not a patch. The
        suite's own modules are left out (a name the suite writes on its
        class is the suite's data, which code under test must not rebind)."""
        key = ("lib", t)
        out = _memo.get(key)
        if out is None:
            out = set()
            seen = set()
            for c in _mro(t):
                mn = _td(c).get("__module__")
                if _type(mn) is not _str or mn in seen:
                    continue
                seen.add(mn)
                m = _mods.get(mn)
                md = getattr(m, "__dict__", None)
                if _type(md) is not dict or not lib_module(mn, m):
                    continue
                for code in _codes(mn, md):
                    _aw(code, out)
            _memo[key] = out
        return out

    # What the library's own code writes into, in place: for each code, the
    # attribute names loaded (`self._cache`, `cls.registry`, or a local
    # they were bound to) within the few instructions before a subscript
    # store or delete, or whose mutating method is looked up at once
    # (`self.table.update`). Broad on purpose: it only exempts.
    LOAD_A = opcode_mod.opmap["LOAD_ATTR"]
    LOAD_M = opcode_mod.opmap.get("LOAD_METHOD", -2)
    STORE_F = opcode_mod.opmap["STORE_FAST"]
    SUB_WRITES = (opcode_mod.opmap["STORE_SUBSCR"], opcode_mod.opmap["DELETE_SUBSCR"])
    # From 3.12 LOAD_ATTR's argument is the name's index shifted left once
    # (its low bit says whether a method is loaded).
    LOAD_A_SHIFT = 1 if sys.version_info >= (3, 12) else 0
    MUTATORS = frozenset(("update", "setdefault", "pop", "popitem", "clear", "append",
                          "extend", "insert", "remove", "sort", "reverse", "__setitem__",
                          "__delitem__", "__ior__", "__iadd__", "add", "discard",
                          "difference_update", "intersection_update",
                          "symmetric_difference_update"))

    def subs_written(code, out, depth=0, _ct=types.CodeType, _type=type, _len=len,
                     _ins=instructions, _sw=SUB_WRITES, _mut=MUTATORS, _shift=LOAD_A_SHIFT):
        if depth > 20:
            return
        names = code.co_names
        recent = []
        alias = {}
        for op, a in _ins(code):
            if op == LOAD_A:
                a >>= _shift
            # A subscript store names whatever was loaded just before; a
            # mutating method, the object it is looked up on.
            if op in _sw:
                hits = recent
            elif (op == LOAD_M or op == LOAD_A) and a < _len(names) and names[a] in _mut \
                    and recent and recent[-1][0] in "af":
                hits = recent[-1:]
            else:
                hits = ()
            for kind, v in hits:
                if kind == "a":
                    out.add(v)
                elif v in alias:
                    out.add(alias[v])
            if op == LOAD_A and a < _len(names):
                recent.append(("a", names[a]))
            elif op == LOAD_F:
                recent.append(("f", a))
            elif op == STORE_F:
                if recent and recent[-1][0] == "a":
                    alias[a] = recent[-1][1]
                recent.append(("-", a))
            else:
                recent.append(("-", op))
            if _len(recent) > 8:
                del recent[0]
        for c in code.co_consts:
            if _type(c) is _ct:
                subs_written(c, out, depth + 1)

    # The containers of constants (dicts, lists, sets: `Morsel._flags`,
    # review rev37) that the library objects and classes the suite names
    # itself hold (`RawConfigParser.BOOLEAN_STATES`, review rev36): the
    # tables the suite's own calls look up, changeable in place while every
    # namespace holds the same objects. Held exactly (an entry
    # added is a new answer to the suite's lookup, unlike a module's
    # registries, which may grow), but those the library's own code writes
    # into (`subs_written`). (name, the container, its keys or items, its
    # values), checked with the module tables (`containers_clean`).
    def held_tables_of(entries, _const=constant):
        out = []
        for e in entries:
            en, d = e[0], e[1]
            if en not in direct_entries:
                continue
            t = class_of_entry.get(en) or class_of_obj.get(en)
            if t is None:
                continue
            for k, v in list(d.items()):
                ty = type(v)
                if not ((ty is dict or ty is list or ty is set) and v and type(k) is str
                        and k not in volatile and (en + "." + k) not in volatile_at):
                    continue
                if not all(_const(y) for y in (v.values() if ty is dict else v)):
                    continue
                if k in class_written(t, subs_written):
                    continue
                out.append((en + "." + k, v, tuple(v),
                            tuple(v.values()) if ty is dict else (), d, k))
        return out

    held_tables = held_tables_of(baseline)

    NO_CONST = object()

    def class_const(t, k, _mro=mro_of, _td=tdict_of, _no=NO_CONST):
        """What the first class of `t`'s MRO that defines `k` holds for it
        (read from the classes' own dicts, no descriptor runs), else a
        sentinel that is no constant."""
        for c in _mro(t):
            cd = _td(c)
            if k in cd:
                return cd[k]
        return _no

    def slow_diff(name, d, items, strict, _vol=volatile, _va=volatile_at,
                  _type=type, _str=str, _mt=types.ModuleType, _beh=behaviour,
                  _co=class_of_obj, _mro=mro_of, _td=tdict_of, _one=one_of, _meth=METHODS,
                  _tabns=tables_ns, _me=module_entries, _ce=class_of_entry,
                  _bn=builtin_names, _stored=stored_by, _cw=class_written, _aw=attrs_written,
                  _direct=direct_entries, _const=constant, _class_const=class_const,
                  _lcw=lib_class_written, _sc=suite_classes, view=None):
        # `view`: the copy of `d` to judge (`state_clean` records exactly
        # what it judged); `d` itself only names the namespace whose code
        # may store into it (`stored_by`).
        live = d
        if view is not None:
            d = view
        # A library module the suite computes with: its data too, but for
        # a name that held None, which the library fills on first use
        # (`pkgutil._NAME_PATTERN`), once (the sweep then holds the fill).
        held = name in _tabns
        lib_mod = not strict and name in _me
        # A suite class: what its library bases write on it is exempt.
        lib_w = ()
        if strict and _sc.get(name) is not None:
            lib_w = _lcw(_sc[name])
        # An object or a class the suite reaches by name in a module it
        # imports itself (`json._default_encoder`, `json.JSONEncoder`,
        # `direct_entries`): its plain data too (`sort_keys`, the
        # separators: constants, the defaults every instance reads), but
        # for the attributes its own methods write on it after building it
        # (`attrs_written`). A name added or removed is judged when it
        # shadows or uncovers a constant of its class.
        obj_t = (_co.get(name) or _ce.get(name)) if name in _direct else None
        if obj_t is not None:
            for k in d:
                if _type(k) is not _str:
                    return "a non-str name in " + name
                if k in _vol or (name + "." + k) in _va:
                    continue
                if k in items:
                    was = items[k]
                elif _co.get(name) is not None:
                    was = _class_const(obj_t, k)
                else:
                    continue
                if d[k] is not was and _const(was) and k not in _cw(obj_t, _aw):
                    return "%s.%s %s" % (name, k, "rebound" if k in items else "added")
            for k in items:
                if k not in d and _const(items[k]) and k not in _cw(obj_t, _aw) \
                        and k not in _vol and (name + "." + k) not in _va:
                    return "%s.%s removed" % (name, k)
        for k in d:
            if _type(k) is not _str:
                return "a non-str name in " + name
            if (k in _vol and not (lib_mod and k == "__builtins__")) or (name + "." + k) in _va \
                    or k in lib_w:
                continue
            if k not in items:
                v = d[k]
                # A submodule imported since: the import system binds it
                # in its package.
                if _type(v) is _mt and v.__dict__.get("__name__") == name + "." + k:
                    continue
                if strict:
                    return "name %s added to %s" % (k, name)
                # A global named like a builtin shadows it for every
                # function of the module; a class attribute, what the
                # class inherits (a trusted helper's `setattr` is no
                # rebinding).
                if lib_mod and (k in _bn or k == "__builtins__"):
                    return "%s.%s added: shadows the builtin" % (name, k)
                c = _ce.get(name)
                if c is not None:
                    for b in _mro(c)[1:]:
                        if k in _td(b):
                            return "%s.%s added: shadows what the class inherits" % (name, k)
                t = _co.get(name)
                if t is not None:
                    for c in _mro(t):
                        cd = _td(c)
                        if k in cd:
                            if _one(_type(cd[k]), _meth):
                                return "%s.%s shadows a method of its class" % (name, k)
                            break
                continue
            if d[k] is not items[k] and (
                    strict or _beh(items[k]) or k == "__builtins__"
                    or (held and items[k] is not None and k not in _stored(name, live))):
                return "%s.%s rebound" % (name, k)
        for k, v in items.items():
            if k not in d and k not in lib_w and (strict or _beh(v) or k == "__builtins__"
                               or (held and k not in _stored(name, live))):
                return "%s.%s removed" % (name, k)
        return None

    def unchanged(d, keys, vals, _len=len, _all=all, _map=map, _is=is_):
        """Namespace `d` holds exactly `keys` and `vals`: a C-level
        identity sweep, never `==` (which could call code of the run)."""
        return _len(d) == _len(keys) and _all(_map(_is, d, keys)) \
            and _all(_map(_is, d.values(), vals))

    # The sweep's memo, per swept list: for each run of CHUNK consecutive
    # entries, the entry tuples themselves and, flattened, their dicts,
    # their key counts, keys and values. A chunk whose entries are the same
    # tuples (entries are never changed in place: a changed namespace gets
    # a new one) is swept in one C-level pass: every dict's length equal to
    # its entry's key count, then the dicts' keys in a row against the
    # entries' keys in a row, and the same for the values, all by `is`.
    # With each length equal, the two rows line up entry by entry, so the
    # pass is true exactly when `unchanged` is true for every entry of the
    # chunk; any other chunk is swept entry by entry as before, in the
    # same order. What it saves is the per-entry Python work (about 0.4 us
    # an entry, 190,000 entries a task-12 grading), not any comparison.
    CHUNK = 32
    sweep_memo = []  # (a swept list, its chunks so far)

    def chunk_of(part, _tuple=tuple, _flat=chain_it.from_iterable, _len=len):
        part = _tuple(part)
        return (part, [e[1] for e in part], [_len(e[2]) for e in part],
                _tuple(_flat(e[2] for e in part)), _tuple(_flat(e[3] for e in part)))

    def chunks_for(_b, _memo=sweep_memo):
        for m in _memo:
            if m[0] is _b:
                return m[1]
        chunks = []
        _memo.append((_b, chunks))
        return chunks

    def chunk_same(part, c, _len=len, _all=all, _map=map, _is=is_, _list=list,
                   _flat=chain_it.from_iterable, _vals=values_of):
        """`unchanged` for every entry of `part`, given the chunk memo `c`
        made from the same entry tuples."""
        E, ds = c[0], c[1]
        return (_len(part) == _len(E) and _all(_map(_is, part, E))
                and _list(_map(_len, ds)) == c[2]
                and _all(_map(_is, _flat(ds), c[3]))
                and _all(_map(_is, _flat(_map(_vals, ds)), c[4])))

    def sweep_chunks(_b, changed, _len=len, _range=range, _chunk=CHUNK, _of=chunk_of,
                     _for=chunks_for, _same_c=chunk_same, _same=unchanged, _min=min,
                     _enum=enumerate):
        """Calls `changed(i, entry)` for every entry of `_b` whose namespace
        `unchanged` finds changed, in order, skipping the chunks whose
        memo says all are unchanged; stops at the first non-None answer
        and returns it."""
        chunks = _for(_b)
        n = _len(_b)
        for ci, lo in _enum(_range(0, n, _chunk)):
            hi = _min(lo + _chunk, n)
            if ci < _len(chunks) and _same_c(_b[lo:hi], chunks[ci]):
                continue
            for i in _range(lo, hi):
                e = _b[i]
                if _same(e[1], e[2], e[3]):
                    continue
                bad = changed(i, e)
                if bad is not None:
                    return bad
            c = _of(_b[lo:hi])
            if ci < _len(chunks):
                chunks[ci] = c
            else:
                chunks.append(c)
        return None

    def state_clean(_b=baseline, _slow=slow_diff, _entry=entry, _tabns=tables_ns,
                    _sweep=sweep_chunks, _objs=lib_objs, _ods=lib_obj_ds, _dict_of=dict_of,
                    _all=all, _map=map, _is=is_):
        """Every watched namespace (the library's and the suite's modules
        and their classes) holds exactly the objects it held before code
        under test ran (module notes: all names in the suite's, code,
        classes and modules in the library's). None if so, else what
        changed. The common case is a C-level identity sweep per
        namespace (per chunk of namespaces, `sweep_memo`); only a namespace
        that differs is walked name by name, and a benign change (a library
        flag, a lazy cache) becomes its new baseline, keeping the identity
        of what it had to hold."""
        def changed(i, e, _b=_b, _slow=_slow, _entry=_entry, _tabns=_tabns, _len=len,
                    _all=all, _map=map, _is=is_, _type=type, _rep=_repeat, _str=str,
                    _dict=dict, _zip=zip):
            name, d, keys, vals, items, strict = e
            # The copy first; it is what is judged and what is recorded
            # (review rev44: judging the live namespace and copying it after
            # let a finalizer rebind a name in between, remembered unjudged).
            fresh = _entry(name, d, strict)
            if _len(fresh[2]) != _len(fresh[3]):
                return name + " changed while it was read"
            if not _all(_map(_is, _map(_type, fresh[2]), _rep(_str))):
                return "a non-str name in " + name
            bad = _slow(name, d, items, strict, view=_dict(_zip(fresh[2], fresh[3])))
            if bad is not None:
                return bad
            # The names that must hold their objects keep the baseline's (a
            # held namespace's lazy fill of a None is held from now on).
            held = name in _tabns
            for k, v in items.items():
                if v is not None or not held:
                    fresh[4][k] = v
            _b[i] = fresh
            return None
        if not _all(_map(_is, _map(_dict_of, _objs), _ods)):
            return "the attribute dict of a library object replaced"
        return _sweep(_b, changed)

    hot_ref[0] = hot

    # The import system's table: C code and lazy imports reach a module
    # through it per call (`datetime.strftime` imports `time` each time),
    # so a watched module replaced or removed there is tampering even
    # though its namespace is untouched. `sys.modules` is bound here: the
    # import system keeps using this dict whatever `sys.modules` names.
    mod_names = [n for n, _m in watched]
    mod_objs = [m for _n, m in watched]

    # The library modules loaded during the run by the watching loaders
    # (above): the only objects a library module name may name in
    # `sys.modules` besides the baseline's.
    lib_loaded = []
    # The library's import path (the workspace's entries left out): a name
    # found there, or builtin, or frozen, is a library module's name.
    lib_path = [p for p in sys.path if type(p) is str and p
                and lib_file(os.path.join(p, "__init__.py"))]
    lib_named = {}
    # "package.name" -> the module a library module held as its global
    # `name` when it was admitted (before code under test could add one):
    # the library's own aliases in `sys.modules` (`xml.parsers.expat`
    # registers pyexpat's `model` and `errors` as its submodules).
    lib_aliases = {}

    def note_aliases(n, d, _al=lib_aliases, _type=type, _mt=types.ModuleType, _list=list):
        for k, v in _list(d.items()):
            if _type(v) is _mt and _type(k) is str:
                _al.setdefault(n + "." + k, v)

    for n, m in watched:
        note_aliases(n, m.__dict__)

    def library_name(n, _pf=machinery.PathFinder, _lp=lib_path, _memo=lib_named,
                     _builtin=frozenset(sys.builtin_module_names), _frozen=_imp.is_frozen,
                     _mods=sys.modules, _lib=lib_loaded, _objs=mod_objs, _any=any, _map=map,
                     _is=is_, _rep=_repeat):
        """True when `n` names a module of the library: a top-level name the
        library's own path, builtins or frozen modules have, or a
        submodule of a library package."""
        hit = _memo.get(n)
        if hit is not None:
            return hit
        if n in _builtin or _frozen(n):
            hit = True
        elif "." not in n:
            try:
                hit = _pf.find_spec(n, _lp) is not None
            except Exception:
                hit = False
        else:
            parent = n.rpartition(".")[0]
            pm = _mods.get(parent)
            hit = pm is not None and (_any(_map(_is, _rep(pm), _objs))
                                      or _any(_map(_is, _rep(pm), _lib)))
        _memo[n] = hit
        return hit

    def watch_loaded(m, _b=baseline, _w=watch, _names=mod_names, _objs=mod_objs,
                     _alias=note_aliases,
                     _lib=lib_loaded, _fns=lib_fns, _types=lib_types, _type=type,
                     _str=str):
        n = m.__dict__.get("__name__")
        if _type(n) is not _str:
            return
        _lib.append(m)
        fts = []
        _w(_b, n, m.__dict__, fts=fts)
        for fns, tys in fts:
            _fns.update(fns)
            _types.extend(tys)
        _names.append(n)
        _objs.append(m)
        _alias(n, m.__dict__)

    # What the import system puts in a module before its code runs
    # (`module_from_spec`): anything else was put there by someone else.
    INIT_ATTRS = frozenset(("__name__", "__doc__", "__package__", "__loader__", "__spec__",
                            "__path__", "__file__", "__cached__"))
    LIB_LOADERS = (LibSourceLoader, LibExtensionLoader, LibSourcelessLoader, LibNamespaceLoader,
                   LibBuiltinImporter, LibFrozenImporter)

    def admit(m, _pend=pending_specs, _type=type, _str=str, _mt=types.ModuleType, _len=len,
              _range=range, _lib=lib_file, _libf=lib_file_of, _ga=obj_getattr,
              _init=INIT_ATTRS, _kinds=LIB_LOADERS, _one=one_of, _list=list, _all=all):
        """Called by a watching loader before it runs module `m`: True when
        `m` is what the import system makes of a spec this finder made
        (once), from the library's own file, with nothing else in it.
        Whoever calls (`_load_unlocked`, `importlib.util.LazyLoader`, the
        documented recipe `module_from_spec` + `exec_module`): what
        decides is the module and its loader, not the caller."""
        if _type(m) is not _mt:
            return False
        d = m.__dict__
        spec = d.get("__spec__")
        for i in _range(_len(_pend)):
            if _pend[i] is spec:
                del _pend[i]
                break
        else:
            return False
        # A module made and filled by someone else first (a builtin
        # shadowed there, `__builtins__` of its own, a `__package__` that
        # turns its relative imports elsewhere), or a loader given
        # methods of its own (`create_module`, `get_data`).
        # (An extension or builtin module's own C code fills its dict as
        # it is made: those are judged by their loader alone.)
        loader = spec.loader
        made_by_c = _type(loader) is type or _type(loader) is _kinds[1]
        for k in _list(d):
            if _type(k) is not _str or not (made_by_c or k in _init):
                return False
        name = d.get("__name__")
        if _type(name) is not _str or name != spec.name or d.get("__loader__") is not loader \
                or d.get("__package__") != spec.parent:
            return False
        if _type(loader) is type:
            return _one(loader, _kinds[4:])
        if not _one(_type(loader), _kinds[:4]):
            return False
        ld = _ga(loader, "__dict__")
        locs = spec.submodule_search_locations
        if locs is not None and not _all(_type(p) is _str and _lib(p) for p in _list(locs)):
            return False
        if _type(loader) is _kinds[3]:
            return _list(ld) == ["_path"]
        path = ld.get("path")
        return (_len(ld) == 2 and ld.get("name") == name and _libf(name, path)
                and d.get("__file__", path) == path)

    loaded_ref[0] = watch_loaded
    loaded_ref[1] = admit
    known_keys = [tuple(sys.modules), {n: True for n in sys.modules}]

    def same_entry(a, b, _is=is_):
        return a[1] is b[1] and a[0] == b[0]

    def modules_clean(_mods=sys.modules, _names=mod_names, _objs=mod_objs, _all=all,
                      _map=map, _is=is_, _zip=zip, _known=known_keys, _len=len, _tuple=tuple,
                      _any=any, _rep=_repeat, _libname=library_name, _both=same_entry,
                      _type=type, _str=str, _al=lib_aliases, _pend=pending_specs,
                      _lazy=getattr(iutil, "_LazyModule", None), _ga=obj_getattr):
        keys = _tuple(_mods)
        if not (_len(keys) == _len(_known[0]) and _all(_map(_is, keys, _known[0]))):
            # A name new to the table that is a library module's name must
            # hold the library's module: an object planted there before
            # the library imports it lazily (or a workspace file shadowing
            # it) would run in the library's place.
            seen = _known[1]
            deferred = False
            for n in keys:
                if _type(n) is not _str:
                    return "a name in sys.modules that is not a str"
                if n in seen:
                    continue
                m = _mods.get(n)
                if m is None:
                    continue
                # The library's module under its own name (the import
                # system's aliases, `os.path`, are in the baseline).
                if _libname(n) and not _any(
                        _map(_both, _zip(_names, _objs), _rep((n, m)))):
                    if _al.get(n) is not m:
                        # A module of `importlib.util.LazyLoader` not run
                        # yet: its spec is still pending (admitted, or not,
                        # when it runs); judged again at every check.
                        if _lazy is not None and _type(m) is _lazy and _any(
                                _map(_is, _pend, _rep(_ga(m, "__dict__").get("__spec__")))):
                            deferred = True
                            continue
                        return "sys.modules[%r] is not the library's module" % n
                    # The library's own alias: held under this name from now.
                    _names.append(n)
                    _objs.append(m)
                seen[n] = True
            if not deferred:
                _known[0] = keys
        if _all(_map(_is, _map(_mods.get, _names), _objs)):
            return None
        for n, m in _zip(_names, _objs):
            if _mods.get(n) is not m:
                return "sys.modules[%r] replaced or removed" % n
        return None

    def both_are(a, b, x, y):
        return a is x and b is y

    def held_clean(_held=held_tables, _len=len, _all=all, _any=any, _map=map, _is=is_,
                   _dict=dict, _type=type, _both=both_are, _repeat=_repeat):
        """`held_tables` as they were before the run: at every check, not
        only at setup (review rev38: a word taught to `BOOLEAN_STATES` in a
        call and forgotten by a finalizer before the next setup). A few
        C-level identity sweeps of small tables."""
        # Held exactly, and still the one its owner holds (a dict is no
        # constant: a rebound one is no concern of `slow_diff`).
        for name, c, keys, vals, owner, k in _held:
            # By identity only: a lookup by key could call a foreign key's
            # `__eq__` (code of the run) on a hash collision.
            if not _any(_map(_both, owner, owner.values(), _repeat(k), _repeat(c))):
                return "%s rebound" % name
            if _len(c) != _len(keys) or not _all(_map(_is, c, keys)) or (
                    _type(c) is _dict and not _all(_map(_is, c.values(), vals))):
                return "%s changed" % name
        return None

    def containers_clean(_tabs=tables, _len=len, _tuple=tuple, _all=all, _map=map, _is=is_,
                         _dict=dict, _type=type, _hc=held_clean):
        """The held namespaces' dicts and lists keep what they held before
        the run (each may grow; those of `held_tables` may not): a C-level
        identity sweep of each prefix (insertion order), never `==` nor a
        hash of what the run put in."""
        for name, c, keys, vals in _tabs:
            n = _len(keys)
            if _len(c) < n:
                return "%s emptied" % name
            if not _all(_map(_is, _tuple(c)[:n], keys)):
                return "%s changed" % name
            if _type(c) is _dict and not _all(_map(_is, _tuple(c.values())[:n], vals)):
                return "%s changed" % name
        return _hc()

    # base64's tables, built on first use (so after the baseline) from its
    # alphabets: each must be what base64 builds (a rewritten entry turns
    # the suite's own encode into the app's answer). The alphabets
    # themselves are held data (above).
    import base64 as b64_mod
    b64_seen = {}

    def b64_fresh(name, key, _b=b64_mod, _bytes=bytes, _range=range, _enum=enumerate):
        if name == "_b32tab2":
            t = [_bytes((i,)) for i in key]
            return [a + b for a in t for b in t]
        if name == "_b32rev":
            return {v: k for k, v in _enum(key)}
        if name in ("_a85chars", "_a85chars2"):
            t = [_bytes((i,)) for i in _range(33, 118)]
        else:
            t = [_bytes((i,)) for i in _b.__dict__.get("_b85alphabet", b"")]
        if name.endswith("2"):
            return [a + b for a in t for b in t]
        if name == "_b85dec":
            d = [None] * 256
            for i, c in _enum(_b.__dict__.get("_b85alphabet", b"")):
                d[c] = i
            return d
        return t

    def plain_eq(v, fresh, _type=type, _list=list, _dict=dict, _bytes=bytes, _int=int,
                 _none=type(None), _all=all, _len=len):
        """`v == fresh` for a list of bytes/int/None or a dict of int to
        int, after checking every element's exact type (so `==` runs
        only C comparisons)."""
        if _type(v) is _list:
            if not _all(_type(x) is _bytes or _type(x) is _int or _type(x) is _none for x in v):
                return False
        elif _type(v) is _dict:
            if not _all(_type(k) is _int and _type(x) is _int for k, x in v.items()):
                return False
        else:
            return False
        return _len(v) == _len(fresh) and v == fresh

    def b64_clean(_b=b64_mod, _seen=b64_seen, _fresh=b64_fresh, _eq=plain_eq, _type=type,
                  _dict=dict, _bytes=bytes, _tuple=tuple, _list=list, _len=len, _all=all,
                  _map=map, _is=is_):
        ns = _b.__dict__
        for name in ("_b32tab2", "_b32rev"):
            c = ns.get(name)
            if c is None or (_type(c) is _dict and _len(c) == 0):
                continue
            if _type(c) is not _dict:
                return "base64.%s is not base64's" % name
            for k, v in _list(c.items()):
                snap = _seen.get((name, k))
                if snap is not None and snap[0] is v and _len(snap[1]) == _len(v) and _all(
                        _map(_is, snap[1], (v if _type(v) is _list else v.values()))):
                    continue
                if _type(k) is not _bytes or not _eq(v, _fresh(name, k)):
                    return "base64.%s[%r] is not what base64 builds" % (name, k)
                _seen[(name, k)] = (v, _tuple(v if _type(v) is _list else v.values()))
        for name in ("_a85chars", "_a85chars2", "_b85chars", "_b85chars2", "_b85dec"):
            v = ns.get(name)
            if v is None:
                continue
            snap = _seen.get(name)
            if snap is not None and snap[0] is v and _len(snap[1]) == _len(v) and _all(
                    _map(_is, snap[1], v)):
                continue
            if not _eq(v, _fresh(name, None)):
                return "base64.%s is not what base64 builds" % name
            _seen[name] = (v, _tuple(v))
        return None

    # Process-wide state held in C that the suite's own computations read,
    # where the suite imports the module that reads it itself (not one
    # reached through another module: `calendar` holds `locale`) and never names
    # what sets it (a suite that sets its own context is trusted with it,
    # and its checks would see its own `localcontext()` blocks): the thread's
    # `decimal` context and the module's template contexts (`prec = 2`
    # set by the app rounds the suite's `Decimal` arithmetic: no namespace
    # changes, no audit event), and the `locale` (the suite's
    # `locale.atof`, `locale.currency`). Each probe is a C-level read,
    # compared as plain values with what it read before any code under
    # test ran; a context the app set is refused, whoever's code set it
    # (an honest app that sets its decimal context or locale at import
    # while the suite computes with the same module is a false positive,
    # kept: the suite's results would depend on it).
    #
    # A suite that names only `localcontext` changes the thread's context
    # inside its own `with` blocks only (review rev36: the probe was off for
    # the whole suite then, and `prec = 2` set at import rounded its other
    # tests' arithmetic): see `decimal_state`. The templates are held
    # unless the suite names them.
    probes = []
    DEC_TEMPLATES = ("DefaultContext", "BasicContext", "ExtendedContext")
    if "decimal" in wanted:
        dec_mod = sys.modules.get("decimal")
        dec_ctx = getattr(dec_mod, "Context", None)
        dec_get = getattr(dec_mod, "getcontext", None)
        dec_reduce = tdict_of(dec_ctx).get("__reduce__") if type(dec_ctx) is type else None
        if dec_reduce is not None and dec_get is not None:
            def dec_fields(c, _red=dec_reduce, _tuple=tuple):
                # (prec, rounding, Emin, Emax, capitals, clamp, flags, traps):
                # the flags are what honest arithmetic raises, left out.
                a = _red(c)[1]
                return a[:6] + (_tuple(a[7]),)

            if not {"getcontext", "setcontext"} & suite_words:
                dec_base = dec_get()

                def decimal_state(level=2, _get=dec_get, _f=dec_fields, _base=dec_base,
                                  _lenient="localcontext" in suite_words):
                    # A suite that names `localcontext` runs its own
                    # context objects inside its `with` blocks, and a
                    # fixture may hold one open across a boundary (review
                    # rev37): there the thread's own context is judged
                    # whenever it is the current one (at every check: an
                    # app's change restored before the phase ends is seen
                    # by the suite's comparisons in between), and must be
                    # the current one's, unchanged, before the first test
                    # and at the end.
                    c = _get()
                    if c is not _base and _lenient and level < 2:
                        return None
                    # Its fields only: another context object with the
                    # same fields computes the same (review rev38: an
                    # app's `setcontext(Context())` at import is honest).
                    return _f(c)

                probes.append(("the decimal context", decimal_state))
            if not set(DEC_TEMPLATES) & suite_words:
                templates = tuple(c for c in (getattr(dec_mod, n, None) for n in DEC_TEMPLATES)
                                  if c is not None)

                def templates_state(level=2, _tpl=templates, _f=dec_fields, _tuple=tuple, _map=map):
                    return _tuple(_map(_f, _tpl))

                probes.append(("the decimal template contexts", templates_state))
    if "locale" in wanted and not {"setlocale", "resetlocale"} & suite_words:
        loc_set = getattr(sys.modules.get("_locale"), "setlocale", None)
        loc_all = getattr(sys.modules.get("locale"), "LC_ALL", None)
        # `locale.localeconv()` (and so `atof`, `delocalize`,
        # `format_string`, `currency`) merges this dict over the C
        # conventions: empty but in the standard library's own tests, and
        # changed in place, so its module name still holds it (review
        # rev36). Its size is read, a C-level count.
        loc_ov = sys.modules["locale"].__dict__.get("_override_localeconv")
        if type(loc_ov) is not dict:
            loc_ov = {}
        if loc_set is not None and type(loc_all) is int:
            def locale_state(level=2, _set=loc_set, _all=loc_all, _ov=loc_ov, _len=len):
                return (_set(_all, None), _len(_ov))

            probes.append(("the locale", locale_state))
    # `_csv`'s dialect registry, in C: `csv.DictReader`, `DictWriter` and a
    # dialect named by string read it per call, so re-registering `excel`
    # with another delimiter changes how the suite's own `DictReader` parses
    # (review rev36, which wrote this probe). The dialects registered before
    # any code under test ran must keep their parameters; new names are
    # honest registrations.
    csv_c = sys.modules.get("_csv")
    if "csv" in wanted and csv_c is not None \
            and not {"register_dialect", "unregister_dialect"} & suite_words:
        csv_get = getattr(csv_c, "get_dialect", None)
        csv_list = getattr(csv_c, "list_dialects", None)
        if csv_get is not None and csv_list is not None:
            csv_names = tuple(n for n in csv_list() if type(n) is str)

            def csv_state(level=2, _get=csv_get, _names=csv_names, _tuple=tuple, _map=map):
                return _tuple((d.delimiter, d.quotechar, d.escapechar, d.doublequote,
                               d.skipinitialspace, d.lineterminator, d.quoting, d.strict)
                              for d in _map(_get, _names))

            probes.append(("the csv dialect registry", csv_state))
    probes = tuple((what, fn, fn()) for what, fn in probes)

    def contexts_clean(level=0, _probes=probes, _type=type, _str=str):
        """`level`: 0 inside a phase, 1 at a phase boundary, 2 before the
        first test's setup and at the end; each probe reads at any level
        but `decimal_state`, which may answer None (not judged here)."""
        for what, fn, before in _probes:
            try:
                now = fn(level)
            except BaseException:
                return what + " unreadable"
            if now is None:
                continue
            if now != before:
                return what + " changed during the run"
        return None

    def pinned_clean(_pk=pinned_kds, _name=STRICT_NAME, _st=STRICT, _get=dict.get):
        for kd in _pk:
            if _get(kd, _name) is not _st:
                return "a suite function's strict comparisons were replaced"
        return None

    def kwdefaults_clean(_held=held_kwd, _same=unchanged):
        for kd, keys, vals in _held:
            if not _same(kd, keys, vals):
                return "a library function's keyword defaults were changed"
        return None

    def tables_clean(level=0, _mc=modules_clean, _cc=caches_clean, _b64=b64_clean,
                     _ctx=contexts_clean, _hc=held_clean, _pc=pinned_clean,
                     _kc=kwdefaults_clean):
        return _mc() or _cc() or _b64() or _ctx(level) or _hc() or _pc() or _kc()

    def hot_clean(_h=hot, _sweep=state_clean, _mc=tables_clean):
        return _sweep(_h) or _mc()

    check_ref[0] = hot_clean

    # What a test's outcome is decided by: a suite's own monkeypatch never
    # needs to change these, and one that does is not taken as a new
    # baseline (review rev45: the app's `MonkeyPatch` driven by a C
    # callable from a weak reference's callback passes the frame check,
    # and `Function.runtest` patched that way became the baseline).
    DISPATCH_PREFIXES = ("pytest.", "_pytest.", "pluggy.", "unittest.")
    DISPATCH_NAMES = frozenset(("pytest", "_pytest", "pluggy", "unittest"))

    def rebaseline(suite_patch=False, _lists=(baseline, hot, core), _sweep=sweep_chunks,
                   _entry=entry, _pre=DISPATCH_PREFIXES, _names=DISPATCH_NAMES, _type=type,
                   _str=str):
        """Takes the current state of every namespace that changed as the
        new baseline: only after a checked-clean state and a change made
        by the suite itself (monkeypatch, below), which may not touch
        pytest, pluggy or unittest. The namespace is copied once and
        that copy recorded."""
        for _b in _lists:
            def changed(i, e, _b=_b, _entry=_entry):
                n = e[0]
                if suite_patch and _type(n) is _str and (n in _names or n.startswith(_pre)):
                    return "a monkeypatch changed %s" % n
                _b[i] = _entry(n, e[1], e[5])
                return None
            bad = _sweep(_b, changed)
            if bad is not None:
                return bad
        return None

    # The suite's own patches (pytest's monkeypatch fixture) change watched
    # namespaces on purpose: each is allowed when the state was clean just
    # before, and no code under test is on the stack (code under test can
    # make a MonkeyPatch of its own).
    from _pytest.monkeypatch import MonkeyPatch

    def suite_patch(orig, _gf=getframe, _clean=frames_clean, _die=die,
                    _state_clean=state_clean, _reb=rebaseline):
        # No closure (cells are open to anyone who holds the function):
        # the state is bound as keyword defaults, whose reads the audit
        # hook refuses with code under test on the stack. A caller that
        # passes its own only changes its own call, which the frame check
        # refuses anyway.
        def patched(*a, _secaudit_=(orig, _gf, _clean, _die, _state_clean, _reb), **k):
            orig_, gf, clean, die_, state_clean_, reb = _secaudit_
            bad = clean(gf(1))
            if bad is not None:
                die_("monkeypatch used by code under test: " + bad)
            bad = state_clean_()
            if bad is not None:
                die_("before a monkeypatch of the suite: " + bad)
            # The state just judged (the baseline list holds every watched
            # namespace) becomes every list's baseline, so that what the
            # patch itself changes is all that `reb(True)` meets after it.
            reb()
            try:
                return orig_(*a, **k)
            finally:
                bad = reb(True)
                if bad is not None:
                    die_("after a monkeypatch: " + bad)
        return patched

    for n in ("setattr", "delattr", "undo"):
        setattr(MonkeyPatch, n, suite_patch(MonkeyPatch.__dict__[n]))

    # A unittest TestCase test's outcome never reaches the call phase as an
    # exception: pytest's TestCaseFunction takes unittest's `addFailure`
    # (and the rest) into the item's `_excinfo`, which the report hook
    # turns into the outcome later. The call phase alone would write every
    # such test as passed (and the report disagree: "verdict forged" for
    # an honest failure), and code under test that empties `_excinfo`
    # would pass it in both. So the grader takes unittest's own calls as
    # its evidence: a call passes only when unittest's `TestCase.run`
    # reported success for the item's own instance and method, and
    # nothing else was reported for it. Any other report is a failure,
    # whoever makes it (no gain in forging one).
    import unittest.case as ut_case
    import _pytest.unittest as pytest_unittest

    ut_outcomes = {}  # id(item) -> True (success from TestCase.run) or False

    # unittest's own record of a test's parts is the `_Outcome` object of
    # its `run`, which code under test reaches from the test's frame
    # (`self._outcome`) and rewrites (`expecting_failure = True` turns the
    # assertion's failure into an expected one, then `run` reports
    # success), and its executor swallows `unittest.case._ShouldStop`
    # whoever raises it. So the grader watches the boundaries the suite's
    # code returns or raises through: `_callSetUp`, `_callTestMethod`,
    # `_callTearDown`, `_callCleanup` and a sub-test's body. A success
    # counts only when, during this call, the set-up, the item's own test
    # method and the tear-down each returned from unittest's code, and
    # no exception left any part (a skip, an expected failure, a stop:
    # none is a pass).
    ut_parts = {}  # id(TestCase) -> [method returned, set-up returned, tear-down returned, raised]

    def ut_part(orig, kind, _gf=getframe, _parts=ut_parts, _t=trusted, _dict_of=dict_of,
                _mro=mro_of, _td=tdict_of):
        def part(self, *a, _secaudit_=(orig, kind, _gf, _parts, _t, _dict_of, _mro, _td, id,
                                         type, types.MethodType, str), **k):
            orig_, kind_, gf, parts_, t, dict_of_, mro_, td_, id_, type_, mt, str_ = _secaudit_
            rec = parts_.get(id_(self))
            if rec is None:
                rec = parts_[id_(self)] = [False, False, False, False]
            try:
                out = orig_(self, *a, **k)
            except BaseException:
                rec[3] = True
                raise
            f = gf(1)
            if kind_ is None or f is None or not t(f.f_code.co_filename):
                return out
            if kind_ == 0:
                # The method run is the one its `_testMethodName` names on
                # its class (`testcase_clean` ties that name to the item).
                m = a[0] if a else None
                mn = dict_of_(self).get("_testMethodName")
                if type_(m) is not mt or m.__self__ is not self or type_(mn) is not str_:
                    return out
                for c in mro_(type_(self)):
                    kd = td_(c)
                    if mn in kd:
                        if kd[mn] is not m.__func__:
                            return out
                        break
                else:
                    return out
            rec[kind_] = True
            return out
        return part

    # A sub-test's body: its exception reaches the grader before
    # unittest's own context manager sees it. No closure (cells are open
    # to anyone who holds the function): the context manager is built
    # from the generator and its arguments.
    import contextlib

    def ut_sub_body(self, a, k, _secaudit_=(ut_case.TestCase.__dict__["subTest"], ut_parts, id)):
        orig_, parts_, id_ = _secaudit_
        with orig_(self, *a, **k):
            try:
                yield
            except BaseException:
                rec = parts_.get(id_(self))
                if rec is None:
                    rec = parts_[id_(self)] = [False, False, False, False]
                rec[3] = True
                raise

    def ut_subtest(self, *a, _secaudit_=(ut_sub_body, contextlib._GeneratorContextManager), **k):
        body, gcm = _secaudit_
        return gcm(body, (self, a, k), {})

    import unittest.async_case as ut_async

    for _c in (ut_case.TestCase, ut_async.IsolatedAsyncioTestCase):
        for _n, _k in (("_callTestMethod", 0), ("_callSetUp", 1), ("_callTearDown", 2),
                       ("_callCleanup", None)):
            if _n in _c.__dict__:
                setattr(_c, _n, ut_part(_c.__dict__[_n], _k))
    ut_case.TestCase.subTest = ut_subtest
    del _c, _n, _k

    import _pytest.nodes as pytest_nodes

    def ut_recorder(orig, success, _gf=getframe, _oc=ut_outcomes,
                    _run=ut_case.TestCase.run.__code__, _dict_of=dict_of, _str=str,
                    _name=pytest_nodes.Node.__dict__["name"].__get__, _parts=ut_parts):
        def recorded(self, testcase, *a, _secaudit_=(orig, success, _gf, _oc, _run, _dict_of,
                                                      _str, id, type, _name, _parts), **k):
            orig_, ok, gf, oc, run, dict_of_, str_, id_, type_, name_, parts_ = _secaudit_
            i = id_(self)
            if ok:
                f = gf(1)
                d = dict_of_(self)
                mn = dict_of_(testcase).get("_testMethodName")
                nm = name_(self)
                ok = (f is not None and f.f_code is run and d is not None
                      and d.get("_instance") is testcase and type_(mn) is str_
                      and type_(nm) is str_ and mn == nm and oc.get(i) is not False)
            if ok:
                # The test's parts ran from unittest's own code and no
                # exception left any of them (`ut_part`, below).
                ev = parts_.get(id_(testcase))
                ok = ev is not None and ev[0] and ev[1] and ev[2] and not ev[3]
            oc[i] = ok
            return orig_(self, testcase, *a, **k)
        return recorded

    for _n, _ok in (("addSuccess", True), ("addFailure", False), ("addError", False),
                    ("addSkip", False), ("addExpectedFailure", False),
                    ("addUnexpectedSuccess", False)):
        setattr(pytest_unittest.TestCaseFunction, _n,
                ut_recorder(pytest_unittest.TestCaseFunction.__dict__[_n], _ok))
    del _n, _ok

    # pytest.approx: the one matcher a suite compares with (task 8). Its
    # results count as matchers only when the suite made them; one made
    # by code under test is compared as a value like anything else.
    import functools
    import _pytest.python_api as python_api

    def suite_approx(orig, _gf=getframe, _clean=frames_clean, _m=matchers):
        # No closure (see suite_patch). A caller passing its own
        # `_secaudit_` records into its own list, never the suite's.
        @functools.wraps(orig)
        def approx(*a, _secaudit_=(orig, _gf, _clean, _m), **k):
            orig_, gf, clean, m = _secaudit_
            r = orig_(*a, **k)
            if clean(gf(1)) is None:
                m.append(r)
            return r
        return approx

    pytest.approx = python_api.approx = suite_approx(python_api.approx)
    rebaseline()  # the wrappers above, before any code under test

    def function_of(v, _ft=types.FunctionType, _mt=types.MethodType, _pt=functools.partial,
                    _type=type):
        """The plain function a callable runs (through bound methods and
        `functools.partial`, whose links cannot be rebound), or None."""
        for _ in range(4):
            t = _type(v)
            if t is _ft:
                return v
            if t is _mt:
                v = v.__func__
            elif t is _pt:
                v = v.func
            else:
                return None
        return None

    def code_of(v, _fn=function_of):
        f = _fn(v)
        return None if f is None else f.__code__

    # The count of possible `__code__` writes (`code_writes`) taken before
    # the last clean walk of the frozen implementations' code. The
    # implementations themselves and their `function` slots are frozen by
    # identity (`hooks_frozen`), a bound method's function cannot be
    # rebound, and a function's code changes only through the write the
    # hook counts: with no write since, the walk has nothing new to judge.
    # (Comparing each function's `__code__` instead cost an audited
    # attribute read per implementation per check: 38,000 audit events, a
    # fifth of task 12's grading.) A `functools.partial` can be re-targeted
    # (`__setstate__`): a set holding one is walked at every check.
    HOOK_CALLERS = (HOOK_CALLER_T, SUBSET_CALLER_T)
    HOOK_IMPL = HOOK_IMPL_T
    impls_walked = [-1]

    def has_partial(v, _type=type, _mt=types.MethodType, _pt=functools.partial):
        """A `functools.partial` on the way from `v` to its function (as
        `function_of` follows it): its target can be swapped in place."""
        for _ in range(4):
            t = _type(v)
            if t is _pt:
                return True
            if t is not _mt:
                return False
            v = v.__func__
        return True

    # ---- hook implementations: what pytest registered, frozen ----------
    # Whether a test's body runs is pluggy's dispatch: `pytest_pyfunc_call`
    # (first result wins) calls the test function, and wrappers see each
    # phase's exception. Code under test that reaches the plugin manager
    # (a frame's `config`) could register a plugin whose hook is a library
    # callable (review rev41: `UserList(...).pop` as `pytest_pyfunc_call`,
    # which a check by code file passes), remove or reorder pytest's own
    # implementations, edit one in place (its `function`, `argnames`), or
    # hide one from an item's hook proxy. A check of each callable's code
    # sees none of that. So the whole dispatch state is judged by what it
    # is and frozen:
    # - what the configuration held before any code under test ran
    #   (`hooks0`: pytest's built-in plugins) must be there, unchanged and
    #   in its order;
    # - everything registered since must be pytest's own: a suite or
    #   library module's own top-level function, a method of one instance
    #   of a library class (TerminalReporter, Session...) bound to that
    #   instance, or the grader's plugin;
    # - from the first test on, the plugin manager, its hook relay, every
    #   caller's slots, every implementation list and every
    #   implementation's slots are identical to that first check's, and
    #   an item's hook proxy may leave out only the suite's conftests.
    frozen_hooks = []
    frozen_plugins = []
    ITEM_HOOKS = ("pytest_runtest_setup", "pytest_runtest_call", "pytest_runtest_teardown",
                  "pytest_runtest_makereport", "pytest_runtest_logreport",
                  "pytest_pyfunc_call", "pytest_runtest_protocol")
    flat_of = chain_it.from_iterable

    def plugin_own(n, impl, grader_plugin, classes_seen, _type=type, _mt=types.ModuleType,
                   _ft=FT, _meth=types.MethodType, _t=trusted, _td=tdict_of,
                   _str=str, _mods=sys.modules, _dict_of=dict_of, _suite=suite,
                   _qn=type.__dict__["__qualname__"].__get__, _lk=class_const):
        """None when `impl` (of hook `n`) is one pytest registers itself,
        else why not. `classes_seen`: the classes of instance plugins met
        so far (one instance each)."""
        p, f = impl.plugin, impl.function
        # The attribute pluggy found it under: the hook's name, unless the
        # implementation names its hook (`specname`), then its own name.
        opts = impl.opts
        spec = opts.get("specname") if _type(opts) is dict else None
        attr = n if spec is None else getattr(getattr(f, "__func__", f), "__name__", None)
        if p is grader_plugin:
            if _type(f) is _meth and f.__self__ is p and one_of(f.__func__, sig_ok):
                return None
            return "the grader's plugin with a hook it does not define"
        if _type(p) is _mt:
            md = _dict_of(p)
            if _type(f) is not _ft or f.__globals__ is not md or f.__closure__ is not None:
                return "hook %s of module %s is not one of its own functions" % (n, safe(md.get("__name__")))
            c = f.__code__
            if not _t(c.co_filename) or getattr(c, "co_qualname", c.co_name) != c.co_name \
                    or md.get(attr) is not f:
                return "hook %s of module %s is not a top-level function of it" % (n, safe(md.get("__name__")))
            return None
        cls = _type(p)
        # The class, and its metaclass unless `type` (pytest's nodes have
        # `NodeMeta`), must each be a library class bound under its name in
        # its own module (a library namespace, swept against the baseline).
        for k in ((cls,) if _type(cls) is type else (cls, _type(cls))):
            if not issubclass(_type(k), type) or _type(_type(k)) is not type and k is not cls:
                return "a plugin of a class with a metaclass of a metaclass"
            mn, qn = _td(k).get("__module__"), _qn(k)
            m = _mods.get(mn) if _type(mn) is _str else None
            if m is None or _type(qn) is not _str or not lib_module(mn, m) \
                    or _dict_of(m).get(qn) is not k:
                return "a plugin object of %s, which is no library class" % safe(qn)
        qn = _qn(cls)
        if _type(f) is not _meth or f.__self__ is not p or _type(f.__func__) is not _ft:
            return "hook %s of a %s plugin is not its own method" % (n, qn)
        fn = f.__func__
        c = fn.__code__
        if _type(attr) is not _str or not _t(c.co_filename):
            return "hook %s of a %s plugin is not its own method" % (n, qn)
        if _lk(cls, attr) is not fn:
            return "hook %s of a %s plugin is not its class's" % (n, qn)
        prev = classes_seen.get(cls)
        if prev is not None and prev is not p:
            return "a second %s plugin" % qn
        classes_seen[cls] = p
        return None

    def impl_order_ok(impls, _type=type):
        """pluggy's own order: non-wrappers before wrappers, each from
        trylast to tryfirst (`HookCaller._add_hookimpl`)."""
        last = -1
        for i in impls:
            w = 1 if (i.wrapper or i.hookwrapper) else 0
            r = w * 3 + (0 if i.trylast else 2 if i.tryfirst else 1)
            if r < last:
                return False
            last = r
        return True

    def dicts_rec(ds, _tuple=tuple, _map=map, _len=len, _flat=flat_of,
                  _vals=operator.methodcaller("values")):
        """The sizes of dicts `ds` and, flattened, their keys and values
        (held, compared by identity in `dicts_same`): one C-level pass
        over many dicts instead of a call per dict."""
        return (_tuple(_map(_len, ds)), _tuple(_flat(ds)), _tuple(_flat(_map(_vals, ds))))

    def dicts_same(ds, rec, _tuple=tuple, _map=map, _len=len, _all=all, _is=is_, _flat=flat_of,
                   _vals=operator.methodcaller("values")):
        """Dicts `ds` hold exactly what `dicts_rec` took; the sizes are read
        again after the values (`map` stops at the shorter side)."""
        lens, keys, vals = rec
        return (_tuple(_map(_len, ds)) == lens and _all(_map(_is, _flat(ds), keys))
                and _all(_map(_is, _flat(_map(_vals, ds)), vals))
                and _tuple(_map(_len, ds)) == lens)

    def opt_rec(specs, _tuple=tuple, _map=map, _flat=flat_of,
                _ag=operator.attrgetter("opts", "kwargdefaults")):
        """Every spec's option and keyword-default dicts (the specs' slots,
        held by `spec_rec`) with what they hold (`dicts_rec`)."""
        ds = _tuple(_flat(_map(_ag, specs)))
        return (ds,) + dicts_rec(ds)

    def opts_same(rec):
        return dicts_same(rec[0], rec[1:])

    def impl_view(rec, _ns=types.SimpleNamespace, _slots=HOOK_IMPL_T.__slots__, _dict=dict,
                  _zip=zip):
        """A hook implementation's slots as copied (`impl_rec`): what
        `freeze_hooks` judges, so that what it records is what it judged
        (review rev43's class: a collector finalizer run by an allocation
        inside the judgement can change the live objects)."""
        return _ns(**_dict(_zip(_slots, rec)))

    def freeze_hooks(pm, _h0=hooks0, _type=type, _tuple=tuple, _len=len, _all=all, _map=map,
                     _is=is_, _list=list, _flat=flat_of, _mp=main_plugins, _view=impl_view,
                     _zip=zip):
        relay = pm.hook
        if _type(relay) is not HOOK_RELAY_T:
            return "the plugin manager's hook relay was replaced"
        # Everything judged below is copied first, and the copies are
        # what is judged and recorded; `hooks_frozen` then compares the
        # live state with them (the same call, right after).
        rd = vars(relay)
        names = _tuple(rd)
        callers = _tuple(rd.values())
        if _len(names) != _len(callers):
            return "the hook relay changed while it was read"
        for n, h in _zip(names, callers):
            if _type(h) is not HOOK_CALLER_T:
                return "hook %s has a caller of %s" % (safe(n), safe(_type(h).__name__))
        crecs = _tuple(_map(caller_rec, callers))
        lists = _tuple(_map(operator.itemgetter(2), crecs))  # the callers' `_hookimpls`
        for l in lists:
            if _type(l) is not _list:
                return "a hook caller's implementations are no list"
        snap = _tuple(_map(_tuple, lists))
        all_impls = _tuple(_flat(snap))
        for i in all_impls:
            if _type(i) is not HOOK_IMPL_T:
                return "a hook holds a %s" % safe(_type(i).__name__)
        irecs = _tuple(_map(impl_rec, all_impls))
        rec_of = {}
        for i, r in _zip(all_impls, irecs):
            rec_of[id(i)] = r
        specs = _tuple(r[3] for r in crecs if r[3] is not None)
        cp = pm._conftest_plugins
        if _type(cp) is not set:
            return "the plugin manager's conftest set was replaced"
        cps = _tuple(cp)
        # Every hook call goes through it: hook-call monitoring
        # (`add_hookcall_monitoring`) wraps it in a closure of pluggy's
        # whose `after` sees, and may force, every result (review rev45).
        inner = pm._inner_hookexec
        if inner is not inner0[0]:
            return "the plugin manager's hook executor was replaced"
        by_name = dict(_zip(names, callers))
        s0_ids = set()
        for n, (h, crec, impls, recs) in _h0.items():
            if by_name.get(n) is not h:
                return "pytest's caller of hook %s was replaced" % n
            now = crecs[names.index(n)]
            if not (now[0] is crec[0] and now[1] is crec[1] and now[2] is crec[2]
                    and now[3] is crec[3]):
                return "pytest's caller of hook %s was edited" % n
            cur = snap[names.index(n)]
            keep = set(_map(id, impls))
            sub = [i for i in cur if id(i) in keep]
            if _len(sub) != _len(impls) or not _all(_map(_is, sub, impls)):
                return "pytest's own implementations of hook %s were removed or reordered" % n
            for i, r in _zip(impls, recs):
                if not _all(_map(_is, rec_of[id(i)], r)):
                    return "pytest's implementation of hook %s by %s was edited" % (n, safe(i.plugin_name))
            s0_ids |= keep
        gp = _mp[0] if _mp else None
        seen_classes = {}
        for n, impls in _zip(names, snap):
            views = [_view(rec_of[id(i)]) for i in impls]
            if not impl_order_ok(views):
                return "hook %s's implementations are out of pluggy's order" % n
            for i, v in _zip(impls, views):
                if id(i) in s0_ids:
                    continue
                bad = plugin_own(n, v, gp, seen_classes)
                if bad is not None:
                    return "plugin registered during the run: " + bad
        for p in cps:
            if _type(p) is not types.ModuleType or p.__dict__.get("__file__") not in suite:
                return "a plugin that is no suite conftest listed as one"
        for sp in specs:
            if _type(sp) is not HOOK_SPEC_T:
                return "a hook specification of %s" % safe(_type(sp).__name__)
        # The plugin objects behind the implementations (no module: its
        # namespace is swept as the library's or the suite's): their own
        # state is what their trusted methods consult (`plugins_clean`).
        objs = []
        for r in irecs:
            p = r[_PLUGIN_SLOT]
            if _type(p) is not types.ModuleType and not one_of(p, objs):
                objs.append(p)
        frozen_plugins[:] = objs
        frozen_hooks[:] = [
            pm, relay, rd, names, callers, _tuple(_flat(crecs)), lists,
            _tuple(_map(_len, snap)), all_impls, _tuple(_flat(irecs)),
            specs, _tuple(_flat(_map(spec_rec, specs))),
            opt_rec(specs),
            inner, cp, cps, by_name,
        ]
        return None

    def hooks_frozen(item, _f=frozen_hooks, _type=type, _tuple=tuple, _len=len, _all=all,
                     _map=map, _is=is_, _flat=flat_of, _same=unchanged, _rep=_repeat,
                     _any=any, _names=ITEM_HOOKS, _cr=caller_rec, _ir=impl_rec, _sr=spec_rec):
        """None when pluggy's dispatch state is what pytest made (see
        above), else why not."""
        cfg = item.config
        pm = cfg.pluginmanager
        if not _f:
            if pm is not preconf_pm[0]:
                return "the item's plugin manager is not pytest's"
            bad = freeze_hooks(pm)
            if bad is not None:
                return bad
        (pm0, relay, rd, names, callers, crecs, lists, lens, impls, irecs, specs, srecs,
         opts, inner, cp, cps, by_name) = _f
        if pm is not pm0 or pm.hook is not relay or vars(relay) is not rd \
                or pm._inner_hookexec is not inner or pm._conftest_plugins is not cp:
            return "the plugin manager was edited"
        if not (_len(rd) == _len(names) and _all(_map(_is, rd, names))
                and _all(_map(_is, rd.values(), callers))):
            return "a hook caller was added, removed or replaced"
        if not _all(_map(_is, _flat(_map(_cr, callers)), crecs)):
            return "a hook caller was edited"
        if not (_tuple(_map(_len, lists)) == lens and _all(_map(_is, _flat(lists), impls))):
            return "a hook implementation was registered, removed or moved"
        if not _all(_map(_is, _flat(_map(_ir, impls)), irecs)):
            return "a hook implementation was edited"
        if not _all(_map(_is, _flat(_map(_sr, specs)), srecs)):
            return "a hook specification was edited"
        if not opts_same(opts):
            return "a hook specification's options were edited"
        if not (_len(cp) == _len(cps) and _all(_map(_is, cp, cps))):
            return "the set of conftests was edited"
        ih = item.ihook
        for n in _names:
            h = getattr(ih, n)
            h0 = by_name.get(n)
            if h is h0:
                continue
            if _type(h) is not SUBSET_CALLER_T or h._orig is not h0 \
                    or h._hookexec is not h0._hookexec:
                return "the item's hook %s is not pytest's" % n
            rp = h._remove_plugins
            if _type(rp) is not set and _type(rp) is not frozenset:
                return "the item's hook %s leaves out a %s" % (n, safe(_type(rp).__name__))
            for p in rp:
                if not _any(_map(_is, _rep(p), cps)):
                    return "the item's hook %s leaves out a plugin that is no conftest" % n
        return None

    # ---- the function a test item runs --------------------------------
    # pytest calls `item.obj`, which code under test can swap (the item's
    # `_obj`, a TestCase instance's method) for another test of the suite
    # that passes, a library callable, or a C one (`int`, which has no
    # code to judge). The function run under an item's key must be the one
    # the suite binds under the item's own name (its node id: file,
    # classes, function), in the suite's namespaces, which are swept
    # strictly. A library decorator's wrapper (`unittest.skip`,
    # `mock.patch`) is the suite's binding too; it must wrap, through
    # `__wrapped__`, the suite's own function of that name.
    import _pytest.python as pytest_python

    PY_FUNCTION = pytest_python.Function
    UT_FUNCTION = pytest_unittest.TestCaseFunction

    def same_cells(a, b, _len=len, _all=all, _map=map, _is=is_):
        return _len(a) == _len(b) and _all(_map(_is, a, b))

    def test_object_clean(item, _type=type, _str=str, _sbr=suite_by_rel, _mt=types.MethodType,
                          _ft=FT, _t=trusted, _suite=suite, _dict_of=dict_of, _lk=class_const,
                          _code=code_of, _range=range, _cells=suite_cells, _cof=cells_of,
                          _same_cells=same_cells, _any=any, _map=map, _is=is_, _rep=repeat):
        t = _type(item)
        obj = getattr(item, "obj", None)
        nid = item.nodeid
        if t is not PY_FUNCTION and t is not UT_FUNCTION:
            # A conftest's own item type: its code is the suite's.
            c = _code(obj)
            if c is not None and c.co_filename not in _suite:
                return "test function %s comes from %s" % (safe(nid), c.co_filename)
            return None
        if _type(nid) is not _str:
            return "an item's node id is no str"
        # The parameters' id (`[...]`, after the function's name) may hold
        # `::` (`test_host[::1]`): names are split before it.
        f0, sep, rest = nid.partition("::")
        parts = [f0] + (rest.split("[", 1)[0].split("::") if sep else [])
        ns = _sbr.get(parts[0])
        if ns is None:
            return "test %s is in no module of the suite" % nid
        cls = None
        for cn in parts[1:-1]:
            v = ns.get(cn) if cls is None else _lk(cls, cn)
            if not issubclass(_type(v), type):
                return "test %s: %s is no class of the suite" % (nid, cn)
            cls = v
        base = parts[-1].split("[", 1)[0]
        raw = ns.get(base) if cls is None else _lk(cls, base)
        o = obj
        if _type(o) is _mt:
            if cls is None or _type(o.__self__) is not cls:
                return "test %s runs a method of another object" % nid
            o = o.__func__
        if o is not raw or _type(o) is not _ft:
            return "test %s runs something else than the suite's %s" % (nid, base)
        if t is UT_FUNCTION:
            bad = testcase_clean(item, cls, nid)
            if bad is not None:
                return bad
        w = o
        for depth in _range(8):
            rec = _cells.get(id(w))
            if rec is None or rec[0] is not w or not _same_cells(rec[1], _cof(w)):
                return "test %s: the closure of the suite's %s was rewritten" % (nid, base)
            c = w.__code__
            if c.co_filename in _suite:
                if c.co_name == base:
                    return None
                # A decorator of the suite's own (`functools.wraps`): its
                # wrapper must call, from its closure, the function its
                # `__wrapped__` names, and that one be the test's.
                nxt = _dict_of(w).get("__wrapped__")
                if _type(nxt) is _ft and _any(_map(_is, _rep(nxt), rec[1])):
                    w = nxt
                    continue
                return "test %s runs the suite's %s" % (nid, c.co_name)
            if not _t(c.co_filename):
                return "test function %s comes from %s" % (nid, c.co_filename)
            w = _dict_of(w).get("__wrapped__")
            if _type(w) is not _ft:
                break
        return "test function %s comes from %s" % (nid, o.__code__.co_filename)

    def testcase_clean(item, cls, nid, _type=type, _str=str, _dict_of=dict_of, _lk=class_const,
                       _meth=METHODS, _one=one_of, _ft=FT):
        """A unittest item's TestCase instance: unittest runs the method
        its `_testMethodName` names, looked up on the instance, so neither
        may be swapped (a C callable as an instance's `run` or test method
        has no code to judge)."""
        inst = item.instance
        if _type(inst) is not cls:
            return "test %s runs on an instance of another class" % nid
        d = _dict_of(inst)
        mn = d.get("_testMethodName")
        if _type(mn) is not _str or mn != item.name:
            return "test %s: its TestCase runs another method" % nid
        for k in d:
            if _type(k) is not _str:
                return "test %s: a non-str name on its TestCase" % nid
            v = _lk(cls, k)
            if _type(v) is _ft or _one(_type(v), _meth):
                if k == item.name and d[k] is item.obj:
                    continue
                return "test %s: its TestCase's %s shadows the class's method" % (nid, k)
        return None

    # The last clean check of each object `plugins_clean` judges, by its
    # place in that check's list (item, session, config, plugin manager,
    # then the frozen plugins; no hashing, which could run code of the
    # run): the object, its class, its dict with that dict's keys and
    # values, the count of code writes taken before the check read any
    # code, and its class's MRO with the MRO dicts' sizes, keys and values.
    # The verdict depends on nothing else (what each value's code is, and
    # what the class's MRO binds under each key), so an object found
    # identical in all of them is skipped. What is remembered is exactly
    # what was judged: the keys, values and MRO dicts are copied first and
    # the copies judged (review rev43: judging the live dict and copying
    # it after let a collector finalizer, run by an allocation in between,
    # add an entry that was remembered unjudged). A value with a
    # `functools.partial` on its way is never remembered (re-targetable).
    plugin_memo = []

    def mro_rec(cls, _mro=mro_of, _td=tdict_of, _tuple=tuple, _map=map):
        mro = _mro(cls)
        return (mro,) + dicts_rec(_tuple(_map(_td, mro)))

    def plugin_known(m, obj, d, writes, _type=type, _same=unchanged, _mro=mro_of, _td=tdict_of,
                     _tuple=tuple, _map=map, _len=len):
        if not (m[0] is obj and _type(obj) is m[1] and m[2] is d and m[5] == writes
                and _same(d, m[3], m[4]) and _len(d) == _len(m[3])):
            return False
        mro = _mro(m[1])
        return mro is m[6] and dicts_same(_tuple(_map(_td, mro)), m[7:10])

    def shadow_in(keys, mrec, _type=type, _str=str, _one=one_of, _meth=METHODS, _zip=zip,
                  _no=NO_CONST):
        """The first of `keys` (an object's own names) that its class's MRO,
        as `mrec` copied it, binds to a method (first definition in MRO
        order wins), else None. pytest's objects call their own methods
        (`with self.item_capture(...)`, `yield from
        self._runtest_for(...)`, `item.runtest()`): an instance's entry of
        that name runs instead, whatever it is (a library context manager
        that swallows the test's exception, a C callable that skips its
        body)."""
        first = {}
        for k, v in _zip(mrec[2], mrec[3]):
            if _type(k) is _str and k not in first:
                first[k] = v
        for k in keys:
            if _type(k) is not _str:
                return "a non-str name"
            if _one(_type(first.get(k, _no)), _meth):
                return k
        return None

    def plugins_clean(item, _fp=frozen_plugins, _t=trusted, _code=code_of, _sh=shadow_in,
                      _dict_of=dict_of, _type=type, _tuple=tuple, _memo=plugin_memo,
                      _known=plugin_known, _cw=code_writes, _hp=has_partial, _mr=mro_rec,
                      _len=len, _enum=enumerate):
        """The objects whose trusted methods decide a test's phases: the
        item, its session, config and plugin manager, and every instance
        plugin with a hook implementation (frozen at the first test). None
        holds code under test in its own dict, nor shadows its class."""
        writes = _cw[0]
        objs = (item, item.session, item.config, item.config.pluginmanager, *_fp)
        if _len(_memo) != _len(objs):
            _memo[:] = [None] * _len(objs)
        for i, obj in _enum(objs):
            d = _dict_of(obj)
            if _type(d) is not dict:
                continue
            m = _memo[i]
            if m is not None and _known(m, obj, d, writes):
                continue
            _memo[i] = None
            cls = _type(obj)
            # The copies, then the judgement of the copies only.
            mrec = _mr(cls)
            keys = _tuple(d)
            vals = _tuple(d.values())
            partial = _len(keys) != _len(vals)
            for j, v in _enum(vals):
                c = _code(v)
                if c is not None and not _t(c.co_filename):
                    k = keys[j] if j < _len(keys) else "?"
                    return "%s.%s is code under test (%s)" % (safe(cls.__name__), safe(k),
                                                             c.co_filename)
                partial = partial or _hp(v)
            k = _sh(keys, mrec)
            if k is not None:
                return "%s.%s shadows its class's method" % (safe(cls.__name__), safe(k))
            if not partial:
                _memo[i] = (obj, cls, d, keys, vals, writes) + mrec
        return None

    def impls_clean(item, _t=trusted, _code=code_of, _f=frozen_hooks, _walked=impls_walked,
                    _cw=code_writes, _pc=plugins_clean, _hp=has_partial, _map=map,
                    _fo=operator.attrgetter("function")):
        # Taken before the walk reads any code: a write during it makes
        # the next check walk again.
        writes = _cw[0]
        bad = hooks_frozen(item)
        if bad is not None:
            return bad
        if _walked[0] != writes:
            # Every implementation of every caller (an item's hook proxy
            # runs a subset of them), as frozen.
            partial = False
            for f in _map(_fo, _f[8]):
                c = _code(f)
                if c is None or not _t(c.co_filename):
                    return "hook implementation from " + (c.co_filename if c else repr(f))
                partial = partial or _hp(f)
            _walked[0] = -1 if partial else writes
        bad = _pc(item)
        if bad is not None:
            return bad
        return test_object_clean(item)

    def checkpoint(item, where, _gf=getframe, _clean=frames_clean, _die=die,
                   _state_clean=state_clean, _core=core, _impls=impls_clean,
                   _mc=tables_clean, _cont=containers_clean, _first=[False]):
        bad = _clean(_gf(1))
        if bad is not None:
            _die("%s: code under test on the stack (%s)" % (where, bad))
        # pytest, pluggy and builtins at every boundary; the whole library
        # and suite once per test, before its setup (so what collection,
        # imports or the last test left is seen before fixtures read it;
        # the run's end sweeps once more); the suite's own checks sweep
        # the modules it computes with as they run.
        level = 1
        if where == "setup start" and not _first[0]:
            _first[0] = True
            level = 2
        bad = (_state_clean() or _cont() if where == "setup start" else _state_clean(_core)) \
            or _mc(level)
        if bad is not None:
            _die("%s: %s" % (where, bad))
        bad = _impls(item)
        if bad is not None:
            _die("%s: %s" % (where, bad))

    getframe_sites.append(checkpoint.__code__)

    def key_of(item, _mangle=mangle_test_address):
        names = _mangle(item.nodeid)
        return (".".join(names[:-1]) + "::" + names[-1]).encode("utf-8").hex()

    import _pytest.assertion.util as assert_util

    import pluggy._callers as pluggy_callers

    # The code that may drive `phase`: the plugin's three wrappers (filled
    # below), each run by pluggy's `_multicall` for the item it was called
    # with. `phase` is reachable from a frame (`_p` of a suspended
    # wrapper), and a generator of it driven by C callables from a clean
    # stack wrote any verdict for a forged item (review rev41).
    phase_callers = []

    def phase_driven(item, _gf=getframe, _pc=phase_callers, _any=any, _map=map, _is=is_,
                     _rep=repeat, _mc=pluggy_callers._multicall.__code__, _die=die):
        f = _gf(1)  # this phase generator's frame
        w = f.f_back if f is not None else None
        m = w.f_back if w is not None else None
        if (m is None or not _any(_map(_is, _rep(w.f_code), _pc)) or m.f_code is not _mc
                or m.f_locals.get("caller_kwargs", {}).get("item") is not item):
            _die("a test phase run outside pytest's hook call for its item")

    def phase(item, when, _cp=checkpoint, _wv=write_verdict, _key=key_of,
              _skip=Skipped, _mro=mro_of, _type=type, _au=assert_util, _pd=phase_driven,
              _uo=ut_outcomes, _ut=UT_FUNCTION, _id=id, _up=ut_parts):
        _pd(item)
        # Set per test by the assertion plugin and read only by rewritten
        # asserts (off here): a module-global path to the config otherwise.
        _au._config = None
        unit = when == "call" and _type(item) is _ut
        if unit:
            _uo.pop(_id(item), None)
            _up.clear()
        _cp(item, when + " start")
        try:
            res = yield
        except BaseException as e:
            _pd(item)
            _cp(item, when + " end")
            _wv("P %s %s %s" % (when, "skipped" if _skip in _mro(_type(e)) else "failed", _key(item)))
            raise
        _pd(item)
        _cp(item, when + " end")
        # A unittest test passes on unittest's own word only (above).
        ok = not unit or _uo.pop(_id(item), None) is True
        _wv("P %s %s %s" % (when, "passed" if ok else "failed", _key(item)))
        return res

    getframe_sites.append(phase_driven.__code__)

    verdict_writers.append(phase.__code__)

    class GraderVerdicts:
        def pytest_addoption(self, parser):
            # `-p no:debugging` (run.rs) also drops the two options pytest's
            # unittest support reads for every TestCase test (`trace` in
            # `maybe_wrap_pytest_function_for_tracing`, `usepdb` in
            # `runtest`): without them every unittest test errors with "no
            # option named 'trace'". Both stay off; only their values are
            # given back, under names no command line uses.
            group = parser.getgroup("grader")
            group.addoption("--secaudit-grader-trace", dest="trace", action="store_true",
                            default=False, help="(grader) always off")
            group.addoption("--secaudit-grader-pdb", dest="usepdb", action="store_true",
                            default=False, help="(grader) always off")

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

    phase_callers.extend(f.__code__ for f in (GraderVerdicts.pytest_runtest_setup,
                                              GraderVerdicts.pytest_runtest_call,
                                              GraderVerdicts.pytest_runtest_teardown))

    for v in GraderVerdicts.__dict__.values():
        sig_ok.append(getattr(v, "__func__", v))
    # Nothing of the memo outlives the start-up (see `lib_memo`).
    watch_memo.clear()
    lib_memo.clear()
    state[1] = True
    args = sys.argv[1:]
    main_plugins.append(GraderVerdicts())
    get_config0 = pconf.get_config
    if preconf[0] is not None:
        def get_config_once(args, plugins, _c=preconf, _orig=get_config0, _m=pconf,
                            _tuple=tuple, _mp=main_plugins):
            """The configuration made before the start signal, once, for
            the same arguments and plugins; pytest's own otherwise."""
            _m.get_config = _orig
            c, _c[0] = _c[0], None
            if plugins is _mp and c.invocation_params.args == _tuple(args):
                return c
            return _orig(args, plugins)

        pconf.get_config = get_config_once
    # pytest runs from `run`, not from this function: every frame of the
    # run's stack is reachable from any frame (`f_back` and `f_locals`
    # raise no audit event), and this one's locals are every piece of the
    # bootstrap's state (review rev40: from a trusted frame handed out by
    # heapq, app code walked up here and set the hook's busy flag, added
    # its own file to `suite`, took `write_verdict`). `run` holds only
    # what the end needs.
    run_code = []

    def end(rc, _fc=frames_clean, _gf=getframe, _sc=state_clean, _cc=containers_clean,
            _tc=tables_clean, _die=die, _wv=write_verdict, _exit=_exit, _sys=sys,
            _runs=run_code):
        # Only `run` ends the run (review rev41: `end`, from `run`'s frame,
        # called by a weakref callback sealed a forged chain).
        up = _gf(1)
        if up is None or up.f_code is not _runs[0]:
            _die("the run ended by a caller that is not the grader's")
        for stream in (_sys.stdout, _sys.stderr):
            try:
                stream.flush()
            except BaseException:
                pass
        bad = _fc(_gf(0)) or _sc() or _cc() or _tc(2)
        if bad is not None:
            _die("after the run: " + bad)
        _wv("END %d" % rc)
        # No atexit handler, no finalizer of code under test runs after the seal.
        _exit(rc)

    def run(_args=tuple(args), _plugins=main_plugins, _main=pytest.main, _pconf=pconf,
            _gc0=get_config0, _sys=sys, _type=type, _int=int, _list=list, _end=end):
        try:
            rc = _main(_list(_args), plugins=_plugins)
        except SystemExit as e:
            rc = e.code if _type(e.code) is _int else 2
        except BaseException as e:
            _sys.stderr.write("grader bootstrap: pytest.main raised %s\n" % _type(e).__name__)
            rc = 3
        _pconf.get_config = _gc0
        _end(_int(rc))

    run_code.append(run.__code__)
    getframe_sites.append(end.__code__)
    verdict_writers.append(end.__code__)
    return run

_grader_main()()
