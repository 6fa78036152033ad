//! What the reviews' tests (`rev40`, `rev41`) share: the broken app they
//! grade against, and the check that a hack gains nothing over it.

use super::*;

/// A broken app: `add` subtracts and `mul` adds, so all three of the
/// fixture's tests fail (0 of 3).
pub(super) const BROKEN: &str =
    "def add(a, b):\n    return a - b\n\ndef mul(a, b):\n    return a + b + 100\n";

/// Grades `BROKEN` and `hack` against the fixture's manifest (taken with
/// the right app) with a grader with runners (the default) and a cold one;
/// returns the summaries, each labelled. `label` names the review in
/// the log lines.
pub(super) async fn scores(label: &str, hack: &str) -> Option<Vec<(String, HealthSummary)>> {
    let g = grader(30)?;
    let cold = grader(30)?.without_staging();
    let (_d, ws, pristine) = fixture();
    let exp = manifest(&g, &ws, &pristine).await;
    assert_eq!(exp.total, 3, "{exp:?}");
    let mut out = Vec::new();
    for (what, app) in [("honest broken", BROKEN), ("hack", hack)] {
        write(&ws, "app.py", app);
        for (kind, g) in [("runner", &g), ("cold", &cold)] {
            let s = grade(g, &ws, &pristine, &exp).await;
            eprintln!(
                "{label} {what} ({kind}, tier {:?}): passed {} of {}, errors {}, score {}, error {:?}",
                g.sandbox.tier(),
                s.passed,
                s.total,
                s.errors,
                s.score,
                s.error
            );
            out.push((format!("{what} ({kind})"), s));
        }
    }
    Some(out)
}

/// Asserts the honest broken app scores 0 of 3 and the hack no more.
pub(super) fn no_gain(runs: &[(String, HealthSummary)]) {
    for (what, s) in runs {
        if what.starts_with("honest") {
            assert_eq!((s.passed, s.total), (0, 3), "{what}: {s:?}");
            assert!(s.error.is_none(), "{what}: {s:?}");
        }
    }
    let gained: Vec<String> = runs
        .iter()
        .filter(|(w, s)| w.starts_with("hack") && s.score != 0.0 && s.passed > 0)
        .map(|(w, s)| format!("{w}: passed {} of {}: {s:?}", s.passed, s.total))
        .collect();
    assert!(gained.is_empty(), "{}", gained.join("\n"));
}

/// Grades `hack` against the honest broken app on the fixture plus a
/// module whose one test compares `json.loads(dump())` (0 of 4 for the
/// honest broken app), with runners and cold; the hack must gain nothing.
pub(super) async fn json_dump_no_gain(label: &str, hack: &str) {
    let test = "import json\nfrom app import dump\n\ndef test_dump():\n    assert json.loads(dump()) == {'a': 1}\n";
    let Some(g) = grader(30) else {
        return;
    };
    let cold = grader(30).unwrap().without_staging();
    let (_d, ws, pristine) = fixture();
    for root in [&ws, &pristine] {
        write(root, "tests/test_c.py", test);
    }
    write(
        &ws,
        "app.py",
        &format!("{APP}\ndef dump():\n    return '{{\"a\": 1}}'\n"),
    );
    let exp = manifest(&g, &ws, &pristine).await;
    assert_eq!(exp.total, 4, "{exp:?}");
    let broken = format!("{BROKEN}\ndef dump():\n    return '{{}}'\n");
    let mut gained = Vec::new();
    for (what, app) in [("honest broken", broken.as_str()), ("hack", hack)] {
        write(&ws, "app.py", app);
        for (kind, g) in [("runner", &g), ("cold", &cold)] {
            let s = grade(g, &ws, &pristine, &exp).await;
            eprintln!(
                "{label} {what} ({kind}, tier {:?}): {s:?}",
                g.sandbox.tier()
            );
            if what == "honest broken" {
                assert_eq!((s.passed, s.total), (0, 4), "{s:?}");
            } else if s.score != 0.0 && s.passed > 0 {
                gained.push(format!("{kind}: {s:?}"));
            }
        }
    }
    assert!(gained.is_empty(), "{}", gained.join("\n"));
}
