//! `secaudit agent`: the baseline LLM agent and the scripted agents, driving
//! an environment server over HTTP.
//!
//! The baseline is the seed's single-turn ReAct loop: reset, build a prompt
//! from the observation, ask an OpenAI-compatible chat API for one command,
//! normalise it, step, until the score reaches 1.0, the episode ends or the
//! step limit is hit. Standard output carries exactly the `[START]`,
//! `[STEP]` and `[END]` lines a validator parses; everything else goes to
//! standard error.

mod baseline;
pub mod client;
pub mod normalize;
pub mod prompt;
pub mod scripted;

use baseline::baseline_action;
pub use baseline::{LOOP_REPEATS, fallback, looping};
use client::{EnvClient, HttpError, ModelClient, StepResponse};
use rand::SeedableRng;
use rand::rngs::StdRng;
use rand::seq::IndexedRandom;
use serde_json::json;
use server::models::Observation;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

/// Name of the environment in the `[START]` line.
pub const ENV_NAME: &str = "secrets_audit_env";

/// Arguments of `secaudit agent`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Which agent: baseline (LLM), oracle, null, random, control (the
    /// crude removal the tamper hacks build on), or hack:NAME (a
    /// reward-hack script, e.g. hack:allowlist; an unknown name such as
    /// hack:list is refused with the list of every name).
    #[arg(long, default_value = "baseline")]
    pub agent: String,
    /// Task to run (1–13); default 1.
    #[arg(long, conflicts_with = "all")]
    pub task_id: Option<u32>,
    /// Run every task the server lists, one episode each.
    #[arg(long)]
    pub all: bool,
    /// Steps per episode at most.
    #[arg(long, default_value_t = 40, value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub max_steps: u32,
    /// Seed of a procedural variant (absent: the canonical task). Also seeds
    /// the random agent.
    #[arg(long)]
    pub seed: Option<u64>,
    #[command(flatten)]
    pub common: Common,
}

/// Options shared by `agent` and `eval`.
#[derive(Debug, Clone, clap::Args)]
pub struct Common {
    /// Environment server.
    #[arg(long, env = "ENV_URL", default_value = "http://localhost:7860")]
    pub env_url: String,
    /// Data directory holding the generated truth files (oracle agent).
    #[arg(long, default_value = "data")]
    pub data_dir: PathBuf,
    /// OpenAI-compatible API base (baseline agent). The key is read from
    /// HF_TOKEN (or API_KEY / OPENAI_API_KEY), never from the command line.
    #[arg(
        long,
        env = "API_BASE_URL",
        default_value = "https://router.huggingface.co/v1"
    )]
    pub api_base_url: String,
    /// Model name (baseline agent).
    #[arg(long, env = "MODEL_NAME")]
    pub model: Option<String>,
}

/// Where the model API key is read from, first non-empty wins.
pub const API_KEY_VARS: [&str; 3] = ["HF_TOKEN", "API_KEY", "OPENAI_API_KEY"];

/// Fails before any episode opens when the model API needs a key and none
/// is set: without this check the agent reset a session, retried the model
/// three times and aborted the episode. A server on a loopback address (a
/// local vLLM or llama.cpp, the tests' fake) usually takes no key.
pub fn check_api_key(api_base_url: &str, have_key: bool) -> anyhow::Result<()> {
    if have_key {
        return Ok(());
    }
    let url = reqwest::Url::parse(api_base_url)
        .map_err(|e| anyhow::anyhow!("API_BASE_URL {api_base_url:?} is not a URL: {e}"))?;
    let host = url.host_str().unwrap_or("");
    let local = host.eq_ignore_ascii_case("localhost")
        || host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback());
    if local {
        return Ok(());
    }
    anyhow::bail!(
        "the baseline agent needs an API key for {api_base_url}: set {} (checked in that order; \
         a model server on localhost needs none)",
        API_KEY_VARS.join(", ")
    )
}

/// Which policy picks the actions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AgentKind {
    /// The LLM ReAct loop.
    Baseline,
    /// The task's scripted solution.
    Oracle,
    /// `true`, every step.
    Null,
    /// Seeded random choice among plausible and ranked commands.
    Random,
    /// The real but code-breaking removal the tamper hacks build on (every
    /// secret-bearing line deleted, then submit): the score a hack layered
    /// on it must not beat, measured the same way.
    Control,
    /// A reward-hack script (name without `hack:`).
    Hack(String),
}

impl AgentKind {
    /// Parses `baseline`, `oracle`, `null`, `random`, `control`, `hack:NAME`.
    pub fn parse(s: &str) -> anyhow::Result<Self> {
        Ok(match s {
            "baseline" => AgentKind::Baseline,
            "oracle" => AgentKind::Oracle,
            "null" => AgentKind::Null,
            "random" => AgentKind::Random,
            "control" => AgentKind::Control,
            h if h.starts_with("hack:") => {
                let name = &h["hack:".len()..];
                scripted::hack_actions(name)?;
                AgentKind::Hack(name.to_string())
            }
            other => anyhow::bail!(
                "unknown agent {other:?}: expected baseline, oracle, null, random, control or hack:NAME ({})",
                scripted::HACKS.join(", ")
            ),
        })
    }

    /// The name shown as `model=` for scripted agents.
    pub fn label(&self) -> String {
        match self {
            AgentKind::Baseline => "baseline".into(),
            AgentKind::Oracle => "oracle".into(),
            AgentKind::Null => "null".into(),
            AgentKind::Random => "random".into(),
            AgentKind::Control => "control".into(),
            AgentKind::Hack(h) => format!("hack:{h}"),
        }
    }
}

/// Everything an episode needs besides the task.
#[derive(Debug, Clone)]
pub struct Runner {
    /// The policy.
    pub kind: AgentKind,
    /// Environment client.
    pub env: EnvClient,
    /// Model client (baseline only).
    pub model: Option<ModelClient>,
    /// Where truth files live (oracle only).
    pub data_dir: PathBuf,
    /// Steps per episode at most.
    pub max_steps: u32,
}

impl Runner {
    /// Builds a runner from parsed options; the baseline needs MODEL_NAME.
    pub fn new(kind: AgentKind, common: &Common, max_steps: u32) -> anyhow::Result<Self> {
        let env = EnvClient::new(&common.env_url)?;
        let model = if kind == AgentKind::Baseline {
            let name = common
                .model
                .clone()
                .filter(|m| !m.trim().is_empty())
                .ok_or_else(|| {
                    anyhow::anyhow!("the baseline agent needs MODEL_NAME (or --model)")
                })?;
            let token = API_KEY_VARS
                .iter()
                .find_map(|k| std::env::var(k).ok().filter(|v| !v.is_empty()));
            check_api_key(&common.api_base_url, token.is_some())?;
            Some(ModelClient::new(&common.api_base_url, token, &name)?)
        } else {
            None
        };
        Ok(Runner {
            kind,
            env,
            model,
            data_dir: common.data_dir.clone(),
            max_steps,
        })
    }

    /// The `model=` of the `[START]` line.
    pub fn model_label(&self) -> String {
        match &self.model {
            Some(m) => m.model.clone(),
            None => self.kind.label(),
        }
    }
}

/// How an episode went.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Outcome {
    /// Task number.
    pub task_id: u32,
    /// Variant seed.
    pub seed: Option<u64>,
    /// Every leak fixed with full health (or score 1.0).
    pub success: bool,
    /// Steps sent.
    pub steps: u32,
    /// Final score in [0, 1].
    pub score: f64,
    /// Reward of each step.
    pub rewards: Vec<f64>,
    /// Why the episode was aborted (environment or model unavailable,
    /// session lost, oracle missing), if it was.
    pub fatal: Option<String>,
    /// The server's session id (its redacted trajectory stays readable at
    /// `GET /trajectory?session_id=` for the retention after close).
    #[serde(default)]
    pub session_id: Option<String>,
    /// The task as the reset observation states it: title, blank line,
    /// description (what an agent is asked to do).
    #[serde(default)]
    pub prompt: Option<String>,
    /// Every step: the action sent and the key fields of what came back.
    #[serde(default)]
    pub transitions: Vec<Transition>,
}

/// Characters of a step's output kept in [`Transition::output_head`].
pub const OUTPUT_HEAD_CHARS: usize = 1000;

/// What one step returned: the fields the eval report's transitions
/// (`secaudit-eval/2`) and the trajectory export's observations
/// (`secaudit-trajectory/1`) share, defined once and flattened into both
/// (each keeps its own place for `done` and `error`, so both formats stay
/// byte for byte as they were).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct StepResult {
    /// Exit code of the action (null if killed, or refused).
    pub exit_code: Option<i32>,
    /// Start of stdout, then stderr, at most [`OUTPUT_HEAD_CHARS`].
    pub output_head: String,
    /// The output was longer than `output_head` (or capped by the server).
    pub output_truncated: bool,
    /// Episode score after the step (`reward_breakdown.score`); null when
    /// no observation came back (here and in the next three).
    pub score: Option<f64>,
    /// Security progress: share of the initial leaks gone
    /// (`reward_breakdown.detection`).
    pub security: Option<f64>,
    /// Code health: share of the pristine tests passing
    /// (`reward_breakdown.health`).
    pub health: Option<f64>,
    /// Leaks the grader still finds.
    pub leaks_current: Option<u32>,
}

/// One step of an episode as the agent saw it.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Transition {
    /// 1-based step number.
    pub step: u32,
    /// The command sent, as the agent sent it (not redacted: the agent's
    /// own output; the server's trajectory is the redacted record).
    pub action: String,
    /// Reward of the step (the previous one when the server refused it).
    pub reward: f64,
    /// Episode over after it.
    pub done: bool,
    /// What the step returned.
    #[serde(flatten)]
    pub result: StepResult,
    /// Why the step failed or was refused (timeout, grading error, HTTP
    /// status), if it did.
    pub error: Option<String>,
}

impl Transition {
    /// The step's key fields from the observation it returned.
    pub fn observed(step: u32, action: &str, reward: f64, done: bool, obs: &Observation) -> Self {
        let last = obs.last_action.as_ref();
        let mut out = String::new();
        let mut capped = false;
        if let Some(a) = last {
            out.push_str(&a.stdout);
            if !a.stderr.is_empty() {
                if !out.is_empty() && !out.ends_with('\n') {
                    out.push('\n');
                }
                out.push_str(&a.stderr);
            }
            capped = a.stdout_truncated_bytes > 0 || a.stderr_truncated_bytes > 0;
        }
        let head: String = out.chars().take(OUTPUT_HEAD_CHARS).collect();
        Self {
            step,
            action: action.to_string(),
            reward,
            done,
            result: StepResult {
                exit_code: last.and_then(|a| a.exit_code),
                output_truncated: capped || head.len() < out.len(),
                output_head: head,
                score: Some(obs.reward_breakdown.score),
                security: Some(obs.reward_breakdown.detection),
                health: Some(obs.reward_breakdown.health),
                leaks_current: Some(obs.leaks_current),
            },
            error: step_error(obs),
        }
    }
}

/// The per-episode policy state.
enum Policy {
    Baseline { model: Box<ModelClient> },
    Script { actions: Vec<String>, next: usize },
    Null,
    Random { rng: Box<StdRng> },
}

/// Runs one episode, writing the `[START]`/`[STEP]`/`[END]` lines to `log`.
/// `rng_seed` seeds the random agent. Never fails: problems end the episode
/// and are reported in [`Outcome::fatal`] (after the `[END]` line).
pub async fn run_episode(
    r: &Runner,
    task_id: u32,
    seed: Option<u64>,
    rng_seed: u64,
    log: &mut dyn Write,
) -> Outcome {
    let mut out = Outcome {
        task_id,
        seed,
        success: false,
        steps: 0,
        score: 0.0,
        rewards: vec![],
        fatal: None,
        session_id: None,
        prompt: None,
        transitions: vec![],
    };
    line(
        log,
        &format!(
            "[START] task={task_id} env={ENV_NAME} model={}",
            r.model_label()
        ),
    );
    if let Err(e) = episode(r, task_id, seed, rng_seed, log, &mut out).await {
        eprintln!("agent: task {task_id}: {e:#}");
        out.fatal = Some(format!("{e:#}"));
    }
    let rewards: Vec<String> = out.rewards.iter().map(|x| format!("{x:.2}")).collect();
    line(
        log,
        &format!(
            "[END] success={} steps={} score={:.3} rewards={}",
            out.success,
            out.steps,
            out.score,
            rewards.join(",")
        ),
    );
    out
}

fn line(log: &mut dyn Write, s: &str) {
    // A closed stdout must not abort the episode; the outcome still counts.
    let _ = writeln!(log, "{s}");
    let _ = log.flush();
}

fn score_of(obs: &Observation) -> f64 {
    obs.reward_breakdown.score.clamp(0.0, 1.0)
}

async fn episode(
    r: &Runner,
    task_id: u32,
    seed: Option<u64>,
    rng_seed: u64,
    log: &mut dyn Write,
    out: &mut Outcome,
) -> anyhow::Result<()> {
    let reset = r.env.reset(task_id, seed).await.map_err(|e| match e {
        HttpError::Unavailable(e) => {
            e.context(format!("environment at {} is unreachable", r_url(r)))
        }
        other => anyhow::anyhow!("reset of task {task_id} refused: {other}"),
    })?;
    let session = reset
        .session_id
        .clone()
        .unwrap_or_else(|| reset.observation.session_id.clone());
    out.session_id = Some(session.clone());
    out.prompt = Some(format!(
        "{}\n\n{}",
        reset.observation.title, reset.observation.description
    ));
    // The policy is made after the reset: a seeded variant's truth file
    // (the oracle's actions) only exists once the server has generated the
    // variant, which it does at its first reset.
    let played = match make_policy(r, task_id, seed, rng_seed) {
        Ok(mut policy) => play(r, &mut policy, reset, &session, log, out).await,
        Err(e) => Err(e),
    };
    // Free the server's session slot and workspace whatever happened: an
    // eval of many episodes would otherwise fill a server's session table
    // (HTTP 429 "at capacity") until the idle timeout.
    if let Err(e) = r.env.close(&session).await {
        eprintln!("agent: task {task_id}: closing session {session}: {e}");
    }
    played
}

/// The policy state of one episode.
fn make_policy(
    r: &Runner,
    task_id: u32,
    seed: Option<u64>,
    rng_seed: u64,
) -> anyhow::Result<Policy> {
    Ok(match &r.kind {
        AgentKind::Baseline => Policy::Baseline {
            model: Box::new(r.model.clone().expect("baseline has a model client")),
        },
        AgentKind::Oracle => Policy::Script {
            actions: scripted::load_oracle(&r.data_dir, task_id, seed)?,
            next: 0,
        },
        AgentKind::Control => Policy::Script {
            actions: scripted::control_actions(),
            next: 0,
        },
        AgentKind::Hack(h) => Policy::Script {
            actions: scripted::hack_actions(h)?,
            next: 0,
        },
        AgentKind::Null => Policy::Null,
        AgentKind::Random => Policy::Random {
            rng: Box::new(StdRng::seed_from_u64(rng_seed)),
        },
    })
}

/// The step loop of one episode on `session`, from its reset response.
async fn play(
    r: &Runner,
    policy: &mut Policy,
    reset: StepResponse,
    session: &str,
    log: &mut dyn Write,
    out: &mut Outcome,
) -> anyhow::Result<()> {
    let task_id = out.task_id;
    let mut obs = reset.observation;
    out.score = score_of(&obs);
    // (action, reward) of each step, for the loop guard.
    let mut past: Vec<(String, f64)> = Vec::new();
    let mut done = reset.done;
    while !done && out.steps < r.max_steps {
        let step_no = out.steps + 1;
        let Some(action) = next_action(policy, &obs, step_no, r.max_steps, &past).await? else {
            eprintln!(
                "agent: task {task_id}: script finished after {} steps",
                out.steps
            );
            break;
        };
        let result = r.env.step(session, &action).await;
        out.steps = step_no;
        let error = match result {
            Ok(StepResponse {
                observation,
                reward,
                done: d,
                ..
            }) => {
                obs = observation;
                out.transitions
                    .push(Transition::observed(step_no, &action, reward, d, &obs));
                out.rewards.push(reward);
                out.score = score_of(&obs);
                out.success = obs.success || out.score >= 1.0;
                done = d || out.score >= 1.0;
                past.push((action.clone(), reward));
                step_error(&obs)
            }
            Err(HttpError::Rejected { status, message }) => {
                let reward = out.rewards.last().copied().unwrap_or(0.0);
                out.rewards.push(reward);
                out.transitions.push(refused(
                    step_no,
                    &action,
                    reward,
                    format!("HTTP {status}: {message}"),
                ));
                past.push((action.clone(), reward));
                if status == 404 || status == 410 {
                    log_step(log, step_no, &action, reward, true, Some(&message));
                    anyhow::bail!("session lost: HTTP {status}: {message}");
                }
                Some(format!("HTTP {status}: {message}"))
            }
            Err(HttpError::Unavailable(e)) => {
                let reward = out.rewards.last().copied().unwrap_or(0.0);
                out.rewards.push(reward);
                let msg = format!("{e:#}");
                out.transitions
                    .push(refused(step_no, &action, reward, msg.clone()));
                log_step(log, step_no, &action, reward, true, Some(&msg));
                return Err(e.context(format!("environment at {} became unreachable", r_url(r))));
            }
        };
        let reward = *out.rewards.last().unwrap_or(&0.0);
        log_step(log, step_no, &action, reward, done, error.as_deref());
    }
    Ok(())
}

fn refused(step: u32, action: &str, reward: f64, error: String) -> Transition {
    Transition::unobserved(step, action, reward, false, error)
}

impl Transition {
    /// A step without an observation (refused, never answered, or lost
    /// from a recording): the key fields are null and `error` says why.
    pub fn unobserved(step: u32, action: &str, reward: f64, done: bool, error: String) -> Self {
        Self {
            step,
            action: action.to_string(),
            reward,
            done,
            result: StepResult {
                exit_code: None,
                output_head: String::new(),
                output_truncated: false,
                score: None,
                security: None,
                health: None,
                leaks_current: None,
            },
            error: Some(error),
        }
    }
}

fn r_url(r: &Runner) -> &str {
    r.env.base_url()
}

fn log_step(
    log: &mut dyn Write,
    n: u32,
    action: &str,
    reward: f64,
    done: bool,
    error: Option<&str>,
) {
    let error = error.map_or("null".to_string(), |e| prompt::one_line(e, 500));
    line(
        log,
        &format!(
            "[STEP] step={n} action={} reward={reward:.2} done={done} error={error}",
            prompt::one_line(action, 2000)
        ),
    );
}

/// The error a step reports: a timeout, or grading problems.
fn step_error(obs: &Observation) -> Option<String> {
    let mut parts = Vec::new();
    if obs.last_action.as_ref().is_some_and(|a| a.timed_out) {
        parts.push("command timed out".to_string());
    }
    parts.extend(obs.grading_errors.iter().cloned());
    if parts.is_empty() {
        None
    } else {
        Some(parts.join("; "))
    }
}

async fn next_action(
    policy: &mut Policy,
    obs: &Observation,
    step: u32,
    max_steps: u32,
    past: &[(String, f64)],
) -> anyhow::Result<Option<String>> {
    match policy {
        Policy::Script { actions, next } => {
            let a = actions.get(*next).cloned();
            *next += 1;
            Ok(a)
        }
        Policy::Null => Ok(Some("true".into())),
        Policy::Random { rng } => {
            let mut pool: Vec<String> = scripted::RANDOM_POOL
                .iter()
                .map(|s| s.to_string())
                .collect();
            pool.extend(obs.ranked_actions.iter().map(|r| r.action.clone()));
            Ok(pool.choose(rng.as_mut()).cloned())
        }
        Policy::Baseline { model } => baseline_action(model, obs, step, max_steps, past)
            .await
            .map(Some),
    }
}

/// Runs the subcommand; returns the process exit code.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let kind = AgentKind::parse(&args.agent)?;
    let runner = Runner::new(kind, &args.common, args.max_steps)?;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    rt.block_on(async {
        let tasks: Vec<u32> = if args.all {
            match runner.env.tasks().await {
                Ok(t) => t.into_iter().map(|t| t.id).collect(),
                Err(e) => {
                    eprintln!("agent: cannot list tasks at {}: {e}", args.common.env_url);
                    return Ok(ExitCode::from(1));
                }
            }
        } else {
            vec![args.task_id.unwrap_or(1)]
        };
        let mut failed = false;
        let stdout = std::io::stdout();
        for t in tasks {
            let mut lock = stdout.lock();
            let o = run_episode(
                &runner,
                t,
                args.seed,
                args.seed.unwrap_or(0).wrapping_add(t as u64),
                &mut lock,
            )
            .await;
            drop(lock);
            if let Some(f) = o.fatal {
                eprintln!("agent: task {t} aborted: {f}");
                failed = true;
            }
        }
        Ok(if failed {
            ExitCode::from(1)
        } else {
            ExitCode::SUCCESS
        })
    })
}

#[cfg(test)]
mod api_key_tests {
    use super::check_api_key;

    #[test]
    fn a_remote_api_without_a_key_is_refused_with_the_variables_to_set() {
        let e = check_api_key("https://router.huggingface.co/v1", false).unwrap_err();
        assert!(e.to_string().contains("HF_TOKEN"), "{e}");
        assert!(check_api_key("https://router.huggingface.co/v1", true).is_ok());
    }

    #[test]
    fn a_loopback_api_needs_no_key() {
        for u in [
            "http://localhost:8000/v1",
            "http://127.0.0.1:9/v1",
            "http://[::1]:8000/v1",
        ] {
            assert!(check_api_key(u, false).is_ok(), "{u}");
        }
        assert!(check_api_key("http://10.0.0.5:8000/v1", false).is_err());
    }
}
