//! `secaudit eval`: runs an agent over tasks and episodes and reports, per
//! task, the mean/min/max final score, mean steps and success rate, as a
//! table on stdout and optionally as JSON. Episode logs go to stderr.
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
    /// baseline, oracle, null, random or hack:NAME.
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

/// One row of the table.
#[derive(Debug, Clone, serde::Serialize)]
pub struct TaskRow {
    /// Task number.
    pub task_id: u32,
    /// Episodes run.
    pub episodes: u32,
    /// Mean final score.
    pub mean_reward: f64,
    /// Lowest final score.
    pub min_reward: f64,
    /// Highest final score.
    pub max_reward: f64,
    /// Mean steps sent.
    pub mean_steps: f64,
    /// Share of episodes that succeeded.
    pub success_rate: f64,
    /// Episodes aborted by an error.
    pub errors: u32,
    /// Final score of each episode.
    pub scores: Vec<f64>,
}

/// Summarises one task's outcomes.
pub fn summarise(task_id: u32, outs: &[Outcome]) -> TaskRow {
    let n = outs.len().max(1) as f64;
    let scores: Vec<f64> = outs.iter().map(|o| o.score).collect();
    TaskRow {
        task_id,
        episodes: outs.len() as u32,
        mean_reward: scores.iter().sum::<f64>() / n,
        min_reward: scores
            .iter()
            .copied()
            .fold(f64::INFINITY, f64::min)
            .clamp(0.0, 1.0),
        max_reward: scores.iter().copied().fold(0.0, f64::max),
        mean_steps: outs.iter().map(|o| o.steps as f64).sum::<f64>() / n,
        success_rate: outs.iter().filter(|o| o.success).count() as f64 / n,
        errors: outs.iter().filter(|o| o.fatal.is_some()).count() as u32,
        scores,
    }
}

/// The table as text.
pub fn render(rows: &[TaskRow]) -> String {
    let mut s = format!(
        "{:>4}  {:>8}  {:>6}  {:>6}  {:>6}  {:>6}  {:>7}  {:>6}\n",
        "task", "episodes", "mean", "min", "max", "steps", "success", "errors"
    );
    for r in rows {
        s.push_str(&format!(
            "{:>4}  {:>8}  {:>6.3}  {:>6.3}  {:>6.3}  {:>6.1}  {:>6.0}%  {:>6}\n",
            r.task_id,
            r.episodes,
            r.mean_reward,
            r.min_reward,
            r.max_reward,
            r.mean_steps,
            r.success_rate * 100.0,
            r.errors
        ));
    }
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
        print!("{}", render(&rows));
        if let Some(path) = &args.json {
            let doc = serde_json::json!({
                "agent": kind.label(),
                "model": runner.model_label(),
                "env_url": args.common.env_url,
                "episodes": args.episodes,
                "max_steps": args.max_steps,
                "seed": args.seed,
                "tasks": rows,
            });
            std::fs::write(path, serde_json::to_vec_pretty(&doc)?)?;
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
        }
    }

    #[test]
    fn summary_statistics() {
        let r = summarise(1, &[o(1.0, 4, true), o(0.5, 10, false)]);
        assert_eq!(r.mean_reward, 0.75);
        assert_eq!(r.min_reward, 0.5);
        assert_eq!(r.max_reward, 1.0);
        assert_eq!(r.mean_steps, 7.0);
        assert_eq!(r.success_rate, 0.5);
        assert!(render(&[r]).contains("50%"));
    }

    #[test]
    fn task_lists() {
        assert_eq!(parse_tasks("all").unwrap(), None);
        assert_eq!(parse_tasks("1, 3").unwrap(), Some(vec![1, 3]));
        assert!(parse_tasks("x").is_err());
    }
}
