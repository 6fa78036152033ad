//! `secaudit agent` (in progress).

/// Arguments of `secaudit agent`.
#[derive(Debug, clap::Args)]
pub struct Args {}

/// Runs the subcommand; returns the process exit code.
pub fn run(_args: Args) -> anyhow::Result<std::process::ExitCode> {
    anyhow::bail!("agent: not yet implemented")
}
