//! The environment's tools, defined once: bash and the structured actions
//! (`crate::env::actions`), each with the JSON Schema of its arguments and
//! the command it maps to.
//!
//! Two fronts use them. MCP's `tools/list` and `tools/call` ([`super::mcp`])
//! list them after the session tools (`reset`, `step`, `state`). OpenEnv's
//! tool-calling actions through `step` (`{"type": "list_tools"}`,
//! `{"type": "call_tool", ...}`, over `POST /step` and `WS /ws`) list only
//! them: OpenEnv reserves the names `reset`, `step`, `state` and `close`.

use super::AppState;
use super::error::ApiError;
use super::request::{self, StepKind};
use crate::env::actions::{self, Arg};
use crate::models::{
    Action, CallToolObservation, ListToolsObservation, Observation, ToolError, ToolErrorType,
    ToolSpec,
};
use serde_json::{Map, Value, json};

/// Longest path argument of a structured tool, in characters.
const MAX_PATH_CHARS: usize = 4096;

/// One tool: a structured action's (or `bash`), as `env::actions` lists
/// it; this module adds its JSON Schema and the command a call maps to.
pub(crate) type ActionTool = actions::Spec;

/// Every action tool, in the order `list_tools` shows them.
const ACTION_TOOLS: &[ActionTool] = actions::ACTIONS;

/// Why a tool's arguments were refused.
pub(crate) enum ToolArgsError {
    /// No such tool.
    NotFound(String),
    /// Arguments that do not fit the tool's schema.
    Invalid(String),
}

impl ToolArgsError {
    pub(crate) fn message(&self) -> &str {
        match self {
            Self::NotFound(m) | Self::Invalid(m) => m,
        }
    }

    fn to_tool_error(&self) -> ToolError {
        ToolError {
            error_type: match self {
                Self::NotFound(_) => ToolErrorType::ToolNotFound,
                Self::Invalid(_) => ToolErrorType::InvalidArgs,
            },
            message: self.message().to_string(),
        }
    }
}

impl ActionTool {
    /// JSON Schema of the arguments, with `extra` properties added (the MCP
    /// front's optional `session_id`).
    pub(crate) fn input_schema(&self, extra: &[(&str, Value)]) -> Map<String, Value> {
        let mut props = Map::new();
        let mut required: Vec<&str> = Vec::new();
        match self.arg {
            Arg::Nothing => {}
            Arg::Command => {
                props.insert(
                    "command".into(),
                    json!({ "type": "string", "minLength": 1, "maxLength": super::MAX_ACTION_BYTES,
                            "description": "The command" }),
                );
                required.push("command");
            }
            Arg::Path { required: r } => {
                props.insert(
                    "path".into(),
                    json!({ "type": "string", "minLength": 1, "maxLength": MAX_PATH_CHARS,
                            "description": "Path relative to the workspace root" }),
                );
                if r {
                    required.push("path");
                }
            }
        }
        for (k, v) in extra {
            props.insert((*k).to_string(), v.clone());
        }
        let mut schema = Map::new();
        schema.insert("type".into(), json!("object"));
        schema.insert("properties".into(), Value::Object(props));
        schema.insert("required".into(), json!(required));
        schema
    }

    /// The spec `list_tools` shows.
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: self.name.to_string(),
            description: self.description.to_string(),
            input_schema: self.input_schema(&[]),
        }
    }

    pub(crate) fn name(&self) -> &'static str {
        self.name
    }

    pub(crate) fn description(&self) -> &'static str {
        self.description
    }

    /// The command this call runs. `ignore` names arguments the caller
    /// consumes itself (the MCP front's `session_id`); any other unknown
    /// argument is refused, so a misspelt one is not silently dropped.
    pub(crate) fn command(
        &self,
        args: &Map<String, Value>,
        ignore: &[&str],
    ) -> Result<String, ToolArgsError> {
        let known: &[&str] = match self.arg {
            Arg::Nothing => &[],
            Arg::Command => &["command"],
            Arg::Path { .. } => &["path"],
        };
        if let Some(k) = args
            .keys()
            .find(|k| !known.contains(&k.as_str()) && !ignore.contains(&k.as_str()))
        {
            let shown: String = k.chars().take(100).collect();
            return Err(ToolArgsError::Invalid(format!(
                "{} takes no argument {shown:?}",
                self.name
            )));
        }
        match self.arg {
            Arg::Nothing => Ok(self.name.to_string()),
            Arg::Command => match args.get("command") {
                Some(Value::String(c)) => Ok(c.clone()),
                _ => Err(ToolArgsError::Invalid(
                    "argument command (a string) is required".into(),
                )),
            },
            Arg::Path { required } => match args.get("path") {
                None | Some(Value::Null) if !required => Ok(self.name.to_string()),
                None | Some(Value::Null) => Err(ToolArgsError::Invalid(
                    "argument path (a string) is required".into(),
                )),
                // Blank (Unicode whitespace is no control character) or a
                // command over the action's byte bound would be refused
                // as an action later: an argument error here instead.
                Some(Value::String(p))
                    if !p.trim().is_empty()
                        && p.chars().count() <= MAX_PATH_CHARS
                        && self.name.len() + 1 + p.len() <= super::MAX_ACTION_BYTES
                        && !p.chars().any(char::is_control) =>
                {
                    Ok(format!("{} {p}", self.name))
                }
                Some(_) => Err(ToolArgsError::Invalid(format!(
                    "path must be a non-blank string of 1-{MAX_PATH_CHARS} characters without control characters, its command at most {} bytes",
                    super::MAX_ACTION_BYTES
                ))),
            },
        }
    }
}

/// Every action tool.
pub(crate) fn action_tools() -> &'static [ActionTool] {
    ACTION_TOOLS
}

/// The action tool called `name`.
pub(crate) fn find(name: &str) -> Result<&'static ActionTool, ToolArgsError> {
    ACTION_TOOLS.iter().find(|t| t.name == name).ok_or_else(|| {
        let shown: String = name.chars().take(100).collect();
        ToolArgsError::NotFound(format!("unknown tool: {shown:?}; see list_tools"))
    })
}

/// A step's outcome in OpenEnv's terms: the `observation` object, the
/// `reward` (null when no step was spent) and `done`.
pub(crate) struct StepOutcome {
    /// The observation object (an [`Observation`], or a tool observation).
    pub observation: Value,
    /// The step's reward; `None` when nothing ran.
    pub reward: Option<f64>,
    /// Whether the episode is over.
    pub done: bool,
    /// The session and episode, when there is one.
    pub ids: Option<(String, String)>,
}

impl StepOutcome {
    fn of(obs: &Observation, observation: Value, ran: bool) -> Self {
        Self {
            observation,
            reward: ran.then_some(obs.reward),
            done: obs.done,
            ids: Some((obs.session_id.clone(), obs.episode_id.clone())),
        }
    }
}

fn to_value<T: serde::Serialize>(v: &T) -> Result<Value, ApiError> {
    serde_json::to_value(v).map_err(|e| ApiError::Internal(e.to_string()))
}

/// Runs one step of any kind. `session` is required except for
/// `list_tools`.
pub(crate) async fn run_step(
    st: &AppState,
    session: Option<&str>,
    kind: StepKind,
) -> Result<StepOutcome, ApiError> {
    match kind {
        StepKind::Command(action) => {
            let sid = session.ok_or(ApiError::MissingSession)?;
            let obs = st.env.step(sid, action).await?;
            Ok(StepOutcome::of(&obs, to_value(&obs)?, true))
        }
        StepKind::ListTools => {
            let tools = ACTION_TOOLS.iter().map(ActionTool::spec).collect();
            let current = match session {
                Some(sid) => Some(st.env.state(sid)?.observation),
                None => None,
            };
            let reply = ListToolsObservation {
                tools,
                observation: current,
            };
            let value = to_value(&reply)?;
            Ok(match &reply.observation {
                Some(obs) => StepOutcome::of(obs, value, false),
                None => StepOutcome {
                    observation: value,
                    reward: None,
                    done: false,
                    ids: None,
                },
            })
        }
        StepKind::CallTool(call) => {
            let sid = session.ok_or(ApiError::MissingSession)?;
            let command = find(&call.tool_name).and_then(|t| t.command(&call.arguments, &[]));
            match command {
                Err(e) => {
                    // Nothing runs: the session's observation as it is.
                    let obs = st.env.state(sid)?.observation;
                    let reply = CallToolObservation {
                        tool_name: call.tool_name,
                        result: None,
                        error: Some(e.to_tool_error()),
                        observation: obs,
                    };
                    Ok(StepOutcome::of(
                        &reply.observation,
                        to_value(&reply)?,
                        false,
                    ))
                }
                Ok(command) => {
                    request::command(&command)?;
                    let obs = st.env.step(sid, Action { command }).await?;
                    let reply = CallToolObservation {
                        tool_name: call.tool_name,
                        result: obs.last_action.clone(),
                        error: None,
                        observation: obs,
                    };
                    Ok(StepOutcome::of(&reply.observation, to_value(&reply)?, true))
                }
            }
        }
    }
}
