//! `secaudit scan` (in progress).

/// Arguments of `secaudit scan`.
#[derive(Debug, clap::Args)]
pub struct Args {}

/// Runs the subcommand; returns the process exit code.
pub fn run(_args: Args) -> anyhow::Result<std::process::ExitCode> {
    anyhow::bail!("scan: not yet implemented")
}
