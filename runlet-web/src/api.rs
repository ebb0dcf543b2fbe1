//! The JSON endpoints: the runs list and one run's redacted snapshot with its source text and
//! failure views (`?detail=N` draws loops of up to N items in full); errors as `{"error": {"code", "message"}}` with a fitting HTTP status.

use std::sync::Arc;

use axum::Json;
use axum::extract::rejection::{PathRejection, QueryRejection};
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use runlet::journal::RunId;
use runlet::observe::{GraphSnapshot, SnapshotOptions, snapshot_from_journal};
use runlet::runtime::{RunListing, RunStatus};
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::catalog::{Catalog, Watched, WebError};
use crate::failure::{FailureView, failure_views};

impl IntoResponse for WebError {
    fn into_response(self) -> Response {
        let (status, code) = match &self {
            WebError::UnknownRun(_) => (StatusCode::NOT_FOUND, "unknown_run"),
            WebError::BadRequest(_) => (StatusCode::BAD_REQUEST, "bad_request"),
            WebError::Journal(_) => (StatusCode::INTERNAL_SERVER_ERROR, "journal"),
            WebError::NotDrawable { .. } => (StatusCode::UNPROCESSABLE_ENTITY, "not_drawable"),
        };
        (status, Json(json!({ "error": { "code": code, "message": self.to_string() } }))).into_response()
    }
}

/// A route the server does not have.
pub(crate) async fn not_found() -> Response {
    let body = json!({ "error": { "code": "not_found", "message": "no such page" } });
    (StatusCode::NOT_FOUND, Json(body)).into_response()
}

/// A method other than GET (or HEAD) on a route the server has.
pub(crate) async fn method_not_allowed() -> Response {
    let body = json!({ "error": { "code": "method_not_allowed", "message": "only GET is served" } });
    (StatusCode::METHOD_NOT_ALLOWED, Json(body)).into_response()
}

/// The run id of a route's path, or why it is not one (not UTF-8, say) as a JSON error.
pub(crate) fn run_id(path: Result<Path<String>, PathRejection>) -> Result<String, WebError> {
    path.map(|Path(id)| id).map_err(|rejection| WebError::BadRequest(rejection.body_text()))
}

/// A route's query, or why it could not be read (a parameter given twice, say) as a JSON error.
pub(crate) fn query<T>(query: Result<Query<T>, QueryRejection>) -> Result<T, WebError> {
    query.map(|Query(query)| query).map_err(|rejection| WebError::BadRequest(rejection.body_text()))
}

#[derive(Serialize)]
struct Runs {
    runs: Vec<RunListing>,
}

pub(crate) async fn runs(State(catalog): State<Arc<Catalog>>) -> Result<Json<impl Serialize>, WebError> {
    Ok(Json(Runs { runs: catalog.runs().await? }))
}

/// One run as the page first draws it.
#[derive(Serialize)]
pub(crate) struct RunView {
    #[serde(skip_serializing_if = "Option::is_none")]
    listing: Option<RunListing>,
    live: bool,
    /// How a run that no process drives stopped before it ended (`interrupted`,
    /// `needs_resolution`): its snapshot's state still reads as running, which the page's
    /// badge must not show until the journal moves on.
    #[serde(skip_serializing_if = "Option::is_none")]
    halted: Option<&'static str>,
    source: String,
    snapshot: GraphSnapshot,
    failures: Vec<FailureView>,
}

/// The most iterations of a loop a snapshot spells out on request (`?detail=N`): the observer
/// keeps every iteration of a loop only up to this many items, counts above.
pub(crate) const MOST_DETAIL: usize = 1024;

#[derive(Debug, Deserialize)]
pub(crate) struct Detail {
    detail: Option<String>,
}

/// The number `text` spells in ASCII digits alone: what a query's number must be (the standard
/// parsers would take `+5`, and a query's `+` arrives decoded as a space, so no space either).
pub(crate) fn number<T: std::str::FromStr>(text: &str) -> Option<T> {
    text.bytes().all(|byte| byte.is_ascii_digit()).then(|| text.parse().ok()).flatten()
}

impl Detail {
    /// The snapshot options `?detail=N` asks for: loops of up to N items drawn in full (the
    /// default folds loops over 32 items into ranges).
    pub(crate) fn options(text: Option<&str>) -> Result<SnapshotOptions, WebError> {
        let Some(text) = text else { return Ok(SnapshotOptions::default()) };
        match number::<usize>(text) {
            Some(limit) if limit <= MOST_DETAIL => Ok(SnapshotOptions { iteration_detail_limit: limit }),
            _ => Err(WebError::BadRequest(format!(
                "`detail={text}`: the iterations a loop is drawn in full for, at most {MOST_DETAIL}"
            ))),
        }
    }
}

pub(crate) async fn run(
    State(catalog): State<Arc<Catalog>>,
    path: Result<Path<String>, PathRejection>,
    detail: Result<Query<Detail>, QueryRejection>,
) -> Result<Json<RunView>, WebError> {
    let (id, detail) = (run_id(path)?, query(detail)?);
    let options = Detail::options(detail.detail.as_deref())?;
    let watched = catalog.watched(&id).await?;
    let listing = catalog.listing(&RunId::new(id.as_str())).await?;
    let ended = listing.as_ref().filter(|listing| listing.status.has_ended()).map(|listing| listing.last_seq);
    let snapshot = match (&watched, ended) {
        // An ended run's journal no longer changes: its snapshot is folded once for every viewer.
        (Watched::Journaled { .. }, Some(last)) => {
            let run = RunId::new(id.as_str());
            catalog
                .ended_snapshot(&run, last, options.iteration_detail_limit, || {
                    snapshot_of(&catalog, &watched, &id, &options)
                })
                .await?
        }
        _ => snapshot_of(&catalog, &watched, &id, &options).await?,
    };
    let failures = failure_views(&snapshot);
    let live = matches!(watched, Watched::Live { .. });
    let halted = listing
        .as_ref()
        .map(|listing| listing.status)
        .filter(|status| !live && matches!(status, RunStatus::Interrupted | RunStatus::NeedsResolution))
        .map(RunStatus::as_str);
    Ok(Json(RunView { listing, live, halted, source: watched.source().to_owned(), snapshot, failures }))
}

/// The run's graph now, redacted by the catalog's view.
async fn snapshot_of(
    catalog: &Catalog,
    watched: &Watched,
    id: &str,
    options: &SnapshotOptions,
) -> Result<GraphSnapshot, WebError> {
    match watched {
        Watched::Live { observer, .. } => Ok(observer.snapshot_with(catalog.view(), options)),
        Watched::Journaled { context, .. } => {
            let journal = catalog.journal().ok_or_else(|| WebError::UnknownRun(id.to_owned()))?;
            let run = RunId::new(id);
            snapshot_from_journal(Arc::clone(context), journal.as_ref(), &run, catalog.view(), options)
                .await
                .map_err(|error| WebError::Journal(error.to_string()))
        }
    }
}

/// The snapshot and failure views as one `graph` message.
pub(crate) fn graph_message(snapshot: &GraphSnapshot) -> serde_json::Value {
    json!({ "snapshot": snapshot, "failures": failure_views(snapshot) })
}
