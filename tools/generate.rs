//! `secaudit generate`: builds the task workspaces (canonical, or seeded
//! variants) with `server::tasks`, printing one progress line per task to
//! stderr (`[3/13] task_03 ... generated, 12 ms`).

use anyhow::{Context, bail};
use server::tasks::{TaskRegistry, canonical_dir, generate_all, generate_task, generate_variants};
use std::path::PathBuf;
use std::process::ExitCode;

/// Most variants one invocation may build (each is a full workspace).
const MAX_COUNT: u64 = 10_000;

/// Arguments of `secaudit generate`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Directory holding tasks/{easy,medium,hard}/task_NN.
    #[arg(long, default_value = "tasks")]
    pub tasks_dir: PathBuf,
    /// Output root: canonical tasks go to DATA/tasks/task_NN, variants to
    /// DATA/variants/task_NN/seed_S.
    #[arg(long, default_value = "data")]
    pub data_dir: PathBuf,
    /// Only this task (number 1-13 or slug); default: all.
    #[arg(long)]
    pub task: Option<String>,
    /// Build seeded variants starting at this seed instead of the canonical
    /// tasks.
    #[arg(long)]
    pub seed: Option<u64>,
    /// Number of variants (seeds SEED..SEED+COUNT); needs --seed.
    #[arg(long, default_value_t = 1, requires = "seed")]
    pub count: u64,
    /// Regenerate even when the output is up to date.
    #[arg(long)]
    pub force: bool,
}

/// Runs the subcommand; returns the process exit code.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    if args.count == 0 || args.count > MAX_COUNT {
        bail!("--count must be 1..={MAX_COUNT}");
    }
    let registry = TaskRegistry::load(&args.tasks_dir)
        .with_context(|| format!("loading tasks from {}", args.tasks_dir.display()))?;
    let defs: Vec<_> = match &args.task {
        None => registry.list().iter().collect(),
        Some(t) => {
            let r = match t.parse::<u32>() {
                Ok(n) => server::models::TaskRef::Number(n),
                Err(_) => server::models::TaskRef::Name(t.clone()),
            };
            vec![
                registry
                    .resolve(&r)
                    .with_context(|| format!("no task {t:?} in {}", args.tasks_dir.display()))?,
            ]
        }
    };
    if defs.is_empty() {
        bail!("no tasks under {}", args.tasks_dir.display());
    }
    let print = |i: usize, n: usize, line: &str| eprintln!("[{i}/{n}] {line}");
    if args.force {
        // Removing the stamps makes every selected output stale.
        for d in &defs {
            let dirs: Vec<PathBuf> = match args.seed {
                None => vec![canonical_dir(&args.data_dir, &d.task.slug)],
                Some(s) => (s..s.saturating_add(args.count))
                    .map(|s| server::tasks::variant_dir(&args.data_dir, &d.task.slug, s))
                    .collect(),
            };
            for dir in dirs {
                match std::fs::remove_file(dir.join(".stamp")) {
                    Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e.into()),
                    _ => {}
                }
            }
        }
    }
    match (args.seed, &args.task) {
        (None, None) => {
            generate_all(&registry, &args.data_dir, print)?;
        }
        (None, Some(_)) => {
            let d = defs[0];
            let dir = canonical_dir(&args.data_dir, &d.task.slug);
            let start = std::time::Instant::now();
            if server::tasks::is_up_to_date(d, None, &dir) {
                print(1, 1, &format!("{} ... up to date", d.task.slug));
            } else {
                generate_task(d, None, &dir)?;
                print(
                    1,
                    1,
                    &format!(
                        "{} ... generated, {} ms",
                        d.task.slug,
                        start.elapsed().as_millis()
                    ),
                );
            }
        }
        (Some(seed), _) => {
            for d in &defs {
                generate_variants(d, seed, args.count, &args.data_dir, print)?;
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}
