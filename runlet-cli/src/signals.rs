//! SIGINT and SIGTERM for the commands that drive runs: the first signal does what the command
//! does to stop gracefully, the second exits at once with status 130 — for as long as the
//! [`SignalWatch`] is kept (a run's watch ends with the run, so a page server that goes on
//! serving it hears the next signal alone). Where signals cannot be watched they keep their
//! default effect, and a warning says so.

/// Watching for SIGINT and SIGTERM, until dropped.
#[must_use = "the signals are watched only while the watch is kept"]
pub struct SignalWatch {
    #[cfg(unix)]
    handle: Option<signal_hook::iterator::Handle>,
    /// Dropped after `handle` is closed: only then may the watching thread let go of the
    /// self-pipe that closing writes its wake-up to.
    #[cfg(unix)]
    _closed: Option<std::sync::mpsc::Sender<()>>,
}

impl Drop for SignalWatch {
    fn drop(&mut self) {
        #[cfg(unix)]
        if let Some(handle) = &self.handle {
            handle.close();
        }
    }
}

/// Calls `act` (after printing `announce` on stderr) on the first SIGINT or SIGTERM; exits with
/// status 130 on the second.
#[cfg(unix)]
pub fn on_first_signal(announce: &'static str, act: impl FnOnce() + Send + 'static) -> SignalWatch {
    use signal_hook::consts::{SIGINT, SIGTERM};
    let mut signals = match signal_hook::iterator::Signals::new([SIGINT, SIGTERM]) {
        Ok(signals) => signals,
        Err(error) => {
            errln!("warning: SIGINT and SIGTERM will end the process at once: {error}");
            return SignalWatch { handle: None, _closed: None };
        }
    };
    let handle = signals.handle();
    let (closed, closing) = std::sync::mpsc::channel::<()>();
    std::thread::spawn(move || {
        let mut received = signals.forever();
        if received.next().is_some() {
            errln!("{announce} (signal again to exit at once)");
            act();
        }
        if received.next().is_some() {
            std::process::exit(130);
        }
        // Closed, perhaps before the wake-up was written: the watch may still be writing it
        // (a `send` that would raise SIGPIPE on a closed socket), so the pipe stays open until
        // the watch is gone.
        let _ = closing.recv();
    });
    SignalWatch { handle: Some(handle), _closed: Some(closed) }
}

#[cfg(not(unix))]
pub fn on_first_signal(_announce: &'static str, _act: impl FnOnce() + Send + 'static) -> SignalWatch {
    SignalWatch {}
}

#[cfg(all(test, unix))]
mod tests {
    /// A watch dropped at once, before its thread ever waited, ends quietly: its thread keeps
    /// the self-pipe open until the wake-up is written, so that write never meets a closed
    /// socket, which with SIGPIPE's default action (as `main` sets it) would end the process.
    #[test]
    fn watches_dropped_at_once_never_raise_sigpipe() {
        // SAFETY: setting a signal's disposition has no other effect on the process.
        unsafe { libc::signal(libc::SIGPIPE, libc::SIG_DFL) };
        for _ in 0..5_000 {
            drop(super::on_first_signal("unused", || {}));
        }
        // SAFETY: as above; the test harness ignores SIGPIPE, as Rust's runtime sets it.
        unsafe { libc::signal(libc::SIGPIPE, libc::SIG_IGN) };
    }
}
