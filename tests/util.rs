//! Shared helpers: an Environment over the repository's real tasks, with its
//! data directory in a temporary folder.

use server::env::{EnvConfig, Environment};
use server::models::{Action, Observation, ResetRequest, TaskRef};
use std::path::PathBuf;

/// The repository root.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A fresh environment over the real tasks; keep the TempDir alive.
pub async fn env_with(max_sessions: usize) -> (Environment, tempfile::TempDir) {
    let data = tempfile::tempdir().expect("tempdir");
    let mut cfg = EnvConfig::with_root(&root());
    cfg.data_dir = data.path().to_path_buf();
    cfg.max_sessions = max_sessions;
    if let Ok(v) = std::env::var("SECAUDIT_VENV") {
        cfg.venv = v.into();
    }
    cfg.prewarm = prewarm();
    let env = Environment::new(cfg).await.expect("environment");
    (env, data)
}

/// Whether test environments prewarm sandboxes: the server's default (on)
/// unless `SECAUDIT_PREWARM` says `0`/`false`/`no`/`off`, as for `serve`,
/// so a suite or load run can compare both.
pub fn prewarm() -> bool {
    std::env::var("SECAUDIT_PREWARM")
        .map(|v| {
            !matches!(
                v.to_ascii_lowercase().as_str(),
                "0" | "false" | "no" | "off"
            )
        })
        .unwrap_or(true)
}

/// An environment over the real tasks on an existing data dir, so a test
/// can drop it and start another on the same sessions (restart in
/// process).
pub async fn env_at(data: &std::path::Path, max_sessions: usize) -> Environment {
    let mut cfg = EnvConfig::with_root(&root());
    cfg.data_dir = data.to_path_buf();
    cfg.max_sessions = max_sessions;
    cfg.venv = venv();
    cfg.prewarm = prewarm();
    Environment::new(cfg).await.expect("environment")
}

/// Resets a canonical task.
pub async fn reset(env: &Environment, task: u32) -> Observation {
    env.reset(ResetRequest {
        task_id: Some(TaskRef::Number(task)),
        ..Default::default()
    })
    .await
    .expect("reset")
}

/// Steps with a command.
pub async fn step(env: &Environment, sid: &str, cmd: &str) -> Observation {
    env.step(
        sid,
        Action {
            command: cmd.to_string(),
        },
    )
    .await
    .unwrap_or_else(|e| panic!("step {cmd:?}: {e}"))
}

/// Serves the real router for `env` on 127.0.0.1:0; returns the address and
/// the server task (aborted on drop of the handle's owner at test end).
pub async fn serve(env: Environment) -> (std::net::SocketAddr, tokio::task::JoinHandle<()>) {
    let max = env.max_sessions();
    let cfg = server::http::HttpConfig {
        max_sessions: max,
        ..Default::default()
    };
    serve_state(server::http::AppState::from_environment(env, cfg)).await
}

/// Serves the real router over `state` on 127.0.0.1:0, through the same
/// accept loop as `secaudit serve` (default connection limits).
pub async fn serve_state(
    state: server::http::AppState,
) -> (std::net::SocketAddr, tokio::task::JoinHandle<()>) {
    let app = server::http::app(state);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    let h = tokio::spawn(server::http::listen::serve(
        listener,
        app,
        server::http::listen::ConnLimits::default(),
        std::future::pending(),
    ));
    (addr, h)
}

/// The `secaudit` binary Cargo built for these tests.
pub fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_secaudit"))
}

/// A free local TCP port (bound then released; a race is possible but rare).
pub fn free_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
    l.local_addr().expect("local addr").port()
}

/// The last `n` lines of `s`.
pub fn tail(s: &str, n: usize) -> String {
    let lines: Vec<&str> = s.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

/// The project venv the sandbox mounts (`SECAUDIT_VENV` overrides).
pub use testkit::venv;

/// Longest wait for `/health` after spawning `serve` (a first start on an
/// empty data dir generates every task).
pub const SERVE_STARTUP: std::time::Duration = std::time::Duration::from_secs(240);

/// Every variable `serve` reads. Removed from the child's environment so
/// the test runner's own environment cannot change the configuration; a
/// test sets what it means to through [`ServeOpts::env`].
pub const SERVE_VARS: [&str; 11] = [
    "PORT",
    "SECAUDIT_HOST",
    "SECAUDIT_DATA_DIR",
    "SECAUDIT_TASKS_DIR",
    "SECAUDIT_VENV",
    "MAX_CONCURRENT_ENVS",
    "SESSION_IDLE_TIMEOUT_S",
    "SECAUDIT_LOG_FORMAT",
    "SECAUDIT_MAX_CONNECTIONS",
    "SECAUDIT_HEADER_TIMEOUT_S",
    "SECAUDIT_TRAJECTORY_RETENTION_S",
];

/// How a `secaudit serve` child is configured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ServeConfig {
    /// `--host --port --data-dir --tasks-dir --venv --max-sessions`.
    Flags,
    /// The same settings through environment variables only (`PORT`,
    /// `SECAUDIT_*`, `MAX_CONCURRENT_ENVS`).
    EnvVars,
}

/// Options of [`ServerProc::start_with`].
#[derive(Debug, Clone)]
pub struct ServeOpts {
    /// Data dir; `None` makes a temporary one owned (and removed) by the
    /// server. Pass the same path to several starts to keep sessions
    /// across restarts.
    pub data: Option<PathBuf>,
    /// Log file (stdout and stderr, appended, so one log can span
    /// restarts); `None` puts it next to the data dir and removes it on
    /// drop.
    pub log: Option<PathBuf>,
    /// Flags or environment variables.
    pub config: ServeConfig,
    /// `--max-sessions` / `MAX_CONCURRENT_ENVS`; `None` keeps the default.
    pub max_sessions: Option<usize>,
    /// Extra environment variables for the child (set after
    /// [`SERVE_VARS`] are cleared).
    pub env: Vec<(String, String)>,
    /// Soft and hard `RLIMIT_NOFILE` of the child (through prlimit(1)),
    /// to test descriptor exhaustion at a size a test can reach; `None`
    /// inherits the runner's.
    pub nofile: Option<u64>,
    /// A command the server runs under (argv prefix, ending with its own
    /// `--`), e.g. `scripts/docker-like.py`: empty runs it directly.
    pub wrapper: Vec<String>,
    /// The server binary and tasks dir instead of this checkout's (a
    /// server run as another uid may not reach a private checkout).
    pub bin_and_tasks: Option<(PathBuf, PathBuf)>,
}

impl Default for ServeOpts {
    fn default() -> Self {
        Self {
            data: None,
            log: None,
            config: ServeConfig::Flags,
            max_sessions: None,
            env: Vec::new(),
            nofile: None,
            wrapper: Vec::new(),
            bin_and_tasks: None,
        }
    }
}

/// A `secaudit serve` child process on a free port; killed on drop.
pub struct ServerProc {
    child: std::process::Child,
    /// `http://127.0.0.1:PORT`.
    pub url: String,
    log: PathBuf,
    remove_log: bool,
    _own_data: Option<tempfile::TempDir>,
}

impl ServerProc {
    /// Default options: own temporary data dir, configured by flags.
    pub async fn start() -> ServerProc {
        Self::start_with(ServeOpts::default()).await
    }

    /// Spawns `secaudit serve` over the repository's tasks and waits
    /// (bounded by [`SERVE_STARTUP`]) until `/health` answers 2xx.
    pub async fn start_with(opts: ServeOpts) -> ServerProc {
        let own = match &opts.data {
            Some(_) => None,
            None => Some(tempfile::tempdir().expect("tempdir")),
        };
        let data = opts
            .data
            .clone()
            .unwrap_or_else(|| own.as_ref().unwrap().path().to_path_buf());
        let remove_log = opts.log.is_none();
        let log = opts
            .log
            .clone()
            .unwrap_or_else(|| data.with_extension("serve.log"));
        let port = free_port();
        let root = root();
        let (bin, tasks) = opts
            .bin_and_tasks
            .clone()
            .unwrap_or_else(|| (bin(), root.join("tasks")));
        let out = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&log)
            .expect("log file");
        let err = out.try_clone().expect("log file");
        // prlimit(1) sets the limit on itself and execs, so the child's pid
        // is the server's.
        let mut cmd = match (opts.nofile, opts.wrapper.split_first()) {
            (Some(n), _) => {
                let mut c = std::process::Command::new("prlimit");
                c.arg(format!("--nofile={n}:{n}")).arg(&bin);
                c
            }
            // The wrapper execs the server: the child's pid is still its.
            (None, Some((prog, rest))) => {
                let mut c = std::process::Command::new(prog);
                c.args(rest).arg(&bin);
                c
            }
            (None, None) => std::process::Command::new(&bin),
        };
        cmd.arg("serve");
        for v in SERVE_VARS {
            cmd.env_remove(v);
        }
        let max = opts.max_sessions.map(|m| m.to_string());
        match opts.config {
            ServeConfig::Flags => {
                cmd.args(["--host", "127.0.0.1", "--port", &port.to_string()])
                    .arg("--data-dir")
                    .arg(&data)
                    .arg("--tasks-dir")
                    .arg(&tasks)
                    .arg("--venv")
                    .arg(venv());
                if let Some(m) = &max {
                    cmd.args(["--max-sessions", m]);
                }
            }
            ServeConfig::EnvVars => {
                cmd.env("SECAUDIT_HOST", "127.0.0.1")
                    .env("PORT", port.to_string())
                    .env("SECAUDIT_DATA_DIR", &data)
                    .env("SECAUDIT_TASKS_DIR", &tasks)
                    .env("SECAUDIT_VENV", venv());
                if let Some(m) = &max {
                    cmd.env("MAX_CONCURRENT_ENVS", m);
                }
            }
        }
        for (k, v) in &opts.env {
            cmd.env(k, v);
        }
        let child = cmd
            .current_dir(&root)
            .stdin(std::process::Stdio::null())
            .stdout(out)
            .stderr(err)
            .spawn()
            .expect("spawn secaudit serve");
        let mut s = ServerProc {
            child,
            url: format!("http://127.0.0.1:{port}"),
            log,
            remove_log,
            _own_data: own,
        };
        s.wait_healthy().await;
        s
    }

    async fn wait_healthy(&mut self) {
        let http = reqwest::Client::builder()
            .timeout(std::time::Duration::from_secs(2))
            .build()
            .expect("client");
        let deadline = std::time::Instant::now() + SERVE_STARTUP;
        while std::time::Instant::now() < deadline {
            if let Some(st) = self.child.try_wait().expect("try_wait") {
                panic!("secaudit serve exited early ({st}):\n{}", self.log_tail());
            }
            if let Ok(r) = http.get(format!("{}/health", self.url)).send().await
                && r.status().is_success()
            {
                return;
            }
            tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        }
        panic!(
            "secaudit serve not up at {} within {SERVE_STARTUP:?}:\n{}",
            self.url,
            self.log_tail()
        );
    }

    /// The server's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The last lines of the server's log, for failure messages.
    pub fn log_tail(&self) -> String {
        tail(&std::fs::read_to_string(&self.log).unwrap_or_default(), 40)
    }

    /// Sends `signal` (by name, through kill(1)) and waits, bounded by 30 s,
    /// for the exit; returns the status and how long it took.
    pub async fn signal_and_wait(
        &mut self,
        signal: &str,
    ) -> (std::process::ExitStatus, std::time::Duration) {
        const EXIT_WAIT: std::time::Duration = std::time::Duration::from_secs(30);
        let pid = self.child.id().to_string();
        let t = std::time::Instant::now();
        let st = std::process::Command::new("kill")
            .args([&format!("-{signal}"), &pid])
            .status()
            .expect("run kill");
        assert!(st.success(), "kill -{signal} {pid}");
        loop {
            if let Some(st) = self.child.try_wait().expect("try_wait") {
                return (st, t.elapsed());
            }
            assert!(
                t.elapsed() < EXIT_WAIT,
                "no exit within {EXIT_WAIT:?} of SIG{signal}:\n{}",
                self.log_tail()
            );
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
    }
}

impl Drop for ServerProc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        if self.remove_log {
            let _ = std::fs::remove_file(&self.log);
        }
    }
}

/// Host processes whose command line contains `token` (as `pid: cmdline`).
pub fn host_procs_named(token: &str) -> Vec<String> {
    let mut found = Vec::new();
    for e in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if !name.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        if let Ok(cmd) = std::fs::read(e.path().join("cmdline")) {
            let cmd = String::from_utf8_lossy(&cmd).replace('\0', " ");
            if cmd.contains(token) && !cmd.contains("bash -lc") && !cmd.contains("--noprofile") {
                found.push(format!("{name}: {cmd}"));
            }
        }
    }
    found
}
