//! The syntax of `task.json`'s string fields that name something outside
//! the JSON: workspace-relative paths, `Name <email>` authors and UTC
//! dates. The model checks them when a task loads; the generator parses
//! them again where it writes files and commits.

use anyhow::{Context, bail};

/// Checks a workspace-relative path from a task file: relative, `/`-separated,
/// no `.`/`..`/empty components, never inside `.git`. Task files are
/// reviewed, but the generator writes where they point, so it checks.
pub fn check_rel_path(p: &str) -> Result<(), String> {
    if p.is_empty() || p.len() > 255 {
        return Err("path must be 1-255 bytes".into());
    }
    if p.starts_with('/') || p.contains('\\') || p.contains('\0') {
        return Err("path must be relative and /-separated".into());
    }
    for c in p.split('/') {
        if c.is_empty() || c == "." || c == ".." {
            return Err("path has an empty, . or .. component".into());
        }
        if c.eq_ignore_ascii_case(".git") {
            return Err("path is inside .git".into());
        }
    }
    Ok(())
}

/// Splits `Name <email>`.
pub(crate) fn parse_author(s: &str) -> anyhow::Result<(&str, &str)> {
    let s = s.trim();
    let (name, rest) = s
        .rsplit_once('<')
        .context("author must be \"Name <email>\"")?;
    let email = rest
        .strip_suffix('>')
        .context("author must be \"Name <email>\"")?;
    let name = name.trim();
    if name.is_empty()
        || email.is_empty()
        || email.contains(['<', '>', '\n'])
        || name.contains(['<', '>', '\n'])
    {
        bail!("author must be \"Name <email>\"");
    }
    Ok((name, email))
}

/// Parses `YYYY-MM-DDTHH:MM:SSZ` to seconds since the epoch.
pub(crate) fn parse_date(s: &str) -> anyhow::Result<i64> {
    let b = s.as_bytes();
    let ok = b.len() == 20
        && b[4] == b'-'
        && b[7] == b'-'
        && b[10] == b'T'
        && b[13] == b':'
        && b[16] == b':'
        && b[19] == b'Z';
    let num = |r: std::ops::Range<usize>| -> Option<i64> {
        let t = s.get(r)?;
        t.bytes()
            .all(|c| c.is_ascii_digit())
            .then(|| t.parse().ok())?
    };
    let parts = (
        num(0..4),
        num(5..7),
        num(8..10),
        num(11..13),
        num(14..16),
        num(17..19),
    );
    let (Some(y), Some(mo), Some(d), Some(h), Some(mi), Some(se)) = parts else {
        bail!("date {s:?} must be YYYY-MM-DDTHH:MM:SSZ");
    };
    let days_in_month = match mo {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 => 29,
        2 => 28,
        _ => 0,
    };
    if !ok
        || !(1970..=2100).contains(&y)
        || d < 1
        || d > days_in_month
        || h > 23
        || mi > 59
        || se > 59
    {
        bail!("date {s:?} must be a valid YYYY-MM-DDTHH:MM:SSZ (1970-2100)");
    }
    // Days from civil (Howard Hinnant's algorithm).
    let y2 = if mo <= 2 { y - 1 } else { y };
    let era = y2.div_euclid(400);
    let yoe = y2 - era * 400;
    let mp = (mo + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Ok(days * 86_400 + h * 3_600 + mi * 60 + se)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates() {
        assert_eq!(parse_date("1970-01-01T00:00:00Z").unwrap(), 0);
        assert_eq!(parse_date("2025-01-06T09:14:00Z").unwrap(), 1_736_154_840);
        assert_eq!(parse_date("2024-02-29T23:59:59Z").unwrap(), 1_709_251_199);
        for bad in [
            "2025-02-29T00:00:00Z",
            "2025-01-06 09:14:00Z",
            "2025-01-06T09:14:00+01:00",
            "2025-13-01T00:00:00Z",
        ] {
            assert!(parse_date(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn authors() {
        assert_eq!(
            parse_author("Dana W <dana@x.example>").unwrap(),
            ("Dana W", "dana@x.example")
        );
        assert!(parse_author("dana@x.example").is_err());
        assert!(parse_author("<a@b>").is_err());
    }

    #[test]
    fn paths() {
        assert!(check_rel_path("app/settings.py").is_ok());
        assert!(check_rel_path(".env").is_ok());
        for bad in [
            "",
            "/etc/passwd",
            "a/../b",
            "a//b",
            ".git/config",
            "a/.GIT/x",
            "a\\b",
        ] {
            assert!(check_rel_path(bad).is_err(), "{bad}");
        }
    }
}
