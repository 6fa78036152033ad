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
    let (env, _data) = util::env_with(8).await;
    let oracle = env.oracle(1, None).await.expect("oracle");
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
