//! The page's files, built into the binary: the HTML of the runs and run pages, their script and
//! style, and the vendored layout library (`scripts/vendor-web`). Nothing is fetched at run time.

use axum::http::header;
use axum::response::{IntoResponse, Response};

const INDEX: &str = include_str!("../assets/index.html");
const RUN: &str = include_str!("../assets/run.html");
const STYLE: &str = include_str!("../assets/page.css");
const RUNS_SCRIPT: &str = include_str!("../assets/runs.js");
const RUN_SCRIPT: &str = include_str!("../assets/run.js");
const DAGRE: &str = include_str!("../assets/vendor/dagre.min.js");

fn file(content_type: &'static str, body: &'static str) -> Response {
    ([(header::CONTENT_TYPE, content_type), (header::CACHE_CONTROL, "no-cache")], body).into_response()
}

pub(crate) async fn runs_page() -> Response {
    file("text/html; charset=utf-8", INDEX)
}

pub(crate) async fn run_page() -> Response {
    file("text/html; charset=utf-8", RUN)
}

pub(crate) async fn style() -> Response {
    file("text/css; charset=utf-8", STYLE)
}

pub(crate) async fn runs_script() -> Response {
    file("text/javascript; charset=utf-8", RUNS_SCRIPT)
}

pub(crate) async fn run_script() -> Response {
    file("text/javascript; charset=utf-8", RUN_SCRIPT)
}

pub(crate) async fn dagre() -> Response {
    file("text/javascript; charset=utf-8", DAGRE)
}
