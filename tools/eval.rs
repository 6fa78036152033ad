//! `secaudit eval` (in progress).

/// Arguments of `secaudit eval`.
#[derive(Debug, clap::Args)]
pub struct Args {}

/// Runs the subcommand; returns the process exit code.
pub fn run(_args: Args) -> anyhow::Result<std::process::ExitCode> {
    anyhow::bail!("eval: not yet implemented")
}
