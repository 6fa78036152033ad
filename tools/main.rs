//! `secaudit`: one binary, several subcommands. This file only parses and
//! dispatches; each subcommand lives in its own module of the `secaudit` lib.

use clap::{Parser, Subcommand};
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "secaudit",
    version,
    about = "SecretsAuditEnv: scan, generate tasks, serve the environment, run agents"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Scan a directory (or its git history) for secrets.
    Scan(secaudit::scan::Args),
    /// Build the task workspaces (canonical, or seeded variants).
    Generate(secaudit::generate::Args),
    /// Run the environment server.
    Serve(secaudit::serve::Args),
    /// Run the baseline LLM agent (or a scripted agent) against a server.
    Agent(secaudit::agent::Args),
    /// Evaluate an agent over tasks and episodes; print a table.
    Eval(secaudit::eval::Args),
    /// Write the tasks in another harness's format (`export harbor`), or
    /// episodes as JSON lines for training (`export trajectories`).
    Export(secaudit::export::Args),
    /// Grade a finished workspace against a generated task; write the reward
    /// (the verifier of exported Harbor tasks).
    Grade(secaudit::grade::Args),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Scan(a) => secaudit::scan::run(a),
        Command::Generate(a) => secaudit::generate::run(a),
        Command::Serve(a) => secaudit::serve::run(a),
        Command::Agent(a) => secaudit::agent::run(a),
        Command::Eval(a) => secaudit::eval::run(a),
        Command::Export(a) => secaudit::export::run(a),
        Command::Grade(a) => secaudit::grade::run(a),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("secaudit: error: {e:#}");
            ExitCode::from(2)
        }
    }
}
