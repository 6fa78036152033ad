//! HTTP clients for the environment and for an OpenAI-compatible chat API,
//! with bounded bodies and retries.
//!
//! Transport errors, 5xx and 429 are retried 3 times in all with exponential
//! backoff; any other 4xx is the caller's mistake and is returned at once
//! with the server's message, so a bad action shows up in the `[STEP]` line
//! instead of being hammered.

use anyhow::{Context, anyhow};
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use server::models::{Observation, TaskInfo};
use std::time::Duration;

/// Attempts per request.
pub const TRIES: u32 = 3;

/// Largest environment response accepted.
const ENV_BODY_LIMIT: usize = 16 * 1024 * 1024;

/// Largest model response accepted.
const MODEL_BODY_LIMIT: usize = 4 * 1024 * 1024;

/// Why a request failed.
#[derive(Debug)]
pub enum HttpError {
    /// The server answered with a 4xx other than 429: not retried.
    Rejected {
        /// HTTP status.
        status: u16,
        /// The `error.message` of the body, or the body itself.
        message: String,
    },
    /// Unreachable, timed out, or kept failing with 5xx/429.
    Unavailable(anyhow::Error),
}

impl std::fmt::Display for HttpError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            HttpError::Rejected { status, message } => write!(f, "HTTP {status}: {message}"),
            HttpError::Unavailable(e) => write!(f, "{e:#}"),
        }
    }
}

impl std::error::Error for HttpError {}

/// Backoff before retry `n` (1-based): 0.5 s, 1 s, 2 s ...
fn backoff(n: u32) -> Duration {
    Duration::from_millis(500u64 << (n - 1).min(6))
}

/// Reads at most `limit` bytes of a body.
async fn read_capped(mut resp: reqwest::Response, limit: usize) -> anyhow::Result<Vec<u8>> {
    let mut buf = Vec::new();
    while let Some(chunk) = resp.chunk().await? {
        if buf.len() + chunk.len() > limit {
            anyhow::bail!("response body larger than {limit} bytes");
        }
        buf.extend_from_slice(&chunk);
    }
    Ok(buf)
}

/// The message of a JSON error body (`{"error":{"message"}}`, OpenAI's
/// `{"error":{"message"}}` or `{"detail"}`), else the body's first bytes.
fn error_message(body: &[u8]) -> String {
    if let Ok(v) = serde_json::from_slice::<Value>(body) {
        for ptr in ["/error/message", "/error", "/detail", "/message"] {
            if let Some(Value::String(s)) = v.pointer(ptr) {
                return s.clone();
            }
        }
    }
    let s = String::from_utf8_lossy(body);
    super::normalize::cap(s.trim(), 500).to_string()
}

/// Sends the request `make` builds, retrying transport errors, 5xx and 429.
async fn send_with_retries(
    what: &str,
    limit: usize,
    make: impl Fn() -> reqwest::RequestBuilder,
) -> Result<Vec<u8>, HttpError> {
    let mut last: Option<anyhow::Error> = None;
    for attempt in 1..=TRIES {
        if attempt > 1 {
            let wait = backoff(attempt - 1);
            eprintln!(
                "agent: retrying {what} in {} ms (attempt {attempt}/{TRIES})",
                wait.as_millis()
            );
            tokio::time::sleep(wait).await;
        }
        match make().send().await {
            Err(e) => last = Some(anyhow!(e).context(format!("{what}: request failed"))),
            Ok(resp) => {
                let status = resp.status();
                let body = match read_capped(resp, limit).await {
                    Ok(b) => b,
                    Err(e) => {
                        last = Some(e.context(format!("{what}: reading the response")));
                        continue;
                    }
                };
                if status.is_success() {
                    return Ok(body);
                }
                let message = error_message(&body);
                if status.is_server_error() || status.as_u16() == 429 {
                    last = Some(anyhow!("{what}: HTTP {}: {message}", status.as_u16()));
                    continue;
                }
                return Err(HttpError::Rejected {
                    status: status.as_u16(),
                    message,
                });
            }
        }
    }
    Err(HttpError::Unavailable(
        last.unwrap_or_else(|| anyhow!("{what}: no attempt made"))
            .context(format!("{what}: gave up after {TRIES} tries")),
    ))
}

fn parse<T: DeserializeOwned>(what: &str, body: &[u8]) -> Result<T, HttpError> {
    serde_json::from_slice(body)
        .with_context(|| format!("{what}: unexpected response body: {}", error_message(body)))
        .map_err(HttpError::Unavailable)
}

/// The `/reset` and `/step` envelope.
#[derive(Debug, Clone, serde::Deserialize)]
pub struct StepResponse {
    /// The observation.
    pub observation: Observation,
    /// Reward of the step.
    pub reward: f64,
    /// Episode over.
    pub done: bool,
    /// Session id (also in the observation).
    #[serde(default)]
    pub session_id: Option<String>,
}

/// Client of the environment's HTTP API.
#[derive(Clone, Debug)]
pub struct EnvClient {
    http: reqwest::Client,
    base: String,
}

impl EnvClient {
    /// A client for `base` (e.g. `http://localhost:7860`). Step requests may
    /// take minutes (a 90 s command, then pytest), hence the long timeout.
    pub fn new(base: &str) -> anyhow::Result<Self> {
        let http = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(10))
            .timeout(Duration::from_secs(600))
            .build()?;
        Ok(EnvClient {
            http,
            base: base.trim_end_matches('/').to_string(),
        })
    }

    /// The server's base URL (for messages).
    pub fn base_url(&self) -> &str {
        &self.base
    }

    /// `POST /reset`.
    pub async fn reset(&self, task_id: u32, seed: Option<u64>) -> Result<StepResponse, HttpError> {
        let mut body = json!({ "task_id": task_id });
        if let Some(s) = seed {
            body["seed"] = json!(s);
        }
        let url = format!("{}/reset", self.base);
        let bytes = send_with_retries("env /reset", ENV_BODY_LIMIT, || {
            self.http.post(&url).json(&body)
        })
        .await?;
        parse("env /reset", &bytes)
    }

    /// `POST /step`. Retrying a step whose response was lost could run the
    /// command twice; commands are idempotent edits in practice, and a lost
    /// response is rarer than a restarting proxy, so we retry.
    pub async fn step(&self, session_id: &str, action: &str) -> Result<StepResponse, HttpError> {
        let body = json!({ "session_id": session_id, "action": action });
        let url = format!("{}/step", self.base);
        let bytes = send_with_retries("env /step", ENV_BODY_LIMIT, || {
            self.http.post(&url).json(&body)
        })
        .await?;
        parse("env /step", &bytes)
    }

    /// `POST /close`: ends the session and frees its slot and workspace on
    /// the server. One attempt (a session left open expires on the server's
    /// idle timeout anyway).
    pub async fn close(&self, session_id: &str) -> Result<(), HttpError> {
        let body = json!({ "session_id": session_id });
        let resp = self
            .http
            .post(format!("{}/close", self.base))
            .timeout(Duration::from_secs(30))
            .json(&body)
            .send()
            .await
            .map_err(|e| {
                HttpError::Unavailable(anyhow!(e).context("env /close: request failed"))
            })?;
        let status = resp.status();
        if status.is_success() {
            return Ok(());
        }
        let body = read_capped(resp, 64 * 1024).await.unwrap_or_default();
        Err(HttpError::Rejected {
            status: status.as_u16(),
            message: error_message(&body),
        })
    }

    /// `GET /tasks`.
    pub async fn tasks(&self) -> Result<Vec<TaskInfo>, HttpError> {
        let url = format!("{}/tasks", self.base);
        let bytes = send_with_retries("env /tasks", ENV_BODY_LIMIT, || self.http.get(&url)).await?;
        parse("env /tasks", &bytes)
    }
}

/// Client of an OpenAI-compatible chat completions API.
#[derive(Clone)]
pub struct ModelClient {
    http: reqwest::Client,
    base: String,
    token: Option<String>,
    /// Model name sent in every request.
    pub model: String,
}

impl std::fmt::Debug for ModelClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never print the token.
        f.debug_struct("ModelClient")
            .field("base", &self.base)
            .field("model", &self.model)
            .finish()
    }
}

impl ModelClient {
    /// A client for `base` (e.g. `https://router.huggingface.co/v1`).
    pub fn new(base: &str, token: Option<String>, model: &str) -> anyhow::Result<Self> {
        let http = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(10))
            .timeout(Duration::from_secs(180))
            .build()?;
        Ok(ModelClient {
            http,
            base: base.trim_end_matches('/').to_string(),
            token,
            model: model.to_string(),
        })
    }

    /// One chat completion at temperature 0; returns the reply text (the
    /// content, or the first tool call's arguments when the content is
    /// empty).
    pub async fn complete(&self, messages: &[Value]) -> Result<String, HttpError> {
        let body = json!({ "model": self.model, "messages": messages, "temperature": 0 });
        let url = format!("{}/chat/completions", self.base);
        let bytes = send_with_retries("model /chat/completions", MODEL_BODY_LIMIT, || {
            let r = self.http.post(&url).json(&body);
            match &self.token {
                Some(t) => r.bearer_auth(t),
                None => r,
            }
        })
        .await?;
        let v: Value = parse("model /chat/completions", &bytes)?;
        let msg = v.pointer("/choices/0/message").ok_or_else(|| {
            HttpError::Unavailable(anyhow!(
                "model: response has no choices[0].message: {}",
                error_message(&bytes)
            ))
        })?;
        let content = msg.get("content").and_then(Value::as_str).unwrap_or("");
        if !content.trim().is_empty() {
            return Ok(content.to_string());
        }
        if let Some(tc) = msg.pointer("/tool_calls/0/function") {
            return Ok(tc.to_string());
        }
        Ok(String::new())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_messages_are_extracted() {
        assert_eq!(
            error_message(br#"{"error":{"code":"bad","message":"no such task"}}"#),
            "no such task"
        );
        assert_eq!(error_message(br#"{"detail":"nope"}"#), "nope");
        assert_eq!(error_message(b"plain text"), "plain text");
    }

    #[test]
    fn backoff_grows() {
        assert_eq!(backoff(1), Duration::from_millis(500));
        assert_eq!(backoff(2), Duration::from_millis(1000));
    }
}
