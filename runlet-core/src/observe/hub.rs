//! Live observation of one run (spec §6.1): the shell's committed events feed a graph model and
//! bounded per-subscriber queues; a subscriber that falls behind is cut loose and catches up from
//! the journal by sequence number, so the scheduler never waits for a viewer. A runtime built
//! without a live graph folds no model: its runs' observers deliver events and tell the run's
//! state, and their snapshots hold no nodes.

use std::collections::{BTreeMap, VecDeque};
use std::sync::{Arc, Weak};
use std::time::Instant;

use parking_lot::Mutex;

use super::context::GraphContext;
use super::event::{CallOperations, GraphEvent, Published};
use super::model::GraphModel;
use super::queue::{Publisher, Queued, Reader, queue};
use super::snapshot::{GraphSnapshot, SnapshotOptions};
use super::view::ViewPolicy;
use crate::diag::Code;
use crate::engine::event::{Event, EventDecodeError, unix_ms};
use crate::journal::{AppendTime, Journal, JournalError, JournalErrorKind, Record, RunId};

/// What the snapshot of a run without a live graph says about its missing nodes.
const NO_LIVE_GRAPH: &str = "this runtime keeps no live graph (`RuntimeBuilder::live_graph(false)`): the snapshot has the run's state and no nodes; `Runtime::journal_snapshot` folds the graph from the journal";

/// How many journal records a catching-up subscriber reads at once.
const CATCH_UP_BATCH: usize = 256;

/// How many of the latest records' publication times are kept for subscribers catching up;
/// older records are delivered with the time the journal appended them, where it keeps that.
const PUBLICATION_TIMES_KEPT: usize = 65_536;

/// Why an observer could not deliver.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ObserveError {
    #[error("the journal could not be read: {0}")]
    Journal(#[from] JournalError),
    #[error(transparent)]
    Decode(#[from] EventDecodeError),
}

impl ObserveError {
    pub fn code(&self) -> Code {
        match self {
            ObserveError::Journal(error) => error.code(),
            ObserveError::Decode(error) => error.code(),
        }
    }
}

/// The observer of one run: consistent snapshots and ordered subscriptions from any sequence
/// number. Cheap to clone.
#[derive(Clone)]
pub struct RunObserver {
    hub: Arc<Hub>,
}

impl std::fmt::Debug for RunObserver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunObserver").field("run_id", &self.hub.run_id).finish_non_exhaustive()
    }
}

struct Hub {
    context: Arc<GraphContext>,
    journal: Arc<dyn Journal>,
    run_id: RunId,
    /// The observer's one clock: publication times are `before_ms` plus the time since
    /// `started`, so they count from the run's start (`started_unix_ms`) however long before
    /// this observer it was (a resumed run's first start).
    started: Instant,
    before_ms: u64,
    started_unix_ms: u64,
    /// Events a subscriber's queue holds before the subscriber is cut loose.
    buffer: usize,
    state: Mutex<HubState>,
}

struct HubState {
    /// The run's graph, or, for a runtime built without a live graph, a model that folds the
    /// run's own state and no nodes.
    model: GraphModel,
    /// When the latest published records were published, in ms since the run started: the
    /// record `first_timed_seq` first, at most [`PUBLICATION_TIMES_KEPT`] of them.
    published_at: VecDeque<u64>,
    first_timed_seq: u64,
    subscribers: Vec<Publisher>,
    finished: bool,
}

impl HubState {
    /// Takes the committed records from `first` on, published together `at_ms` after the run
    /// started: folds them and offers them to every subscriber without waiting; a subscriber
    /// whose queue is full is dropped and will catch up from the journal. The events move to
    /// the last subscriber and are copied only for the others, so the usual single subscriber
    /// costs no copy.
    fn publish(&mut self, first: u64, events: Vec<Event>, at_ms: u64) {
        for (seq, event) in (first..).zip(&events) {
            self.model.apply(seq, event, Some(at_ms));
            if self.published_at.is_empty() {
                // A resumed run publishes from where its journal left off.
                self.first_timed_seq = seq;
            }
            if self.published_at.len() == PUBLICATION_TIMES_KEPT {
                self.published_at.pop_front();
                self.first_timed_seq += 1;
            }
            self.published_at.push_back(at_ms);
        }
        let last = self.subscribers.len().checked_sub(1);
        let (mut offered, mut events) = (0, Some(events));
        self.subscribers.retain(|subscriber| {
            let batch = if Some(offered) == last { events.take() } else { events.clone() };
            offered += 1;
            batch.is_some_and(|batch| subscriber.offer(first, batch))
        });
    }
}

impl RunObserver {
    /// The observer of run `run_id`, created at `run_started_unix_ms` when its header keeps
    /// that (else now); a submitted run's time includes its wait for a worker.
    pub(crate) fn new(
        context: Arc<GraphContext>,
        journal: Arc<dyn Journal>,
        run_id: RunId,
        run_started_unix_ms: Option<u64>,
        buffer: usize,
        live_graph: bool,
    ) -> RunObserver {
        let now_unix_ms = unix_ms(std::time::SystemTime::now());
        // A start later than now (another machine's clock) counts as now.
        let started_unix_ms = run_started_unix_ms.unwrap_or(now_unix_ms).min(now_unix_ms);
        let model = if live_graph {
            GraphModel::new(Arc::clone(&context))
        } else {
            GraphModel::run_state_only(Arc::clone(&context))
        };
        RunObserver {
            hub: Arc::new(Hub {
                context,
                journal,
                run_id,
                started: Instant::now(),
                before_ms: now_unix_ms - started_unix_ms,
                started_unix_ms,
                buffer: buffer.max(1),
                state: Mutex::new(HubState {
                    model,
                    published_at: VecDeque::new(),
                    first_timed_seq: 1,
                    subscribers: Vec::new(),
                    finished: false,
                }),
            }),
        }
    }

    /// Takes the committed records from `first` on, `events` in order, all published at one
    /// moment (they committed together): applies each to the model and offers it to every
    /// subscriber without waiting.
    pub(crate) fn publish(&self, first: u64, events: Vec<Event>) {
        let since = self.hub.started.elapsed().as_millis().min(u128::from(u64::MAX)) as u64;
        let at_ms = self.hub.before_ms.saturating_add(since);
        self.hub.state.lock().publish(first, events, at_ms);
    }

    /// Folds the run's records up to `upto` from the journal into the graph before anything
    /// else is published: a resumed run's observer starts where its journal is, and its
    /// subscribers read those records from the journal.
    pub(crate) async fn load_journaled(&self, upto: u64) -> Result<(), ObserveError> {
        let mut after = 0;
        while after < upto {
            let wanted = usize::try_from(upto - after).unwrap_or(usize::MAX).min(CATCH_UP_BATCH);
            let records = self.hub.journal.read(&self.hub.run_id, after, wanted).await?;
            if records.is_empty() {
                break;
            }
            let events = decoded(self.hub.journal.as_ref(), records).await?;
            let mut state = self.hub.state.lock();
            for (seq, event) in events {
                state.model.apply(seq, &event, None);
                after = seq;
            }
        }
        Ok(())
    }

    /// Whether the run has ended and all its events have been published: nothing will change
    /// what it shows from now on.
    pub fn is_finished(&self) -> bool {
        self.hub.state.lock().finished
    }

    /// The run's events have all been published: subscriptions end once they have read them.
    pub(crate) fn finish(&self) {
        let mut state = self.hub.state.lock();
        state.finished = true;
        state.subscribers.clear();
    }

    /// The call `node` (its journal id) waits for permits of `resources` (spec §4.5): snapshots
    /// show it as blocked on permits until [`RunObserver::permits_granted`] or its end. A live
    /// condition, not a journaled transition, so it never changes the node's state. The call's
    /// events may still be on their way to the observer, so a node not seen yet is accepted.
    pub fn waiting_for_permits(&self, node: &str, resources: Vec<String>) {
        let mut state = self.hub.state.lock();
        if !state.model.folds_nodes() {
            return;
        }
        let settled = match state.model.nodes.get(node) {
            Some(record) => record.state.is_terminal(),
            None => state.model.folded_away(node),
        };
        if !settled {
            state.model.permit_waits.insert(node.to_owned(), resources);
        }
    }

    /// The call `node` got its permits.
    pub fn permits_granted(&self, node: &str) {
        self.hub.state.lock().model.permit_waits.remove(node);
    }

    /// How many node records the observer holds now: bounded on long loops, whose finished
    /// iterations are kept as counts. For tests and figures, not a stable API.
    #[doc(hidden)]
    pub fn retained_node_records(&self) -> usize {
        self.hub.state.lock().model.nodes.len()
    }

    pub fn run_id(&self) -> &RunId {
        &self.hub.run_id
    }

    /// The last record published.
    pub fn seq(&self) -> u64 {
        self.hub.state.lock().model.seq
    }

    /// The graph as of the last published record. A runtime built without a live graph
    /// ([`RuntimeBuilder::live_graph`](crate::runtime::RuntimeBuilder::live_graph)) answers the
    /// run's state and no nodes, with an integrity error saying so; `Runtime::journal_snapshot`
    /// folds the whole graph from the journal.
    pub fn snapshot(&self, view: &ViewPolicy) -> GraphSnapshot {
        self.snapshot_with(view, &SnapshotOptions::default())
    }

    pub fn snapshot_with(&self, view: &ViewPolicy, options: &SnapshotOptions) -> GraphSnapshot {
        let state = self.hub.state.lock();
        let mut snapshot = state.model.snapshot(view, options);
        if !state.model.folds_nodes() {
            snapshot.integrity_errors.push(NO_LIVE_GRAPH.to_owned());
        }
        snapshot
    }

    /// Every record after `after_seq`, in order, each exactly once, redacted for `view`; the
    /// subscription ends after the run's last record. Subscribing from a snapshot's `seq`
    /// continues exactly where the snapshot stops.
    pub fn subscribe(&self, after_seq: u64, view: ViewPolicy) -> Subscription {
        let mut subscription = Subscription {
            hub: Arc::clone(&self.hub),
            view,
            last: after_seq,
            catch_up_to: after_seq,
            pending: VecDeque::new(),
            live: None,
            ended: false,
            kinds: None,
            journal_times: AppendTimes::default(),
            operations: CallOperations::default(),
        };
        subscription.register();
        subscription
    }
}

/// The observers of a runtime's runs that someone still holds, by run id: what
/// `Runtime::observer` looks runs up in. Entries of dropped observers are pruned as it grows.
#[derive(Default)]
pub(crate) struct ObserverIndex {
    runs: Mutex<(BTreeMap<RunId, Weak<Hub>>, usize)>,
}

impl ObserverIndex {
    /// Fewest entries before dropped observers are pruned.
    const PRUNE_FLOOR: usize = 64;

    pub(crate) fn insert(&self, observer: &RunObserver) {
        let mut guard = self.runs.lock();
        let (runs, prune_at) = &mut *guard;
        runs.insert(observer.hub.run_id.clone(), Arc::downgrade(&observer.hub));
        if runs.len() >= (*prune_at).max(Self::PRUNE_FLOOR) {
            runs.retain(|_, hub| hub.strong_count() > 0);
            *prune_at = runs.len() * 2;
        }
    }

    pub(crate) fn get(&self, run: &RunId) -> Option<RunObserver> {
        self.runs.lock().0.get(run).and_then(Weak::upgrade).map(|hub| RunObserver { hub })
    }
}

impl Hub {
    /// A queue for the records after the last published one, and that record's number (`None`
    /// for the queue once the run has finished).
    fn register(&self) -> (u64, Option<Reader>) {
        let mut state = self.state.lock();
        let seq = state.model.seq;
        if state.finished {
            return (seq, None);
        }
        let (publisher, reader) = queue(self.buffer);
        state.subscribers.push(publisher);
        (seq, Some(reader))
    }

    /// When record `seq` was published, while that is among the times kept.
    fn published_at(&self, seq: u64) -> Option<Published> {
        let state = self.state.lock();
        let index = usize::try_from(seq.checked_sub(state.first_timed_seq)?).ok()?;
        let at_ms = state.published_at.get(index).copied()?;
        Some(Published { at_ms, unix_ms: self.started_unix_ms.saturating_add(at_ms) })
    }
}

/// An ordered stream of a run's events.
pub struct Subscription {
    hub: Arc<Hub>,
    view: ViewPolicy,
    /// The last record delivered.
    last: u64,
    /// Records up to here come from the journal; later ones from `live`.
    catch_up_to: u64,
    pending: VecDeque<(u64, Event)>,
    live: Option<Reader>,
    /// No further queue will be opened: the run finished.
    ended: bool,
    /// Which kinds [`Subscription::next`] delivers, by kind number; all when `None`.
    kinds: Option<Box<dyn Fn(u16) -> bool + Send + Sync>>,
    /// When the journal appended the last page read from it, for records older than the
    /// publication times the hub keeps.
    journal_times: AppendTimes,
    operations: CallOperations,
}

impl std::fmt::Debug for Subscription {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Subscription").field("last", &self.last).finish_non_exhaustive()
    }
}

impl Subscription {
    /// The next event, or `None` once the run's last record was delivered. After an error the
    /// subscription ends; reconnect with `subscribe(last_seq, …)`.
    pub async fn next(&mut self) -> Option<Result<GraphEvent, ObserveError>> {
        loop {
            let (seq, event) = match self.next_record().await? {
                Ok(record) => record,
                Err(error) => return Some(Err(error)),
            };
            let operation = self.operations.name(&event);
            if self.kinds.as_ref().is_none_or(|wanted| wanted(event.kind_number())) {
                let published = self.hub.published_at(seq).or_else(|| self.journal_times.of(seq));
                return Some(Ok(self.hub.context.graph_event(seq, &event, published, &self.view, operation)));
            }
        }
    }

    /// This subscription delivering from [`Subscription::next`] only the events whose kind
    /// number `wanted` accepts: the others are skipped before their public form is built.
    pub fn only_kinds(mut self, wanted: impl Fn(u16) -> bool + Send + Sync + 'static) -> Subscription {
        self.kinds = Some(Box::new(wanted));
        self
    }

    /// [`Subscription::next`] as the engine recorded it: the record's sequence number and its
    /// event, unredacted (for Rust hosts that act on the engine's own events).
    pub async fn next_record(&mut self) -> Option<Result<(u64, Event), ObserveError>> {
        loop {
            if let Some(record) = self.queued() {
                return Some(Ok(record));
            }
            if self.last < self.catch_up_to {
                if let Err(error) = self.read_journal().await {
                    self.ended = true;
                    self.live = None;
                    self.catch_up_to = self.last;
                    return Some(Err(error));
                }
                continue;
            }
            match &self.live {
                Some(queue) => {
                    if !queue.wait_into(&mut self.pending).await {
                        self.live = None;
                    }
                }
                None if self.ended => return None,
                None => self.register(),
            }
        }
    }

    /// The sequence number of the last event delivered: where to reconnect.
    pub fn last_seq(&self) -> u64 {
        self.last
    }

    fn register(&mut self) {
        let (published, queue) = self.hub.register();
        self.ended = queue.is_none();
        self.live = queue;
        self.catch_up_to = published.max(self.last);
    }

    /// The next record already queued for this subscription, read from the journal or
    /// published live, without waiting and without reading the journal.
    pub(crate) fn queued(&mut self) -> Option<(u64, Event)> {
        while let Some((seq, event)) = self.pending.pop_front() {
            if self.take(seq) {
                return Some((seq, event));
            }
        }
        if self.last < self.catch_up_to {
            return None;
        }
        match self.live.as_ref()?.take_into(&mut self.pending) {
            Queued::Moved => self.queued(),
            Queued::Empty => None,
            Queued::Ended => {
                self.live = None;
                None
            }
        }
    }

    /// Whether record `seq` is next to deliver (it was not delivered already); it is taken.
    fn take(&mut self, seq: u64) -> bool {
        let next = seq > self.last;
        self.last = self.last.max(seq);
        next
    }

    async fn read_journal(&mut self) -> Result<(), ObserveError> {
        let (journal, run) = (self.hub.journal.as_ref(), &self.hub.run_id);
        let records = journal.read(run, self.last, CATCH_UP_BATCH).await?;
        if let (Some(first), Some(last)) = (records.first(), records.last())
            && self.hub.published_at(first.seq).is_none()
        {
            self.journal_times =
                AppendTimes::read(journal, run, self.last, last.seq, self.hub.started_unix_ms).await;
        }
        let before = self.pending.len();
        for (seq, event) in decoded(journal, records).await? {
            if seq <= self.catch_up_to {
                self.pending.push_back((seq, event));
            }
        }
        if self.pending.len() == before {
            // Every record up to the published position was committed before it was published:
            // a journal without the next one lost it, and skipping it would be a silent gap.
            return Err(ObserveError::Journal(JournalError::new(
                JournalErrorKind::InvalidRecord,
                format!(
                    "the journal of run `{}` does not hold record {}, which the run published",
                    self.hub.run_id,
                    self.last + 1
                ),
            )));
        }
        Ok(())
    }
}

/// The events a journal records for a run, in their public form under `view`: what a
/// subscription from the run's start delivers, each timed (`at_ms`, from the run's creation) by
/// when its record was appended, where the journal keeps that.
pub async fn events_from_journal(
    context: Arc<GraphContext>,
    journal: &dyn Journal,
    run: &RunId,
    view: &ViewPolicy,
) -> Result<Vec<GraphEvent>, ObserveError> {
    let (mut events, mut operations) = (Vec::new(), CallOperations::default());
    let created = created_unix_ms(journal, run).await?;
    let each = |seq, event: &Event, published| {
        let operation = operations.name(event);
        events.push(context.graph_event(seq, event, published, view, operation));
    };
    read_on(journal, run, &mut 0, usize::MAX, created, each).await?;
    Ok(events)
}

/// The graph a journal records for a run: the same fold the live observer makes, its nodes
/// timed by when their records were appended where the journal keeps that.
pub async fn snapshot_from_journal(
    context: Arc<GraphContext>,
    journal: &dyn Journal,
    run: &RunId,
    view: &ViewPolicy,
    options: &SnapshotOptions,
) -> Result<GraphSnapshot, ObserveError> {
    // Folded only: the records' public events are not wanted here, and a long run's would be many.
    let mut fold = JournalFold::new(context);
    let JournalFold { model, last_seq, .. } = &mut fold;
    let created = created_unix_ms(journal, run).await?;
    read_on(journal, run, last_seq, usize::MAX, created, |seq, event, published| {
        model.apply(seq, event, published.map(|published| published.at_ms))
    })
    .await?;
    Ok(fold.snapshot(view, options))
}

/// A run's graph folded from its journal as far as it has been read, read on from there: how
/// a reader follows a run that another process drives (a page server's stream of it) and reads
/// each record once, however long the run grows.
pub struct JournalFold {
    context: Arc<GraphContext>,
    model: GraphModel,
    last_seq: u64,
    /// When the run was created (its header's time), once read: what its events are timed from.
    created: Option<Option<u64>>,
    operations: CallOperations,
}

impl std::fmt::Debug for JournalFold {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JournalFold").field("last_seq", &self.last_seq).finish_non_exhaustive()
    }
}

impl JournalFold {
    /// Nothing read yet, of the run `context` is the graph context of.
    pub fn new(context: Arc<GraphContext>) -> JournalFold {
        JournalFold {
            model: GraphModel::new(Arc::clone(&context)),
            context,
            last_seq: 0,
            created: None,
            operations: CallOperations::default(),
        }
    }

    /// Reads the run's records after the last one read, at most `most` of them (a reader that
    /// must not hold a whole long run at once reads it in pages), folds them into the graph,
    /// and gives them back in their public form under `view`, in order. On an error, the
    /// records folded before it count as read: the next call reads on after them.
    pub async fn read_on(
        &mut self,
        journal: &dyn Journal,
        run: &RunId,
        view: &ViewPolicy,
        most: usize,
    ) -> Result<Vec<GraphEvent>, ObserveError> {
        let created = match self.created {
            Some(created) => created,
            None => *self.created.insert(created_unix_ms(journal, run).await?),
        };
        let JournalFold { context, model, last_seq, operations, .. } = self;
        let mut events = Vec::new();
        read_on(journal, run, last_seq, most, created, |seq, event, published| {
            model.apply(seq, event, published.map(|published| published.at_ms));
            let operation = operations.name(event);
            events.push(context.graph_event(seq, event, published, view, operation));
        })
        .await?;
        Ok(events)
    }

    /// The sequence number of the last record read.
    pub fn last_seq(&self) -> u64 {
        self.last_seq
    }

    /// The graph as of the last record read.
    pub fn snapshot(&self, view: &ViewPolicy, options: &SnapshotOptions) -> GraphSnapshot {
        self.model.snapshot(view, options)
    }
}

/// Hands each of the run's records after `after` to `each`, decoded, in order, moving `after`
/// past each, until `most` were or there are no more: after an error it is the last record
/// handed over. With the run's creation time `created` (where its header keeps it), each comes
/// with when it was appended, where the journal keeps that.
async fn read_on(
    journal: &dyn Journal,
    run: &RunId,
    after: &mut u64,
    mut most: usize,
    created: Option<u64>,
    mut each: impl FnMut(u64, &Event, Option<Published>),
) -> Result<(), ObserveError> {
    while most > 0 {
        let records = journal.read(run, *after, most.min(CATCH_UP_BATCH)).await?;
        let Some(last) = records.last().map(|record| record.seq) else { return Ok(()) };
        let times = match created {
            Some(created) => AppendTimes::read(journal, run, *after, last, created).await,
            None => AppendTimes::default(),
        };
        most -= records.len().min(most);
        for (seq, event) in decoded(journal, records).await? {
            each(seq, &event, times.of(seq));
            *after = seq;
        }
    }
    Ok(())
}

/// When run `run` was created, where its header keeps it.
async fn created_unix_ms(journal: &dyn Journal, run: &RunId) -> Result<Option<u64>, JournalError> {
    Ok(journal.header(run).await?.retained.map(|retained| retained.created_unix_ms))
}

/// When a page of a run's records were appended ([`Journal::append_times`]), as the times of
/// events counted from the run's creation.
#[derive(Default)]
struct AppendTimes {
    times: Vec<AppendTime>,
    created: u64,
}

impl AppendTimes {
    /// Advisory: where the times cannot be read, the events are delivered without them.
    async fn read(journal: &dyn Journal, run: &RunId, after: u64, through: u64, created: u64) -> AppendTimes {
        AppendTimes { times: journal.append_times(run, after, through).await.unwrap_or_default(), created }
    }

    /// When record `seq` was appended: the time of the first append through it or past it.
    fn of(&self, seq: u64) -> Option<Published> {
        let time = self.times.get(self.times.partition_point(|time| time.through_seq < seq))?;
        Some(Published { at_ms: time.unix_ms.saturating_sub(self.created), unix_ms: time.unix_ms })
    }
}

/// The events of `records`, in order, with the values they keep in blobs put back.
async fn decoded(journal: &dyn Journal, records: Vec<Record>) -> Result<Vec<(u64, Event)>, ObserveError> {
    let mut events = Vec::with_capacity(records.len());
    for record in records {
        let mut event = Event::decode_record(&record)?;
        event.attach_blobs(journal).await?;
        events.push((record.seq, event));
    }
    Ok(events)
}
