//! The planted secret: one type for what generation planted (recorded in
//! `truth.json`), what the security grader searches for and what the
//! environment's visibility rules reveal.
//!
//! Why here, in the lower crate: the generator and visibility live in the
//! server, the security grader here; defining the type once below both
//! means a field added to the ground truth reaches the grader and
//! visibility without a copy (`server::tasks::SecretSpec` is the task's
//! input template, before its values and lines are rendered; the API's
//! `VisibleSecret` is a masked projection built from this type).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Visibility tier of a planted secret.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Tier {
    /// Visible from the start.
    Surface,
    /// Visible once its file is inspected (`inspect_file`, or `cat` of it).
    Shallow,
    /// Visible once its file's encoded content is inspected (`inspect_encoded`).
    Deep,
    /// Visible only after `scan_history`, or after the secrets that reveal it
    /// are fixed.
    Hidden,
}

/// How a `deep` secret sits encoded in its file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Encoding {
    /// Standard base64 (with padding), placeholder `{{secret:ID:base64}}`.
    Base64,
    /// Lowercase hex, placeholder `{{secret:ID:hex}}`.
    Hex,
}

impl Encoding {
    /// `base64` / `hex`, as in `task.json`.
    pub fn name(self) -> &'static str {
        match self {
            Self::Base64 => "base64",
            Self::Hex => "hex",
        }
    }

    /// Encodes `value` the way the template placeholder does.
    pub fn encode(self, value: &str) -> String {
        use base64::Engine as _;
        match self {
            Self::Base64 => base64::engine::general_purpose::STANDARD.encode(value),
            Self::Hex => hex::encode(value),
        }
    }
}

/// One secret planted in a generated task with the episode's value and its
/// recomputed line: the ground truth. Serialized as an entry of
/// `truth.json`'s `secrets` (field names and order are that file's format).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Planted {
    /// Stable id used in observations and the conflict map (`s1`, ...).
    pub id: String,
    /// The exact value planted (canonical or seeded).
    pub value: String,
    /// Kind, as spelled in `task.json` (`aws_access_key_id`, ...).
    #[serde(rename = "type")]
    pub secret_type: String,
    /// Workspace-relative file it is planted in.
    pub file: String,
    /// 1-based line where the value (or its encoded form) starts in `file`:
    /// in the final tree, or for `history_only` in the commit that
    /// introduced it.
    pub line: u32,
    /// Visibility tier.
    pub tier: Tier,
    /// Encoding of a `deep` secret, `None` otherwise.
    pub encoding: Option<Encoding>,
    /// Ids revealed when this one is fixed.
    pub reveals: Vec<String>,
    /// Ids that cannot count as fixed while this one is open.
    pub blocks: Vec<String>,
    /// Planted only in history (not in the working tree at reset).
    pub history_only: bool,
}

#[cfg(test)]
impl Planted {
    /// A planted secret with only what the security grader reads set (the
    /// rest: a surface `generic_secret` in `app.py`), for this crate's tests.
    pub(crate) fn for_test(id: &str, value: &str, history_only: bool) -> Planted {
        Planted {
            id: id.into(),
            value: value.into(),
            secret_type: "generic_secret".into(),
            file: "app.py".into(),
            line: 1,
            tier: Tier::Surface,
            encoding: None,
            reveals: vec![],
            blocks: vec![],
            history_only,
        }
    }
}
