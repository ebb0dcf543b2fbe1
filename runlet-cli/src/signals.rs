//! SIGINT and SIGTERM for the commands that drive runs: the first signal does what the command
//! does to stop gracefully, the second exits at once with status 130. Where signals cannot be
//! watched they keep their default effect, and a warning says so.

/// Calls `act` (after printing `announce` on stderr) on the first SIGINT or SIGTERM; exits with
/// status 130 on the second.
#[cfg(unix)]
pub fn on_first_signal(announce: &'static str, act: impl FnOnce() + Send + 'static) {
    use signal_hook::consts::{SIGINT, SIGTERM};
    let mut signals = match signal_hook::iterator::Signals::new([SIGINT, SIGTERM]) {
        Ok(signals) => signals,
        Err(error) => {
            eprintln!("warning: SIGINT and SIGTERM will end the process at once: {error}");
            return;
        }
    };
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
}

#[cfg(not(unix))]
pub fn on_first_signal(_announce: &'static str, _act: impl FnOnce() + Send + 'static) {}
