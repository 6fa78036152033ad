//! `secaudit export TARGET`: writes the tasks in another harness's format
//! (`harbor`, [`crate::harbor`]) or episodes for training
//! (`trajectories`, [`crate::trajectories`]).

use anyhow::{Context, bail};
use server::tasks::TaskRegistry;
use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `secaudit export`.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    pub target: Target,
}

/// Export formats.
#[derive(Debug, clap::Subcommand)]
pub enum Target {
    /// Harbor tasks (instruction.md, task.toml, environment/, tests/,
    /// solution/), one directory per task and seeded variant.
    Harbor(HarborArgs),
    /// Episodes as JSON lines (format `secaudit-trajectory/1`, see README
    /// "Trajectories").
    Trajectories(crate::trajectories::TrajectoryArgs),
}

/// Arguments of `secaudit export harbor`.
#[derive(Debug, clap::Args)]
pub struct HarborArgs {
    /// Output directory; one task directory is written into it per task
    /// (`task_01`) and variant (`task_01-seed_7`).
    #[arg(long)]
    pub out: PathBuf,
    /// `all` or a comma-separated list of task numbers.
    #[arg(long, default_value = "all")]
    pub tasks: String,
    /// Also export these seeded variants of every selected task
    /// (comma-separated seeds).
    #[arg(long, value_delimiter = ',')]
    pub seeds: Vec<u64>,
    /// Directory holding tasks/{easy,medium,hard}/task_NN.
    #[arg(long, default_value = "tasks")]
    pub tasks_dir: PathBuf,
    /// The secaudit binary the verifier image runs (default: this one).
    #[arg(long)]
    pub secaudit_bin: Option<PathBuf>,
    /// Replace task directories that already exist in --out.
    #[arg(long)]
    pub force: bool,
}

/// Most variants one invocation may write per task.
const MAX_SEEDS: usize = 1000;

/// Runs the subcommand; returns the process exit code.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    match args.target {
        Target::Harbor(a) => harbor(a),
        Target::Trajectories(a) => crate::trajectories::run(a),
    }
}

fn harbor(args: HarborArgs) -> anyhow::Result<ExitCode> {
    if args.seeds.len() > MAX_SEEDS {
        bail!("--seeds: at most {MAX_SEEDS}");
    }
    let registry = TaskRegistry::load(&args.tasks_dir)
        .with_context(|| format!("loading tasks from {}", args.tasks_dir.display()))?;
    let defs: Vec<_> = match crate::eval::parse_tasks(&args.tasks)? {
        None => registry.list().iter().collect(),
        Some(ids) => ids
            .iter()
            .map(|&id| {
                registry
                    .get(id)
                    .with_context(|| format!("no task {id} in {}", args.tasks_dir.display()))
            })
            .collect::<anyhow::Result<_>>()?,
    };
    if defs.is_empty() {
        bail!("no tasks under {}", args.tasks_dir.display());
    }
    let bin = match &args.secaudit_bin {
        Some(b) => b.clone(),
        None => crate::harbor::current_binary()?,
    };
    if !bin.is_file() {
        bail!("--secaudit-bin {}: not a file", bin.display());
    }
    std::fs::create_dir_all(&args.out)
        .with_context(|| format!("creating {}", args.out.display()))?;
    // Generated tasks are built here and archived into tests/truth.tar.
    let scratch = tempfile::Builder::new()
        .prefix(".secaudit-export-")
        .tempdir_in(&args.out)?;
    let seeds: Vec<Option<u64>> = std::iter::once(None)
        .chain(args.seeds.iter().copied().map(Some))
        .collect();
    let n = defs.len() * seeds.len();
    let mut i = 0;
    for def in &defs {
        for &seed in &seeds {
            i += 1;
            let name = crate::harbor::task_dir_name(&def.task.slug, seed);
            let dir = args.out.join(&name);
            if dir.exists() {
                if !args.force {
                    bail!("{} exists (--force replaces it)", dir.display());
                }
                std::fs::remove_dir_all(&dir)
                    .with_context(|| format!("removing {}", dir.display()))?;
            }
            let start = std::time::Instant::now();
            crate::harbor::export_task(def, seed, &dir, scratch.path(), &bin)
                .with_context(|| format!("exporting {name}"))?;
            eprintln!(
                "[{i}/{n}] {name} ... exported, {} ms",
                start.elapsed().as_millis()
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}
