//! Trajectories (issue 19 item 5): an episode played over HTTP is readable
//! at `GET /trajectory` while its session lives and after it closes, line
//! for line the episode's actions and rewards, never with a planted secret
//! value; a restarted server neither resumes the closed session nor loses
//! its trajectory; after the retention it is 404. And `eval --json`
//! carries each step, which `export trajectories` turns into the same
//! JSON lines as the server's recording.

use crate::agent::cli;
use crate::util;
use secaudit::trajectories::{EXPORT_FORMAT, Episode};
use serde_json::{Value, json};
use server::env::{EnvConfig, Environment};
use std::time::Duration;

/// An environment on `data` whose closed sessions' trajectories are kept
/// `secs` seconds.
async fn env_keeping(data: &std::path::Path, secs: u64) -> Environment {
    let mut cfg = EnvConfig::with_root(&util::root());
    cfg.data_dir = data.to_path_buf();
    cfg.max_sessions = 4;
    cfg.venv = util::venv();
    cfg.prewarm = util::prewarm();
    cfg.trajectories.secs = secs;
    Environment::new(cfg).await.expect("environment")
}

async fn post(c: &reqwest::Client, url: String, body: Value) -> Value {
    let r = c.post(&url).json(&body).send().await.expect(&url);
    let status = r.status();
    let v: Value = r.json().await.expect("JSON reply");
    assert!(status.is_success(), "{url} {body}: {status} {v}");
    v
}

/// `GET /trajectory`: status, the live header, and the parsed lines.
async fn trajectory(c: &reqwest::Client, base: &str, sid: &str) -> (u16, Option<String>, String) {
    let r = c
        .get(format!("{base}/trajectory"))
        .query(&[("session_id", sid)])
        .send()
        .await
        .expect("GET /trajectory");
    let status = r.status().as_u16();
    if status == 200 {
        assert_eq!(
            r.headers()["content-type"].to_str().unwrap(),
            "application/x-ndjson"
        );
    }
    let live = r
        .headers()
        .get("x-secaudit-session-live")
        .map(|v| v.to_str().unwrap().to_string());
    (status, live, r.text().await.unwrap())
}

/// The first visible secret's raw value and file (`/state?reveal=true`),
/// once a step (the scanner) has made one visible.
async fn first_revealed(c: &reqwest::Client, base: &str, sid: &str) -> (String, String) {
    let st: Value = c
        .get(format!("{base}/state"))
        .query(&[("session_id", sid), ("reveal", "true")])
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let secret = st["revealed"][0]["value"]
        .as_str()
        .unwrap_or_else(|| panic!("a visible secret after the scanner: {st}"))
        .to_string();
    let file = st["observation"]["visible_secrets"][0]["file"]
        .as_str()
        .unwrap()
        .to_string();
    (secret, file)
}

fn lines(body: &str) -> Vec<Value> {
    body.lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_trajectory_survives_close_matches_the_episode_and_expires() {
    let data = tempfile::tempdir().unwrap();
    // Long enough for the restart below, short enough to wait out.
    const RETENTION_S: u64 = 20;
    let env = env_keeping(data.path(), RETENTION_S).await;
    let (addr, server) = util::serve(env).await;
    let base = format!("http://{addr}");
    let c = reqwest::Client::new();

    let r = post(&c, format!("{base}/reset"), json!({"task_id": 1})).await;
    let sid = r["session_id"].as_str().unwrap().to_string();
    // A planted value the agent has seen: the scanner makes one visible.
    let mut sent: Vec<String> = Vec::new();
    let mut replies: Vec<(f64, bool)> = Vec::new();
    let mut step = |cmd: String| {
        let (c, base, sid) = (c.clone(), base.clone(), sid.clone());
        sent.push(cmd.clone());
        async move {
            let r = post(
                &c,
                format!("{base}/step"),
                json!({"session_id": sid, "action": cmd}),
            )
            .await;
            (r["reward"].as_f64().unwrap(), r["done"].as_bool().unwrap())
        }
    };
    replies.push(step("run_scanner".into()).await);
    let (secret, file) = first_revealed(&c, &base, &sid).await;
    assert!(secret.len() >= 8, "{secret}");
    // Its value in an action and in the output.
    replies.push(step(format!("cat {file}")).await);
    replies.push(step(format!("grep -c '{secret}' {file} || true")).await);
    replies.push(step("git status --short".into()).await);

    // Live: every line so far.
    let (status, live, body) = trajectory(&c, &base, &sid).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(live.as_deref(), Some("true"));
    assert_eq!(lines(&body).len(), 1 + sent.len(), "{body}");

    post(&c, format!("{base}/close"), json!({"session_id": sid})).await;
    let (status, live, body) = trajectory(&c, &base, &sid).await;
    assert_eq!(status, 200, "retained after close: {body}");
    assert_eq!(live.as_deref(), Some("false"));
    assert!(
        !body.contains(&secret),
        "the planted value {secret:?} is in the served trajectory"
    );
    let events = lines(&body);
    assert_eq!(events[0]["event"], "reset");
    assert_eq!(events[0]["task_id"], 1);
    let steps: Vec<&Value> = events.iter().filter(|e| e["event"] == "step").collect();
    assert_eq!(steps.len(), sent.len(), "{body}");
    for (i, ((s, cmd), (reward, done))) in steps.iter().zip(&sent).zip(&replies).enumerate() {
        assert_eq!(s["step"], i as u64 + 1, "{s}");
        assert_eq!(s["reward"].as_f64(), Some(*reward), "step {}: {s}", i + 1);
        assert_eq!(s["done"].as_bool(), Some(*done), "step {}", i + 1);
        let recorded = s["action"].as_str().unwrap();
        if cmd.contains(&secret) {
            assert_ne!(recorded, cmd, "the secret-bearing action is redacted");
        } else {
            assert_eq!(recorded, cmd);
        }
        assert_eq!(s["observation"]["steps_taken"], i as u64 + 1);
    }
    assert_eq!(steps[1]["observation"]["last_action"]["exit_code"], 0);

    // Unknown, malformed and missing ids.
    let (fresh, upper) = (
        server::env::trajectory::new_session_id(),
        sid.to_uppercase(),
    );
    for bad in [fresh.as_str(), "../sessions", upper.as_str()] {
        let (status, _, body) = trajectory(&c, &base, bad).await;
        assert_eq!(status, 404, "{bad}: {body}");
    }
    let r = c.get(format!("{base}/trajectory")).send().await.unwrap();
    assert_eq!(r.status().as_u16(), 400);

    // A restarted server: the closed session is not resumed, and its
    // trajectory is still served.
    server.abort();
    let _ = server.await;
    let env = env_keeping(data.path(), RETENTION_S).await;
    assert_eq!(env.active_sessions(), 0, "a closed session came back");
    let (addr, _server) = util::serve(env).await;
    let base = format!("http://{addr}");
    let (status, _, again) = trajectory(&c, &base, &sid).await;
    assert_eq!((status, again == body), (200, true), "{again}");

    // After the retention: gone.
    let deadline = std::time::Instant::now() + Duration::from_secs(RETENTION_S + 10);
    loop {
        let (status, _, _) = trajectory(&c, &base, &sid).await;
        if status == 404 {
            break;
        }
        assert_eq!(status, 200);
        assert!(
            std::time::Instant::now() < deadline,
            "still served {RETENTION_S} s after close"
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

/// Every string of a parsed value, one per line (how the grader's rule is
/// applied to a served line: JSON escapes undone).
fn strings_of(v: &Value, out: &mut String) {
    match v {
        Value::String(s) => {
            out.push_str(s);
            out.push('\n');
        }
        Value::Array(a) => a.iter().for_each(|x| strings_of(x, out)),
        Value::Object(m) => m.iter().for_each(|(k, x)| {
            out.push_str(k);
            out.push('\n');
            strings_of(x, out);
        }),
        _ => {}
    }
}

/// A command can print a planted value in any form (base64, wrapped or
/// not, hex, reversed, rot13, spaced, folded, URL-encoded, compressed then
/// encoded), or carry it encoded in the action itself. Whatever the
/// security grader would still count as the value is absent from the
/// served trajectory, judged by the grader's own rule; the lines without
/// it are kept.
#[tokio::test(flavor = "multi_thread")]
async fn encoded_planted_values_never_reach_a_trajectory() {
    use base64::Engine;
    let data = tempfile::tempdir().unwrap();
    let env = env_keeping(data.path(), 600).await;
    let (addr, _server) = util::serve(env).await;
    let base = format!("http://{addr}");
    let c = reqwest::Client::new();
    // Task 6 (20 steps): room for every form below in its own step.
    let r = post(&c, format!("{base}/reset"), json!({"task_id": 6})).await;
    let sid = r["session_id"].as_str().unwrap().to_string();
    let step = |cmd: String| {
        let (c, base, sid) = (c.clone(), base.clone(), sid.clone());
        async move {
            post(
                &c,
                format!("{base}/step"),
                json!({"session_id": sid, "action": cmd}),
            )
            .await
        }
    };
    step("run_scanner".into()).await;
    let (secret, file) = first_revealed(&c, &base, &sid).await;
    // The grader reads only the id and the value (the rest is the ground
    // truth's description of where it was planted).
    let index = graders::security::PlantedIndex::new(&[graders::security::Planted {
        id: "s".into(),
        value: secret.clone(),
        history_only: false,
        secret_type: "generic_secret".into(),
        file: file.clone(),
        line: 1,
        tier: graders::planted::Tier::Surface,
        encoding: None,
        reveals: vec![],
        blocks: vec![],
    }]);
    let b64 = base64::engine::general_purpose::STANDARD.encode(secret.as_bytes());
    let commands = [
        format!("base64 {file}"),
        format!("base64 -w0 {file}"),
        format!("xxd -p {file}"),
        format!("od -An -c {file}"),
        format!("rev {file}"),
        format!("tr 'A-Za-z' 'N-ZA-Mn-za-m' < {file}"),
        format!("sed 's/./& /g' {file}"),
        format!("fold -w 7 {file}"),
        format!("gzip -c {file} | base64"),
        format!(
            "python3 -c 'import sys,urllib.parse;print(urllib.parse.quote(open(sys.argv[1]).read()))' {file}"
        ),
        format!("echo {b64} # an encoded value in the action itself"),
    ];
    for cmd in &commands {
        let r = step(cmd.clone()).await;
        let mut seen = String::new();
        strings_of(&r, &mut seen);
        assert!(
            index.carries(seen.as_bytes()),
            "the agent's own reply to {cmd:?} should carry the value (else this checks nothing): {r}"
        );
    }
    step("echo a line that stays".into()).await;
    let (status, _, body) = trajectory(&c, &base, &sid).await;
    assert_eq!(status, 200, "{body}");
    let events = lines(&body);
    assert_eq!(events.len(), 1 + 1 + commands.len() + 1, "{body}");
    for e in &events {
        let mut all = String::new();
        strings_of(e, &mut all);
        assert!(
            !index.carries(all.as_bytes()),
            "a served line still carries the planted value: {e}"
        );
        assert!(
            e["event"].is_string() && e["reward"].is_number() || e["event"] == "reset",
            "{e}"
        );
    }
    let last = events.last().unwrap();
    assert_eq!(last["action"], "echo a line that stays");
    assert!(
        last["observation"]["last_action"]["stdout"]
            .as_str()
            .is_some_and(|o| o.contains("a line that stays")),
        "{last}"
    );
}

/// `eval --json` carries every step; `export trajectories` makes the same
/// episode line from it and from the server's recording.
#[tokio::test(flavor = "multi_thread")]
async fn eval_steps_and_both_exports_agree() {
    let data = tempfile::tempdir().unwrap();
    let env = env_keeping(data.path(), 600).await;
    let (addr, _server) = util::serve(env).await;
    let url = format!("http://{addr}");
    let out = tempfile::tempdir().unwrap();
    let report_path = out.path().join("eval.json");
    let data_dir = data.path().to_str().unwrap();
    let r = cli(
        "eval",
        &[
            "--agent",
            "oracle",
            "--tasks",
            "1",
            "--data-dir",
            data_dir,
            "--json",
            report_path.to_str().unwrap(),
        ],
        &url,
        None,
        300,
    )
    .await;
    assert_eq!(r.code, 0, "{}", r.stderr);
    let report = crate::agent::read_report(&report_path);
    let run = &report.tasks[0].runs[0];
    assert_eq!(run.transitions.len() as u32, run.steps);
    assert_eq!(
        run.transitions.iter().map(|t| t.reward).collect::<Vec<_>>(),
        run.rewards
    );
    let last = run.transitions.last().expect("steps");
    assert!(last.done && last.result.score == Some(1.0), "{last:?}");
    assert_eq!(
        (last.result.security, last.result.health),
        (Some(1.0), Some(1.0))
    );
    assert!(run.prompt.as_deref().is_some_and(|p| p.len() > 20));
    let sid = run.session_id.clone().expect("session id in the run");

    let from_eval = out.path().join("eval.jsonl");
    let from_server = out.path().join("server.jsonl");
    for (args, path) in [
        (
            vec!["trajectories", "--from-eval", report_path.to_str().unwrap()],
            &from_eval,
        ),
        (
            vec!["trajectories", "--server", url.as_str(), "--session", &sid],
            &from_server,
        ),
    ] {
        let mut args = args;
        args.extend(["--out", path.to_str().unwrap()]);
        let r = cli("export", &args, &url, None, 60).await;
        assert_eq!(r.code, 0, "export {args:?}: {}", r.stderr);
    }
    let read = |p: &std::path::Path| -> Episode {
        let text = std::fs::read_to_string(p).unwrap();
        assert_eq!(text.lines().count(), 1, "{text}");
        serde_json::from_str(text.trim()).unwrap()
    };
    let (a, b) = (read(&from_eval), read(&from_server));
    assert_eq!(
        (a.format.as_str(), b.format.as_str()),
        (EXPORT_FORMAT, EXPORT_FORMAT)
    );
    assert_eq!((a.source.as_str(), b.source.as_str()), ("eval", "server"));
    assert_eq!(a.rewards, b.rewards);
    assert_eq!(a.rewards, run.rewards);
    assert_eq!(a.actions.len(), b.actions.len());
    assert_eq!((a.final_score, b.final_score), (1.0, 1.0));
    assert!(a.success && b.success);
    assert_eq!((a.task_id, b.task_id), (1, 1));
    assert_eq!(a.prompt, b.prompt);
    assert_eq!(a.session_id.as_deref(), Some(sid.as_str()));
    for (x, y) in a.observations.iter().zip(&b.observations) {
        assert_eq!(
            (x.result.score, x.done, x.result.leaks_current),
            (y.result.score, y.done, y.result.leaks_current)
        );
    }
    // An unknown session is an error, not an empty line.
    let r = cli(
        "export",
        &[
            "trajectories",
            "--server",
            &url,
            "--session",
            &server::env::trajectory::new_session_id(),
            "--out",
            out.path().join("none.jsonl").to_str().unwrap(),
        ],
        &url,
        None,
        60,
    )
    .await;
    assert_ne!(r.code, 0);
    assert!(r.stderr.contains("404"), "{}", r.stderr);
}

/// The planted values of canonical task `task` (its `task.json`).
fn planted_values(task: u32) -> Vec<String> {
    let dir = match task {
        1..=5 => "easy",
        6..=10 => "medium",
        _ => "hard",
    };
    let p = util::root().join(format!("tasks/{dir}/task_{task:02}/task.json"));
    let t: Value = serde_json::from_slice(&std::fs::read(&p).unwrap()).unwrap();
    t["secrets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["value"].as_str().unwrap().to_string())
        .collect()
}

/// Every text a reader of `out` recovers with standard tools: `out`
/// itself, without whitespace, reversed, rot13, and the
/// hex, base64 and percent decodings of its runs.
fn decodings(out: &str) -> Vec<String> {
    use base64::Engine;
    let squeezed: String = out.chars().filter(|c| !c.is_whitespace()).collect();
    let rot13 = |s: &str| -> String {
        s.chars()
            .map(|c| match c {
                'a'..='z' => (((c as u8 - b'a') + 13) % 26 + b'a') as char,
                'A'..='Z' => (((c as u8 - b'A') + 13) % 26 + b'A') as char,
                _ => c,
            })
            .collect()
    };
    let mut d = vec![
        out.to_string(),
        out.chars().rev().collect(),
        squeezed.clone(),
        squeezed.chars().rev().collect(),
        rot13(out),
    ];
    let lossy = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    let runs = |ok: fn(char) -> bool| -> Vec<String> {
        squeezed
            .split(|c: char| !ok(c))
            .filter(|r| r.len() >= 16)
            .map(str::to_string)
            .collect()
    };
    for r in runs(|c| c.is_ascii_hexdigit()) {
        for k in 0..2 {
            let s = &r[k..];
            if let Ok(b) = hex::decode(&s[..s.len() / 2 * 2]) {
                d.push(lossy(&b));
            }
        }
    }
    for r in runs(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '/' | '=' | '-' | '_')) {
        let r = r.trim_end_matches('=');
        for k in 0..4 {
            let s = &r[k.min(r.len())..];
            let s = &s[..s.len() / 4 * 4];
            for e in [
                base64::engine::general_purpose::STANDARD_NO_PAD,
                base64::engine::general_purpose::URL_SAFE_NO_PAD,
            ] {
                if let Ok(b) = e.decode(s) {
                    d.push(lossy(&b));
                }
            }
        }
    }
    let mut pct = Vec::new();
    let b = out.as_bytes();
    let mut i = 0;
    while i < b.len() {
        match (b[i], b.get(i + 1..i + 3)) {
            (b'%', Some(h)) if h.iter().all(u8::is_ascii_hexdigit) => {
                pct.push(u8::from_str_radix(std::str::from_utf8(h).unwrap(), 16).unwrap());
                i += 3;
            }
            (c, _) => {
                pct.push(c);
                i += 1;
            }
        }
    }
    d.push(lossy(&pct));
    d
}

/// Hack (trajectory egress): a served trajectory holds no planted value in
/// any form an agent's command prints it in, not only verbatim. A key file
/// `cat` prints (its newlines JSON-escaped in the recording), a value
/// planted hex-encoded, and the `base64`, `xxd -p`, `rev`, rot13, `fold`,
/// spaced and percent-encoded prints of a file are all recovered by
/// [`decodings`] unless redacted. Any 24 contiguous bytes of a value
/// recovered is a leak: stricter than the grader's fragment rule (half of
/// a random token), because a recording is read by people, and 24 of an
/// AWS secret key's 40 characters, or a private key's body in pieces, is
/// more of the secret than a published trajectory may carry. (`tr a-z
/// A-Z` is printed too, but an upper-cased value is not counted: the case
/// of each letter is lost.)
#[tokio::test(flavor = "multi_thread")]
async fn hack_trajectory_redacts_every_printed_form_of_a_planted_value() {
    let data = tempfile::tempdir().unwrap();
    let env = env_keeping(data.path(), 600).await;
    let (addr, _server) = util::serve(env).await;
    let base = format!("http://{addr}");
    let c = reqwest::Client::new();
    let mut leaks = Vec::new();
    let quote = "python3 -c 'import sys,urllib.parse;print(urllib.parse.quote(open(sys.argv[1]).read(),safe=\"\"))'";
    for (task, file) in [
        (1, "archiver/settings.py"),
        (8, "keys/warehouse-sa.pem"),
        (8, "config/warehouse.toml"),
    ] {
        let values = planted_values(task);
        // Runs of 24 bytes of every value, whitespace and a key's public
        // armour lines (`-----BEGIN PRIVATE KEY-----`) removed.
        let needles: Vec<String> = values
            .iter()
            .flat_map(|v| {
                let s: Vec<char> = v
                    .lines()
                    .filter(|l| !l.starts_with("-----"))
                    .flat_map(str::chars)
                    .filter(|c| !c.is_whitespace())
                    .collect();
                (0..s.len().saturating_sub(23))
                    .step_by(8)
                    .map(move |i| s[i..i + 24].iter().collect::<String>())
                    .collect::<Vec<_>>()
            })
            .collect();
        let r = post(&c, format!("{base}/reset"), json!({"task_id": task})).await;
        let sid = r["session_id"].as_str().unwrap().to_string();
        let cmds = [
            format!("cat {file}"),
            format!("base64 {file}"),
            format!("xxd -p {file}"),
            format!("rev {file}"),
            format!("tr a-z A-Z < {file}"),
            format!("tr A-Za-z N-ZA-Mn-za-m < {file}"),
            format!("fold -w7 {file}"),
            format!("sed 's/./& /g' {file}"),
            format!("{quote} {file}"),
        ];
        for cmd in &cmds {
            let o = post(
                &c,
                format!("{base}/step"),
                json!({"session_id": sid, "action": cmd}),
            )
            .await;
            assert_eq!(
                o["observation"]["last_action"]["exit_code"], 0,
                "{cmd}: {o}"
            );
        }
        let (status, _, body) = trajectory(&c, &base, &sid).await;
        assert_eq!(status, 200, "{body}");
        let steps: Vec<Value> = lines(&body)
            .into_iter()
            .filter(|e| e["event"] == "step")
            .collect();
        assert_eq!(steps.len(), cmds.len(), "{body}");
        for (cmd, s) in cmds.iter().zip(&steps) {
            let out = s["observation"]["last_action"]["stdout"]
                .as_str()
                .unwrap_or_else(|| panic!("{cmd}: no stdout in {s}"));
            assert!(!out.is_empty(), "{cmd}: printed nothing");
            let decoded = decodings(out);
            for n in &needles {
                if decoded.iter().any(|d| d.contains(n.as_str())) {
                    leaks.push(format!("task {task} `{cmd}`: {n:?} in {out:?}"));
                    break;
                }
            }
        }
        post(&c, format!("{base}/close"), json!({"session_id": sid})).await;
    }
    assert!(
        leaks.is_empty(),
        "planted values recoverable from the served trajectory:\n{}",
        leaks.join("\n")
    );
}
