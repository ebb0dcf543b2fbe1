//! The runs a server shows: live runs this process drives (their observers) and the runs of a
//! journal, opened for watching, with the view policy every response is redacted by. What it
//! holds is bounded, however long a server runs and however many runs it is shown: a run that
//! has finished stays live only among the latest [`FINISHED_LIVE_KEPT`] (checked as runs are
//! added, each time the runs held have doubled, so adding one stays cheap however many are
//! live), and only the [`OPENED_KEPT`] journal runs watched most recently stay opened. Either
//! kind, once dropped, is opened from the journal again when asked for.

use std::collections::BTreeMap;
use std::sync::Arc;

use hashlink::LruCache;
use parking_lot::Mutex;
use runlet::journal::{Journal, JournalErrorKind, RunId};
use runlet::observe::{GraphContext, GraphSnapshot, RunObserver, ViewPolicy};
use runlet::runtime::{RunListing, list_runs, run_listing};

use crate::journal_run::open_graph_context;

/// Why a request could not be answered; each becomes a JSON error with an HTTP status.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WebError {
    #[error("no run `{0}` here")]
    UnknownRun(String),
    #[error("the journal could not be read: {0}")]
    Journal(String),
    #[error("{0}")]
    BadRequest(String),
    #[error("run `{run}` cannot be drawn: {reason}")]
    NotDrawable { run: String, reason: String },
}

/// A run opened for watching.
#[derive(Clone)]
pub(crate) enum Watched {
    /// A run this process drives: snapshots and subscriptions from its observer.
    Live { observer: RunObserver, source: Arc<str> },
    /// A run known from the journal only (finished, or another process's): rebuilt from it.
    Journaled { context: Arc<GraphContext>, source: Arc<str> },
}

impl Watched {
    pub(crate) fn source(&self) -> &str {
        match self {
            Watched::Live { source, .. } | Watched::Journaled { source, .. } => source,
        }
    }
}

/// How many finished runs a catalog keeps live (their observers, with their whole graphs); the
/// runs that finished before them are opened from the journal when asked for.
pub const FINISHED_LIVE_KEPT: usize = 64;

/// How many runs known from the journal alone a catalog keeps opened (each an analyzed
/// program); the one watched least recently is dropped first.
pub const OPENED_KEPT: usize = 32;

/// How many snapshots of ended journaled runs a catalog keeps, the least recently added dropped
/// first: each is a run's whole graph, so only a few.
const ENDED_SNAPSHOTS_KEPT: usize = 8;

/// The runs a server shows, and what its viewers may see of them.
pub struct Catalog {
    journal: Option<Arc<dyn Journal>>,
    view: ViewPolicy,
    live: Mutex<LiveRuns>,
    opened: Mutex<LruCache<RunId, Watched>>,
    /// Snapshots of ended journaled runs, by run, last record and detail: folded once however
    /// many viewers ask at once (an ended run's journal no longer changes).
    ended: Mutex<LruCache<(RunId, u64, usize), EndedSnapshot>>,
}

/// One ended run's snapshot, folded by the first request that needs it while the others wait.
type EndedSnapshot = Arc<tokio::sync::OnceCell<GraphSnapshot>>;

/// The live runs, each with the order it was added in, so the oldest finished go first.
#[derive(Default)]
struct LiveRuns {
    runs: BTreeMap<RunId, (u64, RunObserver, Arc<str>)>,
    added: u64,
    /// How many runs held make the next [`LiveRuns::add`] let finished runs go.
    prune_at: usize,
}

impl LiveRuns {
    /// Fewest runs held before finished ones are let go.
    const PRUNE_FLOOR: usize = 2 * FINISHED_LIVE_KEPT;

    fn add(&mut self, observer: RunObserver, source: Arc<str>) {
        self.added += 1;
        self.runs.insert(observer.run_id().clone(), (self.added, observer, source));
        if self.runs.len() >= self.prune_at.max(Self::PRUNE_FLOOR) {
            self.let_go_finished();
            self.prune_at = self.runs.len() * 2;
        }
    }

    /// Lets go every finished run but the latest [`FINISHED_LIVE_KEPT`] added.
    fn let_go_finished(&mut self) {
        let mut finished: Vec<(u64, RunId)> = self
            .runs
            .iter()
            .filter(|(_, (_, observer, _))| observer.is_finished())
            .map(|(run, (added, ..))| (*added, run.clone()))
            .collect();
        if finished.len() > FINISHED_LIVE_KEPT {
            finished.sort_unstable();
            for (_, run) in &finished[..finished.len() - FINISHED_LIVE_KEPT] {
                self.runs.remove(run);
            }
        }
    }

    fn get(&self, run: &RunId) -> Option<Watched> {
        let (_, observer, source) = self.runs.get(run)?;
        Some(Watched::Live { observer: observer.clone(), source: Arc::clone(source) })
    }
}

impl std::fmt::Debug for Catalog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Catalog").field("view", &self.view).finish_non_exhaustive()
    }
}

impl Catalog {
    /// A catalog of `journal`'s runs (none without one), redacted for `view`.
    pub fn new(journal: Option<Arc<dyn Journal>>, view: ViewPolicy) -> Catalog {
        Catalog {
            journal,
            view,
            live: Mutex::default(),
            opened: Mutex::new(LruCache::new(OPENED_KEPT)),
            ended: Mutex::new(LruCache::new(ENDED_SNAPSHOTS_KEPT)),
        }
    }

    /// Shows the run `observer` follows, whose program is `source`, live: until it has finished
    /// and [`FINISHED_LIVE_KEPT`] runs added after it have too, as the catalog finds when the
    /// runs it holds have doubled (or [`Catalog::held`] is asked).
    pub fn add_live(&self, observer: RunObserver, source: &str) {
        self.live.lock().add(observer, Arc::from(source));
    }

    /// How many runs are held live and how many are held opened from the journal, once
    /// finished runs beyond the latest [`FINISHED_LIVE_KEPT`] are let go.
    pub fn held(&self) -> (usize, usize) {
        let live = {
            let mut live = self.live.lock();
            live.let_go_finished();
            live.runs.len()
        };
        (live, self.opened.lock().len())
    }

    /// The snapshot of ended run `run` as of record `last` at `detail`, folded by `fold` only
    /// when no request has folded it yet (concurrent requests wait for the one folding).
    pub(crate) async fn ended_snapshot<F, E>(
        &self,
        run: &RunId,
        last: u64,
        detail: usize,
        fold: impl FnOnce() -> F,
    ) -> Result<GraphSnapshot, E>
    where
        F: std::future::Future<Output = Result<GraphSnapshot, E>>,
    {
        let cell = {
            let mut ended = self.ended.lock();
            let key = (run.clone(), last, detail);
            match ended.get(&key) {
                Some(cell) => Arc::clone(cell),
                None => {
                    let cell = EndedSnapshot::default();
                    ended.insert(key, Arc::clone(&cell));
                    cell
                }
            }
        };
        cell.get_or_try_init(fold).await.cloned()
    }

    pub(crate) fn view(&self) -> &ViewPolicy {
        &self.view
    }

    pub(crate) fn journal(&self) -> Option<&Arc<dyn Journal>> {
        self.journal.as_ref()
    }

    /// The journal's runs in creation order (live runs are journaled there too).
    pub(crate) async fn runs(&self) -> Result<Vec<RunListing>, WebError> {
        let Some(journal) = &self.journal else { return Ok(Vec::new()) };
        list_runs(journal.as_ref()).await.map_err(|error| WebError::Journal(error.to_string()))
    }

    /// The run `run`'s listing from the journal; `None` for a live run it cannot list.
    pub(crate) async fn listing(&self, run: &RunId) -> Result<Option<RunListing>, WebError> {
        let Some(journal) = &self.journal else { return Ok(None) };
        match run_listing(journal.as_ref(), run).await {
            Ok(listing) => Ok(Some(listing)),
            Err(_) if self.live.lock().runs.contains_key(run) => Ok(None),
            Err(error) if error.kind == JournalErrorKind::UnknownRun => {
                Err(WebError::UnknownRun(run.to_string()))
            }
            // A damaged run says so, rather than that it does not exist.
            Err(error) => Err(WebError::Journal(error.to_string())),
        }
    }

    /// The run `id`, opened for watching: live when this process drives it, else rebuilt from
    /// the journal's header (kept for later requests while among the [`OPENED_KEPT`] watched
    /// most recently).
    pub(crate) async fn watched(&self, id: &str) -> Result<Watched, WebError> {
        let run = RunId::new(id);
        if let Some(watched) = self.live.lock().get(&run) {
            return Ok(watched);
        }
        if let Some(watched) = self.opened.lock().get(&run) {
            return Ok(watched.clone());
        }
        let journal = self.journal.as_ref().ok_or_else(|| WebError::UnknownRun(id.to_owned()))?;
        let header = journal.header(&run).await.map_err(|error| match error.kind {
            JournalErrorKind::UnknownRun => WebError::UnknownRun(id.to_owned()),
            _ => WebError::Journal(error.to_string()),
        })?;
        let (context, source) = open_graph_context(&header)?;
        let watched = Watched::Journaled { context, source };
        self.opened.lock().insert(run, watched.clone());
        Ok(watched)
    }
}
