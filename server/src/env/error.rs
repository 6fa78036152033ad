//! Why an environment call fails, and how internal causes reach a client.

/// Why an environment call failed. The HTTP layer maps each to a status.
#[derive(Debug, thiserror::Error)]
pub enum EnvError {
    /// No such task (404).
    #[error("unknown task: {0}")]
    UnknownTask(String),
    /// No such session, or it expired (404).
    #[error("unknown or expired session: {0}")]
    UnknownSession(String),
    /// A step after the episode ended (409).
    #[error("episode is over (done); call reset to start a new one")]
    EpisodeDone,
    /// The server-wide session limit is reached (429).
    #[error("server at capacity: {active}/{max} sessions active")]
    CapacityReached {
        /// Sessions active now.
        active: usize,
        /// The configured limit.
        max: usize,
    },
    /// The action is malformed or over a bound (422).
    #[error("invalid action: {0}")]
    InvalidAction(String),
    /// A reset request outside its bounds (422).
    #[error("invalid request: {0}")]
    InvalidRequest(String),
    /// The action is longer than the bound (413).
    #[error("action is {len} bytes, over the {max}-byte limit")]
    ActionTooLong {
        /// Its length.
        len: usize,
        /// The bound.
        max: usize,
    },
    /// Another request on the same session is in flight (409).
    #[error("session is busy with another step")]
    Busy,
    /// No containment tier works and uncontained runs were not allowed
    /// (503).
    #[error("no containment available: {0}")]
    Uncontained(String),
    /// Anything else (500); the message is safe to show.
    #[error("internal error: {0}")]
    Internal(String),
}

/// An internal error with its whole cause chain (`{:#}` joins an anyhow
/// chain as `outer: inner: root`), redacted by shape: the outermost
/// context alone ("recording the pristine test manifest") hid the cause
/// (pytest missing from the venv) from both the client and the log, while
/// a cause may quote command output that holds a secret.
pub(super) fn internal(e: impl std::fmt::Display) -> EnvError {
    EnvError::Internal(redacted_cause(&format!("{e:#}")))
}

/// `text` with everything the scanner finds by shape replaced.
pub(crate) fn redacted_cause(text: &str) -> String {
    static REDACTOR: std::sync::OnceLock<graders::redact::Redactor> = std::sync::OnceLock::new();
    REDACTOR
        .get_or_init(graders::redact::Redactor::by_shape)
        .redact(text)
}

/// Runs a reset, step or close on a task of its own, so it completes even
/// when its caller stops waiting: hyper drops a request's future when the
/// client hangs up, and a step cut short there had its command killed
/// midway, left its in-flight marker behind and went uncounted (a free
/// action for any client that disconnects); a reset or close cut short
/// left a session directory on disk. A panic inside becomes an internal
/// error of that one request.
pub(super) async fn detached<T: Send + 'static>(
    f: impl std::future::Future<Output = Result<T, EnvError>> + Send + 'static,
) -> Result<T, EnvError> {
    tokio::spawn(f).await.map_err(|e| {
        EnvError::Internal(if e.is_panic() {
            "the request panicked; it was not completed".into()
        } else {
            format!("the request's task ended early: {e}")
        })
    })?
}

#[cfg(test)]
mod internal_error_tests {
    use super::*;

    /// The client and the log get the root cause, not only the outermost
    /// context, and a secret quoted by a cause is redacted.
    #[test]
    fn internal_errors_carry_the_redacted_cause_chain() {
        let key = "AKIAQ3EGRT7ZJ4EXAMPL";
        let e = anyhow::anyhow!("No module named pytest (key {key})")
            .context("pristine run")
            .context("recording the pristine test manifest");
        let EnvError::Internal(m) = internal(e) else {
            panic!("not internal")
        };
        assert!(
            m.starts_with(
                "recording the pristine test manifest: pristine run: No module named pytest"
            ),
            "{m}"
        );
        assert!(!m.contains(key), "{m}");
    }
}
