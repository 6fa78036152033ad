//! `secaudit export trajectories`: episodes as JSON lines, one episode per
//! line, for supervised fine-tuning and rejection sampling.
//!
//! Two sources, one line format ([`Episode`], tagged [`EXPORT_FORMAT`]):
//! an `eval --json` document (`--from-eval`: every run of every task, the
//! actions as the agent sent them), or a server (`--server URL --session
//! ID`, repeatable: each session's redacted trajectory from
//! `GET /trajectory`, live or retained after close, so secret values are
//! masked as in the server's recording).
//!
//! The line is prompt / actions / rewards, not chat messages: the prompt
//! is the task as the reset observation states it, `actions[i]` earned
//! `rewards[i]`, and `observations[i]` holds the key fields of what the
//! step returned. A rejection-sampling pipeline keeps lines by `success` or
//! `final_score`; an SFT pipeline pairs `prompt` (and earlier
//! observations) with `actions`.

use crate::agent::{StepResult, Transition};
use crate::eval::{EvalReport, REPORT_FORMAT};
use server::models::Observation;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

/// Version tag of every exported line ([`Episode::format`]); bumped when a
/// field is removed or changes meaning.
pub const EXPORT_FORMAT: &str = "secaudit-trajectory/1";

/// Largest trajectory read from a server (a 40-step episode is ~0.3 MB).
pub const MAX_TRAJECTORY_BYTES: usize = 64 << 20;

/// Time allowed for one trajectory download.
const FETCH_TIMEOUT: Duration = Duration::from_secs(120);

/// Arguments of `secaudit export trajectories`.
#[derive(Debug, clap::Args)]
#[command(group(clap::ArgGroup::new("source").required(true).args(["from_eval", "server"])))]
pub struct TrajectoryArgs {
    /// Output file (JSON lines, one episode per line; replaced).
    #[arg(long)]
    pub out: PathBuf,
    /// An `eval --json` document (format secaudit-eval/2).
    #[arg(long, conflicts_with = "server")]
    pub from_eval: Option<PathBuf>,
    /// A server whose sessions' trajectories to fetch.
    #[arg(long, requires = "session")]
    pub server: Option<String>,
    /// A session id at `--server` (repeat for several).
    #[arg(long, requires = "server")]
    pub session: Vec<String>,
}

/// One exported episode: one line of the output.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Episode {
    /// [`EXPORT_FORMAT`].
    pub format: String,
    /// `eval` (actions as the agent sent them) or `server` (the server's
    /// redacted recording).
    pub source: String,
    /// The server's session id, when known.
    pub session_id: Option<String>,
    /// Task number.
    pub task_id: u32,
    /// Variant seed (null: the canonical task).
    pub seed: Option<u64>,
    /// The agent (eval only).
    pub agent: Option<String>,
    /// The task: the reset observation's title, a blank line, its
    /// description.
    pub prompt: Option<String>,
    /// Each step's command, in order.
    pub actions: Vec<String>,
    /// Each step's reward, in order (`rewards[i]` is `actions[i]`'s).
    pub rewards: Vec<f64>,
    /// Key fields of what each step returned: `exit_code`, `output_head`,
    /// `output_truncated`, `score`, `security`, `health`, `leaks_current`,
    /// `done`, `error` (null scores when no observation was recorded).
    pub observations: Vec<StepObservation>,
    /// Sum of `rewards`.
    #[serde(rename = "return")]
    pub ret: f64,
    /// Episode score at the end, in [0, 1].
    pub final_score: f64,
    /// Every leak fixed with full health.
    pub success: bool,
}

/// A [`Transition`] without its step number, action and reward (those
/// are the position, `actions` and `rewards`).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct StepObservation {
    /// What the step returned.
    #[serde(flatten)]
    pub result: StepResult,
    /// Episode over after it.
    pub done: bool,
    /// Why the step failed, if it did.
    pub error: Option<String>,
}

impl From<&Transition> for StepObservation {
    fn from(t: &Transition) -> Self {
        Self {
            result: t.result.clone(),
            done: t.done,
            error: t.error.clone(),
        }
    }
}

/// The line's shared fields from transitions.
#[allow(clippy::too_many_arguments)]
fn episode(
    source: &str,
    session_id: Option<String>,
    task_id: u32,
    seed: Option<u64>,
    agent: Option<String>,
    prompt: Option<String>,
    steps: &[Transition],
    final_score: f64,
    success: bool,
) -> Episode {
    let rewards: Vec<f64> = steps.iter().map(|t| t.reward).collect();
    Episode {
        format: EXPORT_FORMAT.into(),
        source: source.into(),
        session_id,
        task_id,
        seed,
        agent,
        prompt,
        actions: steps.iter().map(|t| t.action.clone()).collect(),
        ret: rewards.iter().sum(),
        rewards,
        observations: steps.iter().map(StepObservation::from).collect(),
        final_score,
        success,
    }
}

/// Every run of an eval document, in order.
pub fn from_eval(report: &EvalReport) -> anyhow::Result<Vec<Episode>> {
    anyhow::ensure!(
        report.format == REPORT_FORMAT,
        "the eval document is {:?}; this export reads {REPORT_FORMAT:?} (re-run eval to get the actions)",
        report.format
    );
    Ok(report
        .tasks
        .iter()
        .flat_map(|row| row.runs.iter())
        .map(|o| {
            episode(
                "eval",
                o.session_id.clone(),
                o.task_id,
                o.seed,
                Some(report.agent.clone()),
                o.prompt.clone(),
                &o.transitions,
                o.score,
                o.success,
            )
        })
        .collect())
}

/// One episode from a server trajectory (the JSON lines of
/// `GET /trajectory`). Uses the `reset` line and the `step` lines; a step
/// whose observation was not recorded (recovered after a restart) gets
/// null scores; `resume_regrade` lines change no action and are skipped.
pub fn from_recording(session_id: &str, text: &str) -> anyhow::Result<Episode> {
    let mut task = None;
    let mut seed = None;
    let mut prompt = None;
    let mut steps: Vec<Transition> = Vec::new();
    let mut last: Option<Observation> = None;
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let v: serde_json::Value = serde_json::from_str(line)
            .map_err(|e| anyhow::anyhow!("trajectory line is not JSON: {e}"))?;
        let obs = || serde_json::from_value::<Observation>(v["observation"].clone()).ok();
        match v["event"].as_str() {
            Some("reset") => {
                task = v["task_id"].as_u64().and_then(|t| u32::try_from(t).ok());
                seed = v["seed"].as_u64();
                if let Some(o) = obs() {
                    prompt = Some(format!("{}\n\n{}", o.title, o.description));
                    last = Some(o);
                }
            }
            Some("step") => {
                let n = v["step"].as_u64().unwrap_or(0) as u32;
                let action = v["action"].as_str().unwrap_or_default();
                let reward = v["reward"].as_f64().unwrap_or(0.0);
                let done = v["done"].as_bool().unwrap_or(false);
                let t = match obs() {
                    Some(o) => {
                        let t = Transition::observed(n, action, reward, done, &o);
                        last = Some(o);
                        t
                    }
                    None => Transition::unobserved(
                        n,
                        action,
                        reward,
                        done,
                        "observation not recorded (step recovered after a server restart)".into(),
                    ),
                };
                steps.push(t);
            }
            _ => {}
        }
    }
    let task = task
        .ok_or_else(|| anyhow::anyhow!("trajectory of session {session_id} has no reset line"))?;
    let (score, success) = last
        .as_ref()
        .map_or((0.0, false), |o| (o.reward_breakdown.score, o.success));
    Ok(episode(
        "server",
        Some(session_id.to_string()),
        task,
        seed,
        None,
        prompt,
        &steps,
        score,
        success,
    ))
}

/// `GET {server}/trajectory?session_id=ID`, bounded in size and time.
async fn fetch(client: &reqwest::Client, server: &str, id: &str) -> anyhow::Result<String> {
    let url = format!("{}/trajectory", server.trim_end_matches('/'));
    let mut resp = client
        .get(&url)
        .query(&[("session_id", id)])
        .timeout(FETCH_TIMEOUT)
        .send()
        .await
        .map_err(|e| anyhow::anyhow!("GET {url}: {e}"))?;
    let status = resp.status();
    if !status.is_success() {
        let body = resp.text().await.unwrap_or_default();
        let shown: String = body.chars().take(300).collect();
        anyhow::bail!("session {id}: HTTP {status}: {shown}");
    }
    let mut bytes = Vec::new();
    while let Some(chunk) = resp.chunk().await? {
        anyhow::ensure!(
            bytes.len() + chunk.len() <= MAX_TRAJECTORY_BYTES,
            "session {id}: trajectory over {MAX_TRAJECTORY_BYTES} bytes"
        );
        bytes.extend_from_slice(&chunk);
    }
    String::from_utf8(bytes).map_err(|e| anyhow::anyhow!("session {id}: not UTF-8: {e}"))
}

/// Writes `episodes` to `out`, one JSON object per line, through a
/// temporary file so a failed export leaves no half file.
pub fn write_jsonl(out: &std::path::Path, episodes: &[Episode]) -> anyhow::Result<()> {
    let dir = out
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(std::path::Path::new("."));
    let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
    for e in episodes {
        serde_json::to_writer(&mut tmp, e)?;
        tmp.write_all(b"\n")?;
    }
    tmp.flush()?;
    tmp.persist(out)?;
    Ok(())
}

/// Runs the subcommand; returns the process exit code.
pub fn run(a: TrajectoryArgs) -> anyhow::Result<ExitCode> {
    let episodes = if let Some(path) = &a.from_eval {
        let text = std::fs::read_to_string(path)
            .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
        let report: EvalReport = serde_json::from_str(&text)
            .map_err(|e| anyhow::anyhow!("{}: not an eval --json document: {e}", path.display()))?;
        from_eval(&report)?
    } else {
        let server = a.server.as_deref().unwrap_or_default();
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        let client = reqwest::Client::new();
        rt.block_on(async {
            let mut v = Vec::new();
            for id in &a.session {
                let text = fetch(&client, server, id).await?;
                v.push(from_recording(id, &text)?);
            }
            anyhow::Ok(v)
        })?
    };
    write_jsonl(&a.out, &episodes)?;
    eprintln!(
        "export: wrote {} episode(s) to {}",
        episodes.len(),
        a.out.display()
    );
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::Outcome;
    use crate::eval::summarise;

    fn t(step: u32, action: &str, reward: f64, done: bool) -> Transition {
        Transition {
            step,
            action: action.into(),
            reward,
            done,
            result: StepResult {
                exit_code: Some(0),
                output_head: format!("out {step}"),
                output_truncated: false,
                score: Some(reward),
                security: Some(reward),
                health: Some(1.0),
                leaks_current: Some(2 - step.min(2)),
            },
            error: None,
        }
    }

    /// The per-step fields are one type flattened into both formats; each
    /// format keeps its key order (`done` before the step result in
    /// `secaudit-eval/2`, after it in `secaudit-trajectory/1`) and reads
    /// back.
    #[test]
    fn both_formats_keep_their_bytes() {
        let tr = t(1, "ls", 0.5, false);
        let eval = r#"{"step":1,"action":"ls","reward":0.5,"done":false,"exit_code":0,"output_head":"out 1","output_truncated":false,"score":0.5,"security":0.5,"health":1.0,"leaks_current":1,"error":null}"#;
        let export = r#"{"exit_code":0,"output_head":"out 1","output_truncated":false,"score":0.5,"security":0.5,"health":1.0,"leaks_current":1,"done":false,"error":null}"#;
        assert_eq!(serde_json::to_string(&tr).unwrap(), eval);
        let obs = StepObservation::from(&tr);
        assert_eq!(serde_json::to_string(&obs).unwrap(), export);
        assert_eq!(serde_json::from_str::<Transition>(eval).unwrap(), tr);
        assert_eq!(
            serde_json::from_str::<StepObservation>(export).unwrap(),
            obs
        );
    }

    #[test]
    fn eval_runs_become_lines_with_their_actions_and_rewards() {
        let run = Outcome {
            task_id: 3,
            seed: Some(9),
            success: true,
            steps: 2,
            score: 1.0,
            rewards: vec![0.5, 1.0],
            fatal: None,
            session_id: Some("abc".into()),
            prompt: Some("T\n\nD".into()),
            transitions: vec![t(1, "list_files", 0.5, false), t(2, "submit", 1.0, true)],
        };
        let report = EvalReport {
            format: REPORT_FORMAT.into(),
            agent: "oracle".into(),
            model: "oracle".into(),
            env_url: "http://x".into(),
            episodes: 1,
            max_steps: 5,
            seed: Some(9),
            overall: summarise(3, std::slice::from_ref(&run)).stats,
            tasks: vec![summarise(3, &[run])],
        };
        let eps = from_eval(&report).unwrap();
        assert_eq!(eps.len(), 1);
        let e = &eps[0];
        assert_eq!(e.actions, vec!["list_files", "submit"]);
        assert_eq!(e.rewards, vec![0.5, 1.0]);
        assert_eq!(e.ret, 1.5);
        assert_eq!((e.task_id, e.seed, e.success), (3, Some(9), true));
        assert_eq!(e.observations[1].result.leaks_current, Some(0));
        assert!(e.observations[1].done);
        let line = serde_json::to_value(e).unwrap();
        assert_eq!(line["format"], EXPORT_FORMAT);
        assert_eq!(line["return"], 1.5, "{line}");

        let mut old = report.clone();
        old.format = "secaudit-eval/1".into();
        assert!(from_eval(&old).is_err(), "an older document is refused");
    }

    #[test]
    fn recordings_without_observations_or_reset_are_handled() {
        let text = concat!(
            r#"{"event":"reset","task_id":2,"seed":null,"observation":null,"recovered":true}"#,
            "\n",
            r#"{"event":"step","step":1,"action":"ls","reward":0.1,"done":false,"observation":null}"#,
            "\n",
            r#"{"event":"resume_regrade","after_step":1,"reward":0.2,"done":false,"observation":null}"#,
            "\n",
        );
        let e = from_recording("s", text).unwrap();
        assert_eq!((e.task_id, e.actions.clone()), (2, vec!["ls".to_string()]));
        assert_eq!(e.rewards, vec![0.1]);
        assert_eq!(e.observations[0].result.score, None);
        assert!(e.observations[0].error.is_some());
        assert!(from_recording("s", "").is_err(), "no reset line");
        assert!(from_recording("s", "{").is_err(), "not JSON");
    }

    #[test]
    fn write_replaces_the_file_with_one_line_per_episode() {
        let d = tempfile::tempdir().unwrap();
        let out = d.path().join("t.jsonl");
        std::fs::write(&out, "old").unwrap();
        let e = from_recording(
            "s",
            r#"{"event":"reset","task_id":1,"seed":null,"observation":null}"#,
        )
        .unwrap();
        write_jsonl(&out, &[e.clone(), e]).unwrap();
        let text = std::fs::read_to_string(&out).unwrap();
        assert_eq!(text.lines().count(), 2);
        for l in text.lines() {
            let back: Episode = serde_json::from_str(l).unwrap();
            assert_eq!(back.task_id, 1);
        }
    }
}
