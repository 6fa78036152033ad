//! How the sandbox is built and what bounds one command: the limits, the
//! tier choice and the configuration [`super::Sandbox::detect`] reads.

use super::*;

/// Resource limits for one command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    /// Wall-clock timeout; the whole process tree is killed at expiry.
    pub wall: Duration,
    /// RLIMIT_CPU in seconds (per process).
    pub cpu_secs: u64,
    /// RLIMIT_AS in bytes (per process).
    pub mem_bytes: u64,
    /// RLIMIT_FSIZE in bytes: the largest file a process may write.
    pub fsize_bytes: u64,
    /// RLIMIT_NPROC: processes of the sandbox uid (host-wide).
    pub nproc: u64,
    /// RLIMIT_NOFILE.
    pub nofile: u64,
    /// Bytes kept per output stream (half head, half tail); the rest is
    /// counted and dropped while the pipe keeps being drained.
    pub output_cap_bytes: usize,
    /// Size of the private `/tmp` tmpfs in bytes (bwrap tier; in the
    /// landlock tier the scratch directory counts toward `disk_bytes`).
    pub tmp_size: u64,
    /// All of a command's processes together: resident memory in bytes
    /// (RLIMIT_AS bounds only one process). Enforced by the watchdog.
    pub mem_total_bytes: u64,
    /// All of a command's processes together: how many may exist at once
    /// (RLIMIT_NPROC counts per uid, which is per command only when the
    /// server is root). Enforced by the watchdog.
    pub procs_total: u64,
    /// Bytes allocated in the workspace (and the landlock tier's scratch
    /// directory) together: RLIMIT_FSIZE bounds only one file. Enforced
    /// by the watchdog; equal to the health grader's copy budget, so a
    /// workspace a command may leave is one the grader can copy.
    pub disk_bytes: u64,
    /// Files, directories and links in the workspace (and scratch).
    pub inodes: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            wall: Duration::from_secs(90),
            cpu_secs: 60,
            mem_bytes: 4 << 30,
            fsize_bytes: 100 << 20,
            nproc: 256,
            nofile: 1024,
            output_cap_bytes: 64 << 10,
            tmp_size: 64 << 20,
            mem_total_bytes: 2 << 30,
            procs_total: 256,
            disk_bytes: 256 << 20,
            inodes: 20_000,
        }
    }
}

/// How the sandbox is built.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SandboxConfig {
    /// The bwrap binary, by absolute path (never a PATH lookup).
    pub bwrap: PathBuf,
    /// The Python venv, bound read-only at the same path (its shebangs and
    /// `pyvenv.cfg` are absolute); its `bin` leads PATH.
    pub venv: PathBuf,
    /// uid to run as when the server is root.
    pub uid: u32,
    /// gid to run as when the server is root.
    pub gid: u32,
    /// Default limits (a request may override them).
    pub limits: Limits,
    /// Which containment tier to use.
    pub tier: TierChoice,
}

/// Which containment tier [`Sandbox::detect`] may pick.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TierChoice {
    /// bwrap if it can create its namespaces, else landlock, else none.
    #[default]
    Auto,
    /// bwrap or nothing.
    Bwrap,
    /// landlock or nothing (also on a host where bwrap would work: tests
    /// and benchmarks of the namespace-free tier).
    Landlock,
}

impl std::str::FromStr for TierChoice {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "" | "auto" => Ok(TierChoice::Auto),
            "bwrap" | "bubblewrap" => Ok(TierChoice::Bwrap),
            "landlock" => Ok(TierChoice::Landlock),
            other => Err(format!(
                "unknown sandbox tier {other:?} (auto, bwrap, landlock)"
            )),
        }
    }
}

impl TierChoice {
    /// From `SECAUDIT_SANDBOX` (unset: auto). Read by `serve` and by the
    /// tests, so one variable runs a whole suite in a chosen tier.
    pub fn from_env() -> Result<TierChoice, String> {
        std::env::var(TIER_ENV).unwrap_or_default().parse()
    }
}

/// The environment variable naming the tier ([`TierChoice`]).
pub const TIER_ENV: &str = "SECAUDIT_SANDBOX";

impl SandboxConfig {
    /// `/usr/bin/bwrap`, the given venv, uid/gid [`DEFAULT_UID`], default
    /// limits, the tier `SECAUDIT_SANDBOX` names (auto when unset).
    pub fn with_venv(venv: impl Into<PathBuf>) -> Self {
        SandboxConfig {
            bwrap: PathBuf::from("/usr/bin/bwrap"),
            venv: venv.into(),
            uid: DEFAULT_UID,
            gid: DEFAULT_GID,
            limits: Limits::default(),
            // `SECAUDIT_SANDBOX`, so one variable runs any suite or tool
            // in a chosen tier; unset or unparsable: auto.
            tier: TierChoice::from_env().unwrap_or_default(),
        }
    }
}
