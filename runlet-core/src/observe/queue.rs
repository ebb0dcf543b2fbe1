//! A subscriber's queue of published records. The run offers each committed batch whole and
//! wakes the reader once for it (a channel would wake a quick reader for every record it
//! finds it has drained); a queue that cannot take a batch is cut loose, and its reader catches
//! up from the journal.

use std::collections::VecDeque;
use std::sync::Arc;

use parking_lot::Mutex;
use tokio::sync::Notify;

use crate::engine::event::Event;

/// A queue holding at most `capacity` records, and the two ends of it.
pub(crate) fn queue(capacity: usize) -> (Publisher, Reader) {
    let shared = Arc::new(Shared {
        state: Mutex::new(State { records: VecDeque::new(), closed: false, reader_gone: false }),
        ready: Notify::new(),
        capacity,
    });
    (Publisher(Arc::clone(&shared)), Reader(shared))
}

struct Shared {
    state: Mutex<State>,
    /// Told once per offered batch, and when the publisher goes.
    ready: Notify,
    capacity: usize,
}

struct State {
    records: VecDeque<(u64, Event)>,
    /// The publisher is gone: nothing more will be queued.
    closed: bool,
    reader_gone: bool,
}

/// The run's end of a queue.
pub(crate) struct Publisher(Arc<Shared>);

impl Publisher {
    /// Queues the records `first`, `first + 1`, … of `events` and wakes the reader once. False
    /// when the reader is gone or the queue filled up (what fitted is queued): the publisher is
    /// then to be dropped, which ends the queue after those records.
    pub(crate) fn offer(&self, first: u64, events: Vec<Event>) -> bool {
        let taken = {
            let mut state = self.0.state.lock();
            if state.reader_gone {
                return false;
            }
            let room = self.0.capacity.saturating_sub(state.records.len());
            let whole = events.len() <= room;
            state.records.extend((first..).zip(events).take(room));
            whole
        };
        self.0.ready.notify_one();
        taken
    }
}

impl Drop for Publisher {
    fn drop(&mut self) {
        self.0.state.lock().closed = true;
        self.0.ready.notify_one();
    }
}

/// The subscriber's end of a queue.
pub(crate) struct Reader(Arc<Shared>);

/// What a reader found without waiting.
pub(crate) enum Queued {
    /// Records were moved to the reader's buffer.
    Moved,
    Empty,
    /// The publisher is gone and every record was taken.
    Ended,
}

impl Reader {
    /// Moves every queued record to the end of `into`.
    pub(crate) fn take_into(&self, into: &mut VecDeque<(u64, Event)>) -> Queued {
        let mut state = self.0.state.lock();
        if !state.records.is_empty() {
            into.append(&mut state.records);
            Queued::Moved
        } else if state.closed {
            Queued::Ended
        } else {
            Queued::Empty
        }
    }

    /// Waits until records are queued and moves them to the end of `into`; false once the
    /// publisher is gone and every record was taken.
    pub(crate) async fn wait_into(&self, into: &mut VecDeque<(u64, Event)>) -> bool {
        loop {
            match self.take_into(into) {
                Queued::Moved => return true,
                Queued::Ended => return false,
                // A batch offered after this look left a permit behind: the wait returns at once.
                Queued::Empty => self.0.ready.notified().await,
            }
        }
    }
}

impl Drop for Reader {
    fn drop(&mut self) {
        let mut state = self.0.state.lock();
        state.reader_gone = true;
        state.records.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn events(count: usize) -> Vec<Event> {
        (0..count).map(|_| Event::RunSucceeded).collect()
    }

    fn seqs(records: &VecDeque<(u64, Event)>) -> Vec<u64> {
        records.iter().map(|(seq, _)| *seq).collect()
    }

    #[tokio::test]
    async fn a_batch_arrives_whole_and_in_order() {
        let (publisher, reader) = queue(8);
        assert!(publisher.offer(5, events(3)));
        assert!(publisher.offer(8, events(2)));
        let mut taken = VecDeque::new();
        assert!(reader.wait_into(&mut taken).await);
        assert_eq!(seqs(&taken), [5, 6, 7, 8, 9]);
        assert!(matches!(reader.take_into(&mut taken), Queued::Empty));
    }

    #[tokio::test]
    async fn a_full_queue_keeps_what_fitted_and_ends_after_it_once_dropped() {
        let (publisher, reader) = queue(4);
        assert!(publisher.offer(1, events(3)));
        assert!(!publisher.offer(4, events(3)), "only one of three fits");
        drop(publisher);
        let mut taken = VecDeque::new();
        assert!(reader.wait_into(&mut taken).await);
        assert_eq!(seqs(&taken), [1, 2, 3, 4]);
        assert!(!reader.wait_into(&mut taken).await, "the queue ended");
        assert!(matches!(reader.take_into(&mut taken), Queued::Ended));
    }

    #[tokio::test]
    async fn a_waiting_reader_is_woken_by_a_batch_from_another_task() {
        let (publisher, reader) = queue(16);
        let waiting = tokio::spawn(async move {
            let mut taken = VecDeque::new();
            while taken.len() < 6 && reader.wait_into(&mut taken).await {}
            seqs(&taken)
        });
        tokio::task::yield_now().await;
        assert!(publisher.offer(1, events(4)));
        assert!(publisher.offer(5, events(2)));
        assert_eq!(waiting.await.expect("reader"), [1, 2, 3, 4, 5, 6]);
    }

    #[test]
    fn a_publisher_whose_reader_is_gone_is_told_so() {
        let (publisher, reader) = queue(4);
        drop(reader);
        assert!(!publisher.offer(1, events(1)));
    }
}
