//! Integration tests, one binary. Each module is one area.

// Shared set-up: an Environment over the real tasks in a temporary data dir.
mod util;

// Every task's oracle reaches 1.0 through the real environment.
mod oracle;

// Honest fixes in many styles are not new leaks and still reach 1.0.
mod leak_styles;

// The real OpenEnv client and CLI against the built binary.
mod openenv_client;

// Dockerfile, openenv.yaml, spec.md and validate-submission.sh.
mod packaging;

// The Python client package: pip installs, typed models vs /schema, the
// typed client over WS and HTTP, OpenEnv's MCP client, `openenv validate`.
mod pyclient;

// TRL's GRPOTrainer(environment_factory=...) over the client's trl_env:
// tool schemas vs the server's tools, an episode driven as TRL drives it,
// the example training script's use of TRL's API.
mod trl;

// The baseline agent against fake model/env servers; scripted agents and eval
// against the real environment server.
mod agent;

// The debug page driven in headless Chromium.
mod web;

// Scripted reward hacks through the real environment: each earns nothing.
mod hacks;

// Same task, seed and actions give the same observations (replay).
mod replay;

// 64 concurrent sessions over HTTP, each to the end of its episode.
mod load;

// The server inside Docker-like confinement (no namespaces), as root and as
// uid 1000: the landlock tier, the oracle, the hacks, containment probes and
// resource bounds through the API.
mod container;

// Connection hygiene of `secaudit serve`: half-open connections and the
// connection cap cannot starve /health.
mod conns;

// A server killed mid-episode resumes its sessions after restart.
mod restart;

// The first hour of a new user: start-up checks, error causes, finished
// sessions freeing their slots, the README's examples run as written.
mod firsthour;

// `secaudit scan` in gitleaks' place: report path and formats, exit codes,
// redaction, .gitleaks.toml / .gitleaksignore / baselines, pre-commit hook.
mod scan_cli;
