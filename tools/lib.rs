//! The `secaudit` command-line tool: subcommands that tie the graders and the
//! server together (`scan`, `generate`, `serve`), and the agents that drive a
//! server over HTTP (`agent`, `eval`), and `export` of their trajectories.

pub mod agent;
pub mod eval;
pub mod export;
pub mod generate;
pub mod scan;
pub mod serve;
