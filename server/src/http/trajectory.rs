//! `GET /trajectory?session_id=`: a session's redacted recording as JSON
//! lines, while it lives and for the retention after it closes
//! ([`crate::env::trajectory`]).
//!
//! A query parameter like `/state`'s rather than a path under
//! `/session/{id}`: a trajectory outlives the session `DELETE
//! /session/{id}` ends, which a sub-resource of it must not.
//!
//! The body is streamed, one line per event (`reset`, `step`,
//! `resume_regrade`), each a JSON object; a line torn by a crash of the
//! server that wrote it is left out, and so is a live session's line still
//! being written.

use super::AppState;
use super::error::ApiError;
use crate::env::trajectory::TrajectoryFile;
use axum::body::Body;
use axum::extract::{Query, State};
use axum::http::header;
use axum::response::{IntoResponse, Response};
use futures_util::StreamExt;
use serde::Deserialize;
use tokio::io::{AsyncBufReadExt, AsyncReadExt};

/// Media type of the body: one JSON object per line.
pub(crate) const JSON_LINES: &str = "application/x-ndjson";

/// Response header saying whether the session was still open (`true`:
/// more lines may follow in a later read) or closed (`false`: complete).
pub(crate) const LIVE_HEADER: &str = "x-secaudit-session-live";

/// `?session_id=`.
#[derive(Debug, Deserialize)]
pub(crate) struct TrajectoryQuery {
    session_id: Option<String>,
}

/// `GET /trajectory?session_id=...`.
pub(crate) async fn trajectory(
    State(st): State<AppState>,
    q: Result<Query<TrajectoryQuery>, axum::extract::rejection::QueryRejection>,
) -> Result<Response, ApiError> {
    let Query(q) = q.map_err(|e| ApiError::BadRequest(e.body_text()))?;
    let session = q
        .session_id
        .filter(|s| !s.is_empty())
        .ok_or(ApiError::MissingSession)?;
    let t = st.env.trajectory(&session).await?;
    let live = t.live;
    Ok((
        [
            (header::CONTENT_TYPE, JSON_LINES),
            (
                header::HeaderName::from_static(LIVE_HEADER),
                if live { "true" } else { "false" },
            ),
        ],
        Body::from_stream(lines(t)),
    )
        .into_response())
}

/// The complete, parseable lines of the first `len` bytes of the file.
fn lines(
    t: TrajectoryFile,
) -> impl futures_util::Stream<Item = std::io::Result<axum::body::Bytes>> + Send {
    let reader = tokio::io::BufReader::new(tokio::fs::File::from_std(t.file).take(t.len));
    futures_util::stream::unfold(reader, |mut r| async move {
        loop {
            let mut line = Vec::new();
            match r.read_until(b'\n', &mut line).await {
                Ok(0) => return None,
                Ok(_) => {}
                Err(e) => return Some((Err(e), r)),
            }
            // Without its newline the line is torn or still being written.
            if line.last() != Some(&b'\n') {
                return None;
            }
            if serde_json::from_slice::<serde::de::IgnoredAny>(&line).is_ok() {
                return Some((Ok(axum::body::Bytes::from(line)), r));
            }
        }
    })
    .boxed()
}
