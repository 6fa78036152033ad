//! Turns a model's free-form reply into ONE command for `/step`.
//!
//! Models wrap commands in markdown fences, XML tool-call formats or JSON,
//! open with prose ("Let me check…"), or chain several commands with `&&`.
//! The environment runs whatever string it receives as bash, so a preamble
//! becomes a "command not found" step and a chain hides which part earned the
//! reward. Everything here is a pure function of the reply so it can be
//! tested without a model.

/// Replies longer than this are cut before parsing (a model that streams
/// megabytes must not make the parser quadratic).
pub const MAX_REPLY_BYTES: usize = 64 * 1024;

/// Commands longer than this are cut (the server bounds actions too; a
/// heredoc that edits a file fits easily).
pub const MAX_COMMAND_BYTES: usize = 16 * 1024;

/// Names of the environment's structured actions (intercepted before bash).
pub const STRUCTURED_ACTIONS: &[&str] = &[
    "inspect_file",
    "inspect_encoded",
    "scan_history",
    "run_scanner",
    "list_files",
    "submit",
];

/// Extracts one command from a model reply, or `None` when nothing in it
/// looks like a command.
pub fn normalize(reply: &str) -> Option<String> {
    let reply = cap(reply, MAX_REPLY_BYTES);
    let reply = strip_think(reply);
    let body = extract_xml(&reply).unwrap_or(reply);
    let body = extract_fence(&body).unwrap_or(body);
    let body = extract_json(&body).unwrap_or(body);
    let body = drop_prose(&body)?;
    let cmd = first_command(&body)?;
    let cmd = strip_wrapping_backticks(cmd.trim()).trim().to_string();
    if cmd.is_empty() {
        None
    } else {
        Some(cap(&cmd, MAX_COMMAND_BYTES).to_string())
    }
}

/// Cuts `s` to at most `max` bytes on a char boundary.
pub fn cap(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// Removes `<think>…</think>` reasoning blocks (some models emit them in the
/// content). An unclosed block is reasoning that never ended: drop it all.
fn strip_think(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    loop {
        match find_ci(rest, "<think>") {
            Some(i) => {
                out.push_str(&rest[..i]);
                let after = &rest[i + "<think>".len()..];
                match find_ci(after, "</think>") {
                    Some(j) => rest = &after[j + "</think>".len()..],
                    None => return out,
                }
            }
            None => {
                // A lone closer: everything before it was reasoning.
                if let Some(j) = find_ci(rest, "</think>") {
                    out.clear();
                    rest = &rest[j + "</think>".len()..];
                    continue;
                }
                out.push_str(rest);
                return out;
            }
        }
    }
}

/// ASCII case-insensitive `find`.
fn find_ci(hay: &str, needle: &str) -> Option<usize> {
    let h = hay.as_bytes();
    let n = needle.as_bytes();
    if n.len() > h.len() {
        return None;
    }
    (0..=h.len() - n.len()).find(|&i| h[i..i + n.len()].eq_ignore_ascii_case(n))
}

/// Content of the first XML-ish tool-call element: `<tool_call>` (JSON
/// inside), `<command>`, `<bash>`, `<action>`, `<cmd>`. Attributes on the
/// opening tag are allowed; a missing closer takes the rest of the reply.
fn extract_xml(s: &str) -> Option<String> {
    for tag in [
        "tool_call",
        "function_call",
        "command",
        "bash",
        "action",
        "cmd",
    ] {
        let Some(inner) = element(s, tag) else {
            continue;
        };
        let inner = inner.trim();
        if tag == "tool_call" || tag == "function_call" {
            let inner = extract_fence(inner).unwrap_or_else(|| inner.to_string());
            if let Some(c) = extract_json(&inner) {
                return Some(c);
            }
            // `<tool_call><command>ls</command></tool_call>` and similar.
            if let Some(c) = extract_xml(&inner) {
                return Some(c);
            }
            continue;
        }
        if !inner.is_empty() {
            return Some(xml_unescape(inner));
        }
    }
    None
}

/// The text between `<tag ...>` and `</tag>`.
fn element<'a>(s: &'a str, tag: &str) -> Option<&'a str> {
    let open = format!("<{tag}");
    let mut from = 0;
    while let Some(i) = find_ci(&s[from..], &open) {
        let start = from + i + open.len();
        let next = s.as_bytes().get(start).copied();
        if matches!(next, Some(b'>') | Some(b' ') | Some(b'\n') | Some(b'\t')) {
            let gt = s[start..].find('>')? + start + 1;
            let close = format!("</{tag}>");
            return Some(match find_ci(&s[gt..], &close) {
                Some(j) => &s[gt..gt + j],
                None => &s[gt..],
            });
        }
        from = start;
    }
    None
}

fn xml_unescape(s: &str) -> String {
    s.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&apos;", "'")
        .replace("&amp;", "&")
}

/// Content of the first markdown fence (```` ```bash … ``` ````, `~~~`).
fn extract_fence(s: &str) -> Option<String> {
    for marker in ["```", "~~~"] {
        let Some(i) = s.find(marker) else { continue };
        let after = &s[i + marker.len()..];
        // The info string (`bash`, `sh`, `json`) runs to the end of the line;
        // a one-line fence (```ls```) has none.
        let (info, body) = match after.find('\n') {
            Some(nl) if !after[..nl].contains(marker) => (&after[..nl], &after[nl + 1..]),
            _ => ("", after),
        };
        let body = match body.find(marker) {
            Some(j) => &body[..j],
            None => body,
        };
        let info = info.trim();
        // An info string with spaces is really a command on the fence line.
        if info.contains(' ') {
            return Some(format!("{info}\n{body}"));
        }
        return Some(body.to_string());
    }
    None
}

/// A command from a JSON reply: `{"command": …}`, `{"action": …}`,
/// `{"name": …, "arguments": {…}}` (arguments may be a JSON string, as in
/// OpenAI tool calls), or a structured action by name.
fn extract_json(s: &str) -> Option<String> {
    let t = s.trim();
    if !t.starts_with('{') && !t.starts_with('[') {
        return None;
    }
    // The reply may carry trailing prose after the object.
    let mut de = serde_json::Deserializer::from_str(t).into_iter::<serde_json::Value>();
    let v = de.next()?.ok()?;
    json_command(&v, 0)
}

fn json_command(v: &serde_json::Value, depth: u32) -> Option<String> {
    use serde_json::Value;
    if depth > 6 {
        return None;
    }
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Array(a) => a.first().and_then(|x| json_command(x, depth + 1)),
        Value::Object(m) => {
            for key in [
                "command", "cmd", "action", "bash", "script", "input", "code",
            ] {
                match m.get(key) {
                    Some(Value::String(s)) => {
                        let s = s.trim();
                        // {"action": "inspect_file", "path": "x"}
                        if STRUCTURED_ACTIONS.contains(&s)
                            && let Some(arg) = path_arg(m)
                        {
                            return Some(format!("{s} {arg}"));
                        }
                        return Some(s.to_string());
                    }
                    Some(o @ Value::Object(_)) => return json_command(o, depth + 1),
                    _ => {}
                }
            }
            for key in ["function", "tool_calls"] {
                if let Some(x) = m.get(key)
                    && let Some(c) = json_command(x, depth + 1)
                {
                    return Some(c);
                }
            }
            let name = m.get("name").and_then(Value::as_str).map(str::trim);
            for key in ["arguments", "parameters", "args", "input"] {
                let args = match m.get(key) {
                    Some(Value::String(s)) => match serde_json::from_str::<Value>(s) {
                        Ok(parsed @ Value::Object(_)) => parsed,
                        _ => return Some(s.clone()),
                    },
                    Some(o @ Value::Object(_)) => o.clone(),
                    _ => continue,
                };
                if let Some(n) = name.filter(|n| STRUCTURED_ACTIONS.contains(n)) {
                    let arg = args.as_object().and_then(path_arg);
                    return Some(match arg {
                        Some(a) => format!("{n} {a}"),
                        None => n.to_string(),
                    });
                }
                if let Some(c) = json_command(&args, depth + 1) {
                    return Some(c);
                }
            }
            name.filter(|n| STRUCTURED_ACTIONS.contains(n))
                .map(str::to_string)
        }
        _ => None,
    }
}

fn path_arg(m: &serde_json::Map<String, serde_json::Value>) -> Option<String> {
    ["path", "file", "file_path", "target", "dir"]
        .iter()
        .find_map(|k| {
            m.get(*k)
                .and_then(|v| v.as_str())
                .map(|s| s.trim().to_string())
        })
        .filter(|s| !s.is_empty())
}

/// Openers of natural-language lines (lowercased).
const PROSE_OPENERS: &[&str] = &[
    "let me",
    "let's",
    "lets ",
    "looking at",
    "i'll",
    "i will",
    "i need",
    "i should",
    "i'm",
    "i am",
    "i can",
    "i think",
    "first,",
    "first ",
    "next,",
    "next ",
    "now,",
    "now ",
    "then,",
    "finally",
    "okay",
    "ok,",
    "ok ",
    "sure",
    "alright",
    "based on",
    "the ",
    "this ",
    "that ",
    "these ",
    "to ",
    "we ",
    "here",
    "great",
    "it ",
    "it's",
    "there ",
    "since ",
    "after ",
    "my ",
    "step ",
    "thought",
    "reasoning",
    "analysis",
    "plan:",
    "explanation",
    "note:",
    "in order",
    "good",
    "perfect",
    "now that",
    "so ",
    "well",
    "hmm",
    "i see",
];

/// Labels that may precede a command on the same line.
const LABELS: &[&str] = &[
    "action:",
    "command:",
    "bash:",
    "shell:",
    "cmd:",
    "run:",
    "next action:",
    "$ ",
];

/// Drops leading prose lines. A prose line that quotes a command in inline
/// backticks ("Let me run `ls -la`.") yields that command.
fn drop_prose(s: &str) -> Option<String> {
    let lines: Vec<&str> = s.lines().collect();
    for (i, line) in lines.iter().enumerate() {
        let t = line.trim();
        if t.is_empty() {
            continue;
        }
        let lower = t.to_ascii_lowercase();
        if let Some(label) = LABELS.iter().find(|l| lower.starts_with(*l)) {
            let rest = t[label.len()..].trim();
            let rest = strip_wrapping_backticks(rest).trim();
            if rest.is_empty() {
                continue;
            }
            let mut out = vec![rest.to_string()];
            out.extend(lines[i + 1..].iter().map(|l| l.to_string()));
            return Some(out.join("\n"));
        }
        if is_prose(t) {
            if let Some(code) = inline_code(t) {
                return Some(code.to_string());
            }
            continue;
        }
        return Some(lines[i..].join("\n"));
    }
    None
}

fn is_prose(t: &str) -> bool {
    let lower = t.to_ascii_lowercase();
    if PROSE_OPENERS.iter().any(|p| lower.starts_with(p)) {
        return true;
    }
    // Markdown headings, list bullets with words, and sentences that start
    // with a capitalised word: commands are lower case almost always.
    if t.starts_with("**") || t.starts_with("- ") || t.starts_with("* ") {
        return true;
    }
    let first: &str = t.split_whitespace().next().unwrap_or("");
    let word = first.trim_end_matches([',', ':', '.']);
    let mut chars = word.chars();
    let capitalised = matches!(chars.next(), Some(c) if c.is_ascii_uppercase())
        && word.len() > 1
        && word
            .chars()
            .skip(1)
            .all(|c| c.is_ascii_lowercase() || c == '\'');
    capitalised && t.contains(' ')
}

/// The first `inline code` span of a line.
fn inline_code(t: &str) -> Option<&str> {
    let i = t.find('`')?;
    let rest = &t[i + 1..];
    let j = rest.find('`')?;
    let code = rest[..j].trim();
    if code.is_empty() { None } else { Some(code) }
}

fn strip_wrapping_backticks(s: &str) -> &str {
    if s.len() >= 2 && s.starts_with('`') && s.ends_with('`') && !s[1..s.len() - 1].contains('`') {
        &s[1..s.len() - 1]
    } else {
        s
    }
}

/// Shell words that open a compound command at command position.
const OPENERS: &[&str] = &["for", "while", "until", "if", "case", "select", "{"];
/// Shell words that close one.
const CLOSERS: &[&str] = &["done", "fi", "esac", "}"];
/// Words after which the next word is again at command position.
const KEEP_CMD_POS: &[&str] = &[
    "do", "then", "else", "elif", "!", "time", "if", "while", "until", "{",
];

/// The first top-level command of a shell snippet: cut at `&&`, `||`, `;`
/// and newlines outside quotes, `$(…)`, parentheses and compound commands
/// (`for … done`, `if … fi`), keeping heredoc bodies with the command that
/// opened them. Comment-only segments are skipped.
pub fn first_command(s: &str) -> Option<String> {
    let mut start = 0;
    while start < s.len() {
        let (seg, next) = next_segment(s, start);
        let cleaned = seg.trim();
        if !is_comment_only(cleaned) {
            return Some(cleaned.trim_end_matches([';', '&']).trim_end().to_string());
        }
        if next <= start {
            break;
        }
        start = next;
    }
    None
}

fn is_comment_only(seg: &str) -> bool {
    seg.lines().all(|l| {
        let l = l.trim();
        l.is_empty() || l.starts_with('#')
    })
}

/// Scans from `start`; returns the first segment (with any heredoc bodies it
/// opened) and the index where the next segment starts.
fn next_segment(s: &str, start: usize) -> (String, usize) {
    let b = s.as_bytes();
    let mut i = start;
    let mut depth: i32 = 0; // ( … ) and $( … )
    let mut kw: i32 = 0; // for/if/case/{ … done/fi/esac/}
    let mut cmd_pos = true;
    let mut pending: Vec<(String, bool)> = Vec::new();
    let top = |depth: i32, kw: i32| depth <= 0 && kw <= 0;
    while i < b.len() {
        let c = b[i];
        match c {
            b'\'' => {
                i = s[i + 1..].find('\'').map_or(b.len(), |j| i + 1 + j + 1);
                cmd_pos = false;
                continue;
            }
            b'"' => {
                let mut j = i + 1;
                while j < b.len() && b[j] != b'"' {
                    if b[j] == b'\\' {
                        j += 1;
                    }
                    j += 1;
                }
                i = (j + 1).min(b.len());
                cmd_pos = false;
                continue;
            }
            b'`' => {
                i = s[i + 1..].find('`').map_or(b.len(), |j| i + 1 + j + 1);
                cmd_pos = false;
                continue;
            }
            b'\\' => {
                // Skip the escaped character, whatever its UTF-8 width.
                i += 1 + s[i + 1..].chars().next().map_or(0, char::len_utf8);
                continue;
            }
            b'#' if i == start
                || b[i - 1].is_ascii_whitespace()
                || b"; &|(".contains(&b[i - 1]) =>
            {
                // A comment runs to the end of the line.
                i = s[i..].find('\n').map_or(b.len(), |j| i + j);
                continue;
            }
            b'(' => {
                depth += 1;
                cmd_pos = true;
                i += 1;
                continue;
            }
            b')' => {
                depth -= 1;
                i += 1;
                continue;
            }
            b'<' if b.get(i + 1) == Some(&b'<') && b.get(i + 2) != Some(&b'<') => {
                let (delim, strip_tabs, end) = heredoc_delim(s, i + 2);
                if !delim.is_empty() {
                    pending.push((delim, strip_tabs));
                }
                i = end;
                continue;
            }
            b'<' if b.get(i + 1) == Some(&b'<') => {
                i += 3; // here-string `<<<`
                continue;
            }
            b'\n' => {
                let body_end = if pending.is_empty() {
                    i
                } else {
                    skip_heredocs(s, i, &mut pending)
                };
                if top(depth, kw) {
                    return (s[start..body_end].to_string(), body_end + 1);
                }
                i = body_end + 1;
                cmd_pos = true;
                continue;
            }
            b';' | b'&' | b'|' => {
                let two = b.get(i + 1) == Some(&c);
                let is_sep = match c {
                    b';' => true,
                    b'&' => two && (i == 0 || b[i - 1] != b'>'),
                    _ => two,
                };
                let width = if two { 2 } else { 1 };
                if is_sep && top(depth, kw) {
                    let mut seg = s[start..i].to_string();
                    let mut next = i + width;
                    if !pending.is_empty() {
                        // The heredoc bodies follow the line this operator is on.
                        if let Some(nl) = s[i..].find('\n').map(|j| i + j) {
                            let body_end = skip_heredocs(s, nl, &mut pending);
                            seg.push_str(&s[nl..body_end]);
                            next = body_end + 1;
                        }
                    }
                    return (seg, next);
                }
                cmd_pos = true;
                i += width;
                continue;
            }
            c if c.is_ascii_whitespace() => {
                i += 1;
                continue;
            }
            _ => {}
        }
        // A word starts here.
        let end = s[i..]
            .find(|ch: char| ch.is_ascii_whitespace() || ";&|()<>'\"`".contains(ch))
            .map_or(b.len(), |j| i + j);
        let word = &s[i..end];
        if cmd_pos {
            if OPENERS.contains(&word) {
                kw += 1;
            } else if CLOSERS.contains(&word) {
                kw -= 1;
            }
            cmd_pos = KEEP_CMD_POS.contains(&word) || is_assignment(word);
        } else if word == "do" || word == "then" {
            cmd_pos = true;
        }
        i = end.max(i + 1);
    }
    (s[start..].to_string(), b.len())
}

fn is_assignment(w: &str) -> bool {
    match w.find('=') {
        Some(i) if i > 0 => w[..i]
            .bytes()
            .all(|c| c.is_ascii_alphanumeric() || c == b'_'),
        _ => false,
    }
}

/// Reads a heredoc delimiter after `<<` at `i`: returns (delimiter,
/// strip_tabs, index after it).
fn heredoc_delim(s: &str, mut i: usize) -> (String, bool, usize) {
    let b = s.as_bytes();
    let strip_tabs = b.get(i) == Some(&b'-');
    if strip_tabs {
        i += 1;
    }
    while i < b.len() && (b[i] == b' ' || b[i] == b'\t') {
        i += 1;
    }
    let mut delim = String::new();
    while i < b.len() {
        match b[i] {
            q @ (b'\'' | b'"') => {
                let close = s[i + 1..].find(q as char).map_or(b.len(), |j| i + 1 + j);
                delim.push_str(&s[(i + 1).min(close)..close]);
                i = (close + 1).min(b.len());
            }
            b'\\' => i += 1,
            c if c.is_ascii_whitespace() || b";&|()<>".contains(&c) => break,
            _ => {
                let ch_end = (i + 1..=b.len())
                    .find(|&k| s.is_char_boundary(k))
                    .unwrap_or(b.len());
                delim.push_str(&s[i..ch_end]);
                i = ch_end;
            }
        }
    }
    (delim, strip_tabs, i)
}

/// From the newline at `nl`, skips the bodies of the pending heredocs;
/// returns the index of the newline ending the last delimiter line (or the
/// end of the text).
fn skip_heredocs(s: &str, nl: usize, pending: &mut Vec<(String, bool)>) -> usize {
    let mut pos = nl + 1;
    for (delim, strip_tabs) in pending.drain(..) {
        loop {
            if pos >= s.len() {
                return s.len();
            }
            let line_end = s[pos..].find('\n').map_or(s.len(), |j| pos + j);
            let line = &s[pos..line_end];
            let line = if strip_tabs {
                line.trim_start_matches('\t')
            } else {
                line
            };
            pos = line_end + 1;
            if line.trim_end_matches('\r') == delim {
                break;
            }
        }
    }
    (pos - 1).min(s.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn n(s: &str) -> String {
        normalize(s).unwrap_or_else(|| panic!("no command in {s:?}"))
    }

    #[test]
    fn plain_command_is_kept() {
        assert_eq!(n("ls -la"), "ls -la");
        assert_eq!(n("  inspect_file config.py  \n"), "inspect_file config.py");
    }

    #[test]
    fn markdown_fences_are_stripped() {
        assert_eq!(n("```bash\ngrep -rn AKIA .\n```"), "grep -rn AKIA .");
        assert_eq!(
            n("Here is the command:\n```sh\ncat app/settings.py\n```\nThis shows the file."),
            "cat app/settings.py"
        );
        assert_eq!(n("```\nscan_history\n```"), "scan_history");
        assert_eq!(n("```ls -la```"), "ls -la");
        assert_eq!(n("~~~\nrun_scanner\n~~~"), "run_scanner");
    }

    #[test]
    fn xml_tool_calls_are_extracted() {
        assert_eq!(
            n(
                r#"<tool_call>{"name": "bash", "arguments": {"command": "cat config.py"}}</tool_call>"#
            ),
            "cat config.py"
        );
        assert_eq!(
            n(
                "I will look.\n<tool_call>\n{\"name\": \"inspect_file\", \"arguments\": {\"path\": \"app/db.py\"}}\n</tool_call>"
            ),
            "inspect_file app/db.py"
        );
        assert_eq!(
            n("<command>git log --oneline</command>"),
            "git log --oneline"
        );
        assert_eq!(n("<bash>\nsed -n 1,20p a.py\n</bash>"), "sed -n 1,20p a.py");
        assert_eq!(
            n(r#"<command id="1">echo a &amp;&amp; echo b</command>"#),
            "echo a"
        );
        assert_eq!(
            n(r#"<tool_call>{"name":"submit","arguments":{}}</tool_call>"#),
            "submit"
        );
        // OpenAI-style arguments as a JSON string.
        assert_eq!(
            n(
                r#"<tool_call>{"name":"run","arguments":"{\"command\": \"pytest -q\"}"}</tool_call>"#
            ),
            "pytest -q"
        );
    }

    #[test]
    fn json_replies_are_extracted() {
        assert_eq!(n(r#"{"command": "list_files"}"#), "list_files");
        assert_eq!(n(r#"{"action": "grep -rn ghp_ ."}"#), "grep -rn ghp_ .");
        assert_eq!(
            n(r#"{"action": "inspect_file", "path": "x.py"}"#),
            "inspect_file x.py"
        );
        assert_eq!(
            n("```json\n{\"command\": \"scan_history\"}\n```"),
            "scan_history"
        );
        assert_eq!(
            n(r#"{"function": {"name": "bash", "arguments": "{\"cmd\":\"ls\"}"}}"#),
            "ls"
        );
        assert_eq!(n(r#"{"command": "ls"} and then I will inspect"#), "ls");
    }

    #[test]
    fn prose_preambles_are_dropped() {
        assert_eq!(
            n("Let me check the settings file.\ncat settings.py"),
            "cat settings.py"
        );
        assert_eq!(
            n("Looking at the output, the key is in config.\n\ninspect_file config.py"),
            "inspect_file config.py"
        );
        assert_eq!(
            n("I'll scan the history next.\nscan_history"),
            "scan_history"
        );
        assert_eq!(n("First, list the files:\nlist_files"), "list_files");
        assert_eq!(
            n("Let me run `grep -rn AKIA .` to find keys."),
            "grep -rn AKIA ."
        );
        assert_eq!(n("Action: inspect_file a.py"), "inspect_file a.py");
        assert_eq!(n("Command: `submit`"), "submit");
        assert_eq!(n("$ ls"), "ls");
        assert_eq!(
            n("<think>the key is AKIA; I should look</think>\nrun_scanner"),
            "run_scanner"
        );
        assert_eq!(
            n("Based on the findings:\nThe next step is clear.\ngit log -p"),
            "git log -p"
        );
        assert_eq!(normalize("Let me think about this."), None);
        assert_eq!(normalize(""), None);
        assert_eq!(normalize("```\n```"), None);
    }

    #[test]
    fn chains_are_cut_to_the_first_command() {
        assert_eq!(n("cd app && cat settings.py"), "cd app");
        assert_eq!(n("ls; cat a"), "ls");
        assert_eq!(n("false || echo x"), "false");
        assert_eq!(n("ls\ncat a\n"), "ls");
        assert_eq!(
            n("```bash\ngrep -rl AKIA . | head\nsed -i s/a/b/ x\n```"),
            "grep -rl AKIA . | head"
        );
        assert_eq!(n("# find keys\ngrep -rn AKIA ."), "grep -rn AKIA .");
        assert_eq!(n("ls # list;files\ncat x"), "ls # list;files");
        assert_eq!(n("echo a > f 2>&1 && echo b"), "echo a > f 2>&1");
    }

    #[test]
    fn quotes_are_not_split() {
        assert_eq!(
            n(r#"python3 -c "import os; print(os.getcwd())""#),
            r#"python3 -c "import os; print(os.getcwd())""#
        );
        assert_eq!(n("sed -i 's/a;b/c/' x.py; ls"), "sed -i 's/a;b/c/' x.py");
        assert_eq!(n(r#"echo "a \" ; b" && ls"#), r#"echo "a \" ; b""#);
        assert_eq!(n("echo $(date; id) && ls"), "echo $(date; id)");
        assert_eq!(n("(cd a; ls) && pwd"), "(cd a; ls)");
    }

    #[test]
    fn heredocs_stay_whole() {
        let h = "python3 - <<'PY'\nimport re\np='a.py'; s=open(p).read()\nopen(p,'w').write(s.replace('x','y'))\nPY";
        assert_eq!(n(h), h);
        assert_eq!(n(&format!("{h}\nls")), h);
        assert_eq!(n(&format!("```bash\n{h}\n```")), h);
        let cat = "cat > .env.example <<EOF\nAPI_KEY=changeme\nEOF";
        assert_eq!(n(cat), cat);
        // An operator on the opening line cuts the chain but keeps the body.
        assert_eq!(
            n("cat > f <<EOF && echo done\nbody; x\nEOF\nls"),
            "cat > f <<EOF \nbody; x\nEOF"
        );
        let tabs = "cat <<-END\n\tx\n\tEND";
        assert_eq!(n(tabs), tabs);
        assert_eq!(n("grep x <<< 'a;b' ; ls"), "grep x <<< 'a;b'");
    }

    #[test]
    fn compound_commands_stay_whole() {
        let f = "for f in $(grep -rl AKIA .); do sed -i '/AKIA/d' \"$f\"; done";
        assert_eq!(n(&format!("{f} && ls")), f);
        let i = "if [ -f a ]; then cat a; else echo none; fi";
        assert_eq!(n(i), i);
        assert_eq!(n("echo done; ls"), "echo done");
    }

    #[test]
    fn long_input_is_bounded() {
        let big = "a".repeat(MAX_REPLY_BYTES * 2);
        let out = n(&big);
        assert!(out.len() <= MAX_COMMAND_BYTES);
        let unclosed = format!("<tool_call>{}", "{".repeat(10_000));
        let _ = normalize(&unclosed);
        let quotes = "'".repeat(10_001);
        let _ = normalize(&quotes);
    }

    #[test]
    fn cap_respects_char_boundaries() {
        assert_eq!(cap("héllo", 2), "h");
        assert_eq!(cap("abc", 10), "abc");
    }
}
