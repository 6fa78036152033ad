#!/usr/bin/env python3
"""Imports public labelled secret-scanner cases into JSONL files.

Why: the project's own corpus (graders/corpus/make_corpus.py) was written
by the same people who tuned the scanner, so its precision says little
about code the scanner has never seen (issue 18). These cases were written
by other projects, for their own scanners, and are labelled by them.

Sources (checked out as bare git mirrors; pass their git dirs):
  gitleaks       MIT         cmd/generate/config/rules/*.go: every rule
                             carries `tps` (must match) and `fps` (must not)
                             lists, validated by gitleaks' own build.
  detect-secrets Apache-2.0  tests/plugins/*_test.py: parametrized
                             (line, should_flag / expected_secret) cases.

TruffleHog (AGPL-3.0) is not imported: its detector tests are Go source
under a copyleft licence, and committing extracts of it into this
repository would need a licence review we have not done. Its cases are
mostly provider formats our scanner does not claim to cover.

Each output line is one case:
  {"source", "class", "label": "secret"|"none", "text", "ext",
   "generated": bool, "origin": "repo@commit:path"}
`class` is the upstream rule or plugin; `ext` the file extension the case
is scanned under (some scanners decide by file type). A case labelled
"secret" is found when the scanner reports anything in its text; a case
labelled "none" must produce no finding.

Go expressions are evaluated by a small interpreter that knows the few
helpers the rule files use (string concatenation, []string literals,
append, utils.GenerateSampleSecrets and friends, secrets.NewSecret). The
random secrets gitleaks draws from a regex at build time are drawn here
from the same regex with a seed fixed per rule, so re-running the import
writes the same bytes. Statements the interpreter cannot evaluate are
skipped and counted in the summary (nothing is silently dropped).

Filler-shaped test values that upstream labels "secret" are re-labelled
"none" by one stated rule (see `filler_shape`), recorded per case.

Usage: python3 import.py --gitleaks GITDIR --detect-secrets GITDIR
       python3 import.py --relabel-only   (re-apply the label rule offline)
(stdlib only; reads the mirrors with `git`).
"""

import argparse
import ast
import json
import os
import random
import re
import subprocess
import sys
import zlib

try:  # Python >= 3.11
    import re._parser as sre_parse
    import re._constants as sre_c
except ImportError:  # pragma: no cover
    import sre_parse  # type: ignore
    import sre_constants as sre_c  # type: ignore

HERE = os.path.dirname(os.path.abspath(__file__))


def git(gitdir, *args):
    return subprocess.run(["git", "--git-dir", gitdir, *args], check=True,
                          capture_output=True).stdout.decode("utf-8", "replace")


# ---------------------------------------------------------------- regex gen

class Unsupported(Exception):
    pass


_ALPHA_ANY = [chr(c) for c in range(0x21, 0x7f)]
_DIGITS = list("0123456789")
_WORD = list("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")
_SPACE = [" "]


def _set_chars(items):
    chars, negate = [], False
    for op, av in items:
        if op is sre_c.NEGATE:
            negate = True
        elif op is sre_c.LITERAL:
            chars.append(chr(av))
        elif op is sre_c.RANGE:
            chars.extend(chr(c) for c in range(av[0], av[1] + 1))
        elif op is sre_c.CATEGORY:
            chars.extend({sre_c.CATEGORY_DIGIT: _DIGITS, sre_c.CATEGORY_WORD: _WORD,
                          sre_c.CATEGORY_SPACE: _SPACE}.get(av, []))
        else:
            raise Unsupported(f"set item {op}")
    if negate:
        chars = [c for c in _ALPHA_ANY if c not in chars]
    if not chars:
        raise Unsupported("empty set")
    return chars


def _gen(parsed, rng, out):
    for op, av in parsed:
        if op is sre_c.LITERAL:
            out.append(chr(av))
        elif op is sre_c.NOT_LITERAL:
            out.append(rng.choice([c for c in _WORD if c != chr(av)]))
        elif op is sre_c.ANY:
            out.append(rng.choice(_WORD))
        elif op is sre_c.IN:
            out.append(rng.choice(_set_chars(av)))
        elif op in (sre_c.MAX_REPEAT, sre_c.MIN_REPEAT, getattr(sre_c, "POSSESSIVE_REPEAT", None)):
            lo, hi, sub = av
            if hi is sre_c.MAXREPEAT:
                hi = lo + 10
            for _ in range(rng.randint(lo, hi)):
                _gen(sub, rng, out)
        elif op is sre_c.SUBPATTERN:
            _gen(av[-1], rng, out)
        elif op is sre_c.BRANCH:
            _gen(rng.choice(av[1]), rng, out)
        elif op is sre_c.CATEGORY:
            out.append(rng.choice({sre_c.CATEGORY_DIGIT: _DIGITS, sre_c.CATEGORY_WORD: _WORD,
                                   sre_c.CATEGORY_SPACE: _SPACE}.get(av, _WORD)))
        elif op in (sre_c.AT, sre_c.ASSERT, sre_c.ASSERT_NOT):
            continue
        else:
            raise Unsupported(f"regex op {op}")


def new_secret(pattern, rng):
    """A string matching `pattern` (Go RE2 syntax, the subset gitleaks uses),
    like gitleaks' secrets.NewSecret (github.com/lucasjones/reggen)."""
    py = pattern.replace(r"\z", r"\Z").replace("[[:alnum:]]", "[a-zA-Z0-9]")
    try:
        parsed = sre_parse.parse(py)
    except Exception as e:  # noqa: BLE001 - any parse error means "cannot generate"
        raise Unsupported(f"regex parse: {e}")
    out = []
    _gen(parsed, rng, out)
    return "".join(out)


# ------------------------------------------------------------- Go tokenizer

_GO_ESC = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", '"': '"', "'": "'", "a": "\a",
           "b": "\b", "f": "\f", "v": "\v"}


def _go_unquote(body):
    out, i = [], 0
    while i < len(body):
        c = body[i]
        if c != "\\":
            out.append(c)
            i += 1
            continue
        n = body[i + 1]
        if n in _GO_ESC:
            out.append(_GO_ESC[n])
            i += 2
        elif n == "x":
            out.append(chr(int(body[i + 2:i + 4], 16)))
            i += 4
        elif n == "u":
            out.append(chr(int(body[i + 2:i + 6], 16)))
            i += 6
        elif n == "U":
            out.append(chr(int(body[i + 2:i + 10], 16)))
            i += 10
        elif n in "01234567":
            out.append(chr(int(body[i + 1:i + 4], 8)))
            i += 4
        else:
            raise Unsupported(f"escape \\{n}")
    return "".join(out)


_TOK = re.compile(r"""
    (?P<ws>\s+)
  | (?P<lc>//[^\n]*)
  | (?P<bc>/\*.*?\*/)
  | (?P<raw>`[^`]*`)
  | (?P<str>"(?:\\.|[^"\\\n])*")
  | (?P<rune>'(?:\\.|[^'\\\n])+')
  | (?P<ident>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<num>[0-9]+)
  | (?P<op>:=|\.\.\.|[-+*/%&|^<>=!]=?|[{}()\[\],;:.])
""", re.S | re.X)


def go_tokens(src):
    toks, i = [], 0
    while i < len(src):
        m = _TOK.match(src, i)
        if not m:
            raise Unsupported(f"token at {src[i:i + 20]!r}")
        i = m.end()
        kind = m.lastgroup
        if kind in ("ws", "lc", "bc"):
            continue
        text = m.group()
        if kind == "raw":
            toks.append(("str", text[1:-1]))
        elif kind == "str":
            toks.append(("str", _go_unquote(text[1:-1])))
        else:
            toks.append((kind, text))
    return toks


# ---------------------------------------------------------- Go interpreter

_SAMPLE_TEMPLATES = None  # filled from utils/generate.go


def load_sample_templates(src):
    """The `samples` map of utils.GenerateSampleSecrets, in source order."""
    body = src[src.index("func GenerateSampleSecrets"):]
    body = body[body.index("samples := map[string]string{"):body.index("replacer :=")]
    out = []
    toks = go_tokens(body)
    for j in range(len(toks) - 2):
        if toks[j][0] == "str" and toks[j + 1] == ("op", ":") and toks[j + 2][0] == "str":
            out.append(toks[j + 2][1])
    if not out:
        raise SystemExit("no sample templates found in utils/generate.go")
    return out


def sample_secrets(ident, secret):
    return [t.replace("{i}", ident).replace("{I}", ident.upper()).replace("{s}", secret)
            for t in _SAMPLE_TEMPLATES]


_PATTERNS = {
    "Numeric": "[0-9]{%s}", "Hex": "[a-f0-9]{%s}", "AlphaNumeric": "[a-z0-9]{%s}",
    "AlphaNumericExtendedShort": "[a-z0-9_-]{%s}", "AlphaNumericExtended": r"[a-z0-9=_\-]{%s}",
    "AlphaNumericExtendedLong": r"[a-z0-9\/=_\+\-]{%s}",
}


class Interp:
    def __init__(self, toks, rng, env):
        self.t, self.i, self.rng, self.env = toks, 0, rng, env

    def peek(self, k=0):
        j = self.i + k
        return self.t[j] if j < len(self.t) else ("eof", "")

    def take(self, want=None):
        tok = self.peek()
        if want is not None and tok[1] != want:
            raise Unsupported(f"expected {want!r}, got {tok[1]!r}")
        self.i += 1
        return tok

    def expr(self):
        v = self.unary()
        while self.peek() == ("op", "+"):
            self.take()
            r = self.unary()
            if not (isinstance(v, str) and isinstance(r, str)):
                raise Unsupported("+ on non-strings")
            v = v + r
        return v

    def unary(self):
        kind, text = self.peek()
        if kind == "str":
            self.take()
            return text
        if kind == "num":
            self.take()
            return int(text)
        if text == "[":
            self.take("[")
            self.take("]")
            self.take("string")
            return self.list_lit()
        if kind == "ident":
            name = self.take()[1]
            while self.peek() == ("op", ".") and self.peek(1)[0] == "ident":
                self.take()
                name += "." + self.take()[1]
            if self.peek() == ("op", "("):
                return self.call(name)
            if name == "nil":
                return []
            if name in self.env:
                return self.env[name]
            raise Unsupported(f"unknown name {name}")
        raise Unsupported(f"unexpected {text!r}")

    def list_lit(self):
        self.take("{")
        items = []
        while self.peek() != ("op", "}"):
            v = self.expr()
            if not isinstance(v, str):
                raise Unsupported("non-string list item")
            items.append(v)
            if self.peek() == ("op", ","):
                self.take()
        self.take("}")
        return items

    def call(self, name):
        self.take("(")
        args = []
        while self.peek() != ("op", ")"):
            a = self.expr()
            if self.peek() == ("op", "..."):
                self.take()
            args.append(a)
            if self.peek() == ("op", ","):
                self.take()
        self.take(")")
        short = name.split(".")[-1]
        if name == "append":
            out = list(args[0])
            for a in args[1:]:
                out.extend(a if isinstance(a, list) else [a])
            return out
        if short == "GenerateSampleSecrets":
            return sample_secrets(*args)
        if short == "GenerateSampleSecret":
            return f'{args[0]}_api_token = "{args[1]}"'
        if short == "NewSecret":
            return new_secret(args[0], self.rng)
        if short == "newPlausibleSecret":
            # generic.go: redraw until the value has a digit 1-9 (its
            # stop-word redraw is not reproduced; the regexes are random
            # alphanumerics, where stop words are rare).
            while True:
                v = new_secret(args[0], self.rng)
                if re.search("[1-9]", v):
                    return v
        if short in _PATTERNS:
            return _PATTERNS[short] % args[0]
        if short == "Hex8_4_4_4_12":
            return "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
        if name == "strings.Repeat":
            return args[0] * args[1]
        if name == "strings.ToUpper":
            return args[0].upper()
        if name == "strings.ToLower":
            return args[0].lower()
        if name == "fmt.Sprintf":
            fmt, rest = args[0], list(args[1:])
            return re.sub(r"%[sdv]", lambda _m: str(rest.pop(0)), fmt)
        raise Unsupported(f"call {name}")


def go_functions(toks):
    """(name, body tokens) of each top-level `func`."""
    i = 0
    while i < len(toks):
        if toks[i] == ("ident", "func") and toks[i + 1][0] == "ident":
            name = toks[i + 1][1]
            j = i + 2
            while toks[j] != ("op", "{"):
                j += 1
            depth, k = 0, j
            while True:
                if toks[k] == ("op", "{"):
                    depth += 1
                elif toks[k] == ("op", "}"):
                    depth -= 1
                    if depth == 0:
                        break
                k += 1
            yield name, toks[j + 1:k]
            i = k + 1
        else:
            i += 1


def file_vars(toks, rng):
    """Package-level `var name = expr` declarations (shared case lists)."""
    env, depth = {}, 0
    for j, (kind, text) in enumerate(toks):
        if kind == "op" and text in "{(":
            depth += 1
        elif kind == "op" and text in "})":
            depth -= 1
        elif depth == 0 and (kind, text) == ("ident", "var") and toks[j + 2] == ("op", "="):
            it = Interp(toks, rng, env)
            it.i = j + 3
            try:
                env[toks[j + 1][1]] = it.expr()
            except Unsupported:
                pass
    return env


def run_rule(body, rng, stats, globals_=None):
    """Interprets one rule function: returns (rule id, tps, fps) or None."""
    rule_id = None
    for j in range(len(body) - 2):
        if body[j] == ("ident", "RuleID") and body[j + 1] == ("op", ":") and body[j + 2][0] == "str":
            rule_id = body[j + 2][1]
            break
    if rule_id is None:
        return None
    env = dict(globals_ or {})
    depth = 0
    j = 0
    validate = None
    while j < len(body):
        kind, text = body[j]
        if text in "{([":
            depth += 1 if kind == "op" else 0
        elif text in "})]":
            depth -= 1 if kind == "op" else 0
        if depth == 0 and kind == "ident" and j + 1 < len(body) and body[j + 1][1] in (":=", "=") \
                and (j == 0 or body[j - 1][1] in ("}", ")", "]", ";") or body[j - 1][0] in ("str", "num")
                     or (body[j - 1][0] == "ident" and body[j - 1][1] != "range")):
            name = text
            it = Interp(body, rng, env)
            it.i = j + 2
            try:
                env[name] = it.expr()
                j = it.i
                continue
            except Unsupported as e:
                if name != "r":  # the rule itself: not a case list
                    stats["skipped_statements"].append(f"{rule_id}: {name}: {e}")
                env.pop(name, None)
        if kind == "ident" and text in ("Validate", "ValidateWithPaths") and body[j - 1] == ("op", "."):
            validate = (text, j + 1)
        j += 1
    if validate is None:
        return None
    if validate[0] == "ValidateWithPaths":
        stats["skipped_rules"].append(f"{rule_id}: path-keyed cases (ValidateWithPaths)")
        return None
    it = Interp(body, rng, env)
    it.i = validate[1]
    try:
        it.take("(")
        it.expr()  # r
    except Unsupported:
        pass
    out = []
    for _ in range(2):
        if it.peek() == ("op", ","):
            it.take()
        try:
            v = it.expr()
            out.append(v if isinstance(v, list) else None)
        except Unsupported as e:
            stats["skipped_statements"].append(f"{rule_id}: validate argument: {e}")
            out.append(None)
            # advance to the next top-level comma
            d = 0
            while it.peek()[1] not in ("eof",):
                t = it.peek()[1]
                if t in "([{":
                    d += 1
                elif t in ")]}":
                    if d == 0:
                        break
                    d -= 1
                elif t == "," and d == 0:
                    break
                it.take()
    return rule_id, out[0], out[1]


def import_gitleaks(gitdir):
    global _SAMPLE_TEMPLATES
    commit = git(gitdir, "rev-parse", "HEAD").strip()
    _SAMPLE_TEMPLATES = load_sample_templates(
        git(gitdir, "show", f"{commit}:cmd/generate/config/utils/generate.go"))
    files = [f for f in git(gitdir, "ls-tree", "--name-only", commit,
                            "cmd/generate/config/rules/").split()
             if f.endswith(".go") and not f.endswith("_test.go")]
    cases = []
    stats = {"skipped_statements": [], "skipped_rules": [], "rules": 0}
    for path in sorted(files):
        src = git(gitdir, "show", f"{commit}:{path}")
        try:
            toks = go_tokens(src)
        except Unsupported as e:
            stats["skipped_rules"].append(f"{path}: {e}")
            continue
        globals_ = file_vars(toks, random.Random(zlib.crc32(path.encode())))
        for fname, body in go_functions(toks):
            rng = random.Random(zlib.crc32(f"{path}:{fname}".encode()))
            res = run_rule(body, rng, stats, globals_)
            if res is None:
                continue
            rule_id, tps, fps = res
            stats["rules"] += 1
            origin = f"gitleaks/gitleaks@{commit}:{path}"
            for label, items in (("secret", tps), ("none", fps)):
                if items is None:
                    stats["skipped_rules"].append(f"{rule_id}: {label} list not evaluable")
                    continue
                for text in items:
                    cases.append({"source": "gitleaks", "class": rule_id, "label": label,
                                  "text": text, "ext": "txt", "origin": origin})
    return cases, stats


# ------------------------------------------------------- detect-secrets

def _py_eval(node, names):
    """Evaluates the literal subset of Python the fixture lists use."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, (ast.Tuple, ast.List)):
        return [_py_eval(e, names) for e in node.elts]
    if isinstance(node, ast.Name):
        if node.id in names:
            return names[node.id]
        raise Unsupported(f"name {node.id}")
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _py_eval(node.left, names) + _py_eval(node.right, names)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
        return _py_eval(node.left, names) * _py_eval(node.right, names)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        base = _py_eval(node.func.value, names)
        args = [_py_eval(a, names) for a in node.args]
        kw = {k.arg: _py_eval(k.value, names) for k in node.keywords}
        if isinstance(base, str) and node.func.attr == "format":
            return base.format(*args, **kw)
        if isinstance(base, str) and node.func.attr in ("upper", "lower", "strip"):
            return getattr(base, node.func.attr)()
    if isinstance(node, ast.Subscript):
        base = _py_eval(node.value, names)
        return base[_py_eval(node.slice, names)]
    if isinstance(node, ast.JoinedStr):
        parts = []
        for v in node.values:
            if isinstance(v, ast.Constant):
                parts.append(v.value)
            else:
                parts.append(str(_py_eval(v.value, names)))
        return "".join(parts)
    raise Unsupported(type(node).__name__)


# Which file extension each keyword_test list is scanned under (its own
# parametrize pairs them; one representative each).
_KEYWORD_EXT = {"CONFIG_TEST_CASES": "conf", "GOLANG_TEST_CASES": "go",
                "COMMON_C_TEST_CASES": "c", "C_PLUS_PLUS_TEST_CASES": "cpp",
                "QUOTES_REQUIRED_TEST_CASES": "py"}
_FLAG_NAMES = ("should_flag", "expected_secret", "expected", "should_be_caught", "is_secret")


def import_detect_secrets(gitdir):
    commit = git(gitdir, "rev-parse", "HEAD").strip()
    files = [f for f in git(gitdir, "ls-tree", "--name-only", commit, "tests/plugins/").split()
             if f.endswith("_test.py")]
    cases, stats = [], {"skipped_statements": [], "skipped_rules": [], "rules": 0}
    for path in sorted(files):
        plugin = os.path.basename(path)[:-len("_test.py")]
        src = git(gitdir, "show", f"{commit}:{path}")
        tree = ast.parse(src)
        names = {}
        origin = f"Yelp/detect-secrets@{commit}:{path}"
        for node in tree.body:
            if isinstance(node, ast.Assign) and len(node.targets) == 1 \
                    and isinstance(node.targets[0], ast.Name):
                try:
                    names[node.targets[0].id] = _py_eval(node.value, names)
                except Unsupported:
                    pass
        groups = []  # (ext, [(text, flag)])
        for lst, ext in _KEYWORD_EXT.items():
            if plugin == "keyword" and lst in names:
                groups.append((ext, names[lst], lst))
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "parametrize"
                    and len(node.args) >= 2 and isinstance(node.args[0], ast.Constant)):
                continue
            argnames = [a.strip() for a in node.args[0].value.split(",")]
            if len(argnames) != 2 or argnames[0] not in ("payload", "line", "token", "secret") \
                    or argnames[1] not in _FLAG_NAMES:
                continue
            try:
                rows = _py_eval(node.args[1], names)
            except Unsupported as e:
                stats["skipped_statements"].append(f"{path}: {e}")
                continue
            groups.append(("txt", rows, "parametrize"))
        for ext, rows, where in groups:
            stats["rules"] += 1
            for row in rows:
                if not (isinstance(row, list) and len(row) == 2 and isinstance(row[0], str)):
                    stats["skipped_statements"].append(f"{path}:{where}: row shape")
                    continue
                text, flag = row
                if len(text) > 4000:
                    stats["skipped_statements"].append(f"{path}:{where}: {len(text)}-char line")
                    continue
                label = "secret" if (flag is True or (isinstance(flag, str) and flag)) else "none"
                cases.append({"source": "detect-secrets", "class": plugin, "label": label,
                              "text": text, "ext": ext, "origin": origin})
    return cases, stats


# ------------------------------------------------------- label decision

# Filler shapes: a case upstream labels "secret" whose text holds a token of
# one of these shapes is re-labelled "none" (field "relabel" says which
# shape, "upstream_label" keeps upstream's). Why: both upstreams write test
# values as typed filler (`12345678-ABCD-ABCD-ABCD-1234567890AB`,
# `abcd1234abcd1234…`, `AKCxxxxxxxxxx`, `xoxa-2-511111111-31111111111-…`)
# that only has to match their regex; no issuer emits such a value, and a
# precision-first scanner must not flag the same shapes in documentation and
# templates. The rule is applied to every case of every source, never case
# by case, and the test prints the figures under upstream's labels too.
# Not filler by this rule: word-like values (`username:password`) and odd
# punctuation (`m{{h}o)p${e]nob(ody…`): those stay as upstream labels them.
TOKEN = re.compile(r"[A-Za-z0-9_\-+/.%]{8,}")
MIN_WALK = 8          # `12345678`, `abcdefgh` (case folded)
MIN_SAME = 10         # `1111111111`, `QQQQQQQQQQ`
MIN_MASK = 4          # `xxxx`, `XXXX`, `****`
MAX_BLOCK, MIN_REPEAT = 8, 12  # `123123123123`, `abcd1234abcd1234abcd1234`
# Repetition marks filler only when it is most of the token: a real token
# may hold one repeated stretch (a Twitter bearer token starts with 22 `A`s,
# base64 of zero bytes; a JWT may carry a masked claim).
MIN_COVER = 0.4


def filler_shape(text):
    """The filler shape of the first token of `text` that has one, or None."""
    for tok in TOKEN.findall(text):
        low = tok.lower()
        if re.search(r"x{%d}|\*{%d}" % (MIN_MASK, MIN_MASK), low):
            return "mask"
        runs = [m.group(0) for m in re.finditer(r"(.)\1{3,}", tok)]
        if any(len(r) >= MIN_SAME for r in runs) and sum(map(len, runs)) >= MIN_COVER * len(tok):
            return "one character repeated"
        run = 1
        for a, b in zip(low, low[1:]):
            run = run + 1 if a.isalnum() and ord(b) == ord(a) + 1 else 1
            if run >= MIN_WALK:
                return "alphabet or digit walk"
        for p in range(2, MAX_BLOCK + 1):
            need, run, best = max(3 * p, MIN_REPEAT), p, 0
            for i in range(p, len(tok)):
                run = run + 1 if tok[i] == tok[i - p] else p
                best = max(best, run)
            if best >= need and best >= MIN_COVER * len(tok):
                return "repeated block"
    return None


def relabel(cases):
    """Applies the filler rule above to `cases` (in place); returns the count."""
    n = 0
    for c in cases:
        label = c.get("upstream_label", c["label"])
        shape = filler_shape(c["text"]) if label == "secret" else None
        c.pop("relabel", None)
        c.pop("upstream_label", None)
        c["label"] = label
        if shape:
            c["label"], c["upstream_label"], c["relabel"] = "none", "secret", shape
            n += 1
    return n


def write(name, cases, stats):
    # A case one upstream rule must not match but another rule must (the
    # upstream's own label: e.g. a Cloudflare global key listed in the
    # origin-CA rule's fps) is a secret, not a non-secret: a scanner that
    # reports it is right. Such negatives are dropped, and counted.
    secret_texts = {c["text"] for c in cases if c["label"] == "secret"}
    cross = [c for c in cases if c["label"] == "none" and c["text"] in secret_texts]
    for c in cross:
        stats["skipped_statements"].append(f"{c['class']}: negative that another rule's positives list: "
                                           f"{c['text'][:60]!r}")
    cases = [c for c in cases if not (c["label"] == "none" and c["text"] in secret_texts)]
    seen, out = set(), []
    for c in cases:
        k = (c["class"], c["label"], c["text"], c["ext"])
        if k not in seen:
            seen.add(k)
            out.append(c)
    stats["relabelled"] = relabel(out)
    save(name, out)
    pos = sum(c["label"] == "secret" for c in out)
    print(f"{name}: {len(out)} cases ({pos} secret, {len(out) - pos} none; "
          f"{stats['relabelled']} filler-shaped secrets re-labelled none) from {stats['rules']} "
          f"rules; skipped {len(stats['skipped_rules'])} lists/rules, "
          f"{len(stats['skipped_statements'])} statements", file=sys.stderr)
    for s in stats["skipped_rules"] + stats["skipped_statements"]:
        print(f"  skipped {s}", file=sys.stderr)


def save(name, out):
    path = os.path.join(HERE, f"{name}.jsonl")
    with open(path, "w", encoding="utf-8") as f:
        for c in out:
            f.write(json.dumps(c, ensure_ascii=False, sort_keys=True) + "\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gitleaks", help="git dir of a gitleaks/gitleaks mirror")
    ap.add_argument("--detect-secrets", dest="ds", help="git dir of a Yelp/detect-secrets mirror")
    ap.add_argument("--relabel-only", action="store_true",
                    help="re-apply the label decision to the committed JSONL files, offline")
    a = ap.parse_args()
    if a.relabel_only:
        for name in ("gitleaks", "detect_secrets"):
            with open(os.path.join(HERE, f"{name}.jsonl"), encoding="utf-8") as f:
                cases = [json.loads(line) for line in f]
            n = relabel(cases)
            save(name, cases)
            print(f"{name}: {n} of {len(cases)} cases re-labelled", file=sys.stderr)
        return
    if a.gitleaks:
        write("gitleaks", *import_gitleaks(a.gitleaks))
    if a.ds:
        write("detect_secrets", *import_detect_secrets(a.ds))


if __name__ == "__main__":
    main()
