//! What a session keeps between steps to skip work (never a grade): the
//! last survey, the owner hint and the late fingerprint of a fresh copy.

use super::fsread;
use super::profile::StepProfile;
use std::path::PathBuf;
use std::sync::Arc;

/// Per-session leftovers of the last [`fsread::survey`], and the profile
/// of the last step. Nothing here is trusted for grading: the owner is a
/// hint for the sandbox's `lchown` walk, the files feed the ranked actions.
#[derive(Debug, Clone, Default)]
pub(super) struct StepCache {
    /// Owner of every workspace entry after the last bash step, if one.
    pub(super) owner: Option<(u32, u32)>,
    /// The workspace's file list (as `list_files` shows it). Only a bash
    /// command can change the tree, so structured actions reuse it.
    pub(super) files: Option<Vec<String>>,
    /// Where the last step's time went.
    pub(super) profile: StepProfile,
    /// A late fingerprint of the fresh copy, for a reset whose own walk
    /// was racy ([`LateFingerprint`]).
    pub(super) late_fp: Arc<LateFingerprint>,
}

/// A fresh workspace copy is racy for [`fsread::RACY_WINDOW`] (its files
/// were just written), so reset often cannot vouch for it and the first
/// bash step of the episode regraded in full even when it changed nothing.
/// Reset therefore surveys the copy again in the background once the
/// window has passed. The result is valid only if no action started
/// before that walk ended, which `actions` (bumped by every step before
/// its action runs) proves without ever taking the session lock (a held
/// lock would make a concurrent step fail as busy).
#[derive(Debug, Default)]
pub(super) struct LateFingerprint {
    /// Actions started in this session.
    pub(super) actions: std::sync::atomic::AtomicU64,
    /// The copy's fingerprint, once the late walk has vouched for it.
    pub(super) fp: std::sync::Mutex<Option<[u8; 32]>>,
}

impl LateFingerprint {
    /// Surveys `ws` after the racy window, unless an action starts first.
    pub(super) fn spawn(self: &Arc<Self>, ws: PathBuf) {
        use std::sync::atomic::Ordering::SeqCst;
        let me = self.clone();
        tokio::spawn(async move {
            tokio::time::sleep(fsread::RACY_WINDOW + std::time::Duration::from_millis(10)).await;
            if me.actions.load(SeqCst) != 0 {
                return;
            }
            let sv = survey_blocking(&ws).await;
            // An action that started during the walk may have written.
            if me.actions.load(SeqCst) == 0 {
                *me.fp.lock().expect("late fingerprint lock poisoned") = sv.fingerprint;
            }
        });
    }
}

/// [`fsread::survey`] on the blocking pool; an empty survey (no trusted
/// fingerprint, no owner) if the task fails.
pub(super) async fn survey_blocking(ws: &std::path::Path) -> fsread::Survey {
    let ws = ws.to_path_buf();
    tokio::task::spawn_blocking(move || fsread::survey(&ws))
        .await
        .unwrap_or_default()
}

/// The file list observations rank actions from, when no survey has one.
pub(super) fn list_for_observation(ws: &std::path::Path) -> Vec<String> {
    fsread::survey(ws).files
}
