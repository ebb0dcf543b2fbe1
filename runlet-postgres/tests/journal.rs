//! The PostgreSQL journal against the shared journal suite, and what only a shared journal
//! does: exclusive, fenced claims and appends, leases on the database clock, refusing unflushed commits.

mod support;

use std::sync::Arc;
use std::time::Duration;

use runlet::journal::{Bytes, Journal, JournalErrorKind, Record, RunId, suite};
use runlet_postgres::{LONGEST_LEASE, PostgresJournal, PostgresOptions};

fn block_on<F: std::future::Future>(future: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread().enable_all().build().expect("tokio").block_on(future)
}

fn record(seq: u64) -> Record {
    Record { seq, bytes: Bytes::from(format!("record {seq}")) }
}

#[test]
fn passes_the_shared_journal_suite() {
    let Some(db) = support::database("suite") else { return };
    let journal = PostgresJournal::connect(&db.url, PostgresOptions::default()).expect("connects");
    block_on(suite::check(&journal));
    // And behind the group-commit writer, as a runtime puts it, on a database of its own.
    let Some(db) = support::database("suite_grouped") else { return };
    let journal = PostgresJournal::connect(&db.url, PostgresOptions::default()).expect("connects");
    let pool =
        tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("tokio");
    let grouped = runlet::journal::GroupCommit::new(Arc::new(journal), pool.handle());
    pool.block_on(suite::check(&grouped));
}

#[test]
fn a_second_open_finds_the_tables_and_the_runs() {
    let Some(db) = support::database("reopen") else { return };
    let first = PostgresJournal::connect(&db.url, PostgresOptions::default()).expect("connects");
    block_on(async {
        first.create_run(&support::header("kept")).await.expect("create");
        first.append(&RunId::new("kept"), 0, &[record(1)]).await.expect("append");
    });
    // Opens racing on a fresh database create the tables once.
    let Some(fresh) = support::database("race") else { return };
    let opens: Vec<_> = (0..4)
        .map(|_| {
            let url = fresh.url.clone();
            std::thread::spawn(move || PostgresJournal::connect(&url, PostgresOptions::default()).map(drop))
        })
        .collect();
    for open in opens {
        open.join().expect("joins").expect("every racing open succeeds");
    }
    let second = PostgresJournal::connect(&db.url, PostgresOptions::default()).expect("reconnects");
    let records = block_on(second.read(&RunId::new("kept"), 0, 10)).expect("reads");
    assert_eq!(records, vec![record(1)]);
    assert_eq!(second.durability(), Some("postgres-synchronous-commit-on"));
}

#[test]
fn journals_of_layout_versions_1_to_3_are_migrated_and_a_newer_one_refused() {
    let Some(db) = support::database("migrate") else { return };
    let journal = PostgresJournal::connect(&db.url, PostgresOptions::default()).expect("connects");
    block_on(journal.create_run(&support::header("old"))).expect("create");
    drop(journal);
    // What a version-1 journal is: no permits table, no followers' column, no records' times.
    support::execute(
        &db.url,
        "DROP TABLE runlet.permits; ALTER TABLE runlet.runs DROP COLUMN followed_until;
         ALTER TABLE runlet.records DROP COLUMN at_ms; DELETE FROM runlet.schema_version WHERE version >= 2;",
    );
    let migrated = PostgresJournal::connect(&db.url, PostgresOptions::default()).expect("migrates");
    block_on(migrated.header(&RunId::new("old"))).expect("the run is kept");
    support::execute(
        &db.url,
        "SELECT count(*) FROM runlet.permits, runlet.runs WHERE followed_until IS NULL",
    );
    drop(migrated);
    // Version 2: no followers' column, no records' times.
    support::execute(
        &db.url,
        "ALTER TABLE runlet.runs DROP COLUMN followed_until; ALTER TABLE runlet.records DROP COLUMN at_ms;
         DELETE FROM runlet.schema_version WHERE version >= 3;",
    );
    let migrated = PostgresJournal::connect(&db.url, PostgresOptions::default()).expect("migrates");
    block_on(migrated.header(&RunId::new("old"))).expect("the run is kept");
    support::execute(&db.url, "SELECT count(*) FROM runlet.runs WHERE followed_until IS NULL");
    drop(migrated);
    // Version 3: no records' times. A record it appended has none after the migration, and the
    // times read back stop short of it; a record appended since has one.
    let journal = PostgresJournal::connect(&db.url, PostgresOptions::default()).expect("connects");
    block_on(journal.append(&RunId::new("old"), 0, &[record(1)])).expect("append");
    drop(journal);
    support::execute(
        &db.url,
        "ALTER TABLE runlet.records DROP COLUMN at_ms; DELETE FROM runlet.schema_version WHERE version = 4;",
    );
    let migrated = PostgresJournal::connect(&db.url, PostgresOptions::default()).expect("migrates");
    block_on(migrated.append(&RunId::new("old"), 1, &[record(2)])).expect("append");
    let times = block_on(migrated.append_times(&RunId::new("old"), 0, 2)).expect("times");
    assert!(times.is_empty(), "{times:?}");
    let times = block_on(migrated.append_times(&RunId::new("old"), 1, 2)).expect("times");
    assert_eq!(times.iter().map(|time| time.through_seq).collect::<Vec<_>>(), [2]);
    drop(migrated);
    support::execute(&db.url, "INSERT INTO runlet.schema_version (version) VALUES (5)");
    let error = PostgresJournal::connect(&db.url, PostgresOptions::default()).expect_err("refused");
    assert!(error.message.contains("layout version 5; this runtime reads 4"), "{error}");
}

#[test]
fn a_bad_url_and_an_unreachable_server_are_clear_errors() {
    let error = PostgresJournal::connect("not a url", PostgresOptions::default()).expect_err("refused");
    assert_eq!(error.kind, JournalErrorKind::Storage);
    assert!(error.message.contains("not a PostgreSQL URL"), "{error}");
    let options = PostgresOptions { retry_for: Duration::from_millis(300), ..PostgresOptions::default() };
    // Port 1 on loopback: nothing listens there.
    let error =
        PostgresJournal::connect("postgres://runlet:secret@127.0.0.1:1/none", options).expect_err("refused");
    assert_eq!(error.kind, JournalErrorKind::Storage);
    assert!(error.message.contains("postgres journal `127.0.0.1:1/none`"), "{error}");
    assert!(!error.message.contains("secret"), "the password stays out of messages: {error}");
}

#[test]
fn unflushed_commits_are_refused_unless_accepted() {
    let Some(db) = support::database("unflushed") else { return };
    let name = db.url.rsplit('/').next().expect("a database name").to_owned();
    support::execute(&db.url, &format!("ALTER DATABASE {name} SET synchronous_commit = off"));
    let error = PostgresJournal::connect(&db.url, PostgresOptions::default()).expect_err("refused");
    assert!(error.message.contains("synchronous_commit = off"), "{error}");
    let accepted = PostgresOptions { accept_unflushed_commits: true, ..PostgresOptions::default() };
    let journal = PostgresJournal::connect(&db.url, accepted).expect("accepted");
    assert_eq!(journal.durability(), Some("postgres-synchronous-commit-off"));
}

/// Stops the database from taking `owner`'s heartbeats, as when its process is paused: its lease
/// lapses a lease later on the database clock. Dropping the trigger lets them through again.
fn pause_renewals_of(url: &str, owner: &str) {
    support::execute(
        url,
        &format!(
            "CREATE FUNCTION runlet.pause_renewals() RETURNS trigger LANGUAGE plpgsql AS $$
             BEGIN IF OLD.owner = '{owner}' THEN RETURN NULL; END IF; RETURN NEW; END $$;
             CREATE TRIGGER pause BEFORE UPDATE ON runlet.workers FOR EACH ROW EXECUTE FUNCTION runlet.pause_renewals();"
        ),
    );
}

fn resume_renewals(url: &str) {
    support::execute(url, "DROP TRIGGER pause ON runlet.workers; DROP FUNCTION runlet.pause_renewals();");
}

/// A claim is refused while another process's lease holds, and a journal that holds no claim
/// cannot write then either. Once that lease lapsed (its process paused), another process takes
/// the run over, and the former owner, though it renews its lease again, is fenced off: its
/// append inserts nothing and is told who took the run.
#[test]
fn claims_are_exclusive_while_a_lease_holds_and_fence_a_former_owner() {
    let Some(db) = support::database("fence") else { return };
    let short = PostgresOptions { lease: Duration::from_millis(400), ..PostgresOptions::default() };
    let first = PostgresJournal::connect(&db.url, short).expect("connects");
    let second = PostgresJournal::connect(&db.url, PostgresOptions::default()).expect("connects");
    let run = RunId::new("fenced");
    block_on(async {
        first.create_run(&support::header("fenced")).await.expect("create");
        first.claim(&run, "worker-a").await.expect("claim");
        assert_eq!(first.append(&run, 0, &[record(1)]).await.expect("the holder appends"), 1);
        let unowned = second.append(&run, 1, &[record(2)]).await.expect_err("a live owner holds it");
        assert_eq!(unowned.kind, JournalErrorKind::LeaseLost, "{unowned}");
        let refused = second.claim(&run, "worker-b").await.expect_err("worker-a's lease holds");
        assert_eq!(refused.kind, JournalErrorKind::OwnedElsewhere, "{refused}");
        assert!(refused.message.contains("worker-a"), "{refused}");
        assert_eq!(second.run_entry(&run).await.expect("listed").owner.as_deref(), Some("worker-a"));
    });
    pause_renewals_of(&db.url, "worker-a");
    block_on(async {
        tokio::time::sleep(Duration::from_millis(900)).await;
        second.claim(&run, "worker-b").await.expect("takes over a lapsed lease");
    });
    resume_renewals(&db.url);
    block_on(async {
        // The former owner's heartbeat reaches the database again, so only the epoch fences it.
        tokio::time::sleep(Duration::from_millis(300)).await;
        let stale = first.append(&run, 1, &[record(2)]).await.expect_err("the former owner is fenced");
        assert_eq!(stale.kind, JournalErrorKind::LeaseLost, "{stale}");
        assert!(stale.message.contains("taken over") && stale.message.contains("worker-b"), "{stale}");
        assert_eq!(second.append(&run, 1, &[record(2)]).await.expect("the new owner appends"), 2);
        assert_eq!(first.read(&run, 0, 10).await.expect("reads"), vec![record(1), record(2)]);
    });
}

/// Within one process, a claim under another owner name this journal renews takes the run over
/// (the host's own business, as the shared suite checks); a journal of another process may not.
#[test]
fn a_claim_under_another_name_of_the_same_journal_takes_over() {
    let Some(db) = support::database("renamed") else { return };
    let journal = PostgresJournal::connect(&db.url, PostgresOptions::default()).expect("connects");
    let other = PostgresJournal::connect(&db.url, PostgresOptions::default()).expect("connects");
    let run = RunId::new("renamed");
    block_on(async {
        journal.create_run(&support::header("renamed")).await.expect("create");
        journal.claim(&run, "name-a").await.expect("claim");
        journal.claim(&run, "name-b").await.expect("the same journal renames its claim");
        let refused = other.claim(&run, "name-a").await.expect_err("name-b's lease holds");
        assert_eq!(refused.kind, JournalErrorKind::OwnedElsewhere, "{refused}");
        assert_eq!(journal.append(&run, 0, &[record(1)]).await.expect("name-b appends"), 1);
    });
}

/// A process that claims an ended run (to read it to its end, as a `resume` of a finished run
/// does) and lets it go leaves it ended, so no worker is offered it again.
#[test]
fn an_ended_run_stays_ended_when_a_later_claim_is_let_go() {
    let Some(db) = support::database("ended") else { return };
    let journal = PostgresJournal::connect(&db.url, PostgresOptions::default()).expect("connects");
    let run = RunId::new("ended");
    let status = || {
        block_on(async {
            let (client, connection) =
                tokio_postgres::connect(&db.url, tokio_postgres::NoTls).await.expect("connects");
            tokio::spawn(connection);
            let row = client.query_one("SELECT status FROM runlet.runs WHERE run_id = 'ended'", &[]).await;
            row.expect("the run's row").get::<_, String>(0)
        })
    };
    block_on(async {
        journal.create_run(&support::header("ended")).await.expect("create");
        journal.claim(&run, "first").await.expect("claim");
        journal.end(&run, "first").await.expect("end");
    });
    assert_eq!(status(), "ended");
    block_on(async {
        journal.claim(&run, "second").await.expect("claims the ended run");
        journal.release(&run, "second").await.expect("lets it go");
    });
    assert_eq!(status(), "ended", "let go, it stays ended");
}

/// A lease that is not renewed stops holding on the database clock: another journal may then
/// append without a claim, and the owner's own journal, which no longer renews it, refuses to.
#[test]
fn a_lease_that_is_not_renewed_lapses() {
    let Some(db) = support::database("lapse") else { return };
    let short = PostgresOptions { lease: Duration::from_millis(400), ..PostgresOptions::default() };
    let owner = PostgresJournal::connect(&db.url, short).expect("connects");
    let other = PostgresJournal::connect(&db.url, PostgresOptions::default()).expect("connects");
    let run = RunId::new("lapsing");
    block_on(async {
        owner.create_run(&support::header("lapsing")).await.expect("create");
        owner.claim(&run, "pausing-worker").await.expect("claim");
    });
    pause_renewals_of(&db.url, "pausing-worker");
    block_on(async {
        tokio::time::sleep(Duration::from_millis(900)).await;
        let refused = owner.append(&run, 0, &[record(1)]).await.expect_err("the lease lapsed");
        assert_eq!(refused.kind, JournalErrorKind::LeaseLost, "{refused}");
        let listed = other.runs().await.expect("runs");
        assert_eq!(listed[0].owner, None, "a lapsed lease names no owner");
        assert_eq!(other.append(&run, 0, &[record(1)]).await.expect("nobody live holds it"), 1);
    });
}

/// A database that does not exist is named by the server's own reason, not the pool's "db
/// error".
#[test]
fn an_unknown_database_is_refused_with_the_server_s_reason() {
    let Some(db) = support::database("nosuch") else { return };
    let url = format!("{}_absent", db.url);
    let options = PostgresOptions { retry_for: Duration::from_millis(200), ..PostgresOptions::default() };
    let refused = PostgresJournal::connect(&url, options).expect_err("no such database");
    assert!(refused.message.contains("does not exist (3D000)"), "{refused}");
}

/// A lease longer than a day is refused at connect, naming the range; a worker's row that holds
/// a longer one all the same (written by an older or unchecked process) is read as a day, so
/// listing runs does not fail on an interval out of range.
#[test]
fn leases_are_at_most_a_day_and_a_longer_row_breaks_no_query() {
    let Some(db) = support::database("longlease") else { return };
    let long =
        PostgresOptions { lease: LONGEST_LEASE + Duration::from_millis(1), ..PostgresOptions::default() };
    let refused = PostgresJournal::connect(&db.url, long).expect_err("longer than a day");
    assert!(refused.message.contains("at most 86400000 ms"), "{refused}");
    let journal = PostgresJournal::connect(&db.url, PostgresOptions::default()).expect("connects");
    let run = RunId::new("longlease");
    block_on(async {
        journal.create_run(&support::header("longlease")).await.expect("create");
        journal.claim(&run, "eternal-worker").await.expect("claim");
    });
    support::execute(&db.url, "UPDATE runlet.workers SET lease_ms = 9223372036854775807");
    let listed = block_on(journal.runs()).expect("lists the runs");
    assert_eq!(listed[0].owner.as_deref(), Some("eternal-worker"), "the lease holds");
}

/// A takeover that comes while the owner's append waits for the run's row: the database orders
/// them, and exactly one writer gets through — the append before the takeover, whose records
/// the new owner then continues, or the takeover before the append, which then writes nothing.
/// (The takeover is a claim under another name of the same journal, which a live lease does not
/// refuse; between processes it comes once the owner's lease lapsed.)
#[test]
fn a_takeover_while_an_append_is_in_flight_lets_one_writer_through() {
    for append_first in [true, false] {
        let Some(db) = support::database("inflight") else { return };
        let owner = PostgresJournal::connect(&db.url, PostgresOptions::default()).expect("connects");
        let taker = owner.clone();
        let run = RunId::new("inflight");
        block_on(async {
            owner.create_run(&support::header("inflight")).await.expect("create");
            owner.claim(&run, "owner").await.expect("claim");
            owner.append(&run, 0, &[record(1)]).await.expect("append");
            // A third connection holds the run's row, so both writers queue behind it in order.
            let (locker, connection) =
                tokio_postgres::connect(&db.url, tokio_postgres::NoTls).await.expect("connects");
            tokio::spawn(connection);
            locker
                .batch_execute("BEGIN; SELECT 1 FROM runlet.runs WHERE run_id = 'inflight' FOR UPDATE")
                .await
                .expect("locks the row");
            let (appender, run_a) = (owner.clone(), run.clone());
            let append = async move { appender.append(&run_a, 1, &[record(2)]).await };
            let (claimer, run_b) = (taker.clone(), run.clone());
            let takeover = async move { claimer.claim(&run_b, "taker").await };
            let pause = Duration::from_millis(300);
            let (appended, took) = if append_first {
                let appended = tokio::spawn(append);
                tokio::time::sleep(pause).await;
                let took = tokio::spawn(takeover);
                tokio::time::sleep(pause).await;
                locker.batch_execute("COMMIT").await.expect("unlocks");
                (appended.await.expect("joins"), took.await.expect("joins"))
            } else {
                let took = tokio::spawn(takeover);
                tokio::time::sleep(pause).await;
                let appended = tokio::spawn(append);
                tokio::time::sleep(pause).await;
                locker.batch_execute("COMMIT").await.expect("unlocks");
                (appended.await.expect("joins"), took.await.expect("joins"))
            };
            took.expect("the takeover goes through either way");
            let next = if append_first {
                assert_eq!(appended.expect("the append came first"), 2);
                2
            } else {
                let refused = appended.expect_err("the takeover came first");
                assert_eq!(refused.kind, JournalErrorKind::LeaseLost, "{refused}");
                1
            };
            assert_eq!(
                taker.append(&run, next, &[record(next + 1)]).await.expect("the taker goes on"),
                next + 1
            );
            let stored = taker.read(&run, 0, 10).await.expect("reads in sequence");
            assert_eq!(stored, (1..=next + 1).map(record).collect::<Vec<_>>());
        });
    }
}

/// Two processes claiming one unowned run at the same moment: the database orders the claims
/// behind the run's row, and exactly one process gets it, whichever comes first; the other is
/// refused (it reads the winner's lease) and cannot append either.
#[test]
fn of_two_claims_at_once_exactly_one_gets_the_run() {
    for a_first in [true, false] {
        let Some(db) = support::database("racing") else { return };
        let a = PostgresJournal::connect(&db.url, PostgresOptions::default()).expect("connects");
        let b = PostgresJournal::connect(&db.url, PostgresOptions::default()).expect("connects");
        let run = RunId::new("racing");
        block_on(async {
            a.create_run(&support::header("racing")).await.expect("create");
            // A third connection holds the run's row, so both claims queue behind it in order.
            let (locker, connection) =
                tokio_postgres::connect(&db.url, tokio_postgres::NoTls).await.expect("connects");
            tokio::spawn(connection);
            locker
                .batch_execute("BEGIN; SELECT 1 FROM runlet.runs WHERE run_id = 'racing' FOR UPDATE")
                .await
                .expect("locks the row");
            let claim = |journal: &PostgresJournal, owner: &'static str| {
                let (journal, run) = (journal.clone(), run.clone());
                tokio::spawn(async move { journal.claim(&run, owner).await })
            };
            let pause = Duration::from_millis(300);
            let (winner, loser) = if a_first { ((&a, "a"), (&b, "b")) } else { ((&b, "b"), (&a, "a")) };
            let won = claim(winner.0, winner.1);
            tokio::time::sleep(pause).await;
            let lost = claim(loser.0, loser.1);
            tokio::time::sleep(pause).await;
            locker.batch_execute("COMMIT").await.expect("unlocks");
            won.await.expect("joins").expect("the first claim gets the run");
            let refused = lost.await.expect("joins").expect_err("the second reads the first's lease");
            assert_eq!(refused.kind, JournalErrorKind::OwnedElsewhere, "{refused}");
            assert!(refused.message.contains(&format!("({}, whose lease holds)", winner.1)), "{refused}");
            let unowned = loser.0.append(&run, 0, &[record(1)]).await.expect_err("the loser holds nothing");
            assert_eq!(unowned.kind, JournalErrorKind::LeaseLost, "{unowned}");
            assert_eq!(winner.0.append(&run, 0, &[record(1)]).await.expect("the winner appends"), 1);
            assert_eq!(a.run_entry(&run).await.expect("listed").owner.as_deref(), Some(winner.1));
        });
    }
}

/// A reader of a run another journal writes waits with `appended`: records already there end
/// the wait at once, another journal's append wakes it (its statement NOTIFYs `runlet_records`
/// once the reader marked the run followed; before, it sends nothing) long before its timeout,
/// and without appends the wait ends at its timeout (polling).
#[test]
fn a_reader_of_another_journals_run_is_woken_by_its_appends() {
    let Some(db) = support::database("follow") else { return };
    let writer = PostgresJournal::connect(&db.url, PostgresOptions::default()).expect("connects");
    let reader = Arc::new(PostgresJournal::connect(&db.url, PostgresOptions::default()).expect("connects"));
    let run = RunId::new("followed");
    let pool =
        tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("tokio");
    // Far longer than any wake-up takes: a wait that ends within `BOUND` was woken.
    const NEVER: Duration = Duration::from_secs(600);
    const BOUND: Duration = Duration::from_secs(60);
    pool.block_on(async {
        writer.create_run(&support::header("followed")).await.expect("create");
        // Nobody follows the run yet: its append sends no notification.
        let ((), unfollowed) = notified_during(&db.url, async {
            writer.append(&run, 0, &[record(1)]).await.expect("append");
        })
        .await;
        assert_eq!(unfollowed, Vec::<String>::new(), "an append to a run nobody follows notifies nobody");
        tokio::time::timeout(BOUND, reader.appended(&run, 0, NEVER))
            .await
            .expect("a record after 0 is there already");

        let follow = {
            let (reader, run) = (Arc::clone(&reader), run.clone());
            tokio::spawn(async move {
                let mut seen = reader.read(&run, 0, 10).await.expect("reads");
                while seen.len() < 2 {
                    reader.appended(&run, seen.len() as u64, NEVER).await;
                    seen = reader.read(&run, 0, 10).await.expect("reads");
                }
                seen
            })
        };
        tokio::time::sleep(Duration::from_millis(300)).await;
        writer.append(&run, 1, &[record(2)]).await.expect("append");
        let seen =
            tokio::time::timeout(BOUND, follow).await.expect("the append woke the reader").expect("joins");
        assert_eq!(seen, vec![record(1), record(2)]);

        tokio::time::timeout(BOUND, reader.appended(&run, 2, Duration::from_millis(200)))
            .await
            .expect("without appends the wait ends at its timeout");
    });
}

/// What `during` returns, and the payloads `runlet_records` carried meanwhile (and for 300 ms
/// after), seen on a LISTEN connection of its own.
async fn notified_during<F: std::future::Future>(url: &str, during: F) -> (F::Output, Vec<String>) {
    use futures::StreamExt as _;
    let (client, mut connection) =
        tokio_postgres::connect(url, tokio_postgres::NoTls).await.expect("connects");
    let (sent, mut received) = tokio::sync::mpsc::unbounded_channel();
    let driver = tokio::spawn(async move {
        let mut messages = futures::stream::poll_fn(move |cx| connection.poll_message(cx));
        while let Some(Ok(message)) = messages.next().await {
            if let tokio_postgres::AsyncMessage::Notification(note) = message {
                let _ = sent.send(note.payload().to_owned());
            }
        }
    });
    client.batch_execute("LISTEN runlet_records").await.expect("listens");
    let output = during.await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    drop(client);
    let _ = driver.await;
    let mut payloads = Vec::new();
    while let Ok(payload) = received.try_recv() {
        payloads.push(payload);
    }
    (output, payloads)
}
