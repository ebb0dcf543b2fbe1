//! Wake-ups for workers: a connection of its own (not pooled: a pooler in transaction mode
//! has no LISTEN) that LISTENs on `runlet_work`, which the journal NOTIFYs whenever a run is
//! left unowned (submitted, or let go before its end). A notification only wakes; the worker
//! then reads the runs table, as it does on every poll anyway. After the connection breaks it
//! is opened again with backoff, LISTENs again, and wakes once (something may have been missed).

use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt as _;
use tokio::sync::Notify;
use tokio_postgres::{AsyncMessage, NoTls};
use tokio_util::sync::CancellationToken;

/// The channel the journal notifies.
pub const CHANNEL: &str = "runlet_work";

/// Keeps a LISTEN connection to `config`'s database open until `stop`, waking `wake` at every
/// notification and after every (re)connection.
pub async fn listen(config: tokio_postgres::Config, wake: Arc<Notify>, stop: CancellationToken) {
    let mut pause = Duration::from_millis(50);
    while !stop.is_cancelled() {
        match config.connect(NoTls).await {
            Ok((client, mut connection)) => {
                pause = Duration::from_millis(50);
                let mut messages = futures::stream::poll_fn(move |cx| connection.poll_message(cx));
                let listened = async {
                    client.batch_execute(&format!("LISTEN {CHANNEL}")).await?;
                    wake.notify_one();
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
                            Some(Ok(AsyncMessage::Notification(_))) => wake.notify_one(),
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
