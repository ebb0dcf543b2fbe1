//! Permits held in a store that many processes share (spec §4.5): a tool's `max_concurrency`
//! and a resource group's cap then hold over every process whose runtime takes permits from the
//! same store — a PostgreSQL journal's, say — and not only within each process.
//!
//! A call first takes its process's own permits ([`super::permits`]), then those of the store.
//! The store answers one attempt at a time ([`SharedPermits::try_take`], all of a call's keys or
//! none) and says when a permit may have come back ([`SharedPermits::released`]); the waiting —
//! try, wait for a release, try again, back off while the store cannot be reached — is
//! [`take`]'s, so every store waits the same way.

use std::fmt;
use std::time::Duration;

use async_trait::async_trait;

use super::permits::ResourceKey;
use crate::journal::JournalError;

/// A capped resource whose permits every process sharing a store counts together.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SharedKey {
    /// A resource group or a tool (the only caps that span processes).
    pub key: ResourceKey,
    /// Its cap, as this process's registry declares it.
    pub cap: u64,
}

/// A store of permits shared by many processes.
#[async_trait]
pub trait SharedPermits: Send + Sync + fmt::Debug {
    /// One attempt to take a permit of every key in `keys` (sorted, distinct) at once: the
    /// permit when all had room, `Ok(None)` when one was full, and nothing taken then.
    async fn try_take(&self, keys: &[SharedKey]) -> Result<Option<SharedPermit>, JournalError>;

    /// Returns once a permit may have been given back, or after the store's poll interval:
    /// a wake-up can be missed, a poll cannot.
    async fn released(&self);
}

/// Permits taken from a [`SharedPermits`] store; given back when dropped.
pub struct SharedPermit {
    give_back: Option<Box<dyn FnOnce() + Send + Sync>>,
}

impl SharedPermit {
    /// A permit `give_back` returns to its store (it must not block: it runs where the call's
    /// permits are dropped).
    pub fn new(give_back: impl FnOnce() + Send + Sync + 'static) -> SharedPermit {
        SharedPermit { give_back: Some(Box::new(give_back)) }
    }
}

impl fmt::Debug for SharedPermit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SharedPermit")
    }
}

impl Drop for SharedPermit {
    fn drop(&mut self) {
        if let Some(give_back) = self.give_back.take() {
            give_back();
        }
    }
}

/// Longest pause between attempts while the store fails.
const MAX_PAUSE: Duration = Duration::from_secs(1);

/// Takes a permit of every key in `keys` from `store`, waiting for as long as it takes; calls
/// `waiting` once, when the first attempt finds a key full. A store that fails is tried again
/// with backoff (the call cannot be dispatched while it waits, so nothing is lost by waiting).
pub async fn take(store: &dyn SharedPermits, keys: &[SharedKey], waiting: impl FnOnce()) -> SharedPermit {
    let mut waiting = Some(waiting);
    let mut pause = Duration::from_millis(20);
    loop {
        match store.try_take(keys).await {
            Ok(Some(permit)) => return permit,
            Ok(None) => {
                if let Some(waiting) = waiting.take() {
                    waiting();
                }
                store.released().await;
            }
            Err(error) => {
                tracing::warn!(error = %error, "runlet: cannot take shared permits; trying again");
                tokio::time::sleep(pause).await;
                pause = (pause * 2).min(MAX_PAUSE);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use parking_lot::Mutex;
    use tokio::sync::Notify;

    use super::*;
    use crate::journal::JournalErrorKind;

    /// An in-memory store that fails its first `failures` attempts.
    #[derive(Debug, Default)]
    struct Store {
        held: Arc<Mutex<BTreeMap<ResourceKey, u64>>>,
        released: Arc<Notify>,
        failures: AtomicUsize,
        attempts: AtomicUsize,
    }

    #[async_trait]
    impl SharedPermits for Store {
        async fn try_take(&self, keys: &[SharedKey]) -> Result<Option<SharedPermit>, JournalError> {
            self.attempts.fetch_add(1, Ordering::SeqCst);
            if self.failures.load(Ordering::SeqCst) > 0 {
                self.failures.fetch_sub(1, Ordering::SeqCst);
                return Err(JournalError::new(JournalErrorKind::Storage, "down"));
            }
            let mut held = self.held.lock();
            if keys.iter().any(|k| held.get(&k.key).copied().unwrap_or(0) >= k.cap) {
                return Ok(None);
            }
            for k in keys {
                *held.entry(k.key.clone()).or_insert(0) += 1;
            }
            let (held, released, keys) = (Arc::clone(&self.held), Arc::clone(&self.released), keys.to_vec());
            Ok(Some(SharedPermit::new(move || {
                let mut held = held.lock();
                for k in keys {
                    *held.get_mut(&k.key).expect("held") -= 1;
                }
                released.notify_waiters();
            })))
        }

        async fn released(&self) {
            tokio::select! {
                _ = self.released.notified() => {}
                _ = tokio::time::sleep(Duration::from_millis(10)) => {}
            }
        }
    }

    fn tool(cap: u64) -> Vec<SharedKey> {
        vec![SharedKey { key: ResourceKey::Tool("t".into()), cap }]
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_full_key_waits_for_a_release_and_says_so_once() {
        let store = Arc::new(Store::default());
        let first = take(&*store, &tool(1), || panic!("room for the first")).await;
        let told = Arc::new(AtomicUsize::new(0));
        let second = tokio::spawn({
            let (store, told) = (Arc::clone(&store), Arc::clone(&told));
            async move {
                take(&*store, &tool(1), || {
                    told.fetch_add(1, Ordering::SeqCst);
                })
                .await
            }
        });
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert!(!second.is_finished(), "the cap is 1 and the first holds it");
        drop(first);
        let second = second.await.expect("granted after the release");
        assert_eq!(told.load(Ordering::SeqCst), 1);
        assert_eq!(store.held.lock()[&ResourceKey::Tool("t".into())], 1);
        drop(second);
        assert_eq!(store.held.lock()[&ResourceKey::Tool("t".into())], 0);
    }

    #[tokio::test]
    async fn a_failing_store_is_tried_again() {
        let store = Store { failures: AtomicUsize::new(2), ..Store::default() };
        let permit = take(&store, &tool(3), || panic!("never full")).await;
        assert_eq!(store.attempts.load(Ordering::SeqCst), 3);
        drop(permit);
    }
}
