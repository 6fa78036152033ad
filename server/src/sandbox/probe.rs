//! Start-up: handing a workspace to the sandbox uid and probing which tier
//! works on this host.

use super::*;

/// Hands a tree to `uid:gid` without following symlinks (`lchown` on every
/// entry, descending only into real directories), so the sandbox uid can
/// write the workspace. Call it only while no sandbox runs in the tree: a
/// directory swapped for a symlink mid-walk would be followed by
/// `read_dir`. Bounded by the tree itself (iterative, no recursion depth).
pub fn prepare_workspace_owner(path: &Path, uid: u32, gid: u32) -> io::Result<()> {
    let mut stack = vec![path.to_path_buf()];
    while let Some(p) = stack.pop() {
        let meta = std::fs::symlink_metadata(&p)?;
        if meta.uid() != uid || meta.gid() != gid {
            std::os::unix::fs::lchown(&p, Some(uid), Some(gid))?;
        }
        if meta.file_type().is_dir() {
            for entry in std::fs::read_dir(&p)? {
                stack.push(entry?.path());
            }
        }
    }
    Ok(())
}

/// Runs `true` in the full sandbox, synchronously, and returns bwrap's
/// version, or why it cannot be used.
pub(super) fn probe(cfg: &SandboxConfig) -> Result<String, String> {
    if !cfg.bwrap.is_absolute() {
        return Err(format!("{} is not an absolute path", cfg.bwrap.display()));
    }
    let version = std::process::Command::new(&cfg.bwrap)
        .arg("--version")
        .env_clear()
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot execute {}: {e}", cfg.bwrap.display()))?;
    let version = String::from_utf8_lossy(&version.stdout).trim().to_string();
    let ws = tempfile::Builder::new()
        .prefix("sa-probe-")
        .tempdir()
        .map_err(|e| format!("probe dir: {e}"))?;
    let sandbox = Sandbox {
        cfg: cfg.clone(),
        mode: Mode::Bwrap {
            version: version.clone(),
        },
    };
    if let Some((uid, gid)) = sandbox.run_as() {
        prepare_workspace_owner(ws.path(), uid, gid).map_err(|e| format!("probe dir: {e}"))?;
    }
    let limits = Limits {
        wall: Duration::from_secs(10),
        ..cfg.limits.clone()
    };
    let req = ExecRequest::bash(ws.path(), "true");
    let mut cmd = std::process::Command::new(&cfg.bwrap);
    cmd.args(bwrap_args(
        cfg,
        &req,
        &limits,
        None,
        Payload::Command(&req.command),
    ));
    sandbox
        .child_setup(&limits, &[], sandbox.run_as())
        .install(&mut cmd);
    cmd.env_clear()
        .process_group(0)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    let mut child = cmd
        .spawn()
        .map_err(|e| format!("cannot spawn bwrap: {e}"))?;
    let deadline = Instant::now() + limits.wall;
    let status = loop {
        match child.try_wait() {
            Ok(Some(s)) => break s,
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(5)),
            Ok(None) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err("bwrap probe timed out".into());
            }
            Err(e) => return Err(format!("bwrap probe: {e}")),
        }
    };
    if status.success() {
        Ok(version)
    } else {
        let mut err = String::new();
        if let Some(mut e) = child.stderr.take() {
            let _ = (&mut e).take(4096).read_to_string(&mut err);
        }
        Err(format!("bwrap probe failed ({status}): {}", err.trim()))
    }
}

/// Probes the landlock tier: the kernel has Landlock, the filters build,
/// and `true` runs under the full confinement (synchronously, a few ms).
pub(super) fn probe_landlock(cfg: &SandboxConfig) -> Result<confine::Landlock, String> {
    let ll = confine::Landlock::probe()?;
    let sandbox = Sandbox {
        cfg: cfg.clone(),
        mode: Mode::Landlock(ll.clone()),
    };
    let ws = tempfile::Builder::new()
        .prefix("sa-probe-")
        .tempdir()
        .map_err(|e| format!("probe dir: {e}"))?;
    if let Some((uid, gid)) = sandbox.run_as() {
        prepare_workspace_owner(ws.path(), uid, gid).map_err(|e| format!("probe dir: {e}"))?;
    }
    // The probe must not need the caller's runtime (detect is sync and may
    // be called from inside one): a small runtime on a thread of its own.
    let ws_path = ws.path().to_path_buf();
    let out = std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| format!("probe runtime: {e}"))?;
        let req = ExecRequest {
            limits: Some(Limits {
                wall: Duration::from_secs(10),
                ..sandbox.cfg.limits.clone()
            }),
            ..ExecRequest::bash(ws_path, "true")
        };
        rt.block_on(sandbox.run(req))
            .map_err(|e| format!("cannot start: {e}"))
    })
    .join()
    .map_err(|_| "probe thread panicked".to_string())??;
    if out.exit_code == Some(0) {
        Ok(ll)
    } else {
        Err(format!(
            "probe command failed (exit {:?}): {}",
            out.exit_code,
            out.stderr.trim()
        ))
    }
}
