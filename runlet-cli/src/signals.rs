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
            eprintln!("warning: SIGINT and SIGTERM will end the process at once: {error}");
            return SignalWatch { handle: None };
        }
    };
    let handle = signals.handle();
    std::thread::spawn(move || {
        let mut received = signals.forever();
        if received.next().is_some() {
            eprintln!("{announce} (signal again to exit at once)");
            act();
        }
        if received.next().is_some() {
            std::process::exit(130);
        }
    });
    SignalWatch { handle: Some(handle) }
}

#[cfg(not(unix))]
pub fn on_first_signal(_announce: &'static str, _act: impl FnOnce() + Send + 'static) -> SignalWatch {
    SignalWatch {}
}
