//! Tasks: the model of `task.json`, the registry, the deterministic
//! workspace generator, seeded variants and the oracle.
//!
//! - [`model`]: serde types for `task.json` (`tasks/FORMAT.md` is the
//!   contract; `tasks/task.schema.json` its JSON Schema).
//! - [`fields`]: the syntax of task.json's paths, authors and dates.
//! - [`registry`]: loads and checks every task once ([`TaskRegistry`]).
//! - [`render`]: the `{{secret:ID[:base64|:hex]}}` placeholders.
//! - [`variants`]: fresh values of the right shape for `--seed N`.
//! - [`oracle`]: `oracle.json`, rendered with an episode's values.
//! - [`generate`]: builds a workspace as a git repository in-process, plus
//!   the trusted copies the grader reads (`truth.json`, `pristine/`,
//!   `allowlist.toml`) outside it; `overlay` reads and renders the
//!   templates, `repo` writes the repository.
//! - [`truth`]: `truth.json`, the ground truth generation recorded.

pub mod fields;
pub mod generate;
pub mod model;
pub mod oracle;
mod overlay;
pub(crate) mod read;
pub mod registry;
pub mod render;
mod repo;
pub mod truth;
pub mod variants;

#[cfg(test)]
mod tests;

pub use generate::{
    GENERATOR_VERSION, canonical_dir, generate_all, generate_task, generate_variants,
    is_up_to_date, variant_dir,
};
pub use model::{
    AllowlistSpec, Commit, Encoding, Health, Placement, SecretSpec, SecretType, Task, VariantSpec,
};
pub use oracle::{Oracle, load_oracle, render_oracle};
pub use registry::{TaskDef, TaskRegistry};
pub use render::Values;
pub use truth::{GeneratedTask, load_generated};
