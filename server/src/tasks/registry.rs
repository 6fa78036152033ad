//! The task registry: every `tasks/{easy,medium,hard}/task_NN/` parsed and
//! checked once at startup.

use super::model::Task;
use super::oracle::{Oracle, load_oracle};
use super::read::read_capped;
use crate::models::TaskRef;
use anyhow::{Context, bail};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Largest `task.json` read.
const MAX_TASK_JSON: u64 = 1 << 20;

/// One task: its parsed `task.json`, its oracle and its directory.
#[derive(Debug, Clone)]
pub struct TaskDef {
    /// The parsed `task.json`.
    pub task: Task,
    /// The unrendered oracle (render with [`super::oracle::render_oracle`]).
    pub oracle: Oracle,
    /// The task directory (`tasks/easy/task_01`).
    pub dir: PathBuf,
}

/// All tasks, sorted by id.
#[derive(Debug, Clone, Default)]
pub struct TaskRegistry {
    tasks: Vec<TaskDef>,
}

impl TaskRegistry {
    /// Loads every task under `tasks_dir`. A task that fails to parse or
    /// fails a semantic check (see [`Task::problems`]) fails the whole load:
    /// serving a task with wrong ground truth would grade agents wrongly.
    /// Missing difficulty directories are fine (fewer tasks).
    pub fn load(tasks_dir: &Path) -> anyhow::Result<TaskRegistry> {
        if !tasks_dir.is_dir() {
            bail!("tasks directory {} does not exist", tasks_dir.display());
        }
        let mut tasks = Vec::new();
        let mut by_id: BTreeMap<u32, PathBuf> = BTreeMap::new();
        for difficulty in ["easy", "medium", "hard"] {
            let d = tasks_dir.join(difficulty);
            if !d.is_dir() {
                continue;
            }
            let mut dirs: Vec<PathBuf> = std::fs::read_dir(&d)
                .with_context(|| format!("reading {}", d.display()))?
                .filter_map(|e| e.ok())
                .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
                .filter(|e| e.file_name().to_string_lossy().starts_with("task_"))
                .map(|e| e.path())
                .collect();
            dirs.sort();
            for dir in dirs {
                let def = load_one(&dir, difficulty)
                    .with_context(|| format!("task {}", dir.display()))?;
                if let Some(prev) = by_id.insert(def.task.id, dir.clone()) {
                    bail!(
                        "task id {} is used by {} and {}",
                        def.task.id,
                        prev.display(),
                        dir.display()
                    );
                }
                tasks.push(def);
            }
        }
        tasks.sort_by_key(|d| d.task.id);
        Ok(TaskRegistry { tasks })
    }

    /// The task with number `id`.
    pub fn get(&self, id: u32) -> Option<&TaskDef> {
        self.tasks.iter().find(|d| d.task.id == id)
    }

    /// Resolves a wire task reference: `3`, `"3"`, `"03"`, `"task_03"`.
    pub fn resolve(&self, r: &TaskRef) -> Option<&TaskDef> {
        match r {
            TaskRef::Number(n) => self.get(*n),
            TaskRef::Name(s) => {
                let s = s.trim();
                let digits = s.strip_prefix("task_").unwrap_or(s);
                if digits.is_empty()
                    || digits.len() > 4
                    || !digits.bytes().all(|b| b.is_ascii_digit())
                {
                    return None;
                }
                self.get(digits.parse().ok()?)
            }
        }
    }

    /// Every task, sorted by id.
    pub fn list(&self) -> &[TaskDef] {
        &self.tasks
    }
}

fn load_one(dir: &Path, difficulty: &str) -> anyhow::Result<TaskDef> {
    let path = dir.join("task.json");
    let text = read_capped(&path, MAX_TASK_JSON)?;
    let task: Task =
        serde_json::from_slice(&text).with_context(|| format!("parsing {}", path.display()))?;
    let mut problems = task.problems();
    let name = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    if task.slug != name {
        problems.push(format!(
            "slug {:?} differs from directory name {name:?}",
            task.slug
        ));
    }
    let declared = serde_json::to_value(task.difficulty)?;
    if declared.as_str() != Some(difficulty) {
        problems.push(format!(
            "difficulty {declared} but the task sits under {difficulty}/"
        ));
    }
    if !dir.join("files").is_dir() {
        problems.push("no files/ directory".into());
    }
    for c in &task.history {
        if !dir.join(&c.overlay).is_dir() {
            problems.push(format!("overlay {:?} is not a directory", c.overlay));
        }
    }
    if !problems.is_empty() {
        bail!(
            "{} problem(s):\n  {}",
            problems.len(),
            problems.join("\n  ")
        );
    }
    let oracle = load_oracle(dir)?;
    Ok(TaskDef {
        task,
        oracle,
        dir: dir.to_path_buf(),
    })
}
