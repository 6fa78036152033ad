//! The wire vocabulary: every type that crosses HTTP, WebSocket or MCP.
//!
//! These types are the single source of truth for `/schema` (JSON Schemas are
//! derived from them with schemars, never written by hand), for `openenv.yaml`
//! and for `spec.md`. A field added here must be documented there too.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// One agent action. Over OpenEnv's `/ws` the `step` message's `data` is this
/// object; over the seed's HTTP `/step` the `action` field may be this object
/// or a bare string (the command).
///
/// A command that starts with a structured action name (`inspect_file`,
/// `inspect_encoded`, `scan_history`, `run_scanner`, `list_files`, `submit`)
/// is intercepted before bash; anything else runs as `bash -lc` in the
/// workspace.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Action {
    /// The command: a structured action (`inspect_file config.py`) or bash.
    pub command: String,
}

/// How the per-step reward is reported, chosen at reset.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum RewardMode {
    /// The seed's: the reward of a step is the episode's current score.
    #[default]
    Score,
    /// Score now minus score before the step: the episode's rewards sum to
    /// its final score, so a trainer that sums rewards is not paid twice.
    Delta,
}

/// Integral JSON numbers for integer fields. JSON Schema's `integer` is
/// any number with a zero fractional part, so `7.0` is a valid seed by the
/// published schema; serde's integer visitors reject it.
mod integral {
    use serde::{Deserialize, Deserializer};

    fn to_u64<E: serde::de::Error>(n: &serde_json::Number) -> Result<u64, E> {
        if let Some(u) = n.as_u64() {
            return Ok(u);
        }
        match n.as_f64() {
            // 2^64 as f64 is exactly 18446744073709551616.0.
            Some(f) if f.fract() == 0.0 && (0.0..18_446_744_073_709_551_616.0).contains(&f) => {
                Ok(f as u64)
            }
            _ => Err(E::custom(format!(
                "expected a non-negative integer below 2^64, found {n}"
            ))),
        }
    }

    /// `Option<u64>` from null, or any integral number in range.
    pub fn option_u64<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
        match Option::<serde_json::Number>::deserialize(d)? {
            None => Ok(None),
            Some(n) => to_u64(&n).map(Some),
        }
    }

    /// A task number; any non-negative integer above `u32::MAX` (however
    /// large: the published schema sets no maximum) becomes `u32::MAX`,
    /// which names no task (404 `unknown_task`, as for 14).
    pub fn u32_or_unknown<'de, D: Deserializer<'de>>(d: D) -> Result<u32, D::Error> {
        let n = serde_json::Number::deserialize(d)?;
        match to_u64::<D::Error>(&n) {
            Ok(u) => Ok(u32::try_from(u).unwrap_or(u32::MAX)),
            Err(_) if n.as_f64().is_some_and(|f| f.fract() == 0.0 && f >= 0.0) => Ok(u32::MAX),
            Err(e) => Err(e),
        }
    }
}

/// Body of `POST /step`. The session may instead come as `?session_id=`;
/// `timeout_s` and `request_id` are accepted for OpenEnv compatibility and
/// ignored (the environment owns its time limits). This is the published
/// shape; every front parses its action as [`StepAction`] (`http::request`
/// holds the parse form, whose session is optional), and `http::tests`
/// checks document and behaviour agree.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct StepRequest {
    /// The session, as returned by `POST /reset`.
    #[schemars(length(min = 1))]
    pub session_id: String,
    /// A command string, or `{"command": string}` (OpenEnv's wrapped form).
    pub action: StepAction,
    /// Ignored (OpenEnv compatibility).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_s: Option<f64>,
    /// Ignored (OpenEnv compatibility).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
}

/// A step's action: a bare command, OpenEnv's `{"command": ...}`, or one
/// of OpenEnv's tool-calling actions. The one parser of an action over
/// `POST /step`, `/ws` and `/mcp`: deserialized by hand (not serde's
/// untagged matching, whose only error is "did not match any variant"),
/// so a client learns which field is wrong. A `type` of `list_tools` or
/// `call_tool` wins over a `command` in the same object.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum StepAction {
    /// `{"type": "list_tools"}`.
    ListTools(ListToolsAction),
    /// `{"type": "call_tool", "tool_name", "arguments"}`.
    CallTool(CallToolAction),
    /// The command itself.
    Command(#[schemars(regex(pattern = COMMAND_PATTERN))] String),
    /// `{"command": string}`.
    Wrapped {
        /// The command itself.
        #[schemars(regex(pattern = COMMAND_PATTERN))]
        command: String,
    },
}

impl StepAction {
    /// The command it runs, for the two command forms.
    pub fn command(&self) -> Option<&str> {
        match self {
            Self::Command(c) | Self::Wrapped { command: c } => Some(c),
            Self::ListTools(_) | Self::CallTool(_) => None,
        }
    }
}

impl<'de> Deserialize<'de> for StepAction {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        use serde_json::Value;
        let fail = |m: &str| D::Error::custom(m);
        let mut o = match Value::deserialize(d)? {
            Value::String(s) => return Ok(Self::Command(s)),
            Value::Object(o) => o,
            Value::Null => {
                return Err(fail(
                    "action is required: a command string, or {\"command\": string}",
                ));
            }
            _ => {
                return Err(fail(
                    "action must be a command string or {\"command\": string}",
                ));
            }
        };
        match o.get("type").and_then(Value::as_str) {
            Some("list_tools") => Ok(Self::ListTools(ListToolsAction {
                kind: ListToolsTag::ListTools,
            })),
            Some("call_tool") => {
                let tool_name = match o.remove("tool_name") {
                    Some(Value::String(n)) => n,
                    _ => return Err(fail("call_tool needs tool_name (a string)")),
                };
                let arguments = match o.remove("arguments") {
                    None | Some(Value::Null) => serde_json::Map::new(),
                    Some(Value::Object(m)) => m,
                    Some(_) => return Err(fail("call_tool arguments must be an object")),
                };
                Ok(Self::CallTool(CallToolAction {
                    kind: CallToolTag::CallTool,
                    tool_name,
                    arguments,
                }))
            }
            _ if o.contains_key("command") => match o.remove("command") {
                Some(Value::String(command)) => Ok(Self::Wrapped { command }),
                _ => Err(fail("action.command must be a string")),
            },
            Some(other) => {
                let shown: String = other.chars().take(100).collect();
                Err(D::Error::custom(format!(
                    "unknown action type {shown:?}: send {{\"command\": string}}, \
                     {{\"type\": \"list_tools\"}} or {{\"type\": \"call_tool\", \"tool_name\", \"arguments\"}}"
                )))
            }
            None => Err(fail("action.command is required")),
        }
    }
}

/// What a step takes (`data` of the WebSocket `step` message, `action` of
/// `POST /step`): a command, or one of OpenEnv's tool-calling actions
/// (`openenv.core.env_server.mcp_types.ListToolsAction` and
/// `CallToolAction`). Published as `/schema`'s `action`, titled `Action` as
/// OpenEnv clients expect. A `type` of `list_tools` or `call_tool` wins over
/// a `command` in the same object.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
#[schemars(title = "Action")]
pub enum AnyAction {
    /// `{"type": "list_tools"}`.
    ListTools(ListToolsAction),
    /// `{"type": "call_tool", "tool_name", "arguments"}`.
    CallTool(CallToolAction),
    /// `{"command": string}`.
    Command(Action),
}

/// The tag of [`ListToolsAction`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum ListToolsTag {
    /// The only value.
    #[serde(rename = "list_tools")]
    ListTools,
}

/// The tag of [`CallToolAction`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum CallToolTag {
    /// The only value.
    #[serde(rename = "call_tool")]
    CallTool,
}

/// OpenEnv's `ListToolsAction`: the tools `call_tool` can name. Spends no
/// step; over `/ws` it needs no session. With one, the reply carries the
/// session's current observation too.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ListToolsAction {
    /// `list_tools`.
    #[serde(rename = "type")]
    pub kind: ListToolsTag,
}

/// OpenEnv's `CallToolAction`: runs the named tool (a structured action or
/// bash) as one step.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct CallToolAction {
    /// `call_tool`.
    #[serde(rename = "type")]
    pub kind: CallToolTag,
    /// A tool of `list_tools`.
    pub tool_name: String,
    /// The tool's arguments, as its `input_schema` describes.
    #[serde(default)]
    pub arguments: serde_json::Map<String, serde_json::Value>,
}

/// One tool, in OpenEnv's `Tool` shape (MCP's `tools/list` spells the
/// schema `inputSchema`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ToolSpec {
    /// The name `call_tool` takes.
    pub name: String,
    /// What it does.
    pub description: String,
    /// JSON Schema of its arguments.
    pub input_schema: serde_json::Map<String, serde_json::Value>,
}

/// Why a `call_tool` ran nothing (OpenEnv's `ToolErrorType` values).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ToolErrorType {
    /// No tool of that name.
    ToolNotFound,
    /// The arguments do not match the tool's schema.
    InvalidArgs,
}

/// OpenEnv's `ToolError`: a `call_tool` that ran nothing and spent no step.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ToolError {
    /// Its kind.
    pub error_type: ToolErrorType,
    /// What was wrong.
    pub message: String,
}

/// The observation of a `list_tools` step: OpenEnv's
/// `ListToolsObservation` (`tools`), plus the session's current
/// observation when the step named one.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ListToolsObservation {
    /// Every tool `call_tool` can name.
    pub tools: Vec<ToolSpec>,
    /// The session's observation, unchanged (absent without a session).
    #[serde(flatten)]
    pub observation: Option<Observation>,
}

/// The observation of a `call_tool` step: the step's observation plus
/// OpenEnv's `CallToolObservation` fields. When `error` is set nothing ran
/// and no step was spent; the observation is the session's current one.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CallToolObservation {
    /// The tool called.
    pub tool_name: String,
    /// The tool's output (`last_action` of the step); null when `error`.
    pub result: Option<ActionOutput>,
    /// Why nothing ran, if nothing did.
    pub error: Option<ToolError>,
    /// The observation after the step.
    #[serde(flatten)]
    pub observation: Observation,
}

/// What a command must match: something besides whitespace, and no NUL
/// byte (both refused with 422). Its byte bound (`MAX_ACTION_BYTES`, 413)
/// is not a JSON Schema length, which counts characters.
pub const COMMAND_PATTERN: &str = r"^[^\u0000]*[^\s\u0000][^\u0000]*$";

/// Body of `POST /close`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct CloseRequest {
    /// The session to end, as returned by `POST /reset`.
    #[schemars(length(min = 1))]
    pub session_id: String,
}

/// Longest caller-chosen `episode_id`, in characters (OpenEnv's bound).
pub const MAX_EPISODE_ID_CHARS: usize = 255;

/// What an `episode_id` may not hold: control characters (C0, DEL, C1:
/// NUL among them, as a command may not hold it) and the Unicode
/// bidirectional controls, which make an id that is echoed in state, logs
/// and the debug page read as something else. Published in the schema and
/// enforced with this same pattern, so a schema-valid id is always accepted.
pub const EPISODE_ID_PATTERN: &str =
    r"^[^\u0000-\u001F\u007F-\u009F\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]*$";

/// Body of `POST /reset` (and `data` of the WebSocket `reset` message).
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct ResetRequest {
    /// Task number 1–13, or a slug such as `"task_01"`. Defaults to 1.
    #[serde(default)]
    pub task_id: Option<TaskRef>,
    /// Seed of a procedural variant of the task's family. Absent: the
    /// canonical task, which never changes. Any integral JSON number
    /// (`7`, `7.0`), as JSON Schema's `integer` allows, up to 2^64 − 1; the
    /// maximum is published so that a schema-valid seed is always accepted.
    #[serde(default, deserialize_with = "integral::option_u64")]
    #[schemars(extend("maximum" = u64::MAX))]
    pub seed: Option<u64>,
    /// Caller-chosen episode id (1 to 255 characters), echoed in state.
    #[serde(default)]
    #[schemars(length(min = 1, max = MAX_EPISODE_ID_CHARS), regex(pattern = EPISODE_ID_PATTERN))]
    pub episode_id: Option<String>,
    /// `score` (default) or `delta`.
    #[serde(default)]
    pub reward_mode: Option<RewardMode>,
}

impl ResetRequest {
    /// What serde cannot check: the episode id's length, in characters as
    /// the published `maxLength` counts them (OpenEnv's bound), and its
    /// characters ([`EPISODE_ID_PATTERN`]). The one check of a reset
    /// request, run by every front and by the environment.
    pub fn validate(&self) -> Result<(), String> {
        static ALLOWED: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
            regex::Regex::new(EPISODE_ID_PATTERN).expect("EPISODE_ID_PATTERN compiles")
        });
        match &self.episode_id {
            Some(id) if id.is_empty() || id.chars().count() > MAX_EPISODE_ID_CHARS => Err(format!(
                "episode_id must be 1 to {MAX_EPISODE_ID_CHARS} characters"
            )),
            Some(id) if !ALLOWED.is_match(id) => {
                Err("episode_id must not hold control or bidirectional-control characters".into())
            }
            _ => Ok(()),
        }
    }
}

/// A task named by number or by slug.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum TaskRef {
    /// 1–13 (any integral JSON number; one past `u32` names no task).
    Number(#[serde(deserialize_with = "integral::u32_or_unknown")] u32),
    /// `"task_01"`, `"1"`, `"01"`.
    Name(String),
}

/// Difficulty tier of a task.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Difficulty {
    /// Tasks 1–5, budget 10.
    Easy,
    /// Tasks 6–10, budget 20.
    Medium,
    /// Tasks 11–13, budget 30.
    Hard,
}

/// Where the security grader looks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ScanMode {
    /// The working tree only.
    Dir,
    /// The working tree and every object of the git repository.
    Git,
}

/// Visibility tier of a planted secret (defined with the planted secret
/// in the lower crate, which visibility and the grader share).
pub use graders::planted::Tier;

/// State of one visible secret.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum SecretStatus {
    /// Still present.
    Open,
    /// Absent from everything the grader checks.
    Fixed,
    /// Absent, but a secret that blocks it is still open, so it does not
    /// count yet.
    Blocked,
}

/// A secret the agent can see: the API's projection of a
/// [`graders::planted::Planted`] (built from it in `env::visibility`), kept
/// as its own type on purpose: the value is masked, `status` is the
/// episode's, and the encoding and conflict edges are not shown here.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct VisibleSecret {
    /// Secret id within the task (`s1`, `s2`, ...).
    pub id: String,
    /// File it was planted in (relative to the workspace root).
    pub file: String,
    /// 1-based line it was planted on.
    pub line: u32,
    /// Secret type (`aws_access_key_id`, `github_pat`, ...).
    #[serde(rename = "type")]
    pub secret_type: String,
    /// Its tier.
    pub tier: Tier,
    /// Whether it lives only in git history.
    pub history_only: bool,
    /// Open, fixed or blocked.
    pub status: SecretStatus,
    /// The value with all but a short prefix masked (`AKIA************`).
    pub masked_value: String,
}

/// One edge of a task's conflict map.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ConflictEdge {
    /// Source secret id.
    pub from: String,
    /// Target secret id.
    pub to: String,
    /// `reveals`: fixing `from` reveals `to`. `blocks`: `to` cannot count as
    /// fixed while `from` is open.
    pub kind: ConflictKind,
}

/// Kind of a conflict-map edge.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ConflictKind {
    /// Fixing the source reveals the target.
    Reveals,
    /// The target cannot count as fixed while the source is open.
    Blocks,
}

/// A suggested next action, from the seed's five heuristics.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RankedAction {
    /// The command to send as-is.
    pub action: String,
    /// 0–1, higher first.
    pub priority: f64,
    /// Which heuristic produced it and why.
    pub reason: String,
}

/// The reward and how it was made.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
pub struct RewardBreakdown {
    /// (initial − current) / initial.
    pub detection: f64,
    /// 0.4 × detection + 0.6 × detection (remediation = detection).
    pub base: f64,
    /// passed / pristine total; 0 on errors, timeout or no tests.
    pub health: f64,
    /// 0.15 × max(0, 1 − steps / budget).
    pub efficiency: f64,
    /// min(1, base × health + efficiency) if base > 0, else 0.
    pub score: f64,
    /// What this step reports: `score`, or the change in score (`delta`).
    pub reward: f64,
}

/// Result of the health grader.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
pub struct HealthSummary {
    /// Pristine tests that passed.
    pub passed: u32,
    /// Pristine tests that failed, were skipped or went missing.
    pub failed: u32,
    /// Errors reported by pytest (collection or fixture errors).
    pub errors: u32,
    /// The pristine number of tests (the denominator).
    pub total: u32,
    /// The health score in [0, 1].
    pub score: f64,
    /// True when the result came from the tree-hash cache.
    pub cached: bool,
    /// Why the health run failed, if it did (timeout, no report, ...).
    pub error: Option<String>,
}

/// Output of the last action.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
pub struct ActionOutput {
    /// The command as received.
    pub command: String,
    /// `bash` or the structured action's name.
    pub kind: String,
    /// Exit code (bash), 0/1 for structured actions, null if killed.
    pub exit_code: Option<i32>,
    /// Captured stdout (capped, secret values redacted in recordings only).
    pub stdout: String,
    /// Captured stderr (capped).
    pub stderr: String,
    /// Bytes of stdout dropped by the cap.
    pub stdout_truncated_bytes: u64,
    /// Bytes of stderr dropped by the cap.
    pub stderr_truncated_bytes: u64,
    /// Wall time of the action in milliseconds.
    pub duration_ms: u64,
    /// True when the command hit the wall-clock timeout.
    pub timed_out: bool,
    /// The resource bound that ended the command, if one did: `memory`
    /// (all its processes together), `processes`, `disk` (workspace and
    /// scratch bytes) or `inodes`. The command was killed when it crossed
    /// it; `stderr` says so too.
    #[serde(default)]
    pub limit_exceeded: Option<String>,
}

/// One past step, as shown in `history`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct HistoryEntry {
    /// 1-based step number.
    pub step: u32,
    /// The command.
    pub command: String,
    /// Reward reported for that step.
    pub reward: f64,
    /// Exit code, if any.
    pub exit_code: Option<i32>,
}

/// How agent commands (and the health grader's pytest) are contained.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum SandboxTier {
    /// bubblewrap: user, pid, network, mount, IPC and UTS namespaces (a
    /// bare host, or a container allowed to create namespaces).
    Bwrap,
    /// No namespaces: Landlock, a seccomp filter, a supervising subreaper
    /// and a per-command uid when the server is root (inside unprivileged
    /// containers: Docker's default profile, Kubernetes, HF Spaces).
    Landlock,
    /// Uncontained: only with an explicit opt-in (`--allow-uncontained`).
    None,
}

impl SandboxTier {
    fn saved_before_tiers() -> SandboxTier {
        SandboxTier::Bwrap
    }
}

/// Whether commands are contained, and how.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SandboxInfo {
    /// True when every command runs contained (tier `bwrap` or `landlock`).
    pub available: bool,
    /// The containment tier in force. (Sessions saved before tiers were
    /// reported read as `bwrap`: the only tier then.)
    #[serde(default = "SandboxTier::saved_before_tiers")]
    pub tier: SandboxTier,
    /// The Landlock ABI version in force (tier `landlock`), else null.
    #[serde(default)]
    pub landlock_abi: Option<u32>,
    /// True when each command runs as an unprivileged uid of its own
    /// (the server is root); false when commands share the server's uid.
    #[serde(default)]
    pub uid_per_command: bool,
    /// Versions and mechanisms, or why containment is unavailable.
    pub detail: String,
}

/// Everything the agent sees after reset or a step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Observation {
    /// Server session id (HTTP API key for `/step` and `/state`).
    pub session_id: String,
    /// Episode id (caller's, or generated).
    pub episode_id: String,
    /// Task number 1–13.
    pub task_id: u32,
    /// `task_01` ...
    pub task_slug: String,
    /// Seed of the variant, null for the canonical task.
    pub seed: Option<u64>,
    /// Task title.
    pub title: String,
    /// Difficulty.
    pub difficulty: Difficulty,
    /// Task description shown to the agent.
    pub description: String,
    /// `dir` or `git`.
    pub scan_mode: ScanMode,
    /// Steps allowed.
    pub step_budget: u32,
    /// Steps taken so far.
    pub steps_taken: u32,
    /// Reward of the last step (see `reward_mode`).
    pub reward: f64,
    /// `score` or `delta`.
    pub reward_mode: RewardMode,
    /// How the reward was made.
    pub reward_breakdown: RewardBreakdown,
    /// Leaks counted at reset.
    pub leaks_initial: u32,
    /// Leaks counted now (planted secrets still present plus new findings).
    pub leaks_current: u32,
    /// Secrets the agent can see.
    pub visible_secrets: Vec<VisibleSecret>,
    /// Planted secrets not yet visible.
    pub hidden_count: u32,
    /// Conflict map edges among visible secrets.
    pub conflict_map: Vec<ConflictEdge>,
    /// Suggested next actions, best first.
    pub ranked_actions: Vec<RankedAction>,
    /// The open secret blocking the most others, if any.
    pub top_blocker: Option<String>,
    /// Health grader result.
    pub health: HealthSummary,
    /// Output of the last action (null after reset).
    pub last_action: Option<ActionOutput>,
    /// The most recent steps, oldest first.
    pub history: Vec<HistoryEntry>,
    /// True when the episode is over.
    pub done: bool,
    /// Ended by success (every leak fixed, health 1) or by `submit`.
    pub terminated: bool,
    /// Ended because the step budget is spent.
    pub truncated: bool,
    /// Every leak fixed and health 1.
    pub success: bool,
    /// Sandbox state.
    pub sandbox: SandboxInfo,
    /// Grading problems of this step (reported, never hidden).
    pub grading_errors: Vec<String>,
}

/// The session object returned by `/state`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct State {
    /// Episode id (echoed from reset when given).
    pub episode_id: String,
    /// Steps taken in this episode.
    pub step_count: u32,
    /// Server session id.
    pub session_id: String,
    /// Task number.
    pub task_id: u32,
    /// Seed of the variant, if any.
    pub seed: Option<u64>,
    /// True when the episode is over.
    pub done: bool,
    /// Current score.
    pub score: f64,
    /// The latest observation.
    pub observation: Observation,
}

/// The raw value of a currently visible secret, returned only on explicit
/// request (`GET /state?session_id=...&reveal=true`, key `revealed`) for
/// the debug page's per-row reveal. Never part of an observation, so never
/// in a recording, a log or anything an agent receives unasked; secrets
/// the agent has not yet made visible are never revealed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct RevealedSecret {
    /// Secret id (as in `visible_secrets`).
    pub id: String,
    /// The exact planted value.
    pub value: String,
}

/// Task metadata as listed by `/tasks` (no ground truth).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TaskInfo {
    /// 1–13.
    pub id: u32,
    /// `task_01` ...
    pub slug: String,
    /// Title.
    pub title: String,
    /// Difficulty.
    pub difficulty: Difficulty,
    /// Description shown to the agent.
    pub description: String,
    /// `dir` or `git`.
    pub scan_mode: ScanMode,
    /// Step budget.
    pub step_budget: u32,
    /// Number of planted secrets.
    pub secret_count: u32,
    /// Number visible at reset.
    pub visible_at_reset: u32,
    /// Whether the task has a conflict map.
    pub has_conflicts: bool,
}
