//! The shared journal conformance suite: the checks every `Journal` implementation must pass —
//! the in-memory store, SQLite, and host journals behind the C vtable. Panics on a violation.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use super::{
    AppendBatch, Blob, Bytes, Journal, JournalErrorKind, Record, RetainedRun, RunHeader, RunId, Snapshot,
};

/// Runs every check against `journal`, each on run ids that no other check uses.
pub async fn check(journal: &dyn Journal) {
    check_telling(journal, |_| {}).await;
}

/// [`check`], telling `starting` the name of each check (`"runs_are_independent"`) before it
/// runs, so that whoever catches a failure can say which check failed.
pub async fn check_telling(journal: &dyn Journal, mut starting: impl FnMut(&'static str)) {
    macro_rules! in_order {
        ($($check:ident),* $(,)?) => {
            $(
                starting(stringify!($check));
                $check(journal).await;
            )*
        };
    }
    in_order!(
        headers_round_trip_and_are_unique,
        unknown_runs_are_reported,
        appends_continue_and_reads_page,
        conflicting_and_gapped_appends_write_nothing,
        record_bytes_are_kept_exactly,
        snapshots_cover_only_existing_records,
        runs_are_independent,
        racing_writers_win_one_sequence_number_each,
        batches_appended_together_fail_alone,
        retained_headers_round_trip,
        runs_are_listed_in_creation_order,
        owners_are_claimed_released_and_asked_to_cancel,
        blobs_are_kept_with_their_records_and_collected_with_their_runs,
        append_times_name_consecutive_appends,
    );
}

static NEXT_RUN: AtomicU64 = AtomicU64::new(1);

/// A header no other run of the suite (or of a store's own tests) has.
pub(super) fn fresh_run(label: &str) -> RunHeader {
    let n = NEXT_RUN.fetch_add(1, Ordering::Relaxed);
    let pid = std::process::id();
    RunHeader {
        run_id: RunId::new(format!("suite-{label}-{pid}-{n}")),
        language_version: 1,
        runtime_version: "0.0.0-suite".into(),
        source_digest: "sha256:source".into(),
        registry_digest: "sha256:registry".into(),
        inputs_digest: "sha256:inputs".into(),
        config_digest: "sha256:config".into(),
        keyed_digest: "hmac-sha256:tenant-7.v1".into(),
        value_encoding_version: 1,
        event_encoding_version: 1,
        retained: None,
    }
}

async fn created(journal: &dyn Journal, label: &str) -> RunId {
    let header = fresh_run(label);
    journal.create_run(&header).await.expect("create_run of a fresh run id");
    header.run_id
}

fn records(first_seq: u64, count: u64) -> Vec<Record> {
    (first_seq..first_seq + count)
        .map(|seq| Record { seq, bytes: Bytes::from(format!("record {seq}")) })
        .collect()
}

fn kind_of<T>(result: Result<T, super::JournalError>) -> JournalErrorKind {
    match result {
        Ok(_) => panic!("expected a journal error, got success"),
        Err(err) => err.kind,
    }
}

async fn headers_round_trip_and_are_unique(journal: &dyn Journal) {
    let header = fresh_run("header");
    journal.create_run(&header).await.expect("create_run");
    assert_eq!(journal.header(&header.run_id).await.expect("header"), header);
    assert_eq!(kind_of(journal.create_run(&header).await), JournalErrorKind::RunExists);
}

async fn unknown_runs_are_reported(journal: &dyn Journal) {
    let run = fresh_run("never-created").run_id;
    assert_eq!(kind_of(journal.header(&run).await), JournalErrorKind::UnknownRun);
    assert_eq!(kind_of(journal.append(&run, 0, &records(1, 1)).await), JournalErrorKind::UnknownRun);
    assert_eq!(kind_of(journal.read(&run, 0, 10).await), JournalErrorKind::UnknownRun);
    assert_eq!(kind_of(journal.load_snapshot(&run).await), JournalErrorKind::UnknownRun);
}

async fn appends_continue_and_reads_page(journal: &dyn Journal) {
    let run = created(journal, "append").await;
    assert_eq!(journal.append(&run, 0, &[]).await.expect("empty append"), 0);
    assert_eq!(journal.append(&run, 0, &records(1, 3)).await.expect("first batch"), 3);
    assert_eq!(journal.append(&run, 3, &records(4, 2)).await.expect("second batch"), 5);
    assert_eq!(journal.read(&run, 0, 100).await.expect("read all"), records(1, 5));
    assert_eq!(journal.read(&run, 2, 2).await.expect("read a page"), records(3, 2));
    assert!(journal.read(&run, 5, 10).await.expect("read at end").is_empty());
    assert!(journal.read(&run, 50, 10).await.expect("read past end").is_empty());
    assert!(journal.read(&run, 0, 0).await.expect("read nothing").is_empty());
}

async fn conflicting_and_gapped_appends_write_nothing(journal: &dyn Journal) {
    let run = created(journal, "conflict").await;
    journal.append(&run, 0, &records(1, 2)).await.expect("append");
    assert_eq!(
        kind_of(journal.append(&run, 1, &records(2, 1)).await),
        JournalErrorKind::SequenceConflict { expected: 1, actual: 2 }
    );
    let mut gapped = records(3, 2);
    gapped[1].seq = 9;
    assert_eq!(kind_of(journal.append(&run, 2, &gapped).await), JournalErrorKind::InvalidRecord);
    assert_eq!(kind_of(journal.append(&run, 2, &records(4, 1)).await), JournalErrorKind::InvalidRecord);
    let past_the_end = [Record { seq: 0, bytes: Bytes::from_static(b"wrapped") }];
    assert!(journal.append(&run, u64::MAX, &past_the_end).await.is_err(), "an append past u64::MAX");
    assert_eq!(journal.read(&run, 0, 100).await.expect("read"), records(1, 2), "a failed append wrote");
}

async fn record_bytes_are_kept_exactly(journal: &dyn Journal) {
    let run = created(journal, "bytes").await;
    let all_octets: Vec<u8> = (0..=255).collect();
    let batch = vec![
        Record { seq: 1, bytes: Bytes::new() },
        Record { seq: 2, bytes: Bytes::from(all_octets) },
        Record { seq: 3, bytes: Bytes::from(vec![0u8; 1 << 20]) },
    ];
    journal.append(&run, 0, &batch).await.expect("append");
    assert_eq!(journal.read(&run, 0, 10).await.expect("read"), batch);
}

async fn snapshots_cover_only_existing_records(journal: &dyn Journal) {
    let run = created(journal, "snapshot").await;
    assert_eq!(journal.load_snapshot(&run).await.expect("no snapshot yet"), None);
    journal.append(&run, 0, &records(1, 4)).await.expect("append");
    let first = Snapshot { upto_seq: 2, bytes: Arc::from(&b"state at 2"[..]) };
    journal.store_snapshot(&run, first.clone()).await.expect("store");
    assert_eq!(journal.load_snapshot(&run).await.expect("load"), Some(first));
    let latest = Snapshot { upto_seq: 4, bytes: Arc::from(&b"state at 4"[..]) };
    journal.store_snapshot(&run, latest.clone()).await.expect("store newer");
    assert_eq!(journal.load_snapshot(&run).await.expect("load newer"), Some(latest.clone()));
    let beyond = Snapshot { upto_seq: 5, bytes: Arc::from(&b"too far"[..]) };
    assert_eq!(kind_of(journal.store_snapshot(&run, beyond).await), JournalErrorKind::InvalidRecord);
    assert_eq!(journal.load_snapshot(&run).await.expect("load after rejection"), Some(latest));
}

async fn runs_are_independent(journal: &dyn Journal) {
    let a = created(journal, "independent-a").await;
    let b = created(journal, "independent-b").await;
    journal.append(&a, 0, &records(1, 3)).await.expect("append a");
    journal.append(&b, 0, &records(1, 1)).await.expect("append b");
    assert_eq!(journal.read(&a, 0, 10).await.expect("read a").len(), 3);
    assert_eq!(journal.read(&b, 0, 10).await.expect("read b"), records(1, 1));
}

/// Two writers append to one run at once, each from the same last sequence number: for every
/// sequence number exactly one wins, the other gets the optimistic conflict, and the journal
/// holds the winner's records and none of the loser's.
async fn racing_writers_win_one_sequence_number_each(journal: &dyn Journal) {
    let run = created(journal, "racing-writers").await;
    let mut last = 0;
    for round in 0..8u64 {
        let batch = |writer: u64, count: u64| -> Vec<Record> {
            (last + 1..=last + count)
                .map(|seq| Record { seq, bytes: Bytes::from(format!("writer {writer} seq {seq}")) })
                .collect()
        };
        let (first, second) = (batch(0, 1 + round % 3), batch(1, 2));
        let (a, b) = tokio::join!(journal.append(&run, last, &first), journal.append(&run, last, &second));
        let (winner, lost) = match (a, b) {
            (Ok(seq), Err(lost)) => ((first, seq), lost),
            (Err(lost), Ok(seq)) => ((second, seq), lost),
            (a, b) => panic!("round {round}: exactly one racing append must win, got {a:?} and {b:?}"),
        };
        let (records, committed) = winner;
        assert_eq!(committed, last + records.len() as u64, "round {round}");
        assert_eq!(
            lost.kind,
            JournalErrorKind::SequenceConflict { expected: last, actual: committed },
            "round {round}: the loser is told where the run stands"
        );
        assert_eq!(journal.read(&run, last, 10).await.expect("read"), records, "round {round}");
        last = committed;
    }
}

/// `append_many` answers each batch as `append` would on its own: batches of one run continue
/// each other in order, and a batch that fails (conflict, unknown run, gap) writes nothing
/// while the others are kept.
async fn batches_appended_together_fail_alone(journal: &dyn Journal) {
    assert!(journal.append_many(&[]).await.is_empty(), "no batches, no answers");
    let a = created(journal, "together-a").await;
    let b = created(journal, "together-b").await;
    let missing = fresh_run("together-missing").run_id;
    let batch = |run: &RunId, expected_seq: u64, records: Vec<Record>| AppendBatch {
        run: run.clone(),
        expected_seq,
        records,
        blobs: Vec::new(),
    };
    let mut gapped = records(6, 2);
    gapped[1].seq = 9;
    let answers = journal
        .append_many(&[
            batch(&a, 0, records(1, 3)),
            batch(&b, 0, records(1, 2)),
            batch(&a, 3, records(4, 2)),
            batch(&b, 0, records(1, 1)),
            batch(&missing, 0, records(1, 1)),
            batch(&a, 5, gapped),
            batch(&a, 5, records(6, 1)),
        ])
        .await;
    let answers: Vec<Result<u64, JournalErrorKind>> =
        answers.into_iter().map(|answer| answer.map_err(|err| err.kind)).collect();
    assert_eq!(
        answers,
        [
            Ok(3),
            Ok(2),
            Ok(5),
            Err(JournalErrorKind::SequenceConflict { expected: 0, actual: 2 }),
            Err(JournalErrorKind::UnknownRun),
            Err(JournalErrorKind::InvalidRecord),
            Ok(6),
        ]
    );
    assert_eq!(journal.read(&a, 0, 100).await.expect("read a"), records(1, 6));
    assert_eq!(journal.read(&b, 0, 100).await.expect("read b"), records(1, 2), "the conflict wrote nothing");
    assert_eq!(kind_of(journal.header(&missing).await), JournalErrorKind::UnknownRun);
}

/// A header that retains its program comes back exactly, source, registry file and all.
async fn retained_headers_round_trip(journal: &dyn Journal) {
    let mut header = fresh_run("retained");
    header.retained = Some(RetainedRun {
        source: "return crm.customer(id)\n# ü, \u{1F600} and \"quotes\"\n".into(),
        registry: Some(Arc::new(
            serde_json::json!({"tools": [{"name": "crm.customer", "inputSchema": {"type": "object"}}]}),
        )),
        inputs: "a0".into(),
        limits: [("tool_calls".to_owned(), 10)].into_iter().collect(),
        prelude_version: "runlet.prelude/1".into(),
        durability: Some("sqlite-wal-full".into()),
        created_unix_ms: 1_764_489_600_000,
        trace: [(
            "traceparent".to_owned(),
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01".to_owned(),
        )]
        .into_iter()
        .collect(),
    });
    journal.create_run(&header).await.expect("create_run");
    assert_eq!(journal.header(&header.run_id).await.expect("header"), header);
}

/// A store that lists its runs lists every one once, in the order they were created, with the
/// sequence number of its last record, and looks each up as it lists it. A store that cannot
/// list says so and is not checked.
async fn runs_are_listed_in_creation_order(journal: &dyn Journal) {
    let first = created(journal, "listed").await;
    let second = created(journal, "listed").await;
    journal.append(&second, 0, &records(1, 3)).await.expect("append");
    let Ok(listed) = journal.runs().await else { return };
    let position = |run: &RunId| listed.iter().position(|entry| entry.run_id == *run);
    let (at_first, at_second) = (position(&first).expect("listed"), position(&second).expect("listed"));
    assert!(at_first < at_second, "runs are listed in the order they were created");
    assert_eq!(listed[at_first].last_seq, 0);
    assert_eq!(listed[at_second].last_seq, 3);
    assert!(listed[at_second].last_append_unix_ms.is_none_or(|at| at > 0));
    assert_eq!(listed.iter().filter(|entry| entry.run_id == second).count(), 1);
    for (run, at) in [(&first, at_first), (&second, at_second)] {
        assert_eq!(journal.run_entry(run).await.expect("looked up"), listed[at]);
    }
    let never = fresh_run("never-listed").run_id;
    assert_eq!(kind_of(journal.run_entry(&never).await), JournalErrorKind::UnknownRun);
}

/// A store that keeps owners records the latest claim, forgets a release only by the owner that
/// holds the run, and hands a cancellation request to that owner alone.
async fn owners_are_claimed_released_and_asked_to_cancel(journal: &dyn Journal) {
    if !journal.keeps_owners() {
        return;
    }
    let run = created(journal, "owned").await;
    let owner_of = |listed: Vec<super::RunEntry>| {
        listed.into_iter().find(|entry| entry.run_id == run).and_then(|entry| entry.owner)
    };
    assert_eq!(kind_of(journal.request_cancel(&run).await), JournalErrorKind::NotOwned);
    journal.claim(&run, "first").await.expect("claim");
    journal.claim(&run, "second").await.expect("a later claim replaces the first");
    journal.release(&run, "first").await.expect("release by a former owner");
    assert_eq!(owner_of(journal.runs().await.expect("runs")), Some("second".to_owned()));
    assert_eq!(journal.run_entry(&run).await.expect("looked up").owner, Some("second".to_owned()));
    assert!(journal.cancel_requests("second").await.expect("requests").is_empty());
    journal.request_cancel(&run).await.expect("request");
    assert_eq!(journal.cancel_requests("second").await.expect("requests"), vec![run.clone()]);
    assert!(!journal.cancel_requests("first").await.expect("requests").contains(&run));
    journal.claim(&run, "third").await.expect("a new claim clears the request");
    assert!(journal.cancel_requests("third").await.expect("requests").is_empty());
    journal.release(&run, "third").await.expect("release");
    assert_eq!(owner_of(journal.runs().await.expect("runs")), None);
    let never = fresh_run("never-owned").run_id;
    assert_eq!(kind_of(journal.claim(&never, "x").await), JournalErrorKind::UnknownRun);
}

/// A store that keeps blobs stores them with the records that name them — not when the append
/// fails — shares one blob among runs, and collects a blob once no run names it. A store that
/// keeps none refuses blobs and appends nothing.
async fn blobs_are_kept_with_their_records_and_collected_with_their_runs(journal: &dyn Journal) {
    let first = created(journal, "blobs-first").await;
    let large = Blob::of(&[7u8; 70_000]);
    let only_first = Blob::of(b"named by the first run alone");
    if !journal.keeps_blobs() {
        let refused =
            journal.append_with_blobs(&first, 0, &records(1, 1), std::slice::from_ref(&large)).await;
        assert_eq!(kind_of(refused), JournalErrorKind::Storage);
        assert!(journal.read(&first, 0, 10).await.expect("reads").is_empty(), "nothing was appended");
        return;
    }
    let stale = journal.append_with_blobs(&first, 3, &records(4, 1), std::slice::from_ref(&large)).await;
    assert!(matches!(kind_of(stale), JournalErrorKind::SequenceConflict { .. }));
    assert_eq!(journal.blob(&large.digest).await.expect("looks"), None, "a failed append stores no blob");
    let both = [large.clone(), only_first.clone()];
    assert_eq!(journal.append_with_blobs(&first, 0, &records(1, 2), &both).await.expect("appends"), 2);
    let second = created(journal, "blobs-second").await;
    let shared = std::slice::from_ref(&large);
    assert_eq!(journal.append_with_blobs(&second, 0, &records(1, 1), shared).await.expect("appends"), 1);
    assert_eq!(journal.blob(&large.digest).await.expect("reads"), Some(large.bytes.clone()));
    journal.collect_blobs().await.expect("collects");
    assert!(journal.blob(&only_first.digest).await.expect("reads").is_some(), "named blobs stay");

    journal.delete_run(&first).await.expect("deletes");
    assert_eq!(kind_of(journal.header(&first).await), JournalErrorKind::UnknownRun);
    assert!(journal.collect_blobs().await.expect("collects") >= 1);
    assert_eq!(journal.blob(&only_first.digest).await.expect("reads"), None, "no run names it");
    assert_eq!(
        journal.blob(&large.digest).await.expect("reads"),
        Some(large.bytes),
        "the second run names it"
    );
    assert_eq!(kind_of(journal.delete_run(&first).await), JournalErrorKind::UnknownRun);
}

/// A journal that keeps when records were appended gives, for the records after `after` up to
/// `through`, the times of consecutive appends (each append, or each record of it) in order and
/// never going back in time; one that keeps none gives none.
async fn append_times_name_consecutive_appends(journal: &dyn Journal) {
    let run = created(journal, "times").await;
    journal.append(&run, 0, &records(1, 3)).await.expect("append");
    journal.append(&run, 3, &records(4, 2)).await.expect("append");
    journal.append(&run, 5, &records(6, 1)).await.expect("append");
    let all = journal.append_times(&run, 0, 6).await.expect("append times");
    if all.is_empty() {
        return;
    }
    let ends: Vec<u64> = all.iter().map(|time| time.through_seq).collect();
    assert!(ends.windows(2).all(|pair| pair[0] < pair[1]), "in order: {ends:?}");
    for end in [3, 5, 6] {
        assert!(ends.contains(&end), "each append's last record ends a time: {ends:?}");
    }
    assert!(ends.iter().all(|end| (1..=6).contains(end)), "{ends:?}");
    assert!(all.windows(2).all(|pair| pair[0].unix_ms <= pair[1].unix_ms), "{all:?}");
    // From the middle of the second append: its time first, and nothing past it.
    let page = journal.append_times(&run, 3, 4).await.expect("append times");
    let ends: Vec<u64> = page.iter().map(|time| time.through_seq).collect();
    assert!(!ends.is_empty() && ends.iter().all(|end| (4..=5).contains(end)), "{ends:?}");
}
