#!/usr/bin/python3
"""Side-by-side benchmark of `secaudit scan` against real peer scanners.

Stdlib only. Run from the repository root after
`bash scripts/install-peers.sh && cargo build --release --bin secaudit`:

    python3 bench/bench.py            # corpus + 10-commit + 500-commit repos
    python3 bench/bench.py --full     # also the 5,000-commit (~150 MB) repo

What it measures, each tool run under a hard timeout:
  (a) accuracy on the labelled corpus (graders/corpus): a finding matches a
      label when file and line agree; precision, recall, F1 per tool and
      recall per secret type;
  (b) full-history scans of deterministic generated git repositories: wall
      time (median of 3), peak RSS of the child (os.wait4), findings, and the
      share of planted history secrets found (by value);
  (c) working-tree scan time on the largest repo's checkout;
  (d) rescan after a one-file commit: needs the in-process blob cache, so it
      is reported n/a unless the CLI grows a cache option.
Times are also given as ratios against gitleaks from the same run.
"""

import argparse
import base64
import json
import os
import random
import shutil
import statistics
import string
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOOLS_BIN = os.path.join(ROOT, ".tools", "bin")
def secaudit_bin():
    """The release binary where Cargo puts it (CARGO_TARGET_DIR honoured),
    from scripts/secaudit-bin.sh; ./target's when that cannot answer."""
    try:
        r = subprocess.run(["bash", os.path.join(ROOT, "scripts", "secaudit-bin.sh"), "release"],
                           capture_output=True, text=True, timeout=60, check=True)
        return r.stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return os.path.join(ROOT, "target", "release", "secaudit")


OURS = secaudit_bin()
CORPUS = os.path.join(ROOT, "graders", "corpus")
OUT = os.path.join(ROOT, "bench", "out")
TIMEOUT = 600.0


# ---------------------------------------------------------------- running

class Run:
    def __init__(self, rc, wall, rss_kb, stdout, timed_out):
        self.rc, self.wall, self.rss_kb, self.stdout, self.timed_out = rc, wall, rss_kb, stdout, timed_out


def run(cmd, cwd=None, timeout=TIMEOUT, stdout_path=None):
    """Runs cmd with stdout to a file; returns wall time and the child's own
    peak RSS (os.wait4 gives per-child rusage, unlike RUSAGE_CHILDREN which
    is a maximum over every child so far)."""
    stdout_path = stdout_path or os.path.join(OUT, "last.stdout")
    with open(stdout_path, "wb") as so, open(os.path.join(OUT, "last.stderr"), "wb") as se:
        t0 = time.monotonic()
        p = subprocess.Popen(cmd, cwd=cwd, stdout=so, stderr=se, stdin=subprocess.DEVNULL,
                             start_new_session=True)
        timed_out = False
        while True:
            pid, status, ru = os.wait4(p.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() - t0 > timeout:
                os.killpg(p.pid, 9)
                pid, status, ru = os.wait4(p.pid, 0)
                timed_out = True
                break
            time.sleep(0.005)
        wall = time.monotonic() - t0
        p.returncode = os.waitstatus_to_exitcode(status)
    with open(stdout_path, "rb") as f:
        out = f.read()
    return Run(p.returncode, wall, ru.ru_maxrss, out, timed_out)


def load_json(path_or_bytes):
    try:
        if isinstance(path_or_bytes, bytes):
            return json.loads(path_or_bytes.decode("utf-8", "replace") or "null")
        with open(path_or_bytes, "rb") as f:
            return json.loads(f.read().decode("utf-8", "replace") or "null")
    except (OSError, ValueError):
        return None


def rel(path, root):
    path = path or ""
    if os.path.isabs(path):
        path = os.path.relpath(path, root)
    return path.replace("\\", "/").lstrip("./") if path.startswith("./") else path.replace("\\", "/")


# ---------------------------------------------------------------- tools
# Each tool: how to scan a directory, how to scan git history (or None), and
# how to parse its report into findings {file, line, value, commit}.

def f_ours(report, root):
    out = []
    for x in load_json(report) or []:
        out.append({"file": rel(x.get("file"), root), "line": x.get("line"), "value": x.get("value") or "",
                    "commit": x.get("commit")})
    return out


def f_gitleaks(report, root):
    out = []
    for x in load_json(report) or []:
        out.append({"file": rel(x.get("File"), root), "line": x.get("StartLine"),
                    "value": x.get("Secret") or x.get("Match") or "", "commit": x.get("Commit")})
    return out


def f_betterleaks(report, root):
    d = load_json(report) or {}
    out = []
    for x in d.get("findings", []) if isinstance(d, dict) else d:
        loc = x.get("location", {})
        git = x.get("git") or x.get("commit") or {}
        commit = git.get("sha") if isinstance(git, dict) else git
        secret = x.get("secret")
        if isinstance(secret, dict):
            secret = secret.get("value") or secret.get("full")
        match = x.get("match")
        if isinstance(match, dict):
            match = match.get("full") or match.get("value")
        out.append({"file": rel(loc.get("path"), root), "line": loc.get("start_line"),
                    "value": str(secret or match or ""), "commit": commit or loc.get("commit")})
    return out


def f_kingfisher(report, root):
    d = load_json(report) or {}
    out = []
    for x in d.get("findings", []) if isinstance(d, dict) else []:
        f = x.get("finding", {})
        git = f.get("git_metadata") or {}
        commit = (git.get("commit") or {}).get("id") if isinstance(git, dict) else None
        path = f.get("path") or ""
        if git and isinstance(git, dict):
            path = (git.get("file") or {}).get("path", path) if isinstance(git.get("file"), dict) else path
        out.append({"file": rel(path, root), "line": f.get("line"), "value": f.get("snippet") or "",
                    "commit": commit})
    return out


def f_detect_secrets(report, root):
    d = load_json(report) or {}
    out = []
    for fname, items in (d.get("results") or {}).items():
        for x in items:
            out.append({"file": rel(fname, root), "line": x.get("line_number"), "value": "", "commit": None})
    return out


def b(name):
    return os.path.join(TOOLS_BIN, name)


TOOLS = [
    {"name": "secaudit", "bin": OURS,
     "dir": lambda t, r: [OURS, "scan", t, "--format", "json", "--show-secrets"],
     "git": lambda t, r: [OURS, "scan", t, "--history", "--format", "json", "--show-secrets"],
     "report": "stdout", "parse": f_ours},
    {"name": "gitleaks", "bin": b("gitleaks"),
     "dir": lambda t, r: [b("gitleaks"), "dir", t, "--no-banner", "-f", "json", "-r", r, "--exit-code", "0",
                          "-l", "error"],
     "git": lambda t, r: [b("gitleaks"), "git", t, "--no-banner", "-f", "json", "-r", r, "--exit-code", "0",
                          "-l", "error"],
     "report": "file", "parse": f_gitleaks},
    {"name": "betterleaks", "bin": b("betterleaks"),
     "dir": lambda t, r: [b("betterleaks"), "fs", t, "--no-banner", "-o", r, "--exit-code", "0", "-l", "error"],
     "git": lambda t, r: [b("betterleaks"), "git", t, "--no-banner", "-o", r, "--exit-code", "0", "-l", "error"],
     "report": "file", "parse": f_betterleaks},
    {"name": "kingfisher", "bin": b("kingfisher"),
     "dir": lambda t, r: [b("kingfisher"), "scan", t, "-f", "json", "-n", "-o", r, "--git-history", "none"],
     "git": lambda t, r: [b("kingfisher"), "scan", t, "-f", "json", "-n", "-o", r, "--git-history", "full"],
     "report": "file", "parse": f_kingfisher},
    {"name": "detect-secrets", "bin": b("detect-secrets"),
     "dir": lambda t, r: [b("detect-secrets"), "scan", "--all-files", "."],
     "git": None, "cwd_is_target": True, "report": "stdout", "parse": f_detect_secrets},
]


def pick_ours():
    """Checks that `secaudit scan` (the release binary) runs; the
    benchmark measures the shipped CLI, nothing else."""
    probe = os.path.join(OUT, "probe")
    os.makedirs(probe, exist_ok=True)
    r = run([OURS, "scan", probe, "--format", "json"], timeout=60) if os.path.exists(OURS) else None
    if r is None or r.rc not in (0, 1) or not isinstance(load_json(r.stdout), list):
        raise SystemExit(f"{OURS} missing or broken: cargo build --release --bin secaudit")


def available(tool):
    return os.path.exists(tool["bin"]) and os.access(tool["bin"], os.X_OK)


def scan(tool, mode, target, tag):
    report = os.path.join(OUT, f"{tool['name']}-{tag}.json")
    if os.path.exists(report):
        os.remove(report)
    cmd = tool[mode](target if not tool.get("cwd_is_target") else ".", report)
    cwd = target if tool.get("cwd_is_target") else None
    r = run(cmd, cwd=cwd, stdout_path=report if tool["report"] == "stdout" else None)
    findings = [] if r.timed_out else tool["parse"](report, target)
    return r, findings


# ---------------------------------------------------------------- (a) corpus

def corpus_accuracy(tools):
    labels = json.load(open(os.path.join(CORPUS, "labels.json")))
    files = os.path.join(CORPUS, "files")
    lab = {(x["file"], x["line"]): x["type"] for x in labels}
    types = sorted(set(lab.values()))
    rows, per_type, errors = [], {}, []
    for tool in tools:
        r, fs = scan(tool, "dir", files, "corpus")
        if r.timed_out or (r.rc not in (0, 1) and not fs and tool["name"] != "kingfisher"):
            errors.append(f"{tool['name']}: rc={r.rc} timed_out={r.timed_out}: "
                          + open(os.path.join(OUT, "last.stderr"), errors="replace").read()[-300:])
        found = {(f["file"], f["line"]) for f in fs}
        tp = len(found & lab.keys())
        fp = len(found - lab.keys())
        fn = len(lab.keys() - found)
        p = tp / len(found) if found else 0.0
        rc = tp / len(lab)
        f1 = 2 * p * rc / (p + rc) if p + rc else 0.0
        rows.append((tool["name"], len(found), tp, fp, fn, p, rc, f1, r.wall))
        for t in types:
            keys = [k for k, v in lab.items() if v == t]
            per_type.setdefault(t, {})[tool["name"]] = (sum(1 for k in keys if k in found), len(keys))
    print("\n### (a) Corpus accuracy (%d labels, match by file+line)\n" % len(lab))
    print("| tool | finding lines | TP | FP | FN | precision | recall | F1 | time s |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name, n, tp, fp, fn, p, rc, f1, wall in rows:
        print(f"| {name} | {n} | {tp} | {fp} | {fn} | {p:.3f} | {rc:.3f} | {f1:.3f} | {wall:.2f} |")
    names = [t["name"] for t in tools]
    print("\n#### Recall per secret type (found/labels)\n")
    print("| type | " + " | ".join(names) + " |")
    print("|---|" + "---:|" * len(names))
    for t in types:
        cells = []
        for n in names:
            hit, tot = per_type[t].get(n, (0, 0))
            cells.append(f"{hit}/{tot}")
        print(f"| {t} | " + " | ".join(cells) + " |")
    for e in errors:
        print(f"\nnote: {e}")


# ------------------------------------------------------- (a2) external cases

def external_accuracy(tools):
    """Precision and recall per source on cases written by other projects
    (graders/corpus/external/*.jsonl: gitleaks' rule tps/fps, detect-secrets'
    fixtures) and our second generator. Each case becomes one file; a secret
    case is found when a tool reports anything in its file, a non-secret case
    must give no finding. graders/tests/external_corpus.rs holds the floors."""
    ext_dir = os.path.join(CORPUS, "external")
    cases = []
    for name in sorted(os.listdir(ext_dir)):
        if name.endswith(".jsonl"):
            with open(os.path.join(ext_dir, name), encoding="utf-8") as f:
                cases.extend(json.loads(line) for line in f if line.strip())
    root = os.path.join(OUT, "external")
    shutil.rmtree(root, ignore_errors=True)
    where = {}  # source -> {relative file: case}
    for i, c in enumerate(cases):
        # The case's own path when it names one (whole-file generators:
        # `tests/test_x.py`, `.env.example`), as the floors' test scans it.
        fname = c.get("path") or ("Dockerfile" if c["ext"] == "Dockerfile" else f"case.{c['ext']}")
        fname = os.path.normpath(fname)
        if fname.startswith("..") or os.path.isabs(fname):
            fname = f"case.{c['ext']}"
        rel_path = f"{i:05d}/{fname}"
        d = os.path.join(root, c["source"], f"{i:05d}")
        os.makedirs(os.path.dirname(os.path.join(d, fname)), exist_ok=True)
        with open(os.path.join(d, fname), "w", encoding="utf-8") as f:
            f.write(c["text"])
        where.setdefault(c["source"], {})[rel_path] = c
    print("\n### (a2) External labelled cases (per source; a case is one file)\n")
    print("| source | tool | cases | secret | TP | FN | FP | precision | recall |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    worst = {}
    for src, files in sorted(where.items()):
        for tool in tools:
            r, fs = scan(tool, "dir", os.path.join(root, src), f"external-{src}")
            flagged = {f["file"] for f in fs}
            tp = fn = fp = 0
            for rel_path, c in files.items():
                hit = rel_path in flagged
                if c["label"] == "secret":
                    tp += hit
                    fn += not hit
                else:
                    fp += hit
                if tool["name"] == "secaudit" and hit != (c["label"] == "secret"):
                    row = worst.setdefault((src, c["class"]), [0, 0])
                    row[0 if c["label"] == "secret" else 1] += 1
            p = tp / (tp + fp) if tp + fp else 1.0
            rc = tp / (tp + fn) if tp + fn else 1.0
            note = " (timed out)" if r.timed_out else ""
            print(f"| {src} | {tool['name']}{note} | {len(files)} | {tp + fn} | {tp} | {fn} | {fp} "
                  f"| {p:.3f} | {rc:.3f} |")
    if worst:
        print("\nsecaudit's worst classes (misses, false positives):\n")
        print("| source | class | missed | false positives |")
        print("|---|---|---:|---:|")
        for (src, cls), (m, f) in sorted(worst.items(), key=lambda kv: -sum(kv[1]))[:25]:
            print(f"| {src} | {cls} | {m} | {f} |")


# ---------------------------------------------------------------- (b) repos

ALNUM = string.ascii_letters + string.digits


def make_repo(path, commits, files, file_kb, changes_per_commit, seed):
    """Builds a git repository with `git fast-import`: `files` text files of
    about `file_kb` KiB, each commit rewriting a region of
    `changes_per_commit` files, fixed dates and authors. Every 25th commit (3rd in small repos)
    plants a synthetic secret that a later commit removes again, so most
    planted values exist only in history. Returns the planted values."""
    R = random.Random(seed)
    if os.path.exists(path):
        shutil.rmtree(path)
    os.makedirs(path)
    subprocess.run(["git", "init", "-q", "-b", "main", path], check=True)

    def rs(n):
        return "".join(R.choice(ALNUM) for _ in range(n))

    def code_line():
        k = R.randrange(5)
        if k == 0:
            return f"def handle_{rs(6).lower()}(request, ctx):"
        if k == 1:
            return f"    value = compute({R.randrange(10**6)}, '{rs(8).lower()}')"
        if k == 2:
            return f"    # {' '.join(rs(R.randrange(3, 9)).lower() for _ in range(6))}"
        if k == 3:
            return f"    logger.info('processed %s items', {R.randrange(1000)})"
        return f"    return {{'status': 'ok', 'id': {R.randrange(10**9)}}}"

    lines_per_file = max(4, file_kb * 1024 // 42)
    tree = {}
    for i in range(files):
        name = f"src/pkg{i % 20}/module_{i}.py"
        tree[name] = [code_line() for _ in range(lines_per_file)]
    makers = [
        lambda: "AKIA" + "".join(R.choice(string.ascii_uppercase + "234567") for _ in range(16)),
        lambda: "ghp_" + rs(36),
        lambda: "sk_live_" + rs(32),
        lambda: "xoxb-" + "".join(R.choice(string.digits) for _ in range(12)) + "-"
        + "".join(R.choice(string.digits) for _ in range(13)) + "-" + rs(24),
        lambda: "npm_" + rs(36),
        lambda: "SG." + rs(22) + "." + rs(43),
    ]
    names = {0: "AWS_ACCESS_KEY_ID", 1: "GITHUB_TOKEN", 2: "STRIPE_SECRET_KEY", 3: "SLACK_BOT_TOKEN",
             4: "NPM_TOKEN", 5: "SENDGRID_API_KEY"}
    planted = []
    open_secret = None
    # Task-sized repos get a secret every 3 commits, large ones every 25.
    interval = 25 if commits >= 100 else 3
    fi = subprocess.Popen(["git", "fast-import", "--quiet", "--done"], cwd=path, stdin=subprocess.PIPE)
    w = fi.stdin
    t0 = 1735689600  # 2025-01-01T00:00:00Z
    raw_bytes = 0
    paths = sorted(tree)
    for c in range(commits):
        changed = set()
        if c == 0:
            changed = set(paths)
        else:
            for _ in range(changes_per_commit):
                p = R.choice(paths)
                ls = tree[p]
                start = R.randrange(len(ls))
                for j in range(start, min(len(ls), start + max(3, len(ls) // 4))):
                    ls[j] = code_line()
                changed.add(p)
        if c % interval == 5 % interval:
            k = R.randrange(len(makers))
            value = makers[k]()
            p = "config/settings.py"
            tree[p] = ["import os", f'{names[k]} = "{value}"', "DEBUG = False"]
            if p not in paths:
                paths.append(p)
                paths.sort()
            planted.append(value)
            open_secret = c
            changed.add(p)
        elif open_secret is not None and c - open_secret == 3:
            tree["config/settings.py"] = ["import os", 'TOKEN = os.environ["TOKEN"]', "DEBUG = False"]
            changed.add("config/settings.py")
            open_secret = None
        date = t0 + c * 3600
        msg = f"commit {c}: update {len(changed)} files\n".encode()
        w.write(f"commit refs/heads/main\nmark :{c + 1}\n".encode())
        w.write(f"author Dana Whitfield <dana@northwind.example> {date} +0000\n".encode())
        w.write(f"committer Dana Whitfield <dana@northwind.example> {date} +0000\n".encode())
        w.write(f"data {len(msg)}\n".encode() + msg)
        if c:
            w.write(f"from :{c}\n".encode())
        for p in sorted(changed):
            data = ("\n".join(tree[p]) + "\n").encode()
            raw_bytes += len(data)
            w.write(f"M 100644 inline {p}\ndata {len(data)}\n".encode() + data + b"\n")
        w.write(b"\n")
    w.write(b"done\n")
    w.close()
    if fi.wait() != 0:
        raise RuntimeError("git fast-import failed")
    subprocess.run(["git", "checkout", "-q", "-f", "main"], cwd=path, check=True)
    pack = 0
    for dp, _, fs in os.walk(os.path.join(path, ".git", "objects")):
        pack += sum(os.path.getsize(os.path.join(dp, f)) for f in fs)
    return planted, raw_bytes, pack


def median_run(tool, mode, target, tag, reps):
    runs = []
    findings = []
    for _ in range(reps):
        r, fs = scan(tool, mode, target, tag)
        runs.append(r)
        findings = fs
        if r.timed_out:
            break
    walls = [r.wall for r in runs]
    return (statistics.median(walls), max(r.rss_kb for r in runs), findings,
            any(r.timed_out for r in runs), runs[-1].rc)


def history_bench(tools, sizes, reps):
    work = os.path.join(OUT, "repos")
    os.makedirs(work, exist_ok=True)
    results = []
    for label, commits, files, kb, changes in sizes:
        path = os.path.join(work, label)
        t = time.monotonic()
        planted, raw, pack = make_repo(path, commits, files, kb, changes, seed=commits)
        gen = time.monotonic() - t
        print(f"\nrepo {label}: {commits} commits, {raw / 1e6:.1f} MB of blob content written, "
              f"{pack / 1e6:.1f} MB .git/objects, {len(planted)} planted history secrets "
              f"(generated in {gen:.1f} s)", flush=True)
        row = {"label": label, "commits": commits, "raw": raw, "tools": {}}
        for tool in tools:
            if not tool.get("git"):
                continue
            wall, rss, fs, to, rc = median_run(tool, "git", path, f"git-{label}", reps)
            blob = "\n".join(str(f["value"]) for f in fs)
            found = sum(1 for v in planted if v in blob)
            row["tools"][tool["name"]] = (wall, rss, len(fs), found, len(planted), to, rc)
            print(f"  {tool['name']}: {wall:.2f} s, {rss / 1024:.0f} MiB, {len(fs)} findings, "
                  f"{found}/{len(planted)} planted, rc={rc}{' TIMEOUT' if to else ''}", flush=True)
        # (c) working tree of the same checkout.
        row["dir"] = {}
        for tool in tools:
            if tool["name"] not in ("secaudit", "secaudit-base", "gitleaks", "betterleaks", "kingfisher"):
                continue
            src = path
            # `gitleaks dir` and `betterleaks fs` do not skip .git: both scan a
            # copy without it, so every tool reads the same files.
            if tool["name"] in ("gitleaks", "betterleaks"):
                src = path + "-tree"
                if os.path.exists(src):
                    shutil.rmtree(src)  # never a stale copy of an earlier run's repo
                shutil.copytree(path, src, ignore=shutil.ignore_patterns(".git"))
            wall, rss, fs, to, rc = median_run(tool, "dir", src, f"dir-{label}", reps)
            row["dir"][tool["name"]] = (wall, rss, len(fs), to)
        results.append(row)
    return results


# Peers every time is divided by: gitleaks (the long-standing reference)
# and betterleaks (the fastest peer, which the speed targets are set against).
RATIO_PEERS = ("gitleaks", "betterleaks")


def print_history(results, names):
    def ratios(table, wall):
        # Time over each peer's time in the same run ("n/a" when absent).
        out = []
        for peer in RATIO_PEERS:
            base = table.get(peer, (None,))[0]
            out.append(f"{wall / base:.2f}" if base else "n/a")
        return " | ".join(out)

    cols = " | ".join(f"× {p}" for p in RATIO_PEERS)
    align = "|".join("---:" for _ in RATIO_PEERS)
    print("\n### (b) Full-history scan (median of runs; ratio = time / peer's time)\n")
    print(f"| repo | tool | wall s | {cols} | peak RSS MiB | findings | planted found |")
    print(f"|---|---|---:|{align}|---:|---:|---:|")
    for row in results:
        for n in names:
            if n not in row["tools"]:
                continue
            wall, rss, nf, found, tot, to, rc = row["tools"][n]
            tag = " (timeout)" if to else ("" if rc in (0, 1, 200, 205) else f" (rc {rc})")
            print(f"| {row['label']} ({row['commits']} commits, {row['raw'] / 1e6:.0f} MB) | {n} | "
                  f"{wall:.2f}{tag} | {ratios(row['tools'], wall)} | {rss / 1024:.0f} | {nf} | "
                  f"{found}/{tot} |")
    print("\n### (c) Working-tree scan of the same checkout\n")
    print(f"| repo | tool | wall s | {cols} | peak RSS MiB | findings |")
    print(f"|---|---|---:|{align}|---:|---:|")
    for row in results:
        for n in names:
            if n not in row["dir"]:
                continue
            wall, rss, nf, to = row["dir"][n]
            print(f"| {row['label']} | {n} | {wall:.2f}{' (timeout)' if to else ''} | "
                  f"{ratios(row['dir'], wall)} | {rss / 1024:.0f} | {nf} |")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--full", action="store_true", help="also the 5,000-commit ~150 MB repository")
    ap.add_argument("--reps", type=int, default=3, help="runs per timing (median is reported)")
    ap.add_argument("--skip-corpus", action="store_true")
    ap.add_argument("--skip-history", action="store_true")
    ap.add_argument("--tools", default="", help="comma-separated subset of tools")
    ap.add_argument("--baseline", default="",
                    help="another secaudit binary (e.g. an earlier build) run as tool 'secaudit-base', "
                         "so before/after ratios come from the same run")
    args = ap.parse_args()
    if args.baseline:
        base = os.path.abspath(args.baseline)
        TOOLS.insert(1, {"name": "secaudit-base", "bin": base,
                         "dir": lambda t, r: [base, "scan", t, "--format", "json", "--show-secrets"],
                         "git": lambda t, r: [base, "scan", t, "--history", "--format", "json",
                                              "--show-secrets"],
                         "report": "stdout", "parse": f_ours})
        if args.tools:
            args.tools += ",secaudit-base"
    os.makedirs(OUT, exist_ok=True)
    if not args.tools or "secaudit" in args.tools.split(","):
        pick_ours()
    tools = [t for t in TOOLS if not args.tools or t["name"] in args.tools.split(",")]
    missing = [t["name"] for t in tools if not available(t)]
    tools = [t for t in tools if available(t)]
    for m in missing:
        print(f"note: {m} not installed (run bash scripts/install-peers.sh / cargo build --release --bin secaudit)")
    print(f"# secaudit benchmark ({time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, "
          f"{os.cpu_count()} cores)")
    for t in tools:
        v = run([t["bin"], "--version"],
                timeout=30).stdout.decode(errors="replace").strip().splitlines()
        print(f"- {t['name']}: {v[0] if v else '?'}")
    if not args.skip_corpus:
        corpus_accuracy(tools)
        external_accuracy(tools)
    if not args.skip_history:
        sizes = [("task", 10, 12, 2, 2), ("500c", 500, 200, 10, 2)]
        if args.full:
            sizes.append(("5000c", 5000, 600, 10, 3))
        results = history_bench(tools, sizes, args.reps)
        print_history(results, [t["name"] for t in tools])
    print("\n### (d) Rescan after a one-file commit\n")
    print("in-process only: cargo bench -p graders --bench scan")
    return 0


if __name__ == "__main__":
    sys.exit(main())
