//! The `secaudit` command-line tool: subcommands that tie the graders and the
//! server together (`scan`, `generate`, `serve`), and the agents that drive a
//! server over HTTP (`agent`, `eval`), `export` of their trajectories, and
//! the bridge to Harbor (`export harbor` writes tasks, `grade` is their
//! verifier).

pub mod agent;
pub mod eval;
pub mod export;
pub mod generate;
pub mod grade;
pub mod harbor;
pub mod scan;
pub mod serve;
pub mod trajectories;
