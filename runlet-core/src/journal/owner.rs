//! Which process owns a run (INTERFACES.md §4.1): a runtime claims each run it drives in its
//! journal under an owner name that says which process it is, and releases it at the run's end;
//! a store shared without leases refuses a claim while another live process owns the run.
//! A run whose journal has no end and whose owner is no longer alive is `interrupted`; one whose
//! owner lives is `running`. On Linux the name pins the boot and the process's start time, so a
//! reused process id is not mistaken for the owner.

/// The owner name of this process: `linux:<boot id>:<pid>:<start time>` on Linux, else
/// `pid:<pid>`.
pub fn this_process() -> String {
    of_process(std::process::id())
}

/// The owner name of the process `pid` of this machine, as [`this_process`] names itself.
pub(crate) fn of_process(pid: u32) -> String {
    match (boot_id(), start_time(pid)) {
        (Some(boot), Some(start)) => format!("linux:{boot}:{pid}:{start}"),
        _ => format!("pid:{pid}"),
    }
}

/// Whether the process `owner` names is alive: `Some(false)` when it is known to have ended (its
/// boot is this one and no process with its id and start time runs), `None` when this process
/// cannot tell (another machine or system).
pub fn is_alive(owner: &str) -> Option<bool> {
    let mut parts = owner.strip_prefix("linux:")?.split(':');
    let (boot, pid, start) = (parts.next()?, parts.next()?, parts.next()?);
    if boot_id()? != boot {
        return None;
    }
    let pid: u32 = pid.parse().ok()?;
    Some(start_time(pid).is_some_and(|now| now == start))
}

fn boot_id() -> Option<String> {
    let text = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").ok()?;
    Some(text.trim().to_owned()).filter(|id| !id.is_empty())
}

/// Field 22 of `/proc/<pid>/stat`: when the process started, in clock ticks since boot.
fn start_time(pid: u32) -> Option<String> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) is in parentheses and may hold spaces; fields after it are not.
    let after_name = &stat[stat.rfind(')')? + 1..];
    after_name.split_whitespace().nth(19).map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Linux names a process so that its end can be told; elsewhere names say only `pid:`.
    #[cfg(target_os = "linux")]
    #[test]
    fn this_process_is_alive_and_a_finished_one_is_not() {
        let me = this_process();
        assert!(me.starts_with("linux:"), "{me}");
        assert_eq!(is_alive(&me), Some(true));
        let mut child = std::process::Command::new("true").spawn().expect("spawn `true`");
        // Until it is waited for, the finished child stays in /proc with its start time.
        let ended = of_process(child.id());
        assert!(ended.starts_with("linux:"), "{ended}");
        child.wait().expect("wait");
        assert_eq!(is_alive(&ended), Some(false));
        let pid = child.id();
        assert_eq!(is_alive(&format!("linux:another-boot:{pid}:1")), None);
        assert_eq!(is_alive("pid:1"), None);
    }
}
