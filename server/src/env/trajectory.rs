//! Trajectories: a session's recording (`recording.jsonl`, secret values
//! redacted as it is written), readable while the session lives and kept
//! for a while after it closes.
//!
//! On close the recording is moved (a rename, same filesystem) out of the
//! session directory into `data/trajectories/<session_id>.jsonl`, and its
//! modification time is set to the closing time. A retained recording is
//! served until [`Retention::secs`] after that time and never later; the
//! area is bounded by count and bytes, oldest evicted first, on every
//! close. It lives outside `data/sessions`, so resuming sessions after a
//! restart never sees a retained recording (and never takes one for the
//! debris of a crashed reset).
//!
//! Session ids reach this module from clients and become file names, so
//! an id is used only if [`is_session_id`] accepts it: the exact shape the
//! environment mints ([`new_session_id`]), nothing a path could hide in.

use super::session::{RECORDING_FILE, STATE_FILE};
use super::{EnvError, Environment};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// Seconds a closed session's trajectory stays readable by default
/// (`SECAUDIT_TRAJECTORY_RETENTION_S`).
pub const DEFAULT_RETENTION_S: u64 = 3600;

/// Most closed sessions' trajectories kept at once by default.
pub const DEFAULT_MAX_RETAINED: usize = 1000;

/// Most bytes of closed sessions' trajectories kept at once by default.
/// A 40-step episode records about 0.3 MB (each line carries the full
/// redacted observation), so the default holds the default count.
pub const DEFAULT_MAX_RETAINED_BYTES: u64 = 512 << 20;

/// Directory under the data dir holding closed sessions' recordings.
pub const RETAINED_DIR: &str = "trajectories";

/// How closed sessions' trajectories are kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Retention {
    /// Seconds after close a trajectory is served; 0 keeps none.
    pub secs: u64,
    /// Most trajectories kept; the oldest closed go first.
    pub max_count: usize,
    /// Most bytes kept; the oldest closed go first.
    pub max_bytes: u64,
}

impl Default for Retention {
    fn default() -> Self {
        Self {
            secs: DEFAULT_RETENTION_S,
            max_count: DEFAULT_MAX_RETAINED,
            max_bytes: DEFAULT_MAX_RETAINED_BYTES,
        }
    }
}

/// A fresh session id: a v4 UUID in its simple form (32 lowercase hex
/// digits), the only shape [`is_session_id`] accepts.
pub fn new_session_id() -> String {
    uuid::Uuid::new_v4().simple().to_string()
}

/// Whether `id` has the shape of an id [`new_session_id`] mints. Anything
/// else (a path, a dot, an upper-case or over-long id) names no session.
pub fn is_session_id(id: &str) -> bool {
    id.len() == 32 && id.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// A trajectory opened for reading. The file is opened before it is
/// returned, so an eviction or a close meanwhile cannot take it away
/// (an unlinked file stays readable through its descriptor).
#[derive(Debug)]
pub struct TrajectoryFile {
    /// The recording.
    pub file: std::fs::File,
    /// Bytes to read: the length when opened. A live session may append
    /// after that; those lines belong to a later read.
    pub len: u64,
    /// The session was still open.
    pub live: bool,
}

/// The retention area of one data dir.
#[derive(Debug, Clone)]
pub struct Store {
    dir: PathBuf,
    cfg: Retention,
}

impl Store {
    /// The area under `data_dir` with the bounds of `cfg`.
    pub fn new(data_dir: &Path, cfg: Retention) -> Self {
        Self {
            dir: data_dir.join(RETAINED_DIR),
            cfg,
        }
    }

    fn path(&self, id: &str) -> PathBuf {
        self.dir.join(format!("{id}.jsonl"))
    }

    /// Moves the recording of the closing session `id` (in `session_dir`)
    /// into the area, stamped with the closing time, then evicts what the
    /// bounds no longer allow. When the session's id already has one (an
    /// episode reset in place), the recording is appended to it, so the
    /// retained trajectory holds every episode, each from its `reset`
    /// line. Blocking. A session without a recording
    /// retains nothing; with retention 0 nothing is kept.
    pub fn retain(&self, session_dir: &Path, id: &str) -> std::io::Result<()> {
        if self.cfg.secs == 0 || !is_session_id(id) {
            return Ok(());
        }
        let from = session_dir.join(RECORDING_FILE);
        if !from.exists() {
            return Ok(());
        }
        std::fs::create_dir_all(&self.dir)?;
        let to = self.path(id);
        if to.exists() {
            // An earlier episode of the same session (reset in place):
            // this one follows it, from its own `reset` line.
            let mut out = std::fs::File::options().append(true).open(&to)?;
            std::io::copy(&mut std::fs::File::open(&from)?, &mut out)?;
            std::fs::remove_file(&from)?;
        } else if let Err(e) = std::fs::rename(&from, &to) {
            // Another filesystem (a data dir assembled from mounts): copy
            // through a temporary name so a reader never sees half a file.
            if e.raw_os_error() != Some(libc::EXDEV) {
                return Err(e);
            }
            let tmp = self.dir.join(format!(".{id}.tmp"));
            std::fs::copy(&from, &tmp)?;
            std::fs::rename(&tmp, &to)?;
        }
        std::fs::File::options()
            .write(true)
            .open(&to)?
            .set_modified(SystemTime::now())?;
        self.evict(SystemTime::now());
        Ok(())
    }

    /// Opens the retained trajectory of `id`, if one is there and younger
    /// than the retention; an expired one is removed and not served.
    pub fn open(&self, id: &str, now: SystemTime) -> std::io::Result<Option<TrajectoryFile>> {
        if !is_session_id(id) {
            return Ok(None);
        }
        let p = self.path(id);
        let file = match std::fs::File::open(&p) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e),
        };
        let meta = file.metadata()?;
        if self.expired(meta.modified()?, now) {
            let _ = std::fs::remove_file(&p);
            return Ok(None);
        }
        Ok(Some(TrajectoryFile {
            file,
            len: meta.len(),
            live: false,
        }))
    }

    fn expired(&self, closed: SystemTime, now: SystemTime) -> bool {
        now.duration_since(closed).unwrap_or(Duration::ZERO) >= Duration::from_secs(self.cfg.secs)
    }

    /// Removes expired trajectories, then the oldest closed until both
    /// bounds hold. Returns how many were removed. Failures to remove are
    /// skipped (the next close retries); stray files are left alone.
    pub fn evict(&self, now: SystemTime) -> usize {
        let Ok(rd) = std::fs::read_dir(&self.dir) else {
            return 0;
        };
        let mut kept = Vec::new();
        let mut removed = 0;
        for e in rd.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let Some(id) = name.strip_suffix(".jsonl") else {
                continue;
            };
            if !is_session_id(id) {
                continue;
            }
            let Ok(meta) = e.metadata() else { continue };
            let closed = meta.modified().unwrap_or(SystemTime::UNIX_EPOCH);
            if self.expired(closed, now) {
                removed += usize::from(std::fs::remove_file(e.path()).is_ok());
            } else {
                kept.push((closed, meta.len(), e.path()));
            }
        }
        // Newest first: keep a prefix within both bounds.
        kept.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| b.2.cmp(&a.2)));
        let (mut count, mut bytes) = (0usize, 0u64);
        for (_, len, path) in kept {
            if count < self.cfg.max_count && bytes.saturating_add(len) <= self.cfg.max_bytes {
                count += 1;
                bytes += len;
            } else {
                removed += usize::from(std::fs::remove_file(path).is_ok());
            }
        }
        removed
    }
}

/// Retires a closing session's directory: its recording into `store`
/// (see [`Store::retain`]), then the state file (so a server killed now
/// finds no session to resume, only debris it removes), then the rest.
/// Blocking. A recording that cannot be retained is logged, never a
/// reason to keep the session's files.
pub fn retire(store: &Store, dir: &Path, id: &str) -> std::io::Result<()> {
    if let Err(e) = store.retain(dir, id) {
        tracing::warn!(session = %id, error = %e, "cannot retain the trajectory of a closed session");
    }
    match std::fs::remove_file(dir.join(STATE_FILE)) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
        _ => {}
    }
    // The workspace is the agent's: as deep as it made it.
    crate::treeremove::remove_tree(dir)
}

impl Environment {
    /// The retention area of this environment.
    pub(super) fn trajectory_store(&self) -> Store {
        let cfg = &self.inner.cfg;
        Store::new(&cfg.data_dir, cfg.trajectories.clone())
    }

    /// The redacted recording of session `id`: its live recording while
    /// it is open, its retained one within the retention after it closed.
    /// An id of the wrong shape, an unknown one and an expired one are all
    /// `UnknownSession` (404).
    pub async fn trajectory(&self, id: &str) -> Result<TrajectoryFile, EnvError> {
        let unknown = || EnvError::UnknownSession(id.chars().take(80).collect());
        if !is_session_id(id) {
            return Err(unknown());
        }
        let live = self
            .session(id)
            .ok()
            .map(|_| super::session::SessionPaths::new(&self.sessions_root(), id).recording());
        let store = self.trajectory_store();
        let id2 = id.to_owned();
        let found = tokio::task::spawn_blocking(move || -> std::io::Result<_> {
            if let Some(p) = live {
                match std::fs::File::open(&p) {
                    Ok(file) => {
                        let len = file.metadata()?.len();
                        return Ok(Some(TrajectoryFile {
                            file,
                            len,
                            live: true,
                        }));
                    }
                    // Closed meanwhile: its recording has moved.
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                    Err(e) => return Err(e),
                }
            }
            store.open(&id2, SystemTime::now())
        })
        .await
        .map_err(|e| EnvError::Internal(e.to_string()))?
        .map_err(|e| EnvError::Internal(format!("reading the trajectory: {e}")))?;
        found.ok_or_else(unknown)
    }
}

impl Environment {
    /// A new episode under an open session's id: what OpenEnv's
    /// `MCPToolClient` needs, whose WebSocket `reset` must keep the session
    /// its HTTP `tools/call` requests name. The old episode is closed as by
    /// `close` (its trajectory retained; [`Store::retain`] appends the next
    /// episode's to it), then the reset runs with the same id. Fails like
    /// `close` for an unknown session, like `reset` for a bad request;
    /// between the two the id is briefly unknown.
    pub(super) async fn reset_in_place(
        &self,
        session_id: &str,
        req: crate::models::ResetRequest,
    ) -> Result<crate::models::Observation, EnvError> {
        if !is_session_id(session_id) {
            return Err(EnvError::UnknownSession(
                session_id.chars().take(80).collect(),
            ));
        }
        self.run_close(session_id).await?;
        self.run_reset(req, Some(session_id.to_owned())).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn store(d: &Path, secs: u64, max_count: usize, max_bytes: u64) -> Store {
        Store::new(
            d,
            Retention {
                secs,
                max_count,
                max_bytes,
            },
        )
    }

    fn id(n: u8) -> String {
        format!("{:032x}", n)
    }

    /// A session directory with a recording of `bytes`, closed into `s`.
    fn close_one(s: &Store, root: &Path, n: u8, bytes: usize) {
        let dir = root.join("sessions").join(id(n));
        std::fs::create_dir_all(dir.join("workspace")).unwrap();
        std::fs::write(dir.join(STATE_FILE), b"{}").unwrap();
        std::fs::write(dir.join(RECORDING_FILE), vec![b'x'; bytes]).unwrap();
        retire(s, &dir, &id(n)).unwrap();
        assert!(!dir.exists(), "session dir removed");
    }

    #[test]
    fn ids_are_exactly_the_minted_shape() {
        let fresh = new_session_id();
        assert!(is_session_id(&fresh), "{fresh}");
        let (upper, short, long) = (
            fresh.to_uppercase(),
            fresh[..31].to_string(),
            format!("{fresh}0"),
        );
        let slash = format!("{}/", &fresh[..31]);
        let bad: [&str; 8] = [
            "",
            "..",
            "../../etc/passwd",
            &upper,
            &short,
            &long,
            &slash,
            "0000000000000000000000000000000g",
        ];
        for bad in bad {
            assert!(!is_session_id(bad), "{bad:?} accepted");
        }
    }

    #[test]
    fn retained_until_the_retention_ends() {
        let d = tempfile::tempdir().unwrap();
        let s = store(d.path(), 60, 10, 1 << 20);
        close_one(&s, d.path(), 1, 10);
        let now = SystemTime::now();
        let t = s.open(&id(1), now).unwrap().expect("retained");
        assert_eq!((t.len, t.live), (10, false));
        assert!(s.open(&id(2), now).unwrap().is_none(), "never closed");
        assert!(s.open("../x", now).unwrap().is_none());
        let later = now + Duration::from_secs(61);
        assert!(s.open(&id(1), later).unwrap().is_none(), "expired");
        assert!(
            !d.path()
                .join(RETAINED_DIR)
                .join(format!("{}.jsonl", id(1)))
                .exists(),
            "an expired trajectory is removed when asked for"
        );
    }

    #[test]
    fn zero_retention_keeps_nothing() {
        let d = tempfile::tempdir().unwrap();
        let s = store(d.path(), 0, 10, 1 << 20);
        close_one(&s, d.path(), 1, 10);
        assert!(s.open(&id(1), SystemTime::now()).unwrap().is_none());
    }

    #[test]
    fn oldest_evicted_past_the_count_and_byte_bounds() {
        let d = tempfile::tempdir().unwrap();
        let s = store(d.path(), 3600, 3, 1 << 20);
        for n in 1..=5 {
            close_one(&s, d.path(), n, 10);
            // Distinct closing times, in order.
            let p = s.path(&id(n));
            let f = std::fs::File::options().write(true).open(&p).unwrap();
            f.set_modified(SystemTime::now() - Duration::from_secs(100 - n as u64))
                .unwrap();
        }
        s.evict(SystemTime::now());
        let now = SystemTime::now();
        let kept: Vec<u8> = (1..=5)
            .filter(|&n| s.open(&id(n), now).unwrap().is_some())
            .collect();
        assert_eq!(kept, vec![3, 4, 5], "count bound keeps the newest 3");

        let d = tempfile::tempdir().unwrap();
        let s = store(d.path(), 3600, 100, 25);
        close_one(&s, d.path(), 1, 10);
        std::fs::File::options()
            .write(true)
            .open(s.path(&id(1)))
            .unwrap()
            .set_modified(SystemTime::now() - Duration::from_secs(5))
            .unwrap();
        close_one(&s, d.path(), 2, 10);
        close_one(&s, d.path(), 3, 10);
        let now = SystemTime::now();
        assert!(
            s.open(&id(1), now).unwrap().is_none(),
            "oldest over 25 bytes"
        );
        assert!(s.open(&id(2), now).unwrap().is_some());
        assert!(s.open(&id(3), now).unwrap().is_some());
    }

    #[test]
    fn a_reused_id_appends_its_next_episode() {
        let d = tempfile::tempdir().unwrap();
        let s = store(d.path(), 60, 10, 1 << 20);
        close_one(&s, d.path(), 4, 3);
        close_one(&s, d.path(), 4, 5);
        let t = s.open(&id(4), SystemTime::now()).unwrap().unwrap();
        assert_eq!(t.len, 8);
    }

    #[test]
    fn a_session_without_recording_retains_nothing() {
        let d = tempfile::tempdir().unwrap();
        let s = store(d.path(), 60, 10, 1 << 20);
        let dir = d.path().join("sessions").join(id(7));
        std::fs::create_dir_all(&dir).unwrap();
        retire(&s, &dir, &id(7)).unwrap();
        assert!(!dir.exists());
        assert!(s.open(&id(7), SystemTime::now()).unwrap().is_none());
    }
}
