//! Shared permits: tools' `max_concurrency` and resource groups' caps hold over every runtime on
//! one database (each with a connection pool and a holder of its own, as separate processes
//! have), a full key refuses until its permit is given back, and the permits of a holder whose
//! lease lapsed count no more.

mod support;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use parking_lot::Mutex;
use runlet::analyze::Inputs;
use runlet::engine::{
    Outcome, ResourceKey, SharedKey, SharedPermits, ToolCall, ToolError, ToolExecutor, ToolOutput,
};
use runlet::journal::Journal;
use runlet::registry::{Registry, RegistryOptions};
use runlet::runtime::Runtime;
use runlet::value::{List, Value};
use runlet_postgres::{PostgresJournal, PostgresOptions};

const REGISTRY: &str = r#"{"prelude": "standard", "resource_groups": {"api": 3}, "tools": [
    {"name": "t.slow", "params": [{"name": "n", "schema": {"type": "integer"}}],
     "outputSchema": {"type": "integer"}, "execution": "pure", "max_concurrency": 2, "resource_group": "api"},
    {"name": "t.other", "params": [{"name": "n", "schema": {"type": "integer"}}],
     "outputSchema": {"type": "integer"}, "execution": "pure", "resource_group": "api"}]}"#;

const SOURCE: &str = "slow = for i in list.range(0, 5) limit 5 { return t.slow(i + offset) }
other = for i in list.range(0, 5) limit 5 { return t.other(i + offset) }
return [slow, other]
";

/// Calls in flight, over every runtime of the test: now and at most, by tool and for the group.
#[derive(Default)]
struct InFlight {
    now: Mutex<BTreeMap<&'static str, u32>>,
    most: Mutex<BTreeMap<&'static str, u32>>,
    calls: Mutex<u32>,
}

impl InFlight {
    fn enter(&self, keys: &[&'static str]) {
        let mut now = self.now.lock();
        let mut most = self.most.lock();
        for key in keys {
            let count = now.entry(key).or_insert(0);
            *count += 1;
            let top = most.entry(key).or_insert(0);
            *top = (*top).max(*count);
        }
        *self.calls.lock() += 1;
    }

    fn leave(&self, keys: &[&'static str]) {
        let mut now = self.now.lock();
        for key in keys {
            *now.get_mut(key).expect("entered") -= 1;
        }
    }
}

struct Slow(Arc<InFlight>);

#[async_trait]
impl ToolExecutor for Slow {
    async fn dispatch(&self, call: ToolCall) -> Result<ToolOutput, ToolError> {
        let keys: &[&'static str] = if &*call.tool == "t.slow" { &["t.slow", "api"] } else { &["api"] };
        self.0.enter(keys);
        tokio::time::sleep(Duration::from_millis(60)).await;
        self.0.leave(keys);
        let Some(Value::Int(n)) = call.arguments.iter().next().cloned() else {
            return Err(ToolError::new("BAD_ARGUMENT", "an integer"));
        };
        Ok(ToolOutput::new(Value::Int(n)))
    }
}

fn journal(url: &str, lease: Duration) -> PostgresJournal {
    PostgresJournal::connect(url, PostgresOptions { lease, ..PostgresOptions::default() }).expect("connects")
}

fn runtime(url: &str, owner: &str, in_flight: &Arc<InFlight>) -> Runtime {
    let journal = journal(url, Duration::from_secs(10));
    let registry = Registry::from_json_str(REGISTRY, &RegistryOptions::default()).expect("registry").registry;
    Runtime::builder()
        .registry(registry)
        .executor(Arc::new(Slow(Arc::clone(in_flight))))
        .shared_permits(Arc::new(journal.permits()))
        .journal(Arc::new(journal) as Arc<dyn Journal>)
        .digest_key("permits", b"the key every runtime shares")
        .owner(owner)
        .build()
        .expect("runtime")
}

#[test]
fn tool_and_group_caps_hold_over_three_runtimes_on_one_database() {
    let Some(db) = support::database("permits_caps") else { return };
    let in_flight = Arc::new(InFlight::default());
    let runtimes: Vec<Runtime> = (0..3).map(|n| runtime(&db.url, &format!("p{n}"), &in_flight)).collect();
    let handles: Vec<_> = runtimes
        .iter()
        .enumerate()
        .map(|(n, runtime)| {
            let mut inputs = Inputs::new();
            inputs.insert("offset", Value::Int(n as i64 * 100));
            let program = runtime.compile(SOURCE, &inputs).expect("compiles");
            runtime.start(&program, &inputs).expect("starts")
        })
        .collect();
    for (n, handle) in handles.into_iter().enumerate() {
        match handle.wait().expect("journal") {
            Outcome::Succeeded(value) => {
                let base = n as i64 * 100;
                let list = |items: Vec<Value>| Value::from(List::new(items).expect("a list"));
                let each = list((0..5).map(|i| Value::Int(base + i)).collect());
                let expected = list(vec![each.clone(), each]);
                assert_eq!(value.value(), &expected, "run {n}");
            }
            other => panic!("run {n}: {other:?}"),
        }
    }
    let most = in_flight.most.lock().clone();
    assert_eq!(*in_flight.calls.lock(), 30, "every call ran once");
    assert!(most["t.slow"] <= 2, "t.slow's max_concurrency 2 held over the runtimes: {most:?}");
    assert!(most["api"] <= 3, "the group `api` of 3 held over the runtimes: {most:?}");
}

fn key(name: &str, cap: u64) -> Vec<SharedKey> {
    vec![SharedKey { key: ResourceKey::Tool(name.to_owned()), cap }]
}

#[test]
fn a_full_key_refuses_until_its_permit_is_given_back() {
    let Some(db) = support::database("permits_full") else { return };
    let (one, two) = (journal(&db.url, Duration::from_secs(10)), journal(&db.url, Duration::from_secs(10)));
    let (first, second) = (one.permits(), two.permits());
    let pool = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("tokio");
    pool.block_on(async {
        let held = first.try_take(&key("t.one", 1)).await.expect("store").expect("room for one");
        assert!(second.try_take(&key("t.one", 1)).await.expect("store").is_none(), "the cap is 1");
        let both = [SharedKey { key: ResourceKey::Group("g".into()), cap: 5 }, key("t.one", 1).remove(0)];
        assert!(second.try_take(&both).await.expect("store").is_none(), "all of a call's keys or none");
        let other = second.try_take(&key("t.two", 1)).await.expect("store").expect("another key is free");
        drop(held);
        let started = Instant::now();
        let again = loop {
            if let Some(permit) = second.try_take(&both).await.expect("store") {
                break permit;
            }
            assert!(started.elapsed() < Duration::from_secs(10), "the permit never came back");
            second.released().await;
        };
        drop((again, other));
    });
    let rows = |holder: &str| {
        count(&db.url, &format!("SELECT count(*) FROM runlet.permits WHERE holder = '{holder}'"))
    };
    assert_eq!(rows(first.holder()), 0, "given back");
    let started = Instant::now();
    while rows(second.holder()) != 0 {
        assert!(started.elapsed() < Duration::from_secs(10), "the second holder's permits stayed");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn the_permits_of_a_holder_whose_lease_lapsed_count_no_more() {
    let Some(db) = support::database("permits_lapsed") else { return };
    let journal = journal(&db.url, Duration::from_secs(10));
    support::execute(
        &db.url,
        "INSERT INTO runlet.workers (owner, heartbeat_at, lease_ms) VALUES ('permits:gone', now() - interval '1 hour', 1000);
         INSERT INTO runlet.permits (holder, ticket, key) VALUES ('permits:gone', 1, 'tool:t.one');",
    );
    let permits = journal.permits();
    let pool = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("tokio");
    let held = pool.block_on(permits.try_take(&key("t.one", 1))).expect("store");
    assert!(held.is_some(), "a lapsed holder's permit does not count");
    assert_eq!(
        count(&db.url, "SELECT count(*) FROM runlet.permits WHERE holder = 'permits:gone'"),
        0,
        "swept"
    );
    drop(held);
}

/// The single number `query` answers on the database at `url`.
fn count(url: &str, query: &str) -> i64 {
    let pool = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("tokio");
    pool.block_on(async {
        let (client, connection) =
            tokio_postgres::connect(url, tokio_postgres::NoTls).await.expect("connect");
        let driver = tokio::spawn(connection);
        let answer: i64 = client.query_one(query, &[]).await.expect(query).get(0);
        drop(client);
        let _ = driver.await;
        answer
    })
}
