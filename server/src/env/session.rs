//! A session's persistent state next to its workspace, so a restarted
//! server resumes it.
//!
//! Per step: an in-flight marker is written (atomically) before the action
//! runs; after it, the state is written durably (write, fsync, rename,
//! fsync of the directory) *before* the reply, then the recording line is
//! appended and the marker removed. Whatever instant the process dies at,
//! resume can tell which step was running and whether the recording lacks a
//! line, so state, workspace and recording are made to agree again
//! (`Environment::recover_session`).

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

/// File name of the in-flight step marker ([`begin_step`]).
pub const INFLIGHT_FILE: &str = "inflight.json";

/// Writes `bytes` to `dir/name` atomically and durably: a temp file in the
/// same directory, fsync, rename, fsync of the directory (so the rename
/// itself survives a power cut, not only a killed process). A reader sees
/// the old content or the new one, never a torn file.
fn write_durable(dir: &Path, name: &str, bytes: &[u8]) -> std::io::Result<()> {
    write_renamed(dir, name, bytes, true)
}

/// Write-then-rename of `bytes` to `dir/name`; with `fsync`, the file and
/// then the directory are synced too. Without it the result survives a
/// killed process (the page cache outlives it) but not a power cut.
fn write_renamed(dir: &Path, name: &str, bytes: &[u8], fsync: bool) -> std::io::Result<()> {
    let tmp = dir.join(format!(".{name}.tmp"));
    {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        if fsync {
            f.sync_all()?;
        }
    }
    std::fs::rename(&tmp, dir.join(name))?;
    // Best effort: some filesystems refuse fsync on a directory.
    if fsync && let Ok(d) = std::fs::File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

/// Writes the session state atomically and durably ([`write_durable`]).
/// Blocking: async callers use [`save_durable`].
pub fn save(paths: &SessionPaths, data: &SessionData) -> std::io::Result<()> {
    let bytes = serde_json::to_vec(data)?;
    write_durable(&paths.dir, STATE_FILE, &bytes)
}

/// [`save`] on the blocking pool, awaited: when it returns `Ok` the state
/// is on stable storage, so a step's reply is only sent for a state that
/// survives a crash (or a power cut) of the server.
pub async fn save_durable(paths: &SessionPaths, data: &SessionData) -> std::io::Result<()> {
    let (paths, data) = (paths.clone(), data.clone());
    tokio::task::spawn_blocking(move || save(&paths, &data))
        .await
        .map_err(std::io::Error::other)?
}

/// A step that has started and not yet been saved. Written (durably)
/// before the action runs and removed once its state and recording line
/// are written, so a server killed mid-step leaves evidence of it: on
/// resume the step is counted, the workspace it may have changed is
/// regraded and the recording gets its line (`Environment::new`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InFlight {
    /// The step number this action would get (saved `steps` + 1).
    pub step: u32,
    /// The command as received (the state file holds commands unredacted
    /// too; the recording gets the redacted form).
    pub command: String,
    /// Unix seconds when the step started.
    pub started_unix: u64,
}

/// Largest marker accepted on resume (a command is bounded far below).
const MAX_INFLIGHT_BYTES: u64 = 1 << 20;

/// Writes the in-flight marker of a step about to run, atomically but not
/// fsynced: what it guards against is a killed server, whose page cache
/// survives it. Against a power cut an fsync here would buy nothing, since
/// the workspace writes of the step it names are not synced either; the
/// file and directory fsyncs it used to cost were about 4.6 ms a step.
pub async fn begin_step(paths: &SessionPaths, marker: &InFlight) -> std::io::Result<()> {
    let bytes = serde_json::to_vec(marker)?;
    let dir = paths.dir.clone();
    tokio::task::spawn_blocking(move || write_renamed(&dir, INFLIGHT_FILE, &bytes, false))
        .await
        .map_err(std::io::Error::other)?
}

/// Removes the in-flight marker once the step's state and recording are
/// written. Not fsynced: a marker that reappears after a power cut names a
/// step the saved state already holds, which resume recognises and drops.
pub fn end_step(paths: &SessionPaths) -> std::io::Result<()> {
    match std::fs::remove_file(paths.dir.join(INFLIGHT_FILE)) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
        _ => Ok(()),
    }
}

/// The in-flight marker, if one is there. An unreadable or oversized one
/// is an error (resume logs it, regrades anyway and removes it).
pub fn load_inflight(paths: &SessionPaths) -> std::io::Result<Option<InFlight>> {
    let p = paths.dir.join(INFLIGHT_FILE);
    let meta = match std::fs::metadata(&p) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    if meta.len() > MAX_INFLIGHT_BYTES {
        return Err(std::io::Error::other(format!(
            "in-flight marker is {} bytes, over {MAX_INFLIGHT_BYTES}",
            meta.len()
        )));
    }
    let bytes = std::fs::read(&p)?;
    serde_json::from_slice(&bytes)
        .map(Some)
        .map_err(std::io::Error::other)
}

/// What the recording already holds, for reconciling it with the state.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RecordedTail {
    /// A `reset` line is present.
    pub reset: bool,
    /// The highest step number of a parseable `step` line (0 if none).
    pub last_step: u32,
}

/// Scans the recording line by line (memory bounded by one line); torn or
/// foreign lines are skipped. A missing recording is an empty one.
pub fn recorded_tail(paths: &SessionPaths) -> std::io::Result<RecordedTail> {
    use std::io::BufRead;
    let f = match std::fs::File::open(paths.recording()) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(RecordedTail::default()),
        Err(e) => return Err(e),
    };
    let mut tail = RecordedTail::default();
    for line in std::io::BufReader::new(f).split(b'\n') {
        let Ok(v) = serde_json::from_slice::<serde_json::Value>(&line?) else {
            continue;
        };
        match v["event"].as_str() {
            Some("reset") => tail.reset = true,
            Some("step") => {
                if let Some(n) = v["step"].as_u64() {
                    tail.last_step = tail.last_step.max(n.min(u32::MAX as u64) as u32);
                }
            }
            _ => {}
        }
    }
    Ok(tail)
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

    #[tokio::test]
    async fn inflight_marker_round_trip_and_removal() {
        let d = tempfile::tempdir().unwrap();
        let paths = SessionPaths::new(d.path(), "s");
        std::fs::create_dir_all(&paths.dir).unwrap();
        assert_eq!(load_inflight(&paths).unwrap(), None, "no marker yet");
        let m = InFlight {
            step: 4,
            command: "touch x; sleep 30".into(),
            started_unix: 17,
        };
        begin_step(&paths, &m).await.unwrap();
        assert_eq!(load_inflight(&paths).unwrap(), Some(m));
        assert!(
            !paths.dir.join(format!(".{INFLIGHT_FILE}.tmp")).exists(),
            "temp file renamed away"
        );
        end_step(&paths).unwrap();
        assert_eq!(load_inflight(&paths).unwrap(), None);
        end_step(&paths).expect("removing an absent marker is not an error");
        // A damaged marker is reported, not taken for a step.
        std::fs::write(paths.dir.join(INFLIGHT_FILE), b"{\"step\": ").unwrap();
        assert!(load_inflight(&paths).is_err());
    }

    #[tokio::test]
    async fn save_durable_replaces_the_state() {
        let d = tempfile::tempdir().unwrap();
        let paths = SessionPaths::new(d.path(), "s");
        std::fs::create_dir_all(&paths.dir).unwrap();
        let obs: Observation = serde_json::from_value(serde_json::json!({
            "session_id": "s", "episode_id": "e", "task_id": 1, "task_slug": "task_01",
            "seed": null, "title": "t", "difficulty": "easy", "description": "",
            "scan_mode": "dir", "step_budget": 10, "steps_taken": 0, "reward": 0.0,
            "reward_mode": "score",
            "reward_breakdown": {"detection": 0.0, "base": 0.0, "health": 0.0,
                "efficiency": 0.0, "score": 0.0, "reward": 0.0},
            "leaks_initial": 2, "leaks_current": 2, "visible_secrets": [], "hidden_count": 2,
            "conflict_map": [], "ranked_actions": [], "top_blocker": null,
            "health": {"passed": 0, "failed": 0, "errors": 0, "total": 0, "score": 0.0,
                "cached": false, "error": null},
            "last_action": null, "history": [], "done": false, "terminated": false,
            "truncated": false, "success": false,
            "sandbox": {"available": true, "detail": ""}, "grading_errors": []
        }))
        .expect("observation");
        let mut data = SessionData {
            session_id: "s".into(),
            episode_id: "e".into(),
            task_id: 1,
            seed: None,
            reward_mode: RewardMode::Score,
            steps: 1,
            score: 0.0,
            exploration: Exploration::default(),
            remediated: Remediated::new(),
            history: vec![],
            done: false,
            terminated: false,
            truncated: false,
            success: false,
            last_obs: obs,
            last_active: 0,
        };
        save_durable(&paths, &data).await.unwrap();
        data.steps = 2;
        save_durable(&paths, &data).await.unwrap();
        assert_eq!(load(&paths).unwrap().steps, 2);
    }

    #[test]
    fn recorded_tail_skips_torn_and_foreign_lines() {
        let d = tempfile::tempdir().unwrap();
        let paths = SessionPaths::new(d.path(), "s");
        std::fs::create_dir_all(&paths.dir).unwrap();
        assert_eq!(recorded_tail(&paths).unwrap(), RecordedTail::default());
        record(&paths, &serde_json::json!({"event": "reset"})).unwrap();
        record(&paths, &serde_json::json!({"event": "step", "step": 1})).unwrap();
        record(
            &paths,
            &serde_json::json!({"event": "resume_regrade", "after_step": 9}),
        )
        .unwrap();
        record(&paths, &serde_json::json!({"event": "step", "step": 2})).unwrap();
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(paths.recording())
            .unwrap();
        f.write_all(b"{\"event\": \"step\", \"step\": 3, \"obs")
            .unwrap();
        assert_eq!(
            recorded_tail(&paths).unwrap(),
            RecordedTail {
                reset: true,
                last_step: 2
            },
            "a torn line is not a recorded step"
        );
    }
}
