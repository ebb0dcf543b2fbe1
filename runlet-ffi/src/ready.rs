//! The ready queue: one place where many runs say that something changed for them — an event
//! queued for `runlet_run_next_event`, or their end — so that one host thread can wait for all
//! of them (the way `epoll` waits for many sockets) instead of one thread blocked per run.

use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use parking_lot::{Condvar, Mutex};

use crate::boundary::Poison;
use crate::error::{Error, RUNLET_ERR_CANCELLED, RUNLET_ERR_TIMEOUT};
use crate::handle::{Handle, borrow, into_raw, out_param, take};
use crate::reentrancy::refuse_blocking;
use crate::run::timeout;

#[derive(Debug, Default)]
struct Tokens {
    /// The tokens of runs that changed, each with the flag that keeps it queued only once.
    ready: VecDeque<(u64, Arc<AtomicBool>)>,
    closed: bool,
}

#[derive(Debug, Default)]
struct Shared {
    tokens: Mutex<Tokens>,
    wake: Condvar,
}

/// Where runs given it (`runlet_run_set_ready_queue`) put their token when something changed
/// for them: an event was queued for `runlet_run_next_event` while none was, or the run ended.
/// A run's token is queued at most once until `runlet_ready_queue_next` takes it, so the queue
/// holds at most one entry per run. After taking a token, pull the run's events
/// (`runlet_run_next_event` with timeout 0) until none is left, and check its end
/// (`runlet_run_wait` with timeout 0): the token comes again only once the run's queue, drained
/// empty, gets an event, or the run ends. A host that stops pulling before the queue is empty
/// (its own buffer is full) must pull again when it has room, without waiting for the token.
/// One thread can so wait for any number of runs, where `runlet_run_wait` and
/// `runlet_run_next_event` with a timeout hold a thread per run.
#[derive(Debug)]
pub struct runlet_ready_queue {
    shared: Arc<Shared>,
    poison: Arc<Poison>,
}

impl Handle for runlet_ready_queue {
    const NAME: &'static str = "runlet_ready_queue";
    fn poison(&self) -> &Arc<Poison> {
        &self.poison
    }
}

impl runlet_ready_queue {
    /// How a run started with this queue and `token` tells it it changed.
    pub(crate) fn readiness(&self, token: u64) -> Readiness {
        Readiness {
            shared: Arc::clone(&self.shared),
            token,
            queued: Arc::default(),
            armed: AtomicBool::new(true),
        }
    }
}

/// One run's way of telling its ready queue that it changed.
#[derive(Debug)]
pub(crate) struct Readiness {
    shared: Arc<Shared>,
    token: u64,
    queued: Arc<AtomicBool>,
    /// Cleared (under the tokens' lock) when the host frees the run: its token is given no more.
    armed: AtomicBool,
}

impl Readiness {
    /// Queues the run's token unless it is queued already (or the queue is closed, or the run
    /// was freed).
    pub(crate) fn notify(&self) {
        if self.queued.swap(true, Ordering::AcqRel) {
            return;
        }
        let mut tokens = self.shared.tokens.lock();
        if tokens.closed || !self.armed.load(Ordering::Acquire) {
            return;
        }
        tokens.ready.push_back((self.token, Arc::clone(&self.queued)));
        drop(tokens);
        self.shared.wake.notify_one();
    }

    /// The host freed the run: its token leaves the queue and is never queued again.
    pub(crate) fn disarm(&self) {
        let mut tokens = self.shared.tokens.lock();
        self.armed.store(false, Ordering::Release);
        tokens.ready.retain(|(_, queued)| !Arc::ptr_eq(queued, &self.queued));
    }
}

/// Makes a ready queue and stores it in `*out` (NULL on failure); give it to runs with
/// `runlet_run_set_ready_queue`, each with a token of the host's choosing.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn runlet_ready_queue_new(
    out: *mut *mut runlet_ready_queue,
) -> *mut crate::runlet_error {
    ffi_boundary!(Result<(), Error>, {
        // SAFETY: the caller passes a writable out-pointer.
        let out = unsafe { out_param(out) }?;
        *out = into_raw(runlet_ready_queue { shared: Arc::default(), poison: Arc::default() });
        Ok(())
    })
}

/// Takes the token of the next run that changed into `*token_out`, waiting up to `timeout_ms`
/// milliseconds (negative: no limit; 0: just check). `RUNLET_ERR_TIMEOUT` when none did in
/// time; `RUNLET_ERR_CANCELLED` once the queue is closed and its tokens are taken. A waiting
/// call from inside a Runlet callback is refused with `RUNLET_ERR_INVALID_ARGUMENT`.
///
/// Thread-safety: any thread, concurrently (each token goes to one caller).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn runlet_ready_queue_next(
    queue: *const runlet_ready_queue,
    timeout_ms: i64,
    token_out: *mut u64,
) -> *mut crate::runlet_error {
    ffi_boundary!(Result<(), Error>, {
        // SAFETY: the caller passes NULL or a writable token and NULL or a live handle.
        let (token_out, queue) = unsafe {
            (
                token_out.as_mut().ok_or_else(|| {
                    Error::new(crate::error::RUNLET_ERR_NULL_ARGUMENT, "`token_out` is NULL")
                })?,
                borrow(queue)?,
            )
        };
        *token_out = 0;
        if timeout_ms != 0 {
            refuse_blocking("runlet_ready_queue_next")?;
        }
        let deadline = timeout(timeout_ms).map(|wait| std::time::Instant::now() + wait);
        let shared = &queue.shared;
        let mut tokens = shared.tokens.lock();
        loop {
            if let Some((token, queued)) = tokens.ready.pop_front() {
                queued.store(false, Ordering::Release);
                *token_out = token;
                return Ok(());
            }
            if tokens.closed {
                return Err(Error::new(RUNLET_ERR_CANCELLED, "the ready queue is closed"));
            }
            let timed_out = match deadline {
                None => {
                    shared.wake.wait(&mut tokens);
                    false
                }
                Some(deadline) => shared.wake.wait_until(&mut tokens, deadline).timed_out(),
            };
            if timed_out && tokens.ready.is_empty() && !tokens.closed {
                return Err(Error::new(RUNLET_ERR_TIMEOUT, format!("no run changed within {timeout_ms} ms")));
            }
        }
    })
}

/// Closes the queue: callers waiting in `runlet_ready_queue_next` take the tokens still queued,
/// then get `RUNLET_ERR_CANCELLED`, as every later call does; runs stop queuing their tokens.
/// Idempotent, never blocks.
///
/// Thread-safety: any thread, concurrently.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn runlet_ready_queue_close(
    queue: *const runlet_ready_queue,
) -> *mut crate::runlet_error {
    ffi_boundary!(Result<(), Error>, {
        // SAFETY: the caller passes NULL or a live handle.
        let queue = unsafe { borrow(queue) }?;
        queue.shared.tokens.lock().closed = true;
        queue.shared.wake.notify_all();
        Ok(())
    })
}

/// Frees the queue. NULL is a no-op; free at most once, not concurrently with other calls on
/// it (close it and let waiting callers return first). Runs started with it are unaffected.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn runlet_ready_queue_free(queue: *mut runlet_ready_queue) {
    ffi_boundary!((), {
        // SAFETY: the caller passes NULL or a live handle, freed once.
        drop(unsafe { take(queue) });
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn next(queue: &runlet_ready_queue, timeout_ms: i64) -> Result<u64, u32> {
        let mut token = u64::MAX;
        let error = unsafe { runlet_ready_queue_next(queue, timeout_ms, &mut token) };
        if error.is_null() {
            Ok(token)
        } else {
            let code = unsafe { crate::runlet_error_code(error) };
            unsafe { crate::runlet_error_free(error) };
            Err(code)
        }
    }

    #[test]
    fn a_run_s_token_is_queued_once_until_taken() {
        let queue = runlet_ready_queue { shared: Arc::default(), poison: Arc::default() };
        let (a, b) = (queue.readiness(7), queue.readiness(9));
        assert_eq!(next(&queue, 0), Err(RUNLET_ERR_TIMEOUT));
        a.notify();
        b.notify();
        a.notify();
        assert_eq!(next(&queue, 0), Ok(7));
        a.notify();
        assert_eq!(next(&queue, 0), Ok(9));
        assert_eq!(next(&queue, 0), Ok(7), "queued again once taken");
        assert_eq!(next(&queue, 5), Err(RUNLET_ERR_TIMEOUT));
    }

    #[test]
    fn a_freed_run_s_token_is_given_no_more() {
        let queue = runlet_ready_queue { shared: Arc::default(), poison: Arc::default() };
        let (a, b) = (queue.readiness(7), queue.readiness(9));
        a.notify();
        b.notify();
        a.disarm();
        assert_eq!(next(&queue, 0), Ok(9), "the queued token left with the run");
        a.notify();
        assert_eq!(next(&queue, 0), Err(RUNLET_ERR_TIMEOUT));
    }

    #[test]
    fn closing_wakes_a_waiting_caller_after_the_queued_tokens() {
        let queue = Arc::new(runlet_ready_queue { shared: Arc::default(), poison: Arc::default() });
        queue.readiness(1).notify();
        let waiter = {
            let queue = Arc::clone(&queue);
            std::thread::spawn(move || (next(&queue, -1), next(&queue, -1)))
        };
        std::thread::sleep(std::time::Duration::from_millis(20));
        assert!(unsafe { runlet_ready_queue_close(&*queue) }.is_null());
        assert_eq!(waiter.join().expect("no panic"), (Ok(1), Err(RUNLET_ERR_CANCELLED)));
        queue.readiness(2).notify();
        assert_eq!(next(&queue, 0), Err(RUNLET_ERR_CANCELLED), "a closed queue takes no tokens");
    }
}
