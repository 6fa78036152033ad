//! `secaudit generate` (in progress).

/// Arguments of `secaudit generate`.
#[derive(Debug, clap::Args)]
pub struct Args {}

/// Runs the subcommand; returns the process exit code.
pub fn run(_args: Args) -> anyhow::Result<std::process::ExitCode> {
    anyhow::bail!("generate: not yet implemented")
}
