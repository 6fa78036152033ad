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

/// Writes `data` atomically: a temp file in the same directory, fsync,
/// rename, fsync of the directory (so the rename itself survives a power
/// cut, not only a killed process). A reader sees the old state or the new
/// one, never a torn file.
pub fn save(paths: &SessionPaths, data: &SessionData) -> std::io::Result<()> {
    let tmp = paths.dir.join(format!(".{STATE_FILE}.tmp"));
    {
        let mut f = std::fs::File::create(&tmp)?;
        serde_json::to_writer(&mut f, data)?;
        f.sync_all()?;
    }
    std::fs::rename(&tmp, paths.state())?;
    // Best effort: some filesystems refuse fsync on a directory.
    if let Ok(d) = std::fs::File::open(&paths.dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

/// [`save`] without the waits: write, then rename over the state file. A
/// killed process leaves the old state or the new one, never a torn file;
/// durability against a power cut comes from [`sync_saved`], which the
/// step path runs in the background, because two fsyncs cost 1-15 ms on a
/// busy disk and the workspace the state describes is never fsynced anyway
/// (a power cut loses its last writes whatever the state file says).
pub fn save_unsynced(paths: &SessionPaths, data: &SessionData) -> std::io::Result<()> {
    let tmp = paths.dir.join(format!(".{STATE_FILE}.tmp"));
    {
        let mut f = std::io::BufWriter::new(std::fs::File::create(&tmp)?);
        serde_json::to_writer(&mut f, data)?;
        f.flush()?;
    }
    std::fs::rename(&tmp, paths.state())
}

/// Flushes the current state file and the rename that put it there.
pub fn sync_saved(paths: &SessionPaths) -> std::io::Result<()> {
    std::fs::File::open(paths.state())?.sync_all()?;
    if let Ok(d) = std::fs::File::open(&paths.dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

/// Reads a saved session.
pub fn load(paths: &SessionPaths) -> std::io::Result<SessionData> {
    let bytes = std::fs::read(paths.state())?;
    serde_json::from_slice(&bytes).map_err(std::io::Error::other)
}

/// Appends one JSON line to the recording, in one `write` on an
/// `O_APPEND` file. A process killed mid-write can leave a torn last line;
/// the next append then starts on a fresh line, so only the torn line is
/// unreadable and every later one parses.
pub fn record(paths: &SessionPaths, line: &serde_json::Value) -> std::io::Result<()> {
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .read(true)
        .open(paths.recording())?;
    let mut s = String::new();
    if !ends_with_newline(&mut f)? {
        s.push('\n');
    }
    s.push_str(&serde_json::to_string(line)?);
    s.push('\n');
    f.write_all(s.as_bytes())
}

/// True if the file is empty or its last byte is a newline.
fn ends_with_newline(f: &mut std::fs::File) -> std::io::Result<bool> {
    use std::io::{Read, Seek, SeekFrom};
    let len = f.metadata()?.len();
    if len == 0 {
        return Ok(true);
    }
    f.seek(SeekFrom::Start(len - 1))?;
    let mut b = [0u8; 1];
    f.read_exact(&mut b)?;
    Ok(b[0] == b'\n')
}

/// Seconds since the epoch (for idle expiry only; never in observations).
pub fn now_unix() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn record_recovers_from_a_torn_line() {
        let d = tempfile::tempdir().unwrap();
        let paths = SessionPaths::new(d.path(), "s");
        std::fs::create_dir_all(&paths.dir).unwrap();
        record(&paths, &serde_json::json!({"n": 1})).unwrap();
        // A process killed mid-write leaves half a line.
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(paths.recording())
            .unwrap();
        f.write_all(b"{\"n\": 2, \"obs").unwrap();
        drop(f);
        record(&paths, &serde_json::json!({"n": 3})).unwrap();
        record(&paths, &serde_json::json!({"n": 4})).unwrap();
        let text = std::fs::read_to_string(paths.recording()).unwrap();
        let parsed: Vec<Option<u64>> = text
            .lines()
            .map(|l| {
                serde_json::from_str::<serde_json::Value>(l)
                    .ok()
                    .and_then(|v| v["n"].as_u64())
            })
            .collect();
        assert_eq!(parsed, vec![Some(1), None, Some(3), Some(4)], "{text:?}");
    }
}
