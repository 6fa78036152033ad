//! Each session's next bash sandbox, started ahead of its command.

use super::Environment;
use super::config::WARM_DELAY;
use crate::sandbox::ExecRequest;
use std::sync::Arc;
use std::time::Instant;

/// A session's next sandbox, started in a task of its own; the task's
/// result is the sandbox. Dropping the slot drops the sandbox, at once or
/// when its start finishes.
///
/// The start is a fork of the server, and a fork write-locks the parent's
/// memory map while it copies the page tables: every thread that faults
/// meanwhile stalls, ~1 ms measured on the step that asked for it. So the
/// task waits [`WARM_DELAY`] first, for the step's reply to go out. A bash
/// command that comes sooner (a scripted agent stepping back-to-back)
/// calls the start off and runs cold ([`WarmSlot::take`]): a sandbox
/// still setting up would serve it later than a cold one, since its
/// waiting script costs a fork and two execs more (back-to-back `true`
/// steps measured 25.8 ms p50 that way, against 18.6 cold).
#[derive(Debug, Default)]
pub(super) enum WarmSlot {
    #[default]
    Empty,
    Starting {
        task: tokio::task::JoinHandle<Option<crate::sandbox::Warm>>,
        /// Told when a command claims the slot: a start still waiting
        /// for [`WARM_DELAY`] is called off.
        claimed: Arc<tokio::sync::Notify>,
        since: Instant,
    },
}

impl WarmSlot {
    /// The sandbox, if its start began: waiting for a spawn in progress
    /// (a fork and an exec, far less than a cold start). None when the
    /// start was still waiting, which calls it off.
    pub(super) async fn take(&mut self) -> Option<crate::sandbox::Warm> {
        match std::mem::take(self) {
            WarmSlot::Empty => None,
            WarmSlot::Starting { task, claimed, .. } => {
                claimed.notify_one();
                task.await.ok().flatten()
            }
        }
    }

    pub(super) fn is_empty(&self) -> bool {
        matches!(self, WarmSlot::Empty)
    }

    /// How long it has waited (for the idle reaper).
    pub(super) fn age(&self) -> Option<std::time::Duration> {
        match self {
            WarmSlot::Empty => None,
            WarmSlot::Starting { since, .. } => Some(since.elapsed()),
        }
    }
}

impl Environment {
    /// Starts a sandbox for the session's next bash command (exactly the
    /// request a bash step makes, but for the command), in a task of its
    /// own: on a tokio worker, as `Sandbox::prewarm` requires.
    pub(super) fn prewarm(&self, ws: &std::path::Path) -> WarmSlot {
        if !self.inner.cfg.prewarm || !self.inner.sandbox.is_contained() {
            return WarmSlot::Empty;
        }
        let sandbox = self.inner.sandbox.clone();
        let req = ExecRequest::bash(ws, "");
        let claimed = Arc::new(tokio::sync::Notify::new());
        let called_off = claimed.clone();
        WarmSlot::Starting {
            task: tokio::spawn(async move {
                tokio::select! {
                    _ = tokio::time::sleep(WARM_DELAY) => sandbox.prewarm(&req),
                    _ = called_off.notified() => None,
                }
            }),
            claimed,
            since: Instant::now(),
        }
    }
}
