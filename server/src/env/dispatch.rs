//! Running one parsed action against a session's workspace.

use super::actions::Parsed;
use super::table::Session;
use super::{Environment, fsread, inspect};
use crate::models::ActionOutput;
use crate::sandbox::ExecRequest;
use std::time::Instant;

impl Environment {
    /// Runs the action; returns its output and whether it may have changed
    /// the workspace (so grading must rerun).
    pub(super) async fn run_action(
        &self,
        s: &mut Session,
        parsed: &Parsed,
        ws: &std::path::Path,
    ) -> (ActionOutput, bool) {
        let mut out = ActionOutput {
            kind: parsed.kind().to_string(),
            exit_code: Some(0),
            ..Default::default()
        };
        let fail = |out: &mut ActionOutput, msg: String| {
            out.exit_code = Some(1);
            out.stderr = msg;
        };
        match parsed {
            Parsed::InspectFile(p) => match fsread::read_bounded(ws, p, inspect::INSPECT_MAX_BYTES)
            {
                Ok((bytes, more)) => {
                    out.stdout = inspect::numbered(&bytes, more);
                    s.data.exploration.inspected.insert(normalise(p));
                }
                Err(e) => fail(&mut out, format!("inspect_file: {e}")),
            },
            Parsed::InspectEncoded(p) => {
                match fsread::read_bounded(ws, p, inspect::INSPECT_MAX_BYTES) {
                    Ok((bytes, _)) => {
                        out.stdout = inspect::decoded_runs(&bytes);
                        s.data.exploration.encoded_inspected.insert(normalise(p));
                        s.data.exploration.inspected.insert(normalise(p));
                    }
                    Err(e) => fail(&mut out, format!("inspect_encoded: {e}")),
                }
            }
            Parsed::ListFiles(p) => match fsread::list_files(ws, p.as_deref(), 2000) {
                Ok((files, more)) => {
                    out.stdout = files.join("\n");
                    if more {
                        out.stdout.push_str("\n[... more files not shown ...]");
                    }
                    out.stdout.push('\n');
                }
                Err(e) => fail(&mut out, format!("list_files: {e}")),
            },
            Parsed::ScanHistory => {
                let rt = s.rt.clone();
                let ws = ws.to_path_buf();
                match tokio::task::spawn_blocking(move || rt.history_report(&ws)).await {
                    Ok(Ok(text)) => {
                        out.stdout = text;
                        s.data.exploration.history_scanned = true;
                    }
                    Ok(Err(e)) => fail(&mut out, format!("scan_history: {e}")),
                    Err(e) => fail(&mut out, format!("scan_history: {e}")),
                }
            }
            Parsed::RunScanner => {
                let rt = s.rt.clone();
                let ws = ws.to_path_buf();
                match tokio::task::spawn_blocking(move || rt.scanner_report(&ws)).await {
                    Ok(Ok((text, n))) => {
                        out.stdout = text;
                        out.exit_code = Some(if n > 0 { 1 } else { 0 });
                        s.data.exploration.scanner_run = true;
                    }
                    Ok(Err(e)) => fail(&mut out, format!("run_scanner: {e}")),
                    Err(e) => fail(&mut out, format!("run_scanner: {e}")),
                }
            }
            Parsed::Submit => {
                out.stdout = "submitted; episode ends after this grading\n".into();
            }
            Parsed::Bash(cmd) => {
                // A bash command that names a planted file counts as
                // inspecting it (cat, sed -n, grep): shallow tier.
                for sec in &s.rt.secrets {
                    if cmd.contains(sec.file.as_str()) && ws.join(&sec.file).exists() {
                        s.data.exploration.inspected.insert(sec.file.clone());
                    }
                }
                let mut req = ExecRequest::bash(ws.to_path_buf(), cmd.clone());
                req.owned_by = s.cache.owner;
                let t = Instant::now();
                let warm = s.warm.take().await;
                let run = self.inner.sandbox.run_warm(warm, req).await;
                s.cache.profile.sandbox = t.elapsed();
                match run {
                    Ok(o) => {
                        s.cache.profile.owner_walk = o.owner_walk;
                        s.cache.profile.warm = o.warm;
                        out.exit_code = o.exit_code;
                        out.stdout = o.stdout;
                        out.stderr = o.stderr;
                        out.stdout_truncated_bytes = o.stdout_dropped;
                        out.stderr_truncated_bytes = o.stderr_dropped;
                        out.timed_out = o.timed_out;
                        out.limit_exceeded = o.bound.map(|b| b.name().to_string());
                        if o.timed_out {
                            out.stderr.push_str("\n[command timed out and was killed]");
                        }
                    }
                    Err(e) => fail(&mut out, format!("sandbox failed to run the command: {e}")),
                }
                return (out, true);
            }
        }
        (out, false)
    }
}

fn normalise(p: &str) -> String {
    let p = p.trim().trim_start_matches("./");
    p.strip_prefix("/workspace/").unwrap_or(p).to_string()
}
