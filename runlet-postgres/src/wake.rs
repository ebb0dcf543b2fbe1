//! Wake-ups: a connection of its own (not pooled: a pooler in transaction mode has no LISTEN)
//! that LISTENs on one channel the journal NOTIFYs — `runlet_work` whenever a run is left
//! unowned (submitted, or let go before its end), `runlet_records` whenever records are
//! appended to a run a reader follows, `runlet_permits` whenever shared permits are given back.
//! A notification only wakes; the woken then read the tables, as they do on every poll anyway.
//! After the connection breaks it is opened again with backoff, LISTENs again, and wakes once
//! (something may have been missed).

use std::time::Duration;

use futures::StreamExt as _;
use tokio_postgres::{AsyncMessage, NoTls};
use tokio_util::sync::CancellationToken;

/// The channel that says a run may be waiting for a worker (its payload: the run id).
pub const WORK: &str = "runlet_work";

/// The channel that says records were appended to a followed run (its payload: the run id).
pub const RECORDS: &str = "runlet_records";

/// The channel that says shared permits were given back (its payload: the key).
pub const PERMITS: &str = "runlet_permits";

/// Keeps a LISTEN connection on `channel` to `config`'s database open until `stop`, calling
/// `wake` with the payload of every notification, and with `None` after every (re)connection.
pub async fn listen(
    config: tokio_postgres::Config,
    channel: &'static str,
    wake: impl Fn(Option<&str>) + Send + 'static,
    stop: CancellationToken,
) {
    let mut pause = Duration::from_millis(50);
    while !stop.is_cancelled() {
        match config.connect(NoTls).await {
            Ok((client, mut connection)) => {
                pause = Duration::from_millis(50);
                let mut messages = futures::stream::poll_fn(move |cx| connection.poll_message(cx));
                let listened = async {
                    client.batch_execute(&format!("LISTEN {channel}")).await?;
                    wake(None);
                    Ok::<_, tokio_postgres::Error>(())
                };
                // The connection must be polled for the LISTEN to be sent and answered.
                let mut listened = std::pin::pin!(listened);
                let mut ready = false;
                loop {
                    tokio::select! {
                        _ = stop.cancelled() => return,
                        done = &mut listened, if !ready => {
                            ready = true;
                            if done.is_err() { break }
                        }
                        message = messages.next() => match message {
                            Some(Ok(AsyncMessage::Notification(note))) => wake(Some(note.payload())),
                            Some(Ok(_)) => {}
                            Some(Err(_)) | None => break,
                        },
                    }
                }
                tracing::debug!("runlet: the LISTEN connection closed; opening it again");
            }
            Err(err) => tracing::debug!(error = %err, "runlet: cannot open the LISTEN connection"),
        }
        tokio::select! {
            _ = stop.cancelled() => return,
            _ = tokio::time::sleep(pause) => {}
        }
        pause = (pause * 2).min(Duration::from_secs(2));
    }
}
