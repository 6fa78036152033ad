//! The debug page at /web, driven in headless Chromium through WebDriver:
//! start a task, send a command, see metrics and history update, run task
//! 1's oracle through the command box and see reward 1.000, save a
//! screenshot. Without Chromium this test fails (it never passes silently).

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
    let (addr, _server) = util::serve(env).await;

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
    cmd.send_keys("ls -la\u{E007}").await.unwrap(); // U+E007 = Enter
    wait_text(&c, "#m-steps", |t| t == "1/10").await;
    assert!(
        text_of(&c, "#history").await.contains("ls -la"),
        "history shows the command"
    );
    assert!(!text_of(&c, "#stdout").await.is_empty(), "stdout shown");

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
    let png = c.screenshot().await.expect("screenshot");
    let out = util::root().join("target").join("web-debug-page.png");
    std::fs::write(&out, png).expect("save screenshot");
    c.close().await.ok();
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
