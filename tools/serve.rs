//! `secaudit serve`: load the tasks, start the environment, serve HTTP,
//! WebSocket and MCP until SIGINT or SIGTERM.
//!
//! Every flag can also come from the environment variable named in
//! [`server::http::env_vars`]; the flag wins.

use server::env::{EnvConfig, Environment};
use server::http::listen::{self, ConnLimits};
use server::http::{AppState, HttpConfig, app, env_vars};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

/// After a shutdown signal, open connections (WebSockets mostly) get this
/// long to finish before the process exits anyway.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(10);

/// Log output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum LogFormat {
    /// Human-readable lines.
    Text,
    /// One JSON object per line (for log collectors).
    Json,
}

/// Arguments of `secaudit serve`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Address to bind.
    #[arg(long, env = env_vars::SECAUDIT_HOST, default_value = "0.0.0.0")]
    pub host: String,
    /// Port to bind (7860 is the Hugging Face Spaces default; OpenEnv's
    /// Docker tooling expects 8000).
    #[arg(long, env = env_vars::PORT, default_value_t = 7860)]
    pub port: u16,
    /// Where generated tasks, sessions and recordings live.
    #[arg(long, env = env_vars::SECAUDIT_DATA_DIR, default_value = "./data")]
    pub data_dir: PathBuf,
    /// Where the task definitions are read from.
    #[arg(long, env = env_vars::SECAUDIT_TASKS_DIR, default_value = "./tasks")]
    pub tasks_dir: PathBuf,
    /// The Python venv with pytest and git-filter-repo, mounted read-only in
    /// the sandbox.
    #[arg(long, env = env_vars::SECAUDIT_VENV, default_value = "./.venv")]
    pub venv: PathBuf,
    /// Maximum concurrent sessions (HTTP and WebSocket together).
    #[arg(long, env = env_vars::MAX_CONCURRENT_ENVS,
          default_value_t = server::env::DEFAULT_MAX_SESSIONS as u64,
          value_parser = clap::value_parser!(u64).range(1..=4096))]
    pub max_sessions: u64,
    /// Seconds without activity after which a session, or a WebSocket
    /// without requests, is closed.
    #[arg(long, env = env_vars::SESSION_IDLE_TIMEOUT_S,
          default_value_t = server::env::DEFAULT_SESSION_IDLE_TIMEOUT_S,
          value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub session_idle_timeout: u64,
    /// Start each session's next command sandbox ahead of the command, and
    /// health runs ahead of their copies (`--prewarm false` or
    /// `SECAUDIT_PREWARM=0`: every command and health run starts cold).
    #[arg(long, env = env_vars::SECAUDIT_PREWARM, default_value_t = true,
          action = clap::ArgAction::Set,
          value_parser = clap::builder::BoolishValueParser::new())]
    pub prewarm: bool,
    /// With prewarming, grade health in runners that fork each run from an
    /// interpreter started once (`--health-runners false` or
    /// `SECAUDIT_HEALTH_RUNNERS=0`: staged runs, one interpreter each).
    #[arg(long, env = env_vars::SECAUDIT_HEALTH_RUNNERS, default_value_t = true,
          action = clap::ArgAction::Set,
          value_parser = clap::builder::BoolishValueParser::new())]
    pub health_runners: bool,
    /// Containment tier: auto (bwrap where it can create namespaces, else
    /// Landlock + seccomp), bwrap, or landlock.
    #[arg(long, env = env_vars::SECAUDIT_SANDBOX, default_value = "auto")]
    pub sandbox: server::sandbox::TierChoice,
    /// Serve episodes even when no containment tier works: agent commands
    /// then run UNCONTAINED. Without it such a server refuses every reset
    /// (503) and /health says why.
    #[arg(long, env = env_vars::SECAUDIT_ALLOW_UNCONTAINED, default_value_t = false,
          action = clap::ArgAction::Set, num_args = 0..=1, default_missing_value = "true",
          value_parser = clap::builder::BoolishValueParser::new())]
    pub allow_uncontained: bool,
    /// Most HTTP connections served at once; lowered at start-up to fit the
    /// file-descriptor limit. At the cap the oldest connection that has not
    /// sent a request is closed for the newcomer; if every one has, the
    /// newcomer gets 503 `too_many_connections` at once.
    #[arg(long, env = env_vars::SECAUDIT_MAX_CONNECTIONS,
          default_value_t = listen::DEFAULT_MAX_CONNECTIONS as u64,
          value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    pub max_connections: u64,
    /// Seconds a connection may take to send a complete request head (the
    /// first, or the next on a keep-alive connection) before it is closed.
    #[arg(long, env = env_vars::SECAUDIT_HEADER_TIMEOUT_S,
          default_value_t = listen::DEFAULT_HEADER_READ_TIMEOUT_S,
          value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub header_timeout: u64,
    /// Seconds a closed session's trajectory stays readable at
    /// `GET /trajectory?session_id=` (0 keeps none).
    #[arg(long, env = env_vars::SECAUDIT_TRAJECTORY_RETENTION_S,
          default_value_t = server::env::trajectory::DEFAULT_RETENTION_S,
          value_parser = clap::value_parser!(u64).range(0..=30 * 86_400))]
    pub trajectory_retention: u64,
    /// Log format; the filter comes from RUST_LOG (default `info`).
    #[arg(long, env = env_vars::SECAUDIT_LOG_FORMAT, value_enum, default_value_t = LogFormat::Text)]
    pub log_format: LogFormat,
}

fn init_tracing(format: LogFormat) {
    let filter = tracing_subscriber::EnvFilter::try_from_env(env_vars::RUST_LOG)
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    // try_init: a second call (tests) keeps the first subscriber.
    let _ = match format {
        LogFormat::Json => builder.json().try_init(),
        LogFormat::Text => builder.try_init(),
    };
}

/// Resolves on SIGINT (Ctrl-C) or SIGTERM (`docker stop`).
async fn shutdown_signal() {
    let ctrl_c = async {
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {},
        () = term => {},
    }
}

/// The connection limits from the flags, the cap lowered to what the
/// descriptor limit (raised to its hard value first) leaves next to the
/// sessions.
fn conn_limits(args: &Args, max_sessions: usize) -> anyhow::Result<ConnLimits> {
    let wanted = usize::try_from(args.max_connections)?;
    let max_connections = match listen::raise_nofile_limit() {
        Ok(nofile) => {
            let cap = listen::fd_budget(wanted, nofile, max_sessions);
            if cap < wanted {
                tracing::warn!(
                    wanted,
                    cap,
                    nofile,
                    "connection cap lowered to fit RLIMIT_NOFILE; raise the limit (ulimit -n) to allow more"
                );
            }
            cap
        }
        Err(e) => {
            tracing::warn!(error = %e, "cannot read RLIMIT_NOFILE; connection cap left as configured");
            wanted
        }
    };
    Ok(ConnLimits {
        max_connections,
        header_read_timeout: Duration::from_secs(args.header_timeout),
    })
}

/// Runs the subcommand; returns the process exit code.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    init_tracing(args.log_format);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    rt.block_on(serve(args))?;
    Ok(ExitCode::SUCCESS)
}

async fn serve(args: Args) -> anyhow::Result<()> {
    let max_sessions = usize::try_from(args.max_sessions)?;
    let limits = conn_limits(&args, max_sessions)?;
    let cfg = EnvConfig {
        data_dir: args.data_dir,
        tasks_dir: args.tasks_dir,
        max_sessions,
        session_idle_timeout_s: args.session_idle_timeout,
        finished_grace_s: server::env::FINISHED_SESSION_GRACE_S,
        venv: args.venv,
        command_limits: Default::default(),
        prewarm: args.prewarm,
        health_runners: args.health_runners,
        sandbox: args.sandbox,
        allow_uncontained: args.allow_uncontained,
        trajectories: server::env::trajectory::Retention {
            secs: args.trajectory_retention,
            ..Default::default()
        },
    };
    tracing::info!(?cfg, "starting environment");
    // Reach first: a directory the sandbox uid cannot search is the cause
    // behind any other failure below it (Environment::new checks again,
    // for servers built without this binary).
    server::env::reach::check_server(&cfg.venv, &cfg.data_dir)?;
    // Refuse to start without what every reset needs, naming each missing
    // piece, rather than serve a "healthy" server whose resets all fail.
    let readiness = server::readiness::check(&cfg.venv, &cfg.data_dir);
    for c in &readiness.checks {
        match &c.outcome {
            Ok(found) => tracing::info!(check = c.name, %found, "start-up check passed"),
            Err(why) => tracing::error!(check = c.name, %why, "start-up check failed"),
        }
    }
    if !readiness.ready() {
        anyhow::bail!(
            "not starting: the server is missing what every episode needs:\n  {}",
            readiness.failures().join("\n  ")
        );
    }
    // LEAD: task generation call site. `Environment::new` currently
    // generates missing or stale workspaces itself; if that moves to
    // `server::tasks`, call it here, before the environment loads.
    let env = Environment::new(cfg).await?;
    env.spawn_reaper();
    let sandbox = env.sandbox_info();
    if sandbox.available {
        tracing::info!(tier = ?sandbox.tier, detail = %sandbox.detail, "sandbox available");
    } else if env.serves_episodes() {
        tracing::warn!(
            detail = %sandbox.detail,
            "NO CONTAINMENT: commands run uncontained (--allow-uncontained); /health reports \"degraded\""
        );
    } else {
        tracing::error!(
            detail = %sandbox.detail,
            "NO CONTAINMENT: every reset is refused; /health reports \"unavailable\""
        );
    }
    let http = HttpConfig {
        max_sessions,
        ws_idle_timeout: Duration::from_secs(args.session_idle_timeout),
    };
    let state = AppState::from_environment(env, http);
    let listener = tokio::net::TcpListener::bind((args.host.as_str(), args.port)).await?;
    tracing::info!(addr = %listener.local_addr()?, ?limits, "listening");

    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let server = listen::serve(listener, app(state), limits, async move {
        shutdown_signal().await;
        tracing::info!("shutdown signal received; draining connections");
        let _ = stop_tx.send(true);
    });
    let deadline = async move {
        let mut rx = stop_rx;
        while !*rx.borrow() {
            if rx.changed().await.is_err() {
                std::future::pending::<()>().await;
            }
        }
        tokio::time::sleep(SHUTDOWN_GRACE).await;
    };
    tokio::select! {
        () = server => {},
        () = deadline => tracing::warn!("connections still open after {SHUTDOWN_GRACE:?}; exiting"),
    }
    tracing::info!("stopped");
    Ok(())
}
