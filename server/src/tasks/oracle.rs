//! The scripted solution (`oracle.json`), rendered with an episode's values.
//!
//! Oracle actions may name secrets, encodings and renamed paths through the
//! same placeholders as the templates, so one oracle solves every seeded
//! variant of its task.

use super::render::{Values, render_str};
use anyhow::{Context, bail};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// Most actions an oracle may hold; budgets are at most 30.
const MAX_ACTIONS: usize = 64;
/// Largest `oracle.json` read.
const MAX_BYTES: u64 = 1 << 20;

/// `oracle.json` as written.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Oracle {
    /// Exactly what an agent would send to `/step`, in order.
    pub actions: Vec<String>,
}

/// Reads `task_dir/oracle.json`.
pub fn load_oracle(task_dir: &Path) -> anyhow::Result<Oracle> {
    let path = task_dir.join("oracle.json");
    let text = super::read::read_capped(&path, MAX_BYTES)?;
    let o: Oracle =
        serde_json::from_slice(&text).with_context(|| format!("parsing {}", path.display()))?;
    if o.actions.is_empty() || o.actions.len() > MAX_ACTIONS {
        bail!("{}: needs 1..={MAX_ACTIONS} actions", path.display());
    }
    Ok(o)
}

/// Renders every action's placeholders with `values`.
pub fn render_oracle(oracle: &Oracle, values: &Values) -> anyhow::Result<Vec<String>> {
    oracle
        .actions
        .iter()
        .enumerate()
        .map(|(i, a)| render_str(a, values).with_context(|| format!("oracle action {}", i + 1)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_placeholders() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("oracle.json"),
            r#"{"actions": ["inspect_file a.py", "sed -i 's/{{secret:s1}}//' a.py # {{secret:s1:hex}}", "submit"]}"#,
        )
        .unwrap();
        let o = load_oracle(dir.path()).unwrap();
        let v = Values {
            secrets: [("s1".to_string(), "ab".to_string())].into_iter().collect(),
            ..Values::default()
        };
        let r = render_oracle(&o, &v).unwrap();
        assert_eq!(r[1], "sed -i 's/ab//' a.py # 6162");
        std::fs::write(
            dir.path().join("oracle.json"),
            r#"{"actions": ["x"], "extra": 1}"#,
        )
        .unwrap();
        assert!(load_oracle(dir.path()).is_err());
    }
}
