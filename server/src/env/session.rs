//! A session's persistent state, written after every step (write-then-rename)
//! next to its workspace so a restarted server resumes it.

use super::visibility::{Exploration, Remediated};
use crate::models::{HistoryEntry, Observation, RewardMode};
use serde::{Deserialize, Serialize};
use std::io::Write;
use std::path::{Path, PathBuf};

/// File name of the session state inside its directory.
pub const STATE_FILE: &str = "session.json";
/// File name of the episode recording (JSON lines, values redacted).
pub const RECORDING_FILE: &str = "recording.jsonl";
/// Steps kept in `history` of an observation.
pub const HISTORY_SHOWN: usize = 10;

/// Everything needed to continue an episode after a restart.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SessionData {
    /// Server session id.
    pub session_id: String,
    /// Episode id.
    pub episode_id: String,
    /// Task number.
    pub task_id: u32,
    /// Variant seed.
    pub seed: Option<u64>,
    /// Reward mode chosen at reset.
    pub reward_mode: RewardMode,
    /// Steps taken.
    pub steps: u32,
    /// Current score (the seed's formula).
    pub score: f64,
    /// What the agent has looked at.
    pub exploration: Exploration,
    /// Secrets absent from everything the grader checks, as of the last
    /// grading.
    pub remediated: Remediated,
    /// Every step taken.
    pub history: Vec<HistoryEntry>,
    /// Episode over.
    pub done: bool,
    /// Ended by success or submit.
    pub terminated: bool,
    /// Ended by the step budget.
    pub truncated: bool,
    /// Every leak fixed with full health.
    pub success: bool,
    /// The latest observation.
    pub last_obs: Observation,
    /// Unix seconds of the last reset/step (idle expiry).
    pub last_active: u64,
}

/// Directory layout of one session.
#[derive(Debug, Clone)]
pub struct SessionPaths {
    /// `data/sessions/<id>`.
    pub dir: PathBuf,
}

impl SessionPaths {
    /// Paths of session `id` under `sessions_root`.
    pub fn new(sessions_root: &Path, id: &str) -> Self {
        Self {
            dir: sessions_root.join(id),
        }
    }
    /// The agent's workspace (the only directory a command can write).
    pub fn workspace(&self) -> PathBuf {
        self.dir.join("workspace")
    }
    /// The state file.
    pub fn state(&self) -> PathBuf {
        self.dir.join(STATE_FILE)
    }
    /// The recording.
    pub fn recording(&self) -> PathBuf {
        self.dir.join(RECORDING_FILE)
    }
}

/// Writes `data` atomically: a temp file in the same directory, fsync, rename.
pub fn save(paths: &SessionPaths, data: &SessionData) -> std::io::Result<()> {
    let tmp = paths.dir.join(format!(".{STATE_FILE}.tmp"));
    {
        let mut f = std::fs::File::create(&tmp)?;
        serde_json::to_writer(&mut f, data)?;
        f.sync_all()?;
    }
    std::fs::rename(&tmp, paths.state())
}

/// Reads a saved session.
pub fn load(paths: &SessionPaths) -> std::io::Result<SessionData> {
    let bytes = std::fs::read(paths.state())?;
    serde_json::from_slice(&bytes).map_err(std::io::Error::other)
}

/// Appends one JSON line to the recording.
pub fn record(paths: &SessionPaths, line: &serde_json::Value) -> std::io::Result<()> {
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(paths.recording())?;
    let mut s = serde_json::to_string(line)?;
    s.push('\n');
    f.write_all(s.as_bytes())
}

/// Seconds since the epoch (for idle expiry only; never in observations).
pub fn now_unix() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}
