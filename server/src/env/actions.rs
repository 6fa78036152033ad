//! The action vocabulary: structured actions are intercepted before bash.
//!
//! The set follows the seed's tiers and ranked actions: each tier has the
//! action that reveals it (`inspect_file` → shallow, `inspect_encoded` →
//! deep, `scan_history` → hidden), `run_scanner` is heuristic 5's
//! "validate", `list_files` orients, `submit` ends the episode. Anything else
//! is bash.

use std::fmt;

/// Upper bound on an action's length in bytes; longer ones are refused (413).
pub const MAX_ACTION_BYTES: usize = 16 * 1024;

/// The argument an action takes, if any.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arg {
    /// None.
    Nothing,
    /// `command`: the command itself (required).
    Command,
    /// `path`, relative to the workspace root.
    Path {
        /// Whether it must be given.
        required: bool,
    },
}

/// One action as its tool is listed (MCP's `tools/list`, OpenEnv's
/// `list_tools`): the name [`parse`] matches as the first word, what it
/// does, and its argument.
#[derive(Debug)]
pub struct Spec {
    /// The action's name (`bash` for a plain command).
    pub name: &'static str,
    /// What it does, for the agent.
    pub description: &'static str,
    /// Its argument.
    pub arg: Arg,
}

/// Every action, in the order `list_tools` shows them: adding an action is
/// a line here, a [`Parsed`] variant with its [`parse`] arm, and its arm
/// in the environment's dispatch.
pub const ACTIONS: &[Spec] = &[
    Spec {
        name: "bash",
        description: "Run a command with bash -lc in the workspace (one step). A command \
                      that starts with a structured action's name runs that action.",
        arg: Arg::Command,
    },
    Spec {
        name: "inspect_file",
        description: "Read a file with line numbers; reveals its shallow secrets.",
        arg: Arg::Path { required: true },
    },
    Spec {
        name: "inspect_encoded",
        description: "Decode a file's base64/hex runs; reveals its deep secrets.",
        arg: Arg::Path { required: true },
    },
    Spec {
        name: "scan_history",
        description: "Scan git history for findings; reveals hidden secrets.",
        arg: Arg::Nothing,
    },
    Spec {
        name: "run_scanner",
        description: "Run the grader's secret scanner over the workspace (values redacted).",
        arg: Arg::Nothing,
    },
    Spec {
        name: "list_files",
        description: "List files (optionally under a path).",
        arg: Arg::Path { required: false },
    },
    Spec {
        name: "submit",
        description: "End the episode and take the current score.",
        arg: Arg::Nothing,
    },
];

/// A parsed action.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Parsed {
    /// `inspect_file PATH`: the file with line numbers; reveals its shallow
    /// secrets.
    InspectFile(String),
    /// `inspect_encoded PATH`: base64/hex runs of the file decoded; reveals
    /// its deep secrets.
    InspectEncoded(String),
    /// `scan_history`: commits and paths carrying findings; reveals hidden
    /// history secrets.
    ScanHistory,
    /// `run_scanner`: what the grader's scanner sees now, values redacted.
    RunScanner,
    /// `list_files [PATH]`.
    ListFiles(Option<String>),
    /// `submit`: end the episode.
    Submit,
    /// Anything else: run with `bash -lc` in the workspace.
    Bash(String),
}

impl Parsed {
    /// The name reported as `last_action.kind`.
    pub fn kind(&self) -> &'static str {
        match self {
            Parsed::InspectFile(_) => "inspect_file",
            Parsed::InspectEncoded(_) => "inspect_encoded",
            Parsed::ScanHistory => "scan_history",
            Parsed::RunScanner => "run_scanner",
            Parsed::ListFiles(_) => "list_files",
            Parsed::Submit => "submit",
            Parsed::Bash(_) => "bash",
        }
    }
}

/// Why an action string was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ParseError {
    /// Empty or whitespace only.
    Empty,
    /// Over [`MAX_ACTION_BYTES`].
    TooLong(usize),
    /// Contains a NUL byte, which no shell argument can carry.
    Nul,
    /// A structured action missing its argument.
    MissingArgument(&'static str),
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParseError::Empty => write!(f, "action is empty"),
            ParseError::TooLong(n) => {
                write!(
                    f,
                    "action is {n} bytes, over the {MAX_ACTION_BYTES}-byte limit"
                )
            }
            ParseError::Nul => write!(f, "action contains a NUL byte"),
            ParseError::MissingArgument(a) => write!(f, "{a} needs a path argument"),
        }
    }
}

/// The bounds of any command, whatever front it came through: at most
/// [`MAX_ACTION_BYTES`], no NUL, not blank. The one definition: the HTTP
/// layer runs it to refuse a command before it reaches the environment,
/// [`parse`] runs it for every other caller.
pub fn check(command: &str) -> Result<(), ParseError> {
    if command.len() > MAX_ACTION_BYTES {
        return Err(ParseError::TooLong(command.len()));
    }
    if command.contains('\0') {
        return Err(ParseError::Nul);
    }
    if command.trim().is_empty() {
        return Err(ParseError::Empty);
    }
    Ok(())
}

/// Parses one action string. Structured names match only as the first word,
/// so `grep submit x` stays bash.
pub fn parse(command: &str) -> Result<Parsed, ParseError> {
    check(command)?;
    let trimmed = command.trim();
    let (head, rest) = match trimmed.split_once(char::is_whitespace) {
        Some((h, r)) => (h, r.trim()),
        None => (trimmed, ""),
    };
    let arg = || (!rest.is_empty()).then(|| unquote(rest).to_string());
    Ok(match head {
        "inspect_file" => {
            Parsed::InspectFile(arg().ok_or(ParseError::MissingArgument("inspect_file"))?)
        }
        "inspect_encoded" => {
            Parsed::InspectEncoded(arg().ok_or(ParseError::MissingArgument("inspect_encoded"))?)
        }
        "scan_history" if rest.is_empty() => Parsed::ScanHistory,
        "run_scanner" if rest.is_empty() => Parsed::RunScanner,
        "list_files" => Parsed::ListFiles(arg()),
        "submit" if rest.is_empty() => Parsed::Submit,
        _ => Parsed::Bash(command.to_string()),
    })
}

fn unquote(s: &str) -> &str {
    let b = s.as_bytes();
    if b.len() >= 2 && (b[0] == b'"' || b[0] == b'\'') && b[b.len() - 1] == b[0] {
        &s[1..s.len() - 1]
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn structured() {
        assert_eq!(
            parse("inspect_file app/settings.py"),
            Ok(Parsed::InspectFile("app/settings.py".into()))
        );
        assert_eq!(
            parse("  inspect_encoded 'a b.yml' "),
            Ok(Parsed::InspectEncoded("a b.yml".into()))
        );
        assert_eq!(parse("scan_history"), Ok(Parsed::ScanHistory));
        assert_eq!(parse("run_scanner"), Ok(Parsed::RunScanner));
        assert_eq!(parse("list_files"), Ok(Parsed::ListFiles(None)));
        assert_eq!(
            parse("list_files src"),
            Ok(Parsed::ListFiles(Some("src".into())))
        );
        assert_eq!(parse("submit"), Ok(Parsed::Submit));
    }

    #[test]
    fn bash_fallback() {
        assert_eq!(
            parse("grep -r submit ."),
            Ok(Parsed::Bash("grep -r submit .".into()))
        );
        assert_eq!(parse("submit now"), Ok(Parsed::Bash("submit now".into())));
        assert_eq!(parse("submitx"), Ok(Parsed::Bash("submitx".into())));
    }

    /// Every listed action parses to itself (with an argument when it
    /// needs one), so the tool list and the parser cannot drift apart.
    #[test]
    fn every_listed_action_parses_to_its_kind() {
        for spec in ACTIONS {
            let command = match spec.arg {
                Arg::Nothing => spec.name.to_string(),
                Arg::Command => "ls -la".to_string(),
                Arg::Path { .. } => format!("{} app/settings.py", spec.name),
            };
            let parsed = parse(&command).expect(spec.name);
            assert_eq!(parsed.kind(), spec.name, "{command}");
        }
    }

    #[test]
    fn refused() {
        assert_eq!(parse("   "), Err(ParseError::Empty));
        assert_eq!(
            parse("inspect_file"),
            Err(ParseError::MissingArgument("inspect_file"))
        );
        assert_eq!(parse("ls\0"), Err(ParseError::Nul));
        let long = "x".repeat(MAX_ACTION_BYTES + 1);
        assert_eq!(parse(&long), Err(ParseError::TooLong(MAX_ACTION_BYTES + 1)));
    }
}
