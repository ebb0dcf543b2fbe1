//! Run events at the boundary: the borrowed `runlet_event` view, bounded queues that drop with
//! an `EVENTS_DROPPED` marker instead of blocking the run, the per-runtime listener dispatcher
//! thread, and the owned events of the pull API.

use std::collections::{BTreeMap, VecDeque};
use std::ffi::c_void;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex};
use runlet::engine::event::Event;
use runlet::observe::GraphEvent;

use crate::error::{Error, RUNLET_ERR_NULL_ARGUMENT};
use crate::executor::UserData;
use crate::reentrancy::call_host;
use crate::strings::runlet_str;
use crate::versioned::{Versioned, copy_in};

/// The kind of the marker that stands for events a slow consumer missed. Its `seq` is the first
/// missed sequence number and its payload `{"seq": S, "kind": "EventsDropped", "dropped": N,
/// "first_seq": S}`; re-read them from the journal. Markers are delivered whatever the `kind_mask`.
pub const RUNLET_EVENT_EVENTS_DROPPED: u32 = 63;

/// A `kind_mask` selecting every kind.
pub const RUNLET_EVENT_MASK_ALL: u64 = u64::MAX;

/// One committed run event, borrowed for the duration of the callback (or, from the pull API,
/// until `runlet_event_owned_free`).
///
/// `kind` is the event's stable kind number (`RunCreated` is 1, …; the engine's journal kind
/// numbers) or `RUNLET_EVENT_EVENTS_DROPPED`, and `kind_name` its name. `payload_json` is the
/// event's public JSON object, the same one `runlet run --events` writes: `seq`, `kind`, `node`,
/// `tool`, `at_ms` and the kind's fields, with values and value-derived metadata redacted under
/// the runtime's `view` policy before they cross the boundary.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct runlet_event {
    pub struct_size: usize,
    pub kind: u32,
    pub kind_name: runlet_str,
    pub run_id: runlet_str,
    pub seq: u64,
    pub unix_ms: i64,
    pub payload_json: runlet_str,
}

/// A host's event listener, copied when the runtime is created.
///
/// `on_event(user_data, event)` runs on the runtime's one dispatcher thread, never twice at once;
/// per run, events arrive in `seq` order. Kinds whose bit (`1 << kind`) is clear in `kind_mask`
/// are skipped. A slow listener never blocks a run: past the runtime's `event_queue_capacity`
/// events are dropped and an `RUNLET_EVENT_EVENTS_DROPPED` marker is delivered in their place;
/// a run's end (`RunSucceeded`, `RunFailed` or `RunCancelled`) never is (a run stopped by a
/// journal failure or a panic journals no end).
/// `drop(user_data)` (optional) is called exactly once after the last `on_event`, also when
/// registration fails. Set `struct_size` with `RUNLET_EVENT_LISTENER_INIT`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct runlet_event_listener {
    pub struct_size: usize,
    pub user_data: *mut c_void,
    pub kind_mask: u64,
    pub on_event: Option<unsafe extern "C" fn(user_data: *mut c_void, event: *const runlet_event)>,
    pub drop: Option<unsafe extern "C" fn(user_data: *mut c_void)>,
}

// SAFETY: `struct_size` first; integers, pointers and optional function pointers are valid zeroed.
unsafe impl Versioned for runlet_event_listener {
    const NAME: &'static str = "runlet_event_listener";
    const KNOWN_SIZES: &'static [usize] = &[std::mem::size_of::<runlet_event_listener>()];
}

/// An event as Runlet keeps it until it is delivered. Its JSON is made when a consumer first
/// looks at the event, so events a full queue drops, or a consumer frees unseen, cost no
/// serialization.
#[derive(Debug, PartialEq)]
pub(crate) struct OwnedEvent {
    kind: u32,
    kind_name: &'static str,
    run_id: Arc<str>,
    seq: u64,
    unix_ms: i64,
    /// The public event whose JSON `payload_json` is, until that is made.
    public: Option<GraphEvent>,
    payload_json: OnceLock<String>,
}

impl OwnedEvent {
    /// A committed event in its public form: `payload_json` is the event as `runlet run
    /// --events` writes it, already redacted under the runtime's view policy, and `unix_ms` its
    /// publication time on the observer's clock.
    pub(crate) fn published(run_id: &Arc<str>, public: GraphEvent) -> OwnedEvent {
        OwnedEvent {
            kind: u32::from(public.kind_number),
            kind_name: public.kind,
            run_id: Arc::clone(run_id),
            seq: public.seq,
            unix_ms: public.unix_ms.map_or(0, |ms| i64::try_from(ms).unwrap_or(i64::MAX)),
            public: Some(public),
            payload_json: OnceLock::new(),
        }
    }

    /// The event's JSON object, made on first use.
    fn payload_json(&self) -> &str {
        self.payload_json.get_or_init(|| {
            self.public.as_ref().map_or_else(String::new, |public| {
                serde_json::to_string(public).unwrap_or_else(|_| "{}".to_owned())
            })
        })
    }

    fn dropped(run_id: &Arc<str>, missed: Missed) -> OwnedEvent {
        OwnedEvent {
            kind: RUNLET_EVENT_EVENTS_DROPPED,
            kind_name: "EventsDropped",
            run_id: Arc::clone(run_id),
            seq: missed.first_seq,
            unix_ms: missed.first_unix_ms,
            public: None,
            payload_json: OnceLock::from(format!(
                r#"{{"seq":{seq},"kind":"EventsDropped","dropped":{count},"first_seq":{seq}}}"#,
                seq = missed.first_seq,
                count = missed.count
            )),
        }
    }

    /// The borrowed C view; valid while `self` is.
    fn view(&self) -> runlet_event {
        runlet_event {
            struct_size: std::mem::size_of::<runlet_event>(),
            kind: self.kind,
            kind_name: runlet_str::of(self.kind_name),
            run_id: runlet_str::of(&self.run_id),
            seq: self.seq,
            unix_ms: self.unix_ms,
            payload_json: runlet_str::of(self.payload_json()),
        }
    }
}

/// Events of one run a full queue did not take.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Missed {
    first_seq: u64,
    /// When the first missed event was published: the marker's time.
    first_unix_ms: i64,
    count: u64,
}

#[derive(Debug, Default)]
struct QueueState {
    items: VecDeque<Arc<OwnedEvent>>,
    /// Per run, the events dropped since its last accepted one.
    missed: BTreeMap<Arc<str>, Missed>,
    closed: bool,
}

/// What waiting on a queue gave.
#[derive(Debug, PartialEq)]
pub(crate) enum Popped {
    Event(Arc<OwnedEvent>),
    TimedOut,
    Closed,
}

/// A bounded queue of events from any number of runs. A push never blocks: when the queue is
/// full the event is counted as missed for its run, and the run's next accepted event (or its
/// end) is preceded by one `EVENTS_DROPPED` marker, so each run's events stay in order. The
/// event that ends a run is always accepted, so a consumer always learns how each run ended. It
/// holds at least two: a marker needs room beside the event it precedes.
#[derive(Debug)]
pub(crate) struct EventQueue {
    capacity: usize,
    state: Mutex<QueueState>,
    ready: Condvar,
}

impl EventQueue {
    pub(crate) fn new(capacity: usize) -> EventQueue {
        EventQueue {
            capacity: capacity.max(2),
            state: Mutex::new(QueueState::default()),
            ready: Condvar::new(),
        }
    }

    /// Queues `event`, or counts it as missed; whether the queue held nothing before and now
    /// does (a consumer that drains it empty needs telling only then).
    pub(crate) fn push(&self, event: Arc<OwnedEvent>) -> bool {
        let mut state = self.state.lock();
        let was_empty = state.items.is_empty();
        let pending = state.missed.get(&event.run_id).copied();
        // A run's end is never dropped: at most one per run goes past the capacity.
        let ends_run = u16::try_from(event.kind).is_ok_and(Event::ends_run);
        let room = if ends_run { usize::MAX } else { self.capacity.saturating_sub(state.items.len()) };
        match pending {
            Some(missed) if room >= 2 => {
                state.missed.remove(&event.run_id);
                state.items.push_back(Arc::new(OwnedEvent::dropped(&event.run_id, missed)));
                state.items.push_back(event);
            }
            Some(_) => {
                if let Some(missed) = state.missed.get_mut(&event.run_id) {
                    missed.count += 1;
                }
                return false;
            }
            None if room >= 1 => state.items.push_back(event),
            None => {
                state.missed.insert(
                    Arc::clone(&event.run_id),
                    Missed { first_seq: event.seq, first_unix_ms: event.unix_ms, count: 1 },
                );
                return false;
            }
        }
        self.ready.notify_all();
        was_empty
    }

    /// The run has no more events: its pending marker is queued even past the capacity.
    pub(crate) fn end_run(&self, run_id: &Arc<str>) {
        let mut state = self.state.lock();
        if let Some(missed) = state.missed.remove(run_id) {
            state.items.push_back(Arc::new(OwnedEvent::dropped(run_id, missed)));
            self.ready.notify_all();
        }
    }

    /// No more pushes: consumers drain what is queued, then see `Closed`.
    pub(crate) fn close(&self) {
        self.state.lock().closed = true;
        self.ready.notify_all();
    }

    /// The next event, waiting up to `timeout` (forever for `None`).
    pub(crate) fn pop(&self, timeout: Option<Duration>) -> Popped {
        let deadline = timeout.map(|t| Instant::now() + t);
        let mut state = self.state.lock();
        loop {
            if let Some(event) = state.items.pop_front() {
                return Popped::Event(event);
            }
            if state.closed {
                return Popped::Closed;
            }
            match deadline {
                None => self.ready.wait(&mut state),
                Some(deadline) => {
                    if self.ready.wait_until(&mut state, deadline).timed_out() && state.items.is_empty() {
                        return if state.closed { Popped::Closed } else { Popped::TimedOut };
                    }
                }
            }
        }
    }
}

/// The registered listener; dropping it calls the host's `drop` once.
#[derive(Debug)]
struct HostListener {
    user_data: UserData,
    on_event: unsafe extern "C" fn(*mut c_void, *const runlet_event),
    drop: Option<unsafe extern "C" fn(*mut c_void)>,
}

impl Drop for HostListener {
    fn drop(&mut self) {
        if let Some(drop) = self.drop {
            let user_data = self.user_data;
            // SAFETY: the host's own function with its own pointer, called once.
            call_host(|| unsafe { drop(user_data.0) });
        }
    }
}

/// The runtime's dispatcher: one thread delivering the queue's events to the listener.
#[derive(Debug)]
pub(crate) struct Dispatcher {
    sink: ListenerSink,
    thread: std::thread::JoinHandle<()>,
}

/// Where runs push events for the listener: its queue and the kinds it takes.
#[derive(Debug, Clone)]
pub(crate) struct ListenerSink {
    queue: Arc<EventQueue>,
    kind_mask: u64,
}

impl ListenerSink {
    /// Whether the listener takes events of `kind`.
    pub(crate) fn wants(&self, kind: u32) -> bool {
        kind >= 64 || self.kind_mask & (1u64 << kind) != 0
    }

    pub(crate) fn queue(&self) -> &EventQueue {
        &self.queue
    }
}

/// A copied listener, not yet running.
#[derive(Debug)]
pub(crate) struct Listener {
    host: HostListener,
    kind_mask: u64,
}

impl Listener {
    /// Copies and checks the host's struct. When it is readable but invalid, its `drop` is
    /// called before the error returns.
    ///
    /// # Safety
    /// `raw` is NULL or points at a readable `runlet_event_listener` of its `struct_size`.
    pub(crate) unsafe fn adopt(raw: *const runlet_event_listener) -> Result<Listener, Error> {
        // SAFETY: forwarded from the caller.
        let copied = unsafe { copy_in(raw) }?;
        let drop = copied.drop;
        let Some(on_event) = copied.on_event else {
            if let Some(drop) = drop {
                // SAFETY: the host's own function with its own pointer, called once.
                call_host(|| unsafe { drop(copied.user_data) });
            }
            return Err(Error::new(RUNLET_ERR_NULL_ARGUMENT, "`runlet_event_listener.on_event` is NULL"));
        };
        let host = HostListener { user_data: UserData(copied.user_data), on_event, drop };
        Ok(Listener { host, kind_mask: copied.kind_mask })
    }

    /// Starts the dispatcher thread; on failure the listener is dropped (its `drop` runs).
    pub(crate) fn start(self, capacity: usize) -> std::io::Result<Dispatcher> {
        let queue = Arc::new(EventQueue::new(capacity));
        let delivered = Arc::clone(&queue);
        let Listener { host, kind_mask } = self;
        let thread = std::thread::Builder::new().name("runlet-events".into()).spawn(move || {
            while let Popped::Event(event) = delivered.pop(None) {
                let view = event.view();
                // SAFETY: the host's function with its pointer and a view living through the call.
                call_host(|| unsafe { (host.on_event)(host.user_data.0, &view) });
            }
            drop(host);
        })?;
        Ok(Dispatcher { sink: ListenerSink { queue, kind_mask }, thread })
    }
}

impl Dispatcher {
    pub(crate) fn sink(&self) -> &ListenerSink {
        &self.sink
    }

    /// Closes the queue and waits for the thread to deliver the rest and drop the listener.
    pub(crate) fn stop(self) {
        self.sink.queue.close();
        let _ = self.thread.join();
    }
}

/// An event taken with `runlet_run_next_event`; the host frees it with `runlet_event_owned_free`.
#[derive(Debug)]
pub struct runlet_event_owned {
    event: Arc<OwnedEvent>,
    view: runlet_event,
}

impl runlet_event_owned {
    pub(crate) fn new(event: Arc<OwnedEvent>) -> runlet_event_owned {
        let view = event.view();
        runlet_event_owned { event, view }
    }
}

/// The event inside `owned`; valid until `runlet_event_owned_free(owned)`. NULL for NULL.
///
/// Thread-safety: any thread, concurrently.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn runlet_event_owned_get(owned: *const runlet_event_owned) -> *const runlet_event {
    ffi_boundary!(*const runlet_event, {
        // SAFETY: the caller passes NULL or a live owned event.
        unsafe { owned.as_ref() }.map_or(std::ptr::null(), |owned| {
            debug_assert_eq!(owned.view.seq, owned.event.seq);
            &owned.view
        })
    })
}

/// Frees an event from `runlet_run_next_event`. NULL is a no-op; free each at most once.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn runlet_event_owned_free(owned: *mut runlet_event_owned) {
    ffi_boundary!((), {
        // SAFETY: the caller passes NULL or a live owned event, freed once.
        drop(unsafe { crate::handle::take(owned) });
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(run: &Arc<str>, seq: u64) -> Arc<OwnedEvent> {
        Arc::new(OwnedEvent {
            kind: 2,
            kind_name: "NodeReady",
            run_id: Arc::clone(run),
            seq,
            unix_ms: 0,
            public: None,
            payload_json: OnceLock::from(format!(r#"{{"seq":{seq},"kind":"NodeReady"}}"#)),
        })
    }

    fn drain(queue: &EventQueue) -> Vec<(u32, u64, String)> {
        let mut out = Vec::new();
        while let Popped::Event(e) = queue.pop(Some(Duration::ZERO)) {
            out.push((e.kind, e.seq, e.payload_json().to_owned()));
        }
        out
    }

    #[test]
    fn a_full_queue_drops_and_marks_per_run_in_order() {
        let queue = EventQueue::new(3);
        let a: Arc<str> = Arc::from("a");
        let b: Arc<str> = Arc::from("b");
        for seq in 1..=5 {
            queue.push(event(&a, seq));
        }
        queue.push(event(&b, 1));
        let first = drain(&queue);
        assert_eq!(first.iter().map(|e| e.1).collect::<Vec<_>>(), [1, 2, 3]);
        queue.push(event(&a, 6));
        queue.push(event(&b, 2));
        queue.end_run(&b);
        let second = drain(&queue);
        assert_eq!(
            second,
            [
                (
                    RUNLET_EVENT_EVENTS_DROPPED,
                    4,
                    r#"{"seq":4,"kind":"EventsDropped","dropped":2,"first_seq":4}"#.to_owned()
                ),
                (2, 6, r#"{"seq":6,"kind":"NodeReady"}"#.to_owned()),
                (
                    RUNLET_EVENT_EVENTS_DROPPED,
                    1,
                    r#"{"seq":1,"kind":"EventsDropped","dropped":2,"first_seq":1}"#.to_owned()
                ),
            ]
        );
    }

    #[test]
    fn a_push_says_when_the_queue_stops_being_empty() {
        let queue = EventQueue::new(2);
        let run: Arc<str> = Arc::from("r");
        assert!(queue.push(event(&run, 1)), "the first event");
        assert!(!queue.push(event(&run, 2)), "the queue held one already");
        assert!(!queue.push(event(&run, 3)), "dropped");
        drain(&queue);
        assert!(queue.push(event(&run, 4)), "after the queue was drained: a marker and the event");
    }

    #[test]
    fn a_run_s_end_goes_past_the_capacity_after_its_marker() {
        let queue = EventQueue::new(2);
        let run: Arc<str> = Arc::from("r");
        for seq in 1..=4 {
            queue.push(event(&run, seq));
        }
        let end = OwnedEvent {
            kind: u32::from(Event::RunSucceeded.kind_number()),
            kind_name: "RunSucceeded",
            payload_json: OnceLock::from(r#"{"seq":5,"kind":"RunSucceeded"}"#.to_owned()),
            ..Arc::into_inner(event(&run, 5)).expect("one owner")
        };
        queue.push(Arc::new(end));
        let kinds: Vec<(u32, u64)> = drain(&queue).into_iter().map(|(kind, seq, _)| (kind, seq)).collect();
        assert_eq!(kinds, [(2, 1), (2, 2), (RUNLET_EVENT_EVENTS_DROPPED, 3), (13, 5)]);
    }

    #[test]
    fn a_queue_of_one_still_delivers_after_a_miss() {
        let queue = EventQueue::new(1);
        let run: Arc<str> = Arc::from("r");
        for seq in 1..=3 {
            queue.push(event(&run, seq));
        }
        assert_eq!(drain(&queue).iter().map(|e| e.1).collect::<Vec<_>>(), [1, 2]);
        queue.push(event(&run, 4));
        queue.push(event(&run, 5));
        let kinds: Vec<(u32, u64)> = drain(&queue).into_iter().map(|(kind, seq, _)| (kind, seq)).collect();
        assert_eq!(kinds, [(RUNLET_EVENT_EVENTS_DROPPED, 3), (2, 4)]);
    }

    #[test]
    fn pops_time_out_and_see_the_close_after_draining() {
        let queue = EventQueue::new(4);
        assert_eq!(queue.pop(Some(Duration::from_millis(1))), Popped::TimedOut);
        let run: Arc<str> = Arc::from("r");
        queue.push(event(&run, 1));
        queue.close();
        assert!(matches!(queue.pop(None), Popped::Event(e) if e.seq == 1));
        assert_eq!(queue.pop(None), Popped::Closed);
    }
}
