#!/usr/bin/env python3
"""Fails on an import cycle between sibling modules of any crate.

Sibling modules (children of one parent) that use each other are one
concept split in two, or a helper living in the wrong file: each cycle
named here is fixed by moving that helper where both can reach it.

For every module of every crate root in the workspace (following `mod x;`
declarations, `#[path]` included, and inline `mod x { ... }` blocks), every
path that starts with `crate::`, `super::` or `self::` (in `use` trees and in
expressions) is resolved to the module it names, through re-exports
(`pub use`). A reference from module A to module B becomes an edge between
the two children of their lowest common ancestor that contain A and B.
Code under `#[cfg(test)]` is left out: tests may reach anything they test.
Every strongly connected set of siblings is reported with one cycle path.

Usage: check_cycles.py [ROOT]    (exit 1 when a cycle exists)
       check_cycles.py --self-test
"""
import os
import re
import sys
import tempfile

# Crate roots, relative to the workspace root (benches: every file of
# BENCH_DIRS).
ROOT_GLOBS = [
    "graders/src/lib.rs",
    "server/src/lib.rs",
    "testkit/src/lib.rs",
    "tools/lib.rs",
    "tools/main.rs",
    "tests/tests.rs",
]
BENCH_DIRS = ["graders/benches", "server/benches"]

TOKEN = re.compile(
    r"""
    (?P<ws>\s+)
  | (?P<lc>//[^\n]*)
  | (?P<bc>/\*)
  | (?P<rstr>b?r(?P<hashes>\#*)")
  | (?P<str>b?"(?:\\.|[^"\\])*")
  | (?P<chr>b?'(?:\\.|[^'\\])')
  | (?P<life>'[A-Za-z_]\w*)
  | (?P<ident>[A-Za-z_]\w*)
  | (?P<path>::)
  | (?P<attr>\#!?\[)
  | (?P<p>.)
    """,
    re.X | re.S,
)


def tokens(src):
    """Identifiers, `::` and punctuation; comments, strings, chars dropped."""
    out = []
    i = 0
    n = len(src)
    while i < n:
        m = TOKEN.match(src, i)
        kind = m.lastgroup
        if kind == "bc":
            depth, j = 1, m.end()
            while depth and j < n:
                if src.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif src.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            i = j
            continue
        if kind == "rstr":
            end = src.find('"' + m.group("hashes"), m.end())
            i = n if end < 0 else end + 1 + len(m.group("hashes"))
            continue
        i = m.end()
        if kind in ("ws", "lc", "str", "chr", "life"):
            continue
        if kind == "hashes":
            continue
        out.append(m.group(kind) if kind != "attr" else "#[")
    return out


def skip_group(toks, i, open_, close):
    """Index after the group opening at toks[i]."""
    depth = 0
    while i < len(toks):
        if toks[i] == open_ or (open_ == "[" and toks[i] == "#["):
            depth += 1
        elif toks[i] == close:
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return i


def skip_item(toks, i):
    """Index after the item starting at toks[i]: its first `{...}` group
    or its `;`, outside brackets and parentheses."""
    depth = 0
    while i < len(toks):
        t = toks[i]
        if t in ("(", "[", "#["):
            depth += 1
        elif t in (")", "]"):
            depth -= 1
        elif depth == 0 and t == "{":
            return skip_group(toks, i, "{", "}")
        elif depth == 0 and t == ";":
            return i + 1
        i += 1
    return i


def use_paths(toks, i):
    """Expands the use tree starting at toks[i] (after `use`), up to `;`.
    Returns ([(segments, alias)], index after `;`)."""
    out = []

    def tree(i, prefix):
        segs = list(prefix)
        while i < len(toks):
            t = toks[i]
            if t == "{":
                i += 1
                while toks[i] != "}":
                    i = tree(i, segs)
                    if toks[i] == ",":
                        i += 1
                return i + 1
            if t == "*":
                out.append((segs, "*"))
                return i + 1
            if t == "::":
                i += 1
                continue
            if t in (",", "}", ";"):
                out.append((segs, segs[-1] if segs else None))
                return i
            if t == "as":
                out.append((segs, toks[i + 1]))
                return i + 2
            segs = segs + [t]
            i += 1
        return i

    i = tree(i, [])
    while i < len(toks) and toks[i] != ";":
        i += 1
    return out, i + 1


class Module:
    def __init__(self, path, file):
        self.path = path  # tuple of names below the crate root
        self.file = file
        self.children = set()
        self.refs = []  # (module path the code is in, segments)
        self.reexports = {}  # name -> (module path it is in, segments)


def parse_file(crate, mods, path, file, test_files):
    src = open(file, encoding="utf-8").read()
    toks = tokens(src)
    mod = mods.setdefault(path, Module(path, file))
    mod.file = file
    # Stack of (module path, brace depth at which it closes).
    stack = [(path, 0)]
    depth = 0
    pending_test = False
    pending_path = None
    i = 0
    while i < len(toks):
        t = toks[i]
        cur = stack[-1][0]
        if t == "#[":
            j = skip_group(toks, i, "[", "]")
            body = toks[i + 1 : j - 1]
            if body[:1] == ["cfg"] and "test" in body and "not" not in body:
                pending_test = True
            if body[:1] == ["path"]:
                pending_path = True
            i = j
            continue
        if t == "mod" and i + 1 < len(toks) and re.match(r"\w+$", toks[i + 1]):
            name = toks[i + 1]
            child = cur + (name,)
            if toks[i + 2] == ";":
                if not pending_test:
                    mods[cur].children.add(name)
                    mods.setdefault(child, Module(child, None))
                    sub = child_file(file, cur == path, path, name, src)
                    if sub:
                        parse_file(crate, mods, child, sub, test_files)
                i += 3
            elif toks[i + 2] == "{":
                if pending_test:
                    i = skip_group(toks, i + 2, "{", "}")
                else:
                    mods[cur].children.add(name)
                    mods.setdefault(child, Module(child, file))
                    depth += 1
                    stack.append((child, depth))
                    i += 3
            else:
                i += 1
            pending_test = False
            pending_path = None
            continue
        if pending_test and t != "use":
            # Any other item under #[cfg(test)]: skip it whole, through its
            # body or its closing `;`.
            i = skip_item(toks, i)
            pending_test = False
            continue
        if t == "use":
            public = i > 0 and (toks[i - 1] == "pub" or toks[i - 1] == ")")
            items, i = use_paths(toks, i + 1)
            for segs, alias in items:
                if pending_test:
                    continue
                mods[cur].refs.append((cur, segs))
                if public and alias and alias != "*" and alias != "self":
                    mods[cur].reexports[alias] = (cur, segs)
                elif public and alias == "self" and len(segs) > 1:
                    mods[cur].reexports[segs[-2]] = (cur, segs[:-1])
            pending_test = False
            continue
        if t in ("crate", "super", "self") and i + 1 < len(toks) and toks[i + 1] == "::":
            if i > 0 and toks[i - 1] == "::":
                i += 1
                continue
            segs = [t]
            j = i + 1
            while j + 1 < len(toks) and toks[j] == "::" and re.match(r"\w+$", toks[j + 1]):
                segs.append(toks[j + 1])
                j += 2
            mods[cur].refs.append((cur, segs))
            i = j
            continue
        if t == "{":
            depth += 1
        elif t == "}":
            if stack[-1][1] == depth and len(stack) > 1:
                stack.pop()
            depth -= 1
        i += 1


def child_file(file, at_file_level, path, name, src):
    """File of `mod name;` declared in `file` (honours #[path])."""
    m = re.search(r'#\[path\s*=\s*"([^"]+)"\]\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+' + name + r"\s*;", src)
    d = os.path.dirname(file)
    base = os.path.basename(file)
    if base in ("lib.rs", "main.rs", "mod.rs") or is_root_file(file):
        own = d
    else:
        own = os.path.join(d, base[:-3])
    if m:
        p = os.path.join(d if base in ("lib.rs", "main.rs", "mod.rs") else own, m.group(1))
        p = os.path.join(d, m.group(1)) if not os.path.exists(p) else p
        return p if os.path.exists(p) else None
    for cand in (os.path.join(own, name + ".rs"), os.path.join(own, name, "mod.rs")):
        if os.path.exists(cand):
            return cand
    return None


ROOT_FILES = set()


def is_root_file(file):
    return os.path.abspath(file) in ROOT_FILES


def resolve(mods, cur, segs, seen=0):
    """The module path `segs` (as written in module `cur`) names, or None
    for a path outside the crate."""
    if not segs or seen > 16:
        return None
    head, rest = segs[0], segs[1:]
    if head == "crate":
        base = ()
    elif head == "self":
        base = cur
    elif head == "super":
        base = cur
        while rest[:0] == [] and head == "super":
            base = base[:-1]
            if rest and rest[0] == "super":
                head, rest = rest[0], rest[1:]
            else:
                break
    else:
        # A relative path: a child module or a re-exported name of cur.
        if (cur + (head,)) in mods or head in mods[cur].reexports:
            base, rest = cur, segs
        else:
            return None
    return descend(mods, base, rest, seen)


def descend(mods, base, rest, seen):
    for k, name in enumerate(rest):
        nxt = base + (name,)
        if nxt in mods:
            base = nxt
            continue
        m = mods.get(base)
        if m and name in m.reexports:
            where, segs = m.reexports[name]
            target = resolve(mods, where, segs, seen + 1)
            if target is None:
                return base
            return descend(mods, target, rest[k + 1 :], seen + 1)
        return base
    return base


def sibling_edges(mods):
    edges = {}  # parent -> {a: {b: (from module, segments)}}
    for m in mods.values():
        for cur, segs in m.refs:
            target = resolve(mods, cur, segs)
            if target is None:
                continue
            k = 0
            while k < len(cur) and k < len(target) and cur[k] == target[k]:
                k += 1
            if k >= len(cur) or k >= len(target):
                continue  # an ancestor or a descendant: not a sibling
            parent = cur[:k]
            a, b = cur[k], target[k]
            edges.setdefault(parent, {}).setdefault(a, {}).setdefault(
                b, (m.file, "::".join(segs))
            )
    return edges


def cycles(graph):
    """Strongly connected components (size > 1) with one cycle path each."""
    index, low, on, stack, out = {}, {}, set(), [], []
    counter = [0]

    def strong(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, {})):
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            strong(v)
    result = []
    for comp in out:
        members = set(comp)
        paths, seen = [], set()
        for v in comp:
            path = shortest_cycle(graph, members, v)
            key = frozenset(zip(path, path[1:]))
            if key not in seen:
                seen.add(key)
                paths.append(path)
        result.append((comp, paths))
    return result


def shortest_cycle(graph, members, start):
    """The shortest cycle through `start` inside `members` (BFS)."""
    prev = {start: None}
    queue = [start]
    while queue:
        nxt = []
        for v in queue:
            for w in sorted(graph.get(v, {})):
                if w not in members:
                    continue
                if w == start:
                    path = [v]
                    while path[-1] != start:
                        path.append(prev[path[-1]])
                    return list(reversed(path)) + [start]
                if w not in prev:
                    prev[w] = v
                    nxt.append(w)
        queue = nxt
    raise AssertionError("a strongly connected member has a cycle")


def crate_roots(root):
    roots = [os.path.join(root, r) for r in ROOT_GLOBS]
    missing = [r for r in roots if not os.path.exists(r)]
    if missing:
        # A crate moved: checking what is left would pass on nothing.
        sys.exit(f"check_cycles: crate roots missing (update ROOT_GLOBS): {missing}")
    for d in BENCH_DIRS:
        d = os.path.join(root, d)
        if os.path.isdir(d):
            roots += sorted(os.path.join(d, f) for f in os.listdir(d) if f.endswith(".rs"))
    return roots


def check(root, roots=None):
    found = []
    for r in roots or crate_roots(root):
        ROOT_FILES.add(os.path.abspath(r))
        mods = {}
        parse_file(os.path.relpath(r, root), mods, (), r, set())
        for parent, graph in sorted(sibling_edges(mods).items()):
            for comp, paths in cycles(graph):
                where = "::".join(("crate",) + parent)
                lines = [
                    f"{os.path.relpath(r, root)}: modules of {where} that use each other: "
                    + ", ".join(comp)
                ]
                for path in paths:
                    lines.append("  cycle: " + " -> ".join(path))
                    for a, b in zip(path, path[1:]):
                        file, segs = graph[a][b]
                        lines.append(f"    {a} -> {b}: {os.path.relpath(file, root)} uses {segs}")
                found.append("\n".join(lines))
    return found


def self_test():
    """The check finds a planted cycle (with its path) and passes a tree
    without one: a check that cannot fail checks nothing."""
    with tempfile.TemporaryDirectory() as d:
        src = os.path.join(d, "src")
        os.makedirs(os.path.join(src, "tasks"))
        files = {
            "lib.rs": "pub mod tasks;\npub mod other;\n",
            "other.rs": "use crate::tasks::Thing;\n",
            "tasks/mod.rs": "pub mod a;\npub mod b;\nmod c;\npub use a::Thing;\n"
            "#[cfg(test)]\nmod tests { use super::c::*; }\n",
            "tasks/a.rs": "use super::b::{helper, other::{x as y}};\npub struct Thing;\n"
            "// super::c::nothing in a comment\nconst S: &str = \"super::c::f\";\n",
            "tasks/b.rs": "pub fn helper() { crate::tasks::c::f(); }\n"
            "#[cfg(test)]\nmod tests { use crate::tasks::a::Thing; }\n"
            "#[cfg(test)]\n#[allow(dead_code)]\npub(crate) fn probe() -> [u8; 2] { super::a::x() }\n"
            "#[cfg(test)]\nuse super::a::Thing as T;\n",
            "tasks/c.rs": "pub fn f() { let _ = super::Thing; }\n",
        }
        for name, text in files.items():
            with open(os.path.join(src, name), "w") as f:
                f.write(text)
        lib = os.path.join(src, "lib.rs")
        found = check(d, [lib])
        # a -> b -> c -> a (through the re-export of Thing in tasks).
        assert len(found) == 1, found
        assert "modules of crate::tasks that use each other: a, b, c" in found[0], found
        assert "cycle: a -> b -> c -> a" in found[0], found
        assert "tasks/c.rs uses super::Thing" in found[0], found
        # Break it: c no longer names Thing; the test-only uses never count.
        with open(os.path.join(src, "tasks/c.rs"), "w") as f:
            f.write("pub fn f() {}\n")
        assert check(d, [lib]) == [], check(d, [lib])
    print("check_cycles: self-test ok")


def main():
    if sys.argv[1:] == ["--self-test"]:
        self_test()
        return 0
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
    root = os.path.abspath(root)
    found = check(root)
    for f in found:
        print(f, file=sys.stderr)
    if found:
        print(f"check_cycles: {len(found)} cycle(s) between sibling modules", file=sys.stderr)
        return 1
    print("check_cycles: no cycles between sibling modules")
    return 0


if __name__ == "__main__":
    sys.exit(main())
