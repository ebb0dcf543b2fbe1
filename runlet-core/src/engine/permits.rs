//! Call permits (spec §4.5): the concurrency caps a tool call must hold a permit of while it runs
//! — runtime-wide, per run, per resource group, per tool — taken all-or-nothing in one global key
//! order so they cannot deadlock, with waiting calls granted in arrival order. Tool and group
//! caps may also span processes: a call then takes the same keys from a store the processes
//! share ([`super::shared_permits`]) once it holds its own process's.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::sync::{Arc, Mutex, PoisonError};

use tokio::sync::oneshot;

use super::shared_permits::{self, SharedKey, SharedPermit, SharedPermits};
use crate::journal::RunId;
use crate::registry::{Registry, ToolId};

/// A capped resource. The derived order is the global acquisition order.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ResourceKey {
    /// Every call of the runtime (the runtime's `concurrency` limit).
    Runtime,
    /// Every call of one run (a run's own `concurrency` limit).
    Run(String),
    /// Every call of the tools of a registry `resource_groups` entry.
    Group(String),
    /// Every call of one tool (its registry `max_concurrency`).
    Tool(String),
}

impl fmt::Display for ResourceKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ResourceKey::Runtime => f.write_str("runtime"),
            ResourceKey::Run(run) => write!(f, "run:{run}"),
            ResourceKey::Group(group) => write!(f, "group:{group}"),
            ResourceKey::Tool(tool) => write!(f, "tool:{tool}"),
        }
    }
}

/// Names one permit request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Ticket(u64);

/// The permit ledger, without I/O: caps, permits held, and requests waiting in arrival order. A
/// request is granted only when every key it needs has room, and then takes all of them at once,
/// so no holder ever waits for another permit: there is no cycle to deadlock on.
#[derive(Debug, Clone, Default)]
pub struct PermitTable {
    caps: BTreeMap<ResourceKey, u64>,
    held: BTreeMap<ResourceKey, u64>,
    waiting: BTreeMap<Ticket, Vec<ResourceKey>>,
    granted: BTreeMap<Ticket, Vec<ResourceKey>>,
    next: u64,
}

impl PermitTable {
    pub fn new() -> PermitTable {
        PermitTable::default()
    }

    /// Caps `key` at `cap` permits (at least 1, so every call can eventually run).
    pub fn set_cap(&mut self, key: ResourceKey, cap: u64) {
        self.caps.insert(key, cap.max(1));
    }

    /// Removes `key`'s cap: calls needing it no longer wait for it. Returns the requests this
    /// grants.
    pub fn remove_cap(&mut self, key: &ResourceKey) -> Vec<Ticket> {
        self.caps.remove(key);
        self.grant_waiting()
    }

    /// Asks for a permit of every key in `keys` (keys without a cap are free). Granted at once
    /// when all have room and no earlier request is waiting for one of them; otherwise queued.
    pub fn request(&mut self, keys: &[ResourceKey]) -> (Ticket, bool) {
        let ticket = Ticket(self.next);
        self.next += 1;
        let needed = self.capped(keys);
        self.waiting.insert(ticket, needed);
        // Every earlier request is blocked, and a new one frees nothing: only it can start.
        let granted = self.grant_waiting();
        (ticket, granted.contains(&ticket))
    }

    /// Gives back `ticket`'s permits, or withdraws it if it is still waiting. Returns the
    /// requests this grants, in arrival order.
    pub fn release(&mut self, ticket: Ticket) -> Vec<Ticket> {
        if self.waiting.remove(&ticket).is_none() {
            for key in self.granted.remove(&ticket).unwrap_or_default() {
                if let Some(count) = self.held.get_mut(&key) {
                    *count -= 1;
                    if *count == 0 {
                        self.held.remove(&key);
                    }
                }
            }
        }
        self.grant_waiting()
    }

    /// Permits of `key` held now.
    pub fn in_use(&self, key: &ResourceKey) -> u64 {
        self.held.get(key).copied().unwrap_or(0)
    }

    /// Requests waiting for permits ("blocked on permits").
    pub fn waiting(&self) -> usize {
        self.waiting.len()
    }

    /// Those of `keys` that have a cap, in acquisition order.
    fn capped(&self, keys: &[ResourceKey]) -> Vec<ResourceKey> {
        let capped: BTreeSet<&ResourceKey> = keys.iter().filter(|k| self.caps.contains_key(*k)).collect();
        capped.into_iter().cloned().collect()
    }

    /// Grants, in arrival order, every waiting request that fits. A request that does not fit
    /// reserves the keys it lacks room on, so a later request cannot take the next free permit
    /// of such a key ahead of it (no starvation); keys that still have room stay open to later
    /// requests, so one full group does not hold up calls that do not need it.
    fn grant_waiting(&mut self) -> Vec<Ticket> {
        let mut granted = Vec::new();
        let mut reserved: BTreeSet<ResourceKey> = BTreeSet::new();
        let tickets: Vec<Ticket> = self.waiting.keys().copied().collect();
        for ticket in tickets {
            let needed = &self.waiting[&ticket];
            let full: Vec<ResourceKey> = needed.iter().filter(|k| !self.has_room(k)).cloned().collect();
            if full.is_empty() && needed.iter().all(|k| !reserved.contains(k)) {
                let needed = self.waiting.remove(&ticket).unwrap_or_default();
                self.take(ticket, needed);
                granted.push(ticket);
            } else {
                reserved.extend(full);
            }
        }
        granted
    }

    fn has_room(&self, key: &ResourceKey) -> bool {
        self.in_use(key) < self.caps.get(key).copied().unwrap_or(u64::MAX)
    }

    fn take(&mut self, ticket: Ticket, needed: Vec<ResourceKey>) {
        for key in &needed {
            *self.held.entry(key.clone()).or_insert(0) += 1;
        }
        self.granted.insert(ticket, needed);
    }
}

/// A [`PermitTable`] shared by every run of a runtime, waking the calls it grants.
#[derive(Debug, Default)]
pub struct Permits {
    inner: Mutex<Shared>,
}

#[derive(Debug, Default)]
struct Shared {
    table: PermitTable,
    wakers: BTreeMap<Ticket, oneshot::Sender<()>>,
}

impl Permits {
    /// The permits a registry's tools declare (`max_concurrency`, `resource_groups`) under a
    /// runtime-wide `concurrency` cap, if any.
    pub fn for_registry(registry: &Registry, concurrency: Option<u64>) -> Permits {
        let mut table = PermitTable::new();
        if let Some(cap) = concurrency {
            table.set_cap(ResourceKey::Runtime, cap);
        }
        for (name, cap) in registry.resource_groups() {
            table.set_cap(ResourceKey::Group(name.clone()), *cap);
        }
        for (_, tool) in registry.tools() {
            if let Some(cap) = tool.max_concurrency {
                table.set_cap(ResourceKey::Tool(tool.name.to_string()), cap);
            }
        }
        Permits { inner: Mutex::new(Shared { table, wakers: BTreeMap::new() }) }
    }

    /// Caps the calls of run `run` at `cap` until [`Permits::end_run`].
    pub fn start_run(&self, run: &RunId, cap: u64) {
        self.lock().table.set_cap(run_key(run), cap);
    }

    /// Forgets run `run`'s own cap.
    pub fn end_run(&self, run: &RunId) {
        let mut shared = self.lock();
        let granted = shared.table.remove_cap(&run_key(run));
        shared.wake(granted);
    }

    /// Queues a request for `keys` now (so requests are ordered as they are made); await the
    /// returned request for the permits. Dropping it, granted or not, gives everything back.
    pub fn request(self: &Arc<Self>, keys: &[ResourceKey]) -> PermitRequest {
        let mut shared = self.lock();
        let (ticket, granted) = shared.table.request(keys);
        let wait = if granted {
            None
        } else {
            let (wake, wait) = oneshot::channel();
            shared.wakers.insert(ticket, wake);
            Some(wait)
        };
        let blocked_on = if granted { Vec::new() } else { shared.table.capped(keys) };
        PermitRequest { permits: Arc::clone(self), ticket, wait, blocked_on, shared: None, held: None }
    }

    /// Permits of `key` held now, over every run.
    pub fn in_use(&self, key: &ResourceKey) -> u64 {
        self.lock().table.in_use(key)
    }

    /// Calls blocked on permits now, over every run.
    pub fn waiting(&self) -> usize {
        self.lock().table.waiting()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Shared> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Shared {
    fn wake(&mut self, granted: Vec<Ticket>) {
        for ticket in granted {
            if let Some(wake) = self.wakers.remove(&ticket) {
                let _ = wake.send(());
            }
        }
    }
}

fn run_key(run: &RunId) -> ResourceKey {
    ResourceKey::Run(run.as_str().to_owned())
}

/// One call's request for its permits; holds them once granted, until dropped.
#[derive(Debug)]
pub struct PermitRequest {
    permits: Arc<Permits>,
    ticket: Ticket,
    wait: Option<oneshot::Receiver<()>>,
    blocked_on: Vec<ResourceKey>,
    /// The keys still to take from the store processes share, once this process's are held.
    shared: Option<(Arc<dyn SharedPermits>, Vec<SharedKey>)>,
    /// The permits taken from that store.
    held: Option<SharedPermit>,
}

impl PermitRequest {
    /// The capped resources of this process the request waits for; empty when they were
    /// granted at once.
    pub fn blocked_on(&self) -> &[ResourceKey] {
        &self.blocked_on
    }

    /// Whether every permit is held already: nothing to wait for, here or in a shared store.
    pub fn is_granted(&self) -> bool {
        self.wait.is_none() && self.shared.is_none()
    }

    /// Waits until every permit is held: this process's, then the shared store's. `waiting`
    /// hears the shared keys if the store makes the call wait for them.
    pub async fn granted(&mut self, waiting: impl FnOnce(&[ResourceKey])) {
        if let Some(wait) = self.wait.take() {
            let _ = wait.await;
        }
        if let Some((store, keys)) = self.shared.take() {
            let blocked: Vec<ResourceKey> = keys.iter().map(|k| k.key.clone()).collect();
            self.held = Some(shared_permits::take(&*store, &keys, || waiting(&blocked)).await);
        }
    }
}

impl Drop for PermitRequest {
    fn drop(&mut self) {
        let mut shared = self.permits.lock();
        shared.wakers.remove(&self.ticket);
        let granted = shared.table.release(self.ticket);
        shared.wake(granted);
    }
}

/// The capped resources each tool's calls need, by `ToolId` index: the runtime-wide cap when
/// `runtime_cap`, the tool's resource group and its own `max_concurrency`. Computed once per
/// runtime.
pub fn tool_keys(registry: &Registry, runtime_cap: bool) -> Arc<[Vec<ResourceKey>]> {
    registry
        .tools()
        .map(|(_, tool)| {
            let mut keys = Vec::new();
            if runtime_cap {
                keys.push(ResourceKey::Runtime);
            }
            if let Some(group) = &tool.resource_group {
                keys.push(ResourceKey::Group(group.clone()));
            }
            if tool.max_concurrency.is_some() {
                keys.push(ResourceKey::Tool(tool.name.to_string()));
            }
            keys
        })
        .collect()
}

/// Hears which calls wait for permits and when they get them. Waits for permits are not
/// journaled, so this is how an observer tells a call blocked on a permit from one blocked on
/// data (spec §6.3); the runtime hands the run's observer to the shell as one.
pub trait PermitWaits: Send + Sync {
    /// The ready call `node` waits for the permits of `resources`.
    fn waiting(&self, node: &str, resources: Vec<String>);
    /// The call `node` waits no more: it holds its permits now, or it was cancelled.
    fn granted(&self, node: &str);
}

/// A store of permits shared with other processes, and the keys each tool's calls take from it
/// (by `ToolId` index): its resource group's cap and its own `max_concurrency`, sorted.
#[derive(Debug, Clone)]
pub struct SharedCaps {
    store: Arc<dyn SharedPermits>,
    keys: Arc<[Vec<SharedKey>]>,
}

impl SharedCaps {
    /// The caps of `registry`'s tools, taken from `store`. Computed once per runtime.
    pub fn new(store: Arc<dyn SharedPermits>, registry: &Registry) -> SharedCaps {
        let keys = registry
            .tools()
            .map(|(_, tool)| {
                let group = tool.resource_group.as_ref().and_then(|group| {
                    let cap = *registry.resource_groups().get(group)?;
                    Some(SharedKey { key: ResourceKey::Group(group.clone()), cap })
                });
                let own = tool
                    .max_concurrency
                    .map(|cap| SharedKey { key: ResourceKey::Tool(tool.name.to_string()), cap });
                let mut keys: Vec<SharedKey> = group.into_iter().chain(own).collect();
                keys.sort();
                keys
            })
            .collect();
        SharedCaps { store, keys }
    }
}

/// How one run's calls take permits: the tools' keys, the run's own cap if it has one, and the
/// store of permits shared with other processes if the runtime has one.
#[derive(Debug, Clone)]
pub struct RunPermits {
    permits: Arc<Permits>,
    tool_keys: Arc<[Vec<ResourceKey>]>,
    run: Option<ResourceKey>,
    shared: Option<SharedCaps>,
}

impl RunPermits {
    /// For run `own` (when it has its own cap, set with [`Permits::start_run`]) with the
    /// runtime's [`tool_keys`].
    pub fn new(permits: Arc<Permits>, tool_keys: Arc<[Vec<ResourceKey>]>, own: Option<&RunId>) -> RunPermits {
        RunPermits { permits, tool_keys, run: own.map(run_key), shared: None }
    }

    /// Also takes each call's shared keys from the store of `caps`.
    pub fn sharing(mut self, caps: SharedCaps) -> RunPermits {
        self.shared = Some(caps);
        self
    }

    /// Queues the permit request of a call of `tool`.
    pub fn request(&self, tool: ToolId) -> PermitRequest {
        let mut keys = self.tool_keys.get(tool.index()).cloned().unwrap_or_default();
        keys.extend(self.run.clone());
        let mut request = self.permits.request(&keys);
        if let Some(caps) = &self.shared {
            let keys = caps.keys.get(tool.index()).cloned().unwrap_or_default();
            if !keys.is_empty() {
                request.shared = Some((Arc::clone(&caps.store), keys));
            }
        }
        request
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(name: &str) -> ResourceKey {
        ResourceKey::Group(name.to_owned())
    }

    /// Random requests over several overlapping keys, released in random orders: no cap is ever
    /// exceeded, nothing that fits is left waiting, and everything is granted in the end.
    #[test]
    fn seeded_simulation_never_exceeds_a_cap_and_never_deadlocks() {
        let keys = [key("a"), key("b"), key("c"), ResourceKey::Runtime, ResourceKey::Tool("t".into())];
        for seed in 1..=300u64 {
            let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
            let mut random = move |n: u64| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                state % n
            };
            let mut table = PermitTable::new();
            for (i, k) in keys.iter().enumerate() {
                table.set_cap(k.clone(), 1 + (seed + i as u64) % 3);
            }
            let mut holding: Vec<Ticket> = Vec::new();
            let mut asked = 0;
            let mut granted_total = 0;
            while asked < 40 || !holding.is_empty() {
                if asked < 40 && (holding.is_empty() || random(2) == 0) {
                    let wanted: Vec<ResourceKey> =
                        keys.iter().filter(|_| random(3) == 0).cloned().rev().collect();
                    let (ticket, granted) = table.request(&wanted);
                    asked += 1;
                    if granted {
                        holding.push(ticket);
                        granted_total += 1;
                    }
                } else {
                    let ticket = holding.swap_remove(random(holding.len() as u64) as usize);
                    let woken = table.release(ticket);
                    granted_total += woken.len();
                    holding.extend(woken);
                }
                for k in &keys {
                    assert!(table.in_use(k) <= table.caps[k], "seed {seed}: {k:?} over its cap");
                }
                let mut pass = table.clone();
                assert_eq!(pass.grant_waiting(), vec![], "seed {seed}: a waiting request fits");
                assert!(
                    table.waiting() == 0 || !holding.is_empty(),
                    "seed {seed}: requests wait while nothing is held"
                );
            }
            assert_eq!((table.waiting(), granted_total), (0, 40), "seed {seed}");
        }
    }

    #[test]
    fn waiting_requests_start_in_arrival_order() {
        let mut table = PermitTable::new();
        table.set_cap(key("g"), 1);
        let (first, granted) = table.request(&[key("g")]);
        assert!(granted);
        let (second, _) = table.request(&[key("g")]);
        let (third, _) = table.request(&[key("g")]);
        assert_eq!(table.release(first), vec![second]);
        assert_eq!(table.release(second), vec![third]);
        assert_eq!(table.release(third), vec![]);
    }

    #[test]
    fn a_later_request_does_not_overtake_a_waiting_one_on_a_full_key() {
        let mut table = PermitTable::new();
        table.set_cap(key("a"), 1);
        table.set_cap(key("b"), 1);
        table.set_cap(ResourceKey::Runtime, 2);
        let (holds_a, _) = table.request(&[ResourceKey::Runtime, key("a")]);
        let (waits_for_a, granted) = table.request(&[ResourceKey::Runtime, key("a")]);
        assert!(!granted);
        let (overtakes, granted) = table.request(&[key("a")]);
        assert!(!granted, "the next permit of `a` belongs to the earlier request");
        let (needs_b, granted) = table.request(&[ResourceKey::Runtime, key("b")]);
        assert!(granted, "a full `a` does not hold up a call that needs only room the runtime has");
        let (wants_free, granted) = table.request(&[ResourceKey::Tool("free".into())]);
        assert!(granted, "a key without a cap is free");
        assert_eq!(table.release(holds_a), vec![waits_for_a]);
        assert_eq!(table.release(waits_for_a), vec![overtakes]);
        for ticket in [overtakes, needs_b, wants_free] {
            table.release(ticket);
        }
        assert_eq!((table.waiting(), table.in_use(&ResourceKey::Runtime)), (0, 0));
    }

    #[test]
    fn a_withdrawn_request_is_forgotten_and_removing_a_cap_wakes_its_waiters() {
        let mut table = PermitTable::new();
        table.set_cap(key("a"), 1);
        let (held, _) = table.request(&[key("a")]);
        let (withdrawn, _) = table.request(&[key("a")]);
        let (waiting, _) = table.request(&[key("a")]);
        assert_eq!(table.release(withdrawn), vec![]);
        assert_eq!(table.remove_cap(&key("a")), vec![waiting]);
        table.release(held);
        table.release(waiting);
        assert_eq!((table.waiting(), table.in_use(&key("a"))), (0, 0));
    }
}
