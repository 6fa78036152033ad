//! The debug page at /web, driven in headless Chromium through WebDriver:
//! start a task (its title on the button, its description on the page),
//! send a command, see metrics and history update, run task 1's oracle
//! through the command box and see reward 1.000; the chart has labelled
//! axes, the conflict map a legend, the ranked actions are unique; at 1280
//! and 1920 px nothing extends past the viewport (screenshots under
//! target/); starting another task closes the session the page opened, and
//! the session list closes and replays sessions, and leaving the page
//! closes what it left open. Without Chromium this test
//! fails (it never passes silently).

use crate::util;
use fantoccini::{ClientBuilder, Locator};
use std::time::Duration;

const CHROMIUM: &str = "/usr/bin/chromium";
const CHROMEDRIVER: &str = "/usr/bin/chromedriver";

struct Driver(std::process::Child);
impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

async fn text_of(c: &fantoccini::Client, css: &str) -> String {
    c.find(Locator::Css(css))
        .await
        .expect(css)
        .text()
        .await
        .expect("text")
}

async fn wait_text(c: &fantoccini::Client, css: &str, want: impl Fn(&str) -> bool) -> String {
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    loop {
        if let Ok(e) = c.find(Locator::Css(css)).await
            && let Ok(t) = e.text().await
            && want(&t)
        {
            return t;
        }
        if std::time::Instant::now() > deadline {
            panic!(
                "timed out waiting on {css}: now {:?}; error box {:?}; steps {:?}; done {:?}; history {:?}",
                c.find(Locator::Css(css)).await.ok().map(|_| ()),
                text_of(c, "#error").await,
                text_of(c, "#m-steps").await,
                text_of(c, "#done").await,
                text_of(c, "#history").await
            );
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn debug_page_runs_an_episode_in_chromium() {
    assert!(
        std::path::Path::new(CHROMIUM).exists() && std::path::Path::new(CHROMEDRIVER).exists(),
        "Chromium/ChromeDriver missing: run scripts/setup.sh (apt packages chromium, chromium-driver)"
    );
    let (env, data) = util::env_with(8).await;
    let oracle = env.oracle(1, None).await.expect("oracle");
    let values: Vec<String> = truth(data.path(), 1)
        .iter()
        .map(|s| s.value.clone())
        .collect();
    let tasks = env.tasks();
    let (addr, _server) = util::serve(env).await;
    let http = reqwest::Client::builder()
        .timeout(Duration::from_secs(120))
        .build()
        .unwrap();
    // 404 once a session is closed, 200 while it lives.
    let state_status = |sid: String| {
        let req = http.get(format!("http://{addr}/state?session_id={sid}"));
        async move { req.send().await.expect("GET /state").status().as_u16() }
    };

    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let _driver = Driver(
        std::process::Command::new(CHROMEDRIVER)
            .arg(format!("--port={port}"))
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("start chromedriver"),
    );
    // Both ring and aws-lc are linked (reqwest, fantoccini); rustls then
    // needs the process-wide provider named once.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let profile = tempfile::tempdir().unwrap();
    let caps: serde_json::Map<String, serde_json::Value> = serde_json::from_value(serde_json::json!({
        "goog:chromeOptions": {
            "binary": CHROMIUM,
            "args": ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                     "--disable-background-networking", "--disable-component-update", "--disable-sync",
                     "--window-size=1400,1000", format!("--user-data-dir={}", profile.path().display())]
        }
    }))
    .unwrap();
    let mut client = None;
    for _ in 0..50 {
        match ClientBuilder::rustls()
            .expect("rustls connector")
            .capabilities(caps.clone())
            .connect(&format!("http://127.0.0.1:{port}"))
            .await
        {
            Ok(c) => {
                client = Some(c);
                break;
            }
            Err(_) => tokio::time::sleep(Duration::from_millis(200)).await,
        }
    }
    let c = client.expect("connect to chromedriver");
    c.goto(&format!("http://{addr}/web"))
        .await
        .expect("open /web");
    c.wait()
        .for_element(Locator::Css("button[data-task='1']"))
        .await
        .expect("task buttons")
        .click()
        .await
        .unwrap();
    wait_text(&c, "#m-steps", |t| t == "0/10").await;
    assert_eq!(text_of(&c, "#m-reward").await, "0.000");

    // Task buttons say what the task is; the selected task's description
    // is text on the page, not only inside the raw JSON.
    let t1 = tasks.iter().find(|t| t.id == 1).expect("task 1");
    let btn = text_of(&c, "button[data-task='1']").await;
    assert!(
        btn.contains(&t1.title) && btn.contains(&format!("{:?}", t1.difficulty).to_lowercase()),
        "button shows title and difficulty: {btn:?}"
    );
    assert!(!t1.description.is_empty());
    let desc = text_of(&c, "#taskdesc").await;
    assert_eq!(desc.trim(), t1.description.trim(), "description shown");
    let sid1: String = c
        .execute("return sid;", vec![])
        .await
        .unwrap()
        .as_str()
        .expect("sid")
        .to_string();
    assert_eq!(state_status(sid1.clone()).await, 200);

    // Per-row reveal: masked until clicked, then the raw value (fetched
    // through GET /state?reveal=true), masked again on "hide".
    let masked = text_of(&c, "code.val[data-id='s1']").await;
    assert!(masked.contains('*'), "masked by default: {masked:?}");
    assert!(
        !masked.contains(&values[0]),
        "no raw value before the click"
    );
    c.find(Locator::Css("button.reveal[data-id='s1']"))
        .await
        .expect("reveal button of s1")
        .click()
        .await
        .unwrap();
    let raw = wait_text(&c, "code.val[data-id='s1']", |t| !t.contains('*')).await;
    assert_eq!(raw, values[0], "the click shows s1's raw value");
    c.find(Locator::Css("button.unreveal[data-id='s1']"))
        .await
        .expect("hide button of s1")
        .click()
        .await
        .unwrap();
    assert_eq!(text_of(&c, "code.val[data-id='s1']").await, masked);

    let cmd = c.find(Locator::Id("cmd")).await.unwrap();
    // A long unbreakable word (agents send base64 and sed one-liners) is
    // what pushed the history table past the right-hand column.
    let long = format!("ls -la #{}", "x".repeat(150));
    cmd.send_keys(&format!("{long}\u{E007}")).await.unwrap(); // U+E007 = Enter
    wait_text(&c, "#m-steps", |t| t == "1/10").await;
    assert!(
        text_of(&c, "#history").await.contains("ls -la"),
        "history shows the command"
    );
    assert!(!text_of(&c, "#stdout").await.is_empty(), "stdout shown");
    let ranked = c
        .execute(
            "return [...document.querySelectorAll('#ranked button')].map(b => b.textContent);",
            vec![],
        )
        .await
        .unwrap();
    let ranked: Vec<String> = serde_json::from_value(ranked).unwrap();
    assert!(!ranked.is_empty());
    let mut uniq = ranked.clone();
    uniq.sort();
    uniq.dedup();
    assert_eq!(
        uniq.len(),
        ranked.len(),
        "ranked actions unique: {ranked:?}"
    );

    for (i, a) in oracle.iter().enumerate() {
        let cmd = c.find(Locator::Id("cmd")).await.unwrap();
        // Set the value directly: multi-line heredocs cannot be typed.
        c.execute(
            "document.getElementById('cmd').value = arguments[0];",
            vec![serde_json::json!(a)],
        )
        .await
        .unwrap();
        cmd.send_keys("\u{E007}").await.unwrap();
        let want = format!("{}/10", i + 2);
        wait_text(&c, "#m-steps", |t| t == want).await;
        if !text_of(&c, "#done").await.is_empty() {
            break;
        }
    }
    wait_text(&c, "#m-reward", |t| t == "1.000").await;
    assert!(text_of(&c, "#done").await.contains("SUCCESS"));
    let steps_done: u64 = text_of(&c, "#m-steps")
        .await
        .split('/')
        .next()
        .unwrap()
        .parse()
        .unwrap();

    // The chart's axes: labelled "step" and "reward", y ticked 0..1, one
    // x tick per step (up to ten).
    let axes = c
        .execute(
            "const q = s => [...document.querySelectorAll(s)].map(e => e.textContent); \
             return {labels: q('#chart .axis-label'), y: q('#chart .y-axis .tick'), x: q('#chart .x-axis .tick')};",
            vec![],
        )
        .await
        .unwrap();
    assert_eq!(
        axes["labels"],
        serde_json::json!(["reward", "step"]),
        "{axes}"
    );
    assert_eq!(
        axes["y"],
        serde_json::json!(["0.00", "0.25", "0.50", "0.75", "1.00"])
    );
    assert_eq!(
        axes["x"].as_array().unwrap().len() as u64,
        steps_done.min(10),
        "{axes}"
    );
    let legend = text_of(&c, "#legend").await;
    for w in ["open", "fixed", "blocked", "blocks", "reveals"] {
        assert!(legend.contains(w), "legend explains {w}: {legend:?}");
    }

    check_layout(&c, "task1-done").await;

    // Starting another task closes the session the page opened before.
    c.find(Locator::Css("button[data-task='8']"))
        .await
        .expect("task 8 button")
        .click()
        .await
        .unwrap();
    wait_text(&c, "#sessions", |t| t.lines().count() >= 2).await;
    assert_eq!(
        state_status(sid1.clone()).await,
        404,
        "first session closed"
    );
    let sid2: String = c
        .execute("return sid;", vec![])
        .await
        .unwrap()
        .as_str()
        .unwrap()
        .to_string();
    assert_ne!(sid1, sid2);
    assert_eq!(state_status(sid2.clone()).await, 200);
    // Task 8 shows a private key (the longest masked value) and long paths.
    wait_text(&c, "#m-steps", |t| t == "0/20").await;
    check_layout(&c, "task8-reset").await;
    let row1 = format!("#sessions tr[data-sid='{sid1}']");
    assert!(
        text_of(&c, &format!("{row1} .state"))
            .await
            .contains("closed")
    );

    // Replay the closed session's recorded steps: reset, then `ls -la`,
    // then on to the last step with reward 1.000.
    c.find(Locator::Css(&format!("button[data-replay='{sid1}']")))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    wait_text(&c, "#replaypos", |t| {
        t.ends_with(&format!("step 0/{steps_done}"))
    })
    .await;
    assert_eq!(text_of(&c, "#m-steps").await, "0/10");
    assert!(text_of(&c, "#session").await.contains("REPLAY"));
    c.find(Locator::Id("rp-next"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    wait_text(&c, "#m-steps", |t| t == "1/10").await;
    assert!(text_of(&c, "#history").await.contains("ls -la"));
    for _ in 1..steps_done {
        c.find(Locator::Id("rp-next"))
            .await
            .unwrap()
            .click()
            .await
            .unwrap();
    }
    wait_text(&c, "#replaypos", |t| {
        t.ends_with(&format!("step {steps_done}/{steps_done}"))
    })
    .await;
    assert_eq!(text_of(&c, "#m-reward").await, "1.000");
    assert!(text_of(&c, "#done").await.contains("SUCCESS"));

    // Close the live one from the list.
    c.find(Locator::Css(&format!("button[data-close='{sid2}']")))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    wait_text(
        &c,
        &format!("#sessions tr[data-sid='{sid2}'] .state"),
        |t| t.contains("closed"),
    )
    .await;
    assert_eq!(state_status(sid2).await, 404, "closed from the list");

    // Leaving the page closes the session it left open.
    c.find(Locator::Css("button[data-task='1']"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    wait_text(&c, "#sessions", |t| t.lines().count() >= 3).await;
    let sid3: String = c
        .execute("return sid;", vec![])
        .await
        .unwrap()
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(state_status(sid3.clone()).await, 200);
    c.goto("about:blank").await.expect("leave the page");
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while state_status(sid3.clone()).await != 404 {
        assert!(
            std::time::Instant::now() < deadline,
            "session {sid3} still open 10 s after the page was left"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    c.close().await.ok();
}

/// At 1280 and 1920 px wide, nothing (the right-hand column above all)
/// extends past the viewport's right edge, and the page does not scroll
/// sideways. Screenshots are kept as target/web-debug-page-{tag}-{width}.png.
async fn check_layout(c: &fantoccini::Client, tag: &str) {
    for width in [1280u32, 1920] {
        c.set_window_size(width, 1000).await.expect("resize");
        tokio::time::sleep(Duration::from_millis(300)).await;
        let m = c
            .execute(
                "let worst = null, right = 0; \
                 for (const e of document.querySelectorAll('main section, main section *')) { \
                   const r = e.getBoundingClientRect(); \
                   if (r.width && r.right > right) { right = r.right; worst = e.tagName + '#' + e.id + '.' + e.className; } } \
                 return {inner: innerWidth, scroll: document.documentElement.scrollWidth, right, worst};",
                vec![],
            )
            .await
            .unwrap();
        let inner = m["inner"].as_f64().unwrap();
        assert!(
            inner > f64::from(width) - 40.0,
            "window resized to {width}: {m}"
        );
        assert!(
            m["scroll"].as_f64().unwrap() <= inner,
            "{tag} {width} px: {m}"
        );
        assert!(
            m["right"].as_f64().unwrap() <= inner,
            "{tag} {width} px: {m}"
        );
        let png = c.screenshot().await.expect("screenshot");
        let out = util::root()
            .join("target")
            .join(format!("web-debug-page-{tag}-{width}.png"));
        std::fs::write(&out, png).expect("save screenshot");
    }
}

/// One planted secret of a generated task's ground truth.
struct Planted {
    id: String,
    tier: String,
    value: String,
}

/// The planted secrets of canonical task `task`, from the ground truth the
/// environment generated into its data dir.
fn truth(data: &std::path::Path, task: u32) -> Vec<Planted> {
    let p = data.join(format!("tasks/task_{task:02}/truth.json"));
    let t: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&p).expect("truth.json")).expect("JSON");
    t["secrets"]
        .as_array()
        .expect("secrets")
        .iter()
        .map(|s| Planted {
            id: s["id"].as_str().expect("id").into(),
            tier: s["tier"].as_str().expect("tier").into(),
            value: s["value"].as_str().expect("value").into(),
        })
        .collect()
}

/// `GET /state?reveal=true` over HTTP on task 7 (two hidden-tier secrets):
/// raw values come only on the explicit opt-in, exactly for the secrets in
/// `visible_secrets`, and no value of a secret still hidden appears
/// anywhere in the reply, before or after exploration reveals more.
/// Without the opt-in (or with `reveal=false`) there is no `revealed` key,
/// a malformed flag is a 400, and nothing raw reaches the recording.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn state_reveal_returns_only_visible_raw_values() {
    let (env, data) = util::env_with(4).await;
    let planted = truth(data.path(), 7);
    assert!(planted.iter().filter(|s| s.tier == "hidden").count() >= 2);
    let (addr, _server) = util::serve(env).await;
    let base = format!("http://{addr}");
    let http = reqwest::Client::builder()
        .timeout(Duration::from_secs(120))
        .build()
        .unwrap();
    let r: serde_json::Value = http
        .post(format!("{base}/reset"))
        .json(&serde_json::json!({"task_id": 7}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let sid = r["session_id"].as_str().expect("session_id").to_string();
    let get = |q: String| {
        let req = http.get(format!("{base}/state?session_id={sid}{q}"));
        async move {
            let r = req.send().await.expect("GET /state");
            let status = r.status();
            (status, r.text().await.expect("body"))
        }
    };
    for q in ["", "&reveal=false"] {
        let (st, body) = get(q.to_string()).await;
        assert_eq!(st, 200, "{body}");
        let v: serde_json::Value = serde_json::from_str(&body).unwrap();
        assert!(v.get("revealed").is_none(), "{q:?}: no raw values unasked");
        for s in &planted {
            assert!(
                !body.contains(&s.value),
                "{q:?}: raw value of {} in {body}",
                s.id
            );
        }
    }
    let (st, body) = get("&reveal=yes".into()).await;
    assert_eq!(st, 400, "a malformed flag is rejected: {body}");

    let check = |body: &str| -> Vec<String> {
        let v: serde_json::Value = serde_json::from_str(body).unwrap();
        let visible: Vec<String> = v["observation"]["visible_secrets"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["id"].as_str().unwrap().to_string())
            .collect();
        let revealed = v["revealed"].as_array().expect("revealed on opt-in");
        let ids: Vec<String> = revealed
            .iter()
            .map(|r| r["id"].as_str().unwrap().to_string())
            .collect();
        assert_eq!(ids, visible, "exactly the visible secrets are revealed");
        for s in &planted {
            let shown = revealed.iter().find(|r| r["id"] == s.id.as_str());
            if visible.contains(&s.id) {
                assert_eq!(shown.unwrap()["value"], s.value.as_str(), "{}", s.id);
            } else {
                assert!(
                    !body.contains(&s.value),
                    "value of not-yet-visible {} ({}) revealed",
                    s.id,
                    s.tier
                );
            }
        }
        visible
    };
    let (st, body) = get("&reveal=true".into()).await;
    assert_eq!(st, 200, "{body}");
    let first = check(&body);
    assert!(!first.is_empty(), "task 7 starts with a visible secret");
    assert!(first.len() < planted.len(), "and with some still hidden");

    let hidden: Vec<&Planted> = planted.iter().filter(|s| s.tier == "hidden").collect();
    for s in &hidden {
        assert!(!first.contains(&s.id), "{} is not visible at reset", s.id);
    }

    // `run_scanner` reveals nothing; `scan_history` makes task 7's
    // history-only (hidden-tier) secrets visible, and only then are their
    // values revealed. Whatever is still not visible stays unrevealed.
    let mut seen = Vec::new();
    for a in ["run_scanner", "scan_history"] {
        let r = http
            .post(format!("{base}/step"))
            .json(&serde_json::json!({"session_id": sid, "action": a}))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200, "{a}");
        let (st, body) = get("&reveal=true".into()).await;
        assert_eq!(st, 200, "{body}");
        seen.push(check(&body));
    }
    assert_eq!(seen[0], first, "run_scanner reveals nothing");
    for s in &hidden {
        assert!(
            seen[1].contains(&s.id),
            "scan_history makes {} visible",
            s.id
        );
    }
    assert!(
        seen[1].len() < planted.len(),
        "the deep secret is still hidden"
    );

    let rec = std::fs::read_to_string(
        data.path()
            .join("sessions")
            .join(&sid)
            .join("recording.jsonl"),
    )
    .expect("recording");
    for s in &planted {
        assert!(
            !rec.contains(&s.value),
            "recording holds {}'s raw value",
            s.id
        );
    }
}
