//! Graders for SecretsAuditEnv: everything that decides a score, as a pure
//! library with no async runtime, HTTP or task-file knowledge, so it can be
//! tested and fuzzed on bytes and temporary repositories.
//!
//! - [`scanner`]: the harness's redactor turned into a secret scanner
//!   (provider rules, credential-named assignments, random tokens, decoded
//!   base64/hex), over a working tree or a whole git object graph.
//! - [`redact`]: the same core replacing found values in any text.
//! - [`planted`]: the planted secret (ground truth) shared by the generator,
//!   the security grader and visibility.
//! - [`security`]: ground-truth grading: is a planted value (or a simple
//!   transform of it) still anywhere in the tree or the git object database?
//! - [`junit`]: pytest's JUnit XML into counts and per-test outcomes.
//! - [`health_score`]: one pytest run (report, the bootstrap's keyed
//!   verdicts, the hidden canary) against the pristine manifest -> health.
//! - [`reward`]: the seed's composite reward formula as one pure function.

pub mod health_score;
pub mod junit;
pub mod planted;
pub mod redact;
pub mod reward;
pub mod scanner;
pub mod security;
