//! `secaudit eval`: runs an agent over tasks and episodes and reports, per
//! task, the mean/min/max final score, mean steps and success rate, as a
//! table on stdout (a last `all` line over every episode) and optionally as
//! JSON ([`EvalReport`], versioned by [`REPORT_FORMAT`]). Episode logs (the
//! `[START]`/`[STEP]`/`[END]` lines) go to stderr. Every episode's session is
//! closed on the server when it ends. Exit code 1 when any episode was
//! aborted by an error (counted in `errors`).
//!
//! With `--seed S`, episode k (0-based) of every task runs variant seed
//! S + k; without it every episode runs the canonical task. The random agent
//! is seeded from the task and episode either way, so runs are repeatable.

use crate::agent::{AgentKind, Common, Outcome, Runner, run_episode};
use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `secaudit eval`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// baseline, oracle, null, random, control or hack:NAME (see `secaudit
    /// agent --help`).
    #[arg(long, default_value = "oracle")]
    pub agent: String,
    /// `all` or a comma-separated list of task numbers.
    #[arg(long, default_value = "all")]
    pub tasks: String,
    /// Episodes per task.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub episodes: u32,
    /// Steps per episode at most.
    #[arg(long, default_value_t = 40, value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub max_steps: u32,
    /// First variant seed (see the module doc).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Write the table as JSON here.
    #[arg(long)]
    pub json: Option<PathBuf>,
    #[command(flatten)]
    pub common: Common,
}

/// Version tag of the `--json` document ([`EvalReport::format`]). Fields are
/// only ever added under one tag; a field that is removed or changes meaning
/// bumps it, so a script comparing runs can refuse a document it does not
/// understand. `/2`: each run carries `session_id`, `prompt` and
/// `transitions` (the actions and what each step returned), which
/// `secaudit export trajectories --from-eval` turns into training lines.
pub const REPORT_FORMAT: &str = "secaudit-eval/2";

/// The `--json` document. Example (one task, abbreviated):
///
/// ```json
/// {
///   "format": "secaudit-eval/2",
///   "agent": "oracle", "model": "oracle",
///   "env_url": "http://localhost:7860",
///   "episodes": 1, "max_steps": 40, "seed": null,
///   "tasks": [{"task_id": 1, "episodes": 1, "mean_reward": 1.0,
///              "min_reward": 1.0, "max_reward": 1.0, "mean_steps": 4.0,
///              "min_steps_taken": 4, "max_steps_taken": 4, "success_rate": 1.0,
///              "errors": 0, "scores": [1.0],
///              "runs": [{"task_id": 1, "seed": null, "success": true,
///                        "steps": 4, "score": 1.0,
///                        "rewards": [0.0, 0.5, 0.5, 1.0], "fatal": null,
///                        "session_id": "3f0c…", "prompt": "Hardcoded key\n\n…",
///                        "transitions": [{"step": 1, "action": "list_files",
///                          "reward": 0.0, "done": false, "exit_code": 0,
///                          "output_head": "app/config.py\n…",
///                          "output_truncated": false, "score": 0.0,
///                          "security": 0.0, "health": 1.0,
///                          "leaks_current": 2, "error": null}, …]}]}],
///   "overall": {"episodes": 1, "mean_reward": 1.0, "min_reward": 1.0,
///               "max_reward": 1.0, "mean_steps": 4.0, "min_steps_taken": 4,
///               "max_steps_taken": 4, "success_rate": 1.0, "errors": 0}
/// }
/// ```
///
/// Rewards are final episode scores in [0, 1] (the last observation's
/// `reward_breakdown.score`, whatever the reward mode), so "mean reward" is
/// the mean return under the seed's score mode.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct EvalReport {
    /// [`REPORT_FORMAT`].
    pub format: String,
    /// `oracle`, `null`, `random`, `baseline` or `hack:NAME`.
    pub agent: String,
    /// The model name (baseline) or the agent's name.
    pub model: String,
    /// The environment server evaluated.
    pub env_url: String,
    /// Episodes per task.
    pub episodes: u32,
    /// Step limit per episode.
    pub max_steps: u32,
    /// First variant seed, if any (episode k runs seed + k).
    pub seed: Option<u64>,
    /// One row per task, in the order run.
    pub tasks: Vec<TaskRow>,
    /// The same statistics over every episode of every task.
    pub overall: Stats,
}

/// Statistics over a set of episodes.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Stats {
    /// Episodes counted.
    pub episodes: u32,
    /// Mean final score.
    pub mean_reward: f64,
    /// Lowest final score.
    pub min_reward: f64,
    /// Highest final score.
    pub max_reward: f64,
    /// Mean steps sent.
    pub mean_steps: f64,
    /// Fewest steps sent.
    pub min_steps_taken: u32,
    /// Most steps sent.
    pub max_steps_taken: u32,
    /// Share of episodes that succeeded (every leak fixed, health 1.0).
    pub success_rate: f64,
    /// Episodes aborted by an error (environment or model unavailable,
    /// session lost, oracle missing); their score is what they reached.
    pub errors: u32,
}

/// One row of the table: one task's statistics and episodes.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct TaskRow {
    /// Task number.
    pub task_id: u32,
    /// The statistics (flattened into the row in JSON).
    #[serde(flatten)]
    pub stats: Stats,
    /// Final score of each episode.
    pub scores: Vec<f64>,
    /// Each episode in full.
    pub runs: Vec<Outcome>,
}

/// Statistics of `outs` (all zero when empty).
pub fn stats(outs: &[Outcome]) -> Stats {
    let n = outs.len().max(1) as f64;
    let scores = || outs.iter().map(|o| o.score);
    let steps = || outs.iter().map(|o| o.steps);
    Stats {
        episodes: outs.len() as u32,
        mean_reward: scores().sum::<f64>() / n,
        min_reward: if outs.is_empty() {
            0.0
        } else {
            scores().fold(f64::INFINITY, f64::min)
        },
        max_reward: scores().fold(0.0, f64::max),
        mean_steps: steps().map(f64::from).sum::<f64>() / n,
        min_steps_taken: steps().min().unwrap_or(0),
        max_steps_taken: steps().max().unwrap_or(0),
        success_rate: outs.iter().filter(|o| o.success).count() as f64 / n,
        errors: outs.iter().filter(|o| o.fatal.is_some()).count() as u32,
    }
}

/// Summarises one task's outcomes.
pub fn summarise(task_id: u32, outs: &[Outcome]) -> TaskRow {
    TaskRow {
        task_id,
        stats: stats(outs),
        scores: outs.iter().map(|o| o.score).collect(),
        runs: outs.to_vec(),
    }
}

/// The table as text: a header, one line per task, and an `all` line over
/// every episode.
pub fn render(rows: &[TaskRow], overall: &Stats) -> String {
    let mut s = format!(
        "{:>4}  {:>8}  {:>6}  {:>6}  {:>6}  {:>6}  {:>7}  {:>6}\n",
        "task", "episodes", "mean", "min", "max", "steps", "success", "errors"
    );
    let mut line = |name: String, r: &Stats| {
        s.push_str(&format!(
            "{:>4}  {:>8}  {:>6.3}  {:>6.3}  {:>6.3}  {:>6.1}  {:>6.0}%  {:>6}\n",
            name,
            r.episodes,
            r.mean_reward,
            r.min_reward,
            r.max_reward,
            r.mean_steps,
            r.success_rate * 100.0,
            r.errors
        ));
    };
    for r in rows {
        line(r.task_id.to_string(), &r.stats);
    }
    line("all".into(), overall);
    s
}

/// Parses `all` (None) or `1,2,5`.
pub fn parse_tasks(s: &str) -> anyhow::Result<Option<Vec<u32>>> {
    if s.trim() == "all" {
        return Ok(None);
    }
    let v: Result<Vec<u32>, _> = s.split(',').map(|t| t.trim().parse::<u32>()).collect();
    let v = v.map_err(|e| anyhow::anyhow!("--tasks: expected `all` or numbers like 1,2,5: {e}"))?;
    anyhow::ensure!(
        !v.is_empty() && v.len() <= 100,
        "--tasks: between 1 and 100 tasks"
    );
    Ok(Some(v))
}

/// Runs the subcommand; returns the process exit code.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let kind = AgentKind::parse(&args.agent)?;
    let tasks = parse_tasks(&args.tasks)?;
    let runner = Runner::new(kind.clone(), &args.common, args.max_steps)?;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    rt.block_on(async {
        let tasks = match tasks {
            Some(t) => t,
            None => match runner.env.tasks().await {
                Ok(t) => t.into_iter().map(|t| t.id).collect(),
                Err(e) => {
                    eprintln!("eval: cannot list tasks at {}: {e}", args.common.env_url);
                    return Ok(ExitCode::from(1));
                }
            },
        };
        let mut rows = Vec::new();
        let mut any_fatal = false;
        let mut err = std::io::stderr();
        for &t in &tasks {
            let mut outs = Vec::new();
            for k in 0..args.episodes {
                let seed = args.seed.map(|s| s.wrapping_add(k as u64));
                let rng_seed = (t as u64) * 1_000_003 + k as u64 + args.seed.unwrap_or(0);
                let o = run_episode(&runner, t, seed, rng_seed, &mut err).await;
                any_fatal |= o.fatal.is_some();
                outs.push(o);
            }
            rows.push(summarise(t, &outs));
        }
        let all: Vec<Outcome> = rows.iter().flat_map(|r| r.runs.iter().cloned()).collect();
        let report = EvalReport {
            format: REPORT_FORMAT.into(),
            agent: kind.label(),
            model: runner.model_label(),
            env_url: args.common.env_url.clone(),
            episodes: args.episodes,
            max_steps: args.max_steps,
            seed: args.seed,
            overall: stats(&all),
            tasks: rows,
        };
        print!("{}", render(&report.tasks, &report.overall));
        if let Some(path) = &args.json {
            std::fs::write(path, serde_json::to_vec_pretty(&report)?)?;
            eprintln!("eval: wrote {}", path.display());
        }
        Ok(if any_fatal {
            ExitCode::from(1)
        } else {
            ExitCode::SUCCESS
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn o(score: f64, steps: u32, success: bool) -> Outcome {
        Outcome {
            task_id: 1,
            seed: None,
            success,
            steps,
            score,
            rewards: vec![],
            fatal: None,
            session_id: None,
            prompt: None,
            transitions: vec![],
        }
    }

    #[test]
    fn summary_statistics() {
        let r = summarise(1, &[o(1.0, 4, true), o(0.5, 10, false)]);
        let s = &r.stats;
        assert_eq!(s.mean_reward, 0.75);
        assert_eq!(s.min_reward, 0.5);
        assert_eq!(s.max_reward, 1.0);
        assert_eq!(s.mean_steps, 7.0);
        assert_eq!((s.min_steps_taken, s.max_steps_taken), (4, 10));
        assert_eq!(s.success_rate, 0.5);
        assert_eq!(r.scores, vec![1.0, 0.5]);
        let table = render(std::slice::from_ref(&r), s);
        assert!(table.contains("50%"), "{table}");
        assert!(
            table
                .lines()
                .last()
                .unwrap()
                .trim_start()
                .starts_with("all")
        );
        assert_eq!(stats(&[]).min_reward, 0.0);
    }

    /// The JSON keeps the documented flat row shape and round-trips.
    #[test]
    fn report_json_shape() {
        let mut run = o(0.25, 2, false);
        run.transitions = vec![crate::agent::Transition::unobserved(
            1,
            "ls",
            0.25,
            false,
            "HTTP 409: busy".into(),
        )];
        let row = summarise(3, &[run]);
        let report = EvalReport {
            format: REPORT_FORMAT.into(),
            agent: "null".into(),
            model: "null".into(),
            env_url: "http://x".into(),
            episodes: 1,
            max_steps: 5,
            seed: None,
            overall: row.stats.clone(),
            tasks: vec![row],
        };
        let v = serde_json::to_value(&report).unwrap();
        for key in [
            "task_id",
            "episodes",
            "mean_reward",
            "min_reward",
            "max_reward",
            "mean_steps",
            "min_steps_taken",
            "max_steps_taken",
            "success_rate",
            "errors",
            "scores",
            "runs",
        ] {
            assert!(v["tasks"][0].get(key).is_some(), "row lacks {key}: {v}");
        }
        assert_eq!(v["format"], REPORT_FORMAT);
        let run = &v["tasks"][0]["runs"][0];
        for key in ["session_id", "prompt", "transitions"] {
            assert!(run.get(key).is_some(), "run lacks {key}: {run}");
        }
        let step = &run["transitions"][0];
        for key in [
            "step",
            "action",
            "reward",
            "done",
            "exit_code",
            "output_head",
            "output_truncated",
            "score",
            "security",
            "health",
            "leaks_current",
            "error",
        ] {
            assert!(step.get(key).is_some(), "transition lacks {key}: {step}");
        }
        assert_eq!(v["overall"]["mean_reward"], 0.25);
        let back: EvalReport = serde_json::from_value(v).unwrap();
        assert_eq!(back.tasks[0].stats, report.tasks[0].stats);
    }

    #[test]
    fn task_lists() {
        assert_eq!(parse_tasks("all").unwrap(), None);
        assert_eq!(parse_tasks("1, 3").unwrap(), Some(vec![1, 3]));
        assert!(parse_tasks("x").is_err());
    }
}
