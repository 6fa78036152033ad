//! Review rev35 (branch prof21): the bootstrap's memoised and chunked
//! checks (hook-implementation memo keyed by a count of `__code__`
//! writes, incremental `re`/hex cache checks verified ahead, namespace
//! sweeps by chunks of 32) against payloads that change exactly what
//! those memos skip re-reading. Each payload is graded by a grader with
//! runners (the default: the caches verified before the start signal)
//! and by a cold one.
//!
//! Not here: the merged `write_verdict`/chain stack walk (ad6f76c). The
//! chain's `_gf(1)` inside the generator resumed by `send` is
//! `write_verdict`'s frame (checked on the venv's 3.11.2), so its walk
//! meets the frames the removed walk did, plus `write_verdict` itself;
//! and every call of `write_verdict` during the run follows a
//! `checkpoint` walk of the same stack in `phase`. Code under test
//! driving the runtest hooks is refused by the existing
//! `bootstrap_stops_forged_verdicts` ("_pytest module-level function")
//! and `grader_frames_are_never_handed_out`, both passing on prof21.

use super::*;

/// The fixture suite plus a module whose tests go through `re`'s cache,
/// `urllib.parse`'s hex table and `json.loads`.
const TEST_C: &str = "import json, re\nfrom urllib.parse import parse_qs\nfrom app import token, query, dump\n\ndef test_token_is_a_placeholder():\n    assert re.fullmatch(r'\\$\\{\\w+\\}', token())\n\ndef test_query_names_the_user():\n    assert parse_qs(query()) == {'user': ['ann']}\n\ndef test_dump():\n    assert json.loads(dump()) == {'a': 1}\n";
const HONEST: &str = "def token():\n    return '${TOKEN}'\n\ndef query():\n    return 'user=ann'\n\ndef dump():\n    return '{\"a\": 1}'\n";

struct Case {
    g: HealthGrader,
    cold: HealthGrader,
    _d: tempfile::TempDir,
    ws: PathBuf,
    pristine: PathBuf,
    exp: ExpectedTests,
    broken: String,
}

async fn setup() -> Option<Case> {
    let g = grader(30)?;
    let cold = grader(30)?.without_staging();
    let (_d, ws, pristine) = fixture();
    for root in [&ws, &pristine] {
        write(root, "tests/test_c.py", TEST_C);
    }
    write(&ws, "app.py", &format!("{APP}\n{HONEST}"));
    let exp = manifest(&g, &ws, &pristine).await;
    assert_eq!(exp.total, 6, "{exp:?}");
    let s = grade(&g, &ws, &pristine, &exp).await;
    assert_eq!((s.passed, s.total), (6, 6), "{s:?}");
    assert!(s.error.is_none(), "{s:?}");
    let broken = format!(
        "{}\ndef token():\n    return 'sk-live-0123456789'\n\ndef query():\n    return 'user=%41nn'\n\ndef dump():\n    return '{{}}'\n",
        APP.replace("a * b", "a + b + 100")
    );
    Some(Case {
        g,
        cold,
        _d,
        ws,
        pristine,
        exp,
        broken,
    })
}

/// Grades each payload (run by the app at import; its `OVERRIDE` replaces
/// app functions, so a payload can act inside a test, after checks
/// verified the state it changes) with both graders; returns the
/// payloads not refused as tampering. `why`: a part of the reason.
async fn refused_all(c: &Case, payloads: &[(&str, &str, String)]) -> Vec<String> {
    let mut failures = Vec::new();
    for (name, why, payload) in payloads {
        write(&c.ws, "x.dat", payload);
        write(
            &c.ws,
            "app.py",
            &format!(
                "import runpy\n_ns = runpy.run_path('x.dat')\n{}\nglobals().update(_ns.get('OVERRIDE', {{}}))\n",
                c.broken
            ),
        );
        for (kind, g) in [("runner", &c.g), ("cold", &c.cold)] {
            let s = grade(g, &c.ws, &c.pristine, &c.exp).await;
            let err = s.error.as_deref().unwrap_or("");
            eprintln!(
                "rev35 {name} ({kind}, runner runs so far {}): passed {} of {}: {err}",
                g.runner_runs(),
                s.passed,
                s.total
            );
            if s.score != 0.0 || !err.contains("tampering detected") || !err.contains(why) {
                failures.push(format!("{name} ({kind}): {s:?}"));
            }
        }
    }
    failures
}

async fn honest_broken_keeps_its_score(c: &Case) {
    write(&c.ws, "app.py", &c.broken);
    for g in [&c.g, &c.cold] {
        let s = grade(g, &c.ws, &c.pristine, &c.exp).await;
        assert_eq!((s.passed, s.total), (2, 6), "{s:?}");
        assert!(s.error.is_none(), "{s:?}");
    }
}

/// In the app's `add` (test_a's first test, after the setup and call
/// checkpoints verified the caches): runs `body` once.
fn in_add(body: &str) -> String {
    let body: String = body.lines().map(|l| format!("        {l}\n")).collect();
    format!(
        "_done = [False]\ndef _add(a, b):\n    if not _done[0]:\n        _done[0] = True\n{body}    return a + b\nOVERRIDE = {{'add': _add}}\n"
    )
}

/// Q2: verified `re` cache entries and hex-table entries changed after
/// the incremental checks took them as verified: in place (same key
/// object, same position), swapped, moved to the end, the dict cleared
/// or replaced, a key replaced by an equal one; and an entry the runner
/// verified before the start signal, changed at import. Each is refused.
#[tokio::test]
async fn rev35_verified_cache_entries_changed_later_are_refused() {
    let Some(c) = setup().await else { return };
    // Both patterns compiled (and cached) at import, verified at the
    // first checkpoint, forged in `add`.
    let pre = "import re, urllib.parse as _u\n_K = (str, r'\\$\\{\\w+\\}', 0)\n_ANY = (str, r'(?s:.*)', 0)\nre.compile(_K[1])\nre.compile(_ANY[1])\n_u.unquote_to_bytes('%20')\n";
    let payloads: Vec<(&str, &str, String)> = vec![
        (
            "re: a verified entry's value replaced in place",
            "re._cache holds a pattern",
            format!("{pre}{}", in_add("c = re._cache\nc[_K] = c[_ANY]")),
        ),
        (
            "re: two verified entries' values swapped",
            "re._cache holds a pattern",
            format!("{pre}{}", in_add("c = re._cache\nc[_K], c[_ANY] = c[_ANY], c[_K]")),
        ),
        (
            "re: a verified entry deleted and re-added forged at the end",
            "re._cache holds a pattern",
            format!("{pre}{}", in_add("c = re._cache\nv = c[_ANY]\ndel c[_K]\nc[_K] = v")),
        ),
        (
            "re: a verified key replaced by an equal tuple, forged",
            "re._cache holds a pattern",
            format!(
                "{pre}{}",
                in_add("c = re._cache\nv = c[_ANY]\ndel c[_K]\nc[(str, ''.join(_K[1]), int('0'))] = v")
            ),
        ),
        (
            "re: the cache cleared and refilled forged",
            "re._cache holds a pattern",
            format!("{pre}{}", in_add("c = re._cache\nv = c[_ANY]\nc.clear()\nc[_K] = v")),
        ),
        (
            "re: the cache dict replaced by a forged copy",
            "re._cache",
            format!("{pre}{}", in_add("c = dict(re._cache)\nc[_K] = c[_ANY]\nre._cache = c")),
        ),
        (
            "re: an entry verified before the start signal, changed at import",
            "re._cache holds a pattern",
            "import re\n_v = re.compile(r'(?s:.*)')\n_c = re._cache\n_k0 = next(iter(_c))\n_c[_k0] = _v\n".to_string(),
        ),
        (
            "hex: a verified value replaced in place",
            "_hextobyte",
            format!("{pre}{}", in_add("t = _u._hextobyte\nt[b'41'] = t[b'61']")),
        ),
        (
            "hex: two verified values swapped",
            "_hextobyte",
            format!("{pre}{}", in_add("t = _u._hextobyte\nt[b'41'], t[b'61'] = t[b'61'], t[b'41']")),
        ),
        (
            "hex: a verified key deleted and re-added forged",
            "_hextobyte",
            format!("{pre}{}", in_add("t = _u._hextobyte\nv = t[b'61']\ndel t[b'41']\nt[bytes([0x34, 0x31])] = v")),
        ),
        (
            "hex: the table replaced by a forged copy",
            "_hextobyte",
            format!("{pre}{}", in_add("t = dict(_u._hextobyte)\nt[b'41'] = t[b'61']\n_u._hextobyte = t")),
        ),
    ];
    let failures = refused_all(&c, &payloads).await;
    honest_broken_keeps_its_score(&c).await;
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Q3: namespace changes that keep every dict's length (or the chunk's
/// total), so only the identity sweep can tell: a value replaced in place,
/// a name deleted and re-added at the end, a key replaced by an equal str,
/// values swapped between two library classes, a name removed from one
/// namespace and one added to another. Made in `add`, after the chunk
/// memo holds the namespaces as verified. Each is refused.
#[tokio::test]
async fn rev35_same_length_namespace_changes_are_refused() {
    let Some(c) = setup().await else { return };
    let pre = "import json, json.decoder as _jd, json.encoder as _je\ndef _loads(s, **kw):\n    return {'a': 1}\n";
    let payloads: Vec<(&str, &str, String)> = vec![
        (
            "json.loads replaced in place",
            "json.loads rebound",
            format!("{pre}{}", in_add("json.loads = _loads")),
        ),
        (
            "json.loads deleted and re-added at the end",
            "json.loads",
            format!(
                "{pre}{}",
                in_add("d = vars(json)\ndel d['loads']\nd['loads'] = _loads")
            ),
        ),
        (
            "json.loads under an equal, distinct key",
            "json.loads",
            format!(
                "{pre}{}",
                in_add("d = vars(json)\ndel d['loads']\nd[''.join(['lo', 'ads'])] = _loads")
            ),
        ),
        (
            "methods swapped between two library classes",
            "rebound",
            format!(
                "{pre}{}",
                in_add(
                    "D, E = _jd.JSONDecoder, _je.JSONEncoder\nD.decode, E.encode = E.encode, D.decode"
                )
            ),
        ),
        (
            "a library function removed from one namespace, a name added to another",
            "removed",
            format!(
                "{pre}{}",
                in_add("del _jd.JSONDecoder.raw_decode\n_je.zz_added = 1")
            ),
        ),
    ];
    let failures = refused_all(&c, &payloads).await;
    honest_broken_keeps_its_score(&c).await;
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Q3, the other side: names re-ordered in a library namespace (same
/// objects; a chunk's identity pass fails, its entry-by-entry sweep finds
/// nothing rebound) are no tampering, in the runner and cold.
#[tokio::test]
async fn rev35_reordered_library_namespace_is_not_tampering() {
    let Some(c) = setup().await else { return };
    let body = in_add("d = vars(json)\nv = d.pop('loads')\nd['loads'] = v");
    write(&c.ws, "x.dat", &format!("import json\n{body}"));
    write(
        &c.ws,
        "app.py",
        &format!(
            "import runpy\n_ns = runpy.run_path('x.dat')\n{APP}\n{HONEST}\nglobals().update(_ns.get('OVERRIDE', {{}}))\n"
        ),
    );
    for g in [&c.g, &c.cold] {
        let s = grade(g, &c.ws, &c.pristine, &c.exp).await;
        assert_eq!((s.passed, s.total), (6, 6), "{s:?}");
        assert!(s.error.is_none(), "{s:?}");
    }
}

/// Q1: a hook implementation (`pytest_pyfunc_call`, which runs the test
/// function) given other code, trusted code (a standard-library function
/// that returns its argument: pluggy takes the truthy result and the test
/// body never runs) or code under test, at import or in `add` (after the
/// hook-implementation memo holds the implementations as clean), through
/// `unittest.mock`, `object.__setattr__` and the getset descriptor. Each
/// is refused (by the audit hook's `__code__` rule, before the memo is
/// asked).
#[tokio::test]
async fn rev35_hook_implementation_code_changes_are_refused() {
    let Some(c) = setup().await else { return };
    let pre = "import dis, functools, types, unittest.mock, _pytest.python as _pp\n_CO = dis._get_code_object(functools._unwrap_partial)\ndef _mine(pyfuncitem):\n    return True\n";
    let payloads: Vec<(&str, &str, String)> = vec![
        (
            "trusted code via unittest.mock at import",
            "__code__",
            format!(
                "{pre}unittest.mock.patch.object(_pp.pytest_pyfunc_call, '__code__', _CO).start()\n"
            ),
        ),
        (
            "trusted code via unittest.mock during a test",
            "__code__",
            format!(
                "{pre}{}",
                in_add(
                    "unittest.mock.patch.object(_pp.pytest_pyfunc_call, '__code__', _CO).start()"
                )
            ),
        ),
        (
            "trusted code via the getset descriptor, driven by map",
            "__code__",
            format!(
                "{pre}{}",
                in_add(
                    "list(map(types.FunctionType.__code__.__set__, [_pp.pytest_pyfunc_call], [_CO]))"
                )
            ),
        ),
        (
            "code under test via object.__setattr__",
            "__code__",
            format!(
                "{pre}{}",
                in_add(
                    "object.__setattr__(_pp.pytest_pyfunc_call, '__code__', dis._get_code_object(_mine))"
                )
            ),
        ),
    ];
    let failures = refused_all(&c, &payloads).await;
    honest_broken_keeps_its_score(&c).await;
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// FINDING (outside the slice; the same on main): a library module-level
/// object's attribute dict *replaced* (`obj.__dict__ = {...}` raises no
/// audit event), not changed: the sweeps keep comparing the dict the
/// baseline took, which nobody changed, while the object's methods now
/// read the new one (`json._default_decoder.scan_once`, which
/// `json.loads` runs). Measured: the broken app scores 3/6 (test_dump
/// forged to pass) with no tampering reported, runner and cold, where
/// the honest broken app scores 2/6. Fails until the sweeps also check
/// that each watched object's `__dict__` is still the dict they hold.
#[tokio::test]
async fn finding_rev35_library_object_dict_replaced_is_refused() {
    let Some(c) = setup().await else { return };
    let payloads: Vec<(&str, &str, String)> = vec![
        (
            "json._default_decoder's __dict__ replaced at import",
            "",
            "import json\n_d = json._default_decoder\n_n = dict(vars(_d))\n_n['scan_once'] = lambda s, i: ({'a': 1}, len(s))\n_d.__dict__ = _n\n".to_string(),
        ),
        (
            "json._default_decoder's __dict__ replaced during a test",
            "",
            format!(
                "import json\n{}",
                in_add("_d = json._default_decoder\n_n = dict(vars(_d))\n_n['scan_once'] = lambda s, i: ({'a': 1}, len(s))\n_d.__dict__ = _n")
            ),
        ),
    ];
    let failures = refused_all(&c, &payloads).await;
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
