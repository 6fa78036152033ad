//! The bubblewrap command line: the allowlisted environment and the
//! flag set the tier promises (spec.md §7).

use super::*;

/// The allowlisted environment (everything else is cleared). HOME and
/// TMPDIR are added per mode.
pub(super) fn base_env(cfg: &SandboxConfig) -> Vec<(String, String)> {
    let path = format!("{}/bin:/usr/local/bin:/usr/bin:/bin", cfg.venv.display());
    [
        ("PATH", path.as_str()),
        ("LANG", "C.UTF-8"),
        ("TZ", "UTC"),
        ("TERM", "dumb"),
        ("PYTHONHASHSEED", "0"),
        ("PYTHONDONTWRITEBYTECODE", "1"),
        ("PYTHONNOUSERSITE", "1"),
        ("GIT_CONFIG_NOSYSTEM", "1"),
        ("GIT_PAGER", "cat"),
        ("PAGER", "cat"),
        ("GIT_EDITOR", "true"),
        ("EDITOR", "true"),
        ("GIT_TERMINAL_PROMPT", "0"),
        ("GIT_AUTHOR_NAME", "Agent"),
        ("GIT_AUTHOR_EMAIL", "agent@sandbox.invalid"),
        ("GIT_COMMITTER_NAME", "Agent"),
        ("GIT_COMMITTER_EMAIL", "agent@sandbox.invalid"),
        // Pinned so a commit (or stash, or rewrite) the agent makes has the
        // same id in every replay of the same actions: with the clock in it,
        // commit ids, and every observation that prints them, would differ.
        // After every generated task history, so `git log` order is natural.
        ("GIT_AUTHOR_DATE", "2026-01-01T00:00:00+0000"),
        ("GIT_COMMITTER_DATE", "2026-01-01T00:00:00+0000"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect()
}

/// The bwrap command line (what it must isolate: spec.md §7). Mount order matters: later
/// mounts cover earlier ones, so the venv comes after `--tmpfs /tmp` and the
/// extra binds after the workspace.
pub(super) fn bwrap_args(
    cfg: &SandboxConfig,
    req: &ExecRequest,
    limits: &Limits,
    info_fd: Option<i32>,
    payload: Payload<'_>,
) -> Vec<OsString> {
    bwrap_args_filtered(cfg, req, limits, info_fd, None, payload)
}

/// [`bwrap_args`] with a seccomp program bwrap reads from `seccomp_fd`
/// and installs on the command (`--seccomp`).
pub(super) fn bwrap_args_filtered(
    cfg: &SandboxConfig,
    req: &ExecRequest,
    limits: &Limits,
    info_fd: Option<i32>,
    seccomp_fd: Option<i32>,
    payload: Payload<'_>,
) -> Vec<OsString> {
    let mut a: Vec<OsString> = Vec::new();
    let mut push = |items: &[&str]| a.extend(items.iter().map(OsString::from));
    push(&[
        "--unshare-all",
        "--unshare-user",
        "--disable-userns",
        "--die-with-parent",
        "--new-session",
        "--hostname",
        "sandbox",
        "--ro-bind",
        "/usr",
        "/usr",
        "--symlink",
        "usr/bin",
        "/bin",
        "--symlink",
        "usr/lib",
        "/lib",
        "--symlink",
        "usr/lib64",
        "/lib64",
        "--symlink",
        "usr/sbin",
        "/sbin",
        "--proc",
        "/proc",
        "--dev",
        "/dev",
        "--size",
    ]);
    push(&[
        &limits.tmp_size.to_string(),
        "--tmpfs",
        "/tmp",
        "--dir",
        "/tmp/home",
    ]);
    let bind = |a: &mut Vec<OsString>, flag: &str, src: &Path, dst: &Path| {
        a.push(flag.into());
        a.push(src.as_os_str().to_owned());
        a.push(dst.as_os_str().to_owned());
    };
    for f in SYSTEM_ETC {
        bind(&mut a, "--ro-bind-try", Path::new(f), Path::new(f));
    }
    bind(&mut a, "--ro-bind-try", &cfg.venv, &cfg.venv);
    bind(&mut a, "--bind", &req.workspace, Path::new(WORKSPACE_MOUNT));
    for (src, dst) in &req.extra_rw_binds {
        bind(&mut a, "--bind", src, dst);
    }
    for (src, dst) in &req.extra_ro_binds {
        bind(&mut a, "--ro-bind", src, dst);
    }
    a.push("--chdir".into());
    a.push(WORKSPACE_MOUNT.into());
    a.push("--clearenv".into());
    let mut env = base_env(cfg);
    env.push(("HOME".into(), "/tmp/home".into()));
    env.push(("TMPDIR".into(), "/tmp".into()));
    env.extend(req.env.iter().cloned());
    for (k, v) in env {
        a.push("--setenv".into());
        a.push(k.into());
        a.push(v.into());
    }
    if let Some(fd) = info_fd {
        a.push("--info-fd".into());
        a.push(fd.to_string().into());
    }
    if let Some(fd) = seccomp_fd {
        a.push("--seccomp".into());
        a.push(fd.to_string().into());
        // A filtered sandbox is a service, which outlives each request:
        // the tmpfs root and /dev bwrap made (the directories above every
        // bind, /etc, /dev itself) are the uid's, and a `chmod 000 /dev`
        // or on a venv's parent carried into every later request (red
        // team of the health runner). Read-only, only the binds are
        // writable, each as bound.
        for dest in ["/", "/dev"] {
            a.push("--remount-ro".into());
            a.push(dest.into());
        }
    }
    a.push("--".into());
    a.push("/usr/bin/bash".into());
    match payload {
        Payload::Command(c) => {
            a.push("-lc".into());
            a.push(c.into());
        }
        Payload::Await(fd) => {
            a.push("-c".into());
            a.push(await_script(fd).into());
        }
    }
    a
}
