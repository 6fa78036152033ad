//! One grading pass over a session's workspace, from trusted inputs only.
//!
//! Security is decided by ground truth: a planted secret is remediated only
//! if its value and simple transforms are absent from every file of the tree
//! and, for git tasks, from every object of the repository with the original
//! history still intact (`graders::security`). Values a leak-grade scanner
//! rule finds now that it did not find at reset are new leaks. Health runs the pristine
//! tests in the sandbox on a restored copy (`crate::health`). Grading
//! failures fail closed and are reported, never hidden.

use super::grade::{Grade, GradeTimings};
use super::runtime::TaskRuntime;
use super::visibility::{self, Remediated};
use crate::models::ScanMode;
use graders::security::{self, TreeLimits};
use std::collections::BTreeSet;
use std::path::Path;

/// Grades the workspace `ws` of a session of `rt`.
pub async fn grade(rt: &std::sync::Arc<TaskRuntime>, ws: &Path) -> Grade {
    let rt2 = rt.clone();
    let ws2 = ws.to_path_buf();
    let sec = tokio::task::spawn_blocking(move || {
        let t = std::time::Instant::now();
        let r = security_pass(&rt2, &ws2);
        (r, t.elapsed())
    });
    // Linted against the template: code under test that reaches into
    // pytest fails health instead of faking it (crate::health).
    let health = async {
        let t = std::time::Instant::now();
        let h = rt
            .health
            .grade_linted_timed(ws, &rt.pristine, &rt.template, &rt.expected)
            .await;
        (h, t.elapsed())
    };
    let (sec, (health, health_time)) = tokio::join!(sec, health);
    let mut timings = GradeTimings {
        health: health_time,
        health_in_pytest: health.in_pytest,
        ..Default::default()
    };
    let health = health.summary;
    let sec = sec.map(|(r, d)| {
        timings.security = d;
        r
    });
    let (remediated, new_leaks, mut errors) = match sec {
        Ok(v) => v,
        Err(e) => (
            Remediated::new(),
            0,
            vec![format!(
                "security grader crashed: {e}; counting every secret as present"
            )],
        ),
    };
    if let Some(e) = &health.error {
        errors.push(format!("health: {e}"));
    }
    let fixed = visibility::counted_fixed(&rt.secrets, &remediated);
    Grade {
        remediated,
        fixed,
        new_leaks,
        health,
        errors,
        timings,
    }
}

fn security_pass(rt: &TaskRuntime, ws: &Path) -> (Remediated, u32, Vec<String>) {
    let mut errors = Vec::new();
    let index = &rt.planted;
    let dir_mode = rt.info.scan_mode == ScanMode::Dir;
    let limits = TreeLimits::default();
    // Dir mode reads `.git/objects` too (a copy planted there is a copy),
    // minus exactly the reset's own history.
    let tree = if dir_mode {
        security::scan_tree_dir_mode(ws, index, &limits, &rt.pristine_git)
    } else {
        security::scan_tree(ws, index, &limits)
    };
    if tree.budget_exceeded {
        errors.push(
            "workspace exceeds the grader's size budget: every secret counts as present".into(),
        );
    }
    errors.extend(tree.errors.iter().take(5).cloned());
    // Git mode: every object, with the original history intact. Dir mode:
    // the history at reset is out of scope, but objects the agent creates
    // (a commit of a copy of the key) are searched like files.
    let git = Some(if dir_mode {
        security::scan_new_objects(ws, index, &rt.pristine_objects)
    } else {
        let empty = security::HistoryRecord::default();
        security::scan_git(ws, index, rt.history.as_ref().unwrap_or(&empty))
    });
    if let Some(g) = &git
        && !g.history_valid
    {
        errors.push(format!(
            "git history not intact ({}): history secrets count as present",
            g.reason.as_deref().unwrap_or("unknown")
        ));
    }
    let verdicts = security::grade(index.planted(), &tree, git.as_ref());
    for v in verdicts.iter().filter(|v| !v.remediated) {
        tracing::debug!(secret = %v.id, locations = ?v.locations, reason = %v.reason, "secret present");
    }
    let remediated: Remediated = verdicts
        .into_iter()
        .filter(|v| v.remediated)
        .map(|v| v.id)
        .collect();

    // New leaks: values the grader's scanner finds now, by a leak-grade
    // rule (`graders::scanner::LEAK_GRADE_RULES`: precise enough that an
    // honest fix never trips it), that were not found at reset and are
    // not planted values (those are counted above).
    let planted_values: BTreeSet<&str> = rt.secrets.iter().map(|s| s.value.as_str()).collect();
    let mut new_values = BTreeSet::new();
    match rt.scanner.scan_tree(ws) {
        Ok(t) => {
            if t.budget_exceeded {
                errors.push("scanner budget exceeded on the workspace".into());
            }
            for f in t.findings {
                if graders::scanner::counts_as_new_leak(&f.rule)
                    && !rt.initial_values.contains(&f.value)
                    && !planted_values
                        .iter()
                        .any(|p| p.contains(f.value.as_str()) || f.value.contains(p))
                {
                    tracing::debug!(file = %f.file, line = f.line, rule = %f.rule, "new leak");
                    new_values.insert(f.value);
                }
            }
        }
        Err(e) => errors.push(format!("scanner failed: {e}")),
    }
    (remediated, new_values.len() as u32, errors)
}
