//! The server-sent event stream of one run: every journal record after the client's sequence
//! number once and in order (`record`, its `id` the record's seq, so `Last-Event-ID` resumes
//! it), `graph` messages with the redrawn snapshot at most every [`GRAPH_EVERY`], and `end`
//! after the run's last record. A live run streams from its observer's subscription, which
//! never makes the run wait: it is pulled only as fast as the client reads, and a client that
//! falls behind is cut loose by the observer and caught up from the journal. A journal's run
//! that no observer here follows is read on (each record once, into the stream's own fold of
//! its graph) whenever its journal says records may have been appended (`Journal::appended`: a
//! PostgreSQL journal's notifications), and every [`POLL_EVERY`] at the latest.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::extract::rejection::{PathRejection, QueryRejection};
use axum::extract::{Path, Query, State};
use axum::http::HeaderMap;
use axum::response::sse::{Event, KeepAlive, Sse};
use futures_util::Stream;
use runlet::journal::RunId;
use runlet::observe::{GraphEvent, JournalFold, RunObserver, SnapshotOptions, Subscription};
use runlet::runtime::run_listing;
use serde::Deserialize;

use crate::api::{Detail, graph_message, number, query as api_query, run_id};
use crate::catalog::{Catalog, Watched, WebError};

/// How often, at most, a stream sends the redrawn graph while records arrive.
const GRAPH_EVERY: Duration = Duration::from_millis(200);

/// How often a journal's run that no observer here follows is read again.
const POLL_EVERY: Duration = Duration::from_millis(500);

/// The most records a stream of a journal's run reads at once: a stream from the start of a long
/// run holds one page of it, and lets the server's other requests in between pages.
const JOURNAL_PAGE: usize = 1024;

#[derive(Debug, Deserialize)]
pub(crate) struct After {
    after: Option<String>,
    /// As for the snapshot: the `graph` messages draw loops of up to this many items in full.
    detail: Option<String>,
}

pub(crate) async fn events(
    State(catalog): State<Arc<Catalog>>,
    path: Result<Path<String>, PathRejection>,
    after: Result<Query<After>, QueryRejection>,
    headers: HeaderMap,
) -> Result<Sse<impl Stream<Item = Result<Event, Infallible>>>, WebError> {
    let (id, query) = (run_id(path)?, api_query(after)?);
    let after = resume_point(&headers, query.after.as_deref())?;
    let options = Detail::options(query.detail.as_deref())?;
    let watched = catalog.watched(&id).await?;
    let source = match &watched {
        Watched::Live { observer, .. } => Source::Live {
            subscription: observer.subscribe(after, catalog.view().clone()),
            observer: observer.clone(),
        },
        Watched::Journaled { context, .. } => {
            let fold = Box::new(JournalFold::new(Arc::clone(context)));
            Source::Journaled { fold, last: after, listed: Listed::default() }
        }
    };
    let feed = Feed {
        catalog,
        id,
        options,
        source,
        out: Out { queue: VecDeque::new(), dirty: false, last_graph: Instant::now(), done: false },
    };
    let stream = futures_util::stream::unfold(feed, |mut feed| async move {
        let event = feed.next().await?;
        Some((Ok(event), feed))
    });
    Ok(Sse::new(stream).keep_alive(KeepAlive::default()))
}

/// Where a stream starts: after the `Last-Event-ID` a reconnecting browser sends, else after
/// `?after=SEQ`, else from the first record.
fn resume_point(headers: &HeaderMap, after: Option<&str>) -> Result<u64, WebError> {
    // A header's value may come with spaces around it; a query's may not (see `number`).
    let header = headers.get("last-event-id").map(|value| value.to_str().unwrap_or("-").trim());
    let Some(text) = header.or(after) else { return Ok(0) };
    number(text)
        .ok_or_else(|| WebError::BadRequest(format!("`{text}` is not a sequence number to resume after")))
}

enum Source {
    Live {
        subscription: Subscription,
        observer: RunObserver,
    },
    /// The run's graph as far as this stream has read its journal, the last record sent, and
    /// what the journal last said it held.
    Journaled {
        fold: Box<JournalFold>,
        last: u64,
        listed: Listed,
    },
}

/// A run's newest record and whether it has ended, as its journal listed them.
#[derive(Default)]
struct Listed {
    newest: u64,
    ended: bool,
}

struct Feed {
    catalog: Arc<Catalog>,
    id: String,
    options: SnapshotOptions,
    source: Source,
    out: Out,
}

/// The messages a stream has ready to send.
struct Out {
    queue: VecDeque<Event>,
    /// Records were sent since the last `graph` message.
    dirty: bool,
    last_graph: Instant,
    /// Nothing follows what is queued.
    done: bool,
}

impl Feed {
    async fn next(&mut self) -> Option<Event> {
        loop {
            if let Some(event) = self.out.queue.pop_front() {
                return Some(event);
            }
            if self.out.done {
                return None;
            }
            match &mut self.source {
                Source::Live { .. } => self.pull_live().await,
                Source::Journaled { .. } => self.poll_journal().await,
            }
        }
    }

    async fn pull_live(&mut self) {
        let Source::Live { subscription, observer } = &mut self.source else { return };
        let next = if self.out.dirty {
            let wait = GRAPH_EVERY.saturating_sub(self.out.last_graph.elapsed());
            match tokio::time::timeout(wait, subscription.next()).await {
                Ok(next) => next,
                Err(_) => {
                    let snapshot = observer.snapshot_with(self.catalog.view(), &self.options);
                    self.out.push_graph(&snapshot);
                    return;
                }
            }
        } else {
            subscription.next().await
        };
        match next {
            Some(Ok(event)) => {
                self.out.push_record(&event);
                if self.out.last_graph.elapsed() >= GRAPH_EVERY {
                    let snapshot = observer.snapshot_with(self.catalog.view(), &self.options);
                    self.out.push_graph(&snapshot);
                }
            }
            Some(Err(error)) => self.out.push_resync(&error.to_string()),
            None => {
                let snapshot = observer.snapshot_with(self.catalog.view(), &self.options);
                self.out.push_graph(&snapshot);
                self.out.push_end();
            }
        }
    }

    /// Reads on in the run's journal (each record once, however long the run, a page at a time),
    /// sends the records after the client's position, and the graph when any were and it has
    /// caught up or the last one is [`GRAPH_EVERY`] old.
    async fn poll_journal(&mut self) {
        let Source::Journaled { fold, last, listed } = &mut self.source else { return };
        let Some(journal) = self.catalog.journal().cloned() else { return self.out.push_end() };
        let run = RunId::new(self.id.as_str());
        // The journal is asked what it holds only once the stream has read all it said before.
        if fold.last_seq() >= listed.newest {
            *listed = match run_listing(journal.as_ref(), &run).await {
                Ok(listing) => Listed { newest: listing.last_seq, ended: listing.status.has_ended() },
                Err(error) => return self.out.push_resync(&error.to_string()),
            };
            if listed.newest <= fold.last_seq() && !listed.ended {
                return journal.appended(&run, listed.newest, POLL_EVERY).await;
            }
            // An ended run whose every record the viewer has: nothing to read, let alone fold.
            if listed.ended && *last >= listed.newest {
                return self.out.push_end();
            }
        }
        let events = match fold.read_on(journal.as_ref(), &run, self.catalog.view(), JOURNAL_PAGE).await {
            Ok(events) => events,
            Err(error) => return self.out.push_resync(&error.to_string()),
        };
        // A journal that listed records it then did not give is waited for like one that is idle,
        // and asked again.
        if events.is_empty() {
            listed.newest = fold.last_seq();
        }
        let after = *last;
        let fresh: Vec<GraphEvent> = events.into_iter().filter(|event| event.seq > after).collect();
        if let Some(newest) = fresh.last() {
            *last = newest.seq;
        }
        for event in &fresh {
            self.out.push_record(event);
        }
        let caught_up = fold.last_seq() >= listed.newest;
        if self.out.dirty && (caught_up || self.out.last_graph.elapsed() >= GRAPH_EVERY) {
            self.out.push_graph(&fold.snapshot(self.catalog.view(), &self.options));
        }
        if !caught_up {
            // Other requests go first; the next page is read when the stream is polled again.
            tokio::task::yield_now().await;
        } else if listed.ended {
            self.out.push_end();
        } else if fresh.is_empty() {
            journal.appended(&run, fold.last_seq(), POLL_EVERY).await;
        }
    }
}

impl Out {
    fn push_record(&mut self, event: &GraphEvent) {
        let data = serde_json::to_string(event).expect("an event serializes");
        self.queue.push_back(Event::default().event("record").id(event.seq.to_string()).data(data));
        self.dirty = true;
    }

    fn push_graph(&mut self, snapshot: &runlet::observe::GraphSnapshot) {
        let data = graph_message(snapshot).to_string();
        self.queue.push_back(Event::default().event("graph").data(data));
        self.dirty = false;
        self.last_graph = Instant::now();
    }

    /// The stream cannot go on: the client should reload the snapshot and resume from its seq.
    fn push_resync(&mut self, message: &str) {
        let data = serde_json::json!({ "message": message }).to_string();
        self.queue.push_back(Event::default().event("resync").data(data));
        self.done = true;
    }

    fn push_end(&mut self) {
        self.queue.push_back(Event::default().event("end").data("{}"));
        self.done = true;
    }
}

#[cfg(test)]
mod tests {
    use axum::http::{HeaderMap, HeaderValue};

    use super::{Detail, resume_point};

    #[test]
    fn a_stream_resumes_after_a_sequence_number_of_digits_only() {
        let none = HeaderMap::new();
        assert_eq!(resume_point(&none, None).ok(), Some(0));
        assert_eq!(resume_point(&none, Some("17")).ok(), Some(17));
        // `?after=+5` arrives as " 5".
        for bad in ["+5", " 5", "-1", "", "1e3", "0x10", "18446744073709551616", "5 6"] {
            assert!(resume_point(&none, Some(bad)).is_err(), "{bad:?}");
        }
        let mut reconnecting = HeaderMap::new();
        reconnecting.insert("last-event-id", HeaderValue::from_static(" 42"));
        assert_eq!(resume_point(&reconnecting, Some("7")).ok(), Some(42), "the browser's header wins");
        reconnecting.insert("last-event-id", HeaderValue::from_static("+42"));
        assert!(resume_point(&reconnecting, None).is_err());
        assert!(Detail::options(Some(" 5")).is_err() && Detail::options(Some("5")).is_ok());
    }
}
