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

/// Parses one action string. Structured names match only as the first word,
/// so `grep submit x` stays bash.
pub fn parse(command: &str) -> Result<Parsed, ParseError> {
    if command.len() > MAX_ACTION_BYTES {
        return Err(ParseError::TooLong(command.len()));
    }
    if command.contains('\0') {
        return Err(ParseError::Nul);
    }
    let trimmed = command.trim();
    if trimmed.is_empty() {
        return Err(ParseError::Empty);
    }
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
