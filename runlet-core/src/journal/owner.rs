//! Which process owns a run (INTERFACES.md §4.1): a runtime claims each run it drives in its
//! journal under an owner name that says which process it is, and releases it at the run's end;
//! a store shared without leases refuses a claim while another live process owns the run.
//! A run whose journal has no end and whose owner is no longer alive is `interrupted`; one whose
//! owner lives is `running`. On Linux the name pins the boot, the process id namespace and the
//! process's start time, so a reused process id is not mistaken for the owner, and a process of
//! another container on the same machine (which shares the boot but not the process ids) is one
//! this process cannot tell of, never one it finds ended.

/// The owner name of this process: `linux:<boot id>:<pid namespace>:<pid>:<start time>` on
/// Linux (`linux:<boot id>:<pid>:<start time>` where the namespace cannot be read, as earlier
/// versions named processes), else `pid:<pid>`.
pub fn this_process() -> String {
    of_process(std::process::id())
}

/// The owner name of the process `pid` of this machine, as [`this_process`] names itself.
pub fn of_process(pid: u32) -> String {
    match (boot_id(), pid_namespace(), start_time(pid)) {
        (Some(boot), Some(namespace), Some(start)) => format!("linux:{boot}:{namespace}:{pid}:{start}"),
        // Where the namespace cannot be read, the name earlier versions gave.
        (Some(boot), None, Some(start)) => format!("linux:{boot}:{pid}:{start}"),
        _ => format!("pid:{pid}"),
    }
}

/// Whether the process `owner` names is alive: `Some(false)` when it is known to have ended (its
/// boot and process id namespace are this process's and no process with its id and start time
/// runs, or only its zombie waits to be reaped), `None` when this process cannot tell (another
/// machine, container or system, a name of the host's choosing). Names without a namespace, as
/// earlier versions wrote them, are judged by their boot alone.
pub fn is_alive(owner: &str) -> Option<bool> {
    let parts: Vec<&str> = owner.strip_prefix("linux:")?.split(':').collect();
    let (boot, pid, start) = match parts[..] {
        [boot, namespace, pid, start] if pid_namespace()? == namespace => (boot, pid, start),
        [_, _, _, _] => return None,
        [boot, pid, start] => (boot, pid, start),
        _ => return None,
    };
    if boot_id()? != boot {
        return None;
    }
    let pid: u32 = pid.parse().ok()?;
    Some(process_stat(pid).is_some_and(|(state, now)| now == start && !matches!(state.as_str(), "Z" | "X")))
}

/// Whether `owner`, which holds a run, is another process that is known to be alive: what a store
/// shared without leases refuses a claim for. This process, under whatever name a runtime of it
/// claimed the run, is not another.
pub fn is_another_living_process(owner: &str) -> bool {
    is_alive(owner) == Some(true) && owner != this_process()
}

fn boot_id() -> Option<String> {
    let text = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").ok()?;
    Some(text.trim().to_owned()).filter(|id| !id.is_empty())
}

/// This process's process id namespace: the inode `/proc/self/ns/pid` names (`pid:[N]`).
fn pid_namespace() -> Option<String> {
    let link = std::fs::read_link("/proc/self/ns/pid").ok()?;
    let inode = link.to_str()?.strip_prefix("pid:[")?.strip_suffix(']')?;
    Some(inode.to_owned()).filter(|inode| !inode.is_empty())
}

/// When the process started, in clock ticks since boot (field 22 of `/proc/<pid>/stat`).
fn start_time(pid: u32) -> Option<String> {
    process_stat(pid).map(|(_, start)| start)
}

/// Fields 3 (its state: `R`, `S`, … `Z` for a zombie) and 22 (its start time) of
/// `/proc/<pid>/stat`.
fn process_stat(pid: u32) -> Option<(String, String)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) is in parentheses and may hold spaces; fields after it are not.
    let mut fields = stat[stat.rfind(')')? + 1..].split_whitespace();
    let state = fields.next()?.to_owned();
    Some((state, fields.nth(18)?.to_owned()))
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
        let mut child = std::process::Command::new("sleep").arg("5").spawn().expect("spawn `sleep`");
        let ended = of_process(child.id());
        assert!(ended.starts_with("linux:"), "{ended}");
        assert_eq!(is_alive(&ended), Some(true));
        assert!(is_another_living_process(&ended) && !is_another_living_process(&me));
        child.kill().expect("kill");
        // Killed and not yet waited for, it is a zombie: ended, though still in /proc.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while is_alive(&ended) != Some(false) {
            assert!(std::time::Instant::now() < deadline, "a zombie counts as alive");
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        child.wait().expect("wait");
        assert_eq!(is_alive(&ended), Some(false));
        let pid = child.id();
        assert_eq!(is_alive(&format!("linux:another-boot:{pid}:1")), None);
        assert_eq!(is_alive("pid:1"), None);
        let boot = boot_id().expect("a boot id");
        let start = me.rsplit(':').next().expect("a start time");
        let this = std::process::id();
        match pid_namespace() {
            Some(namespace) => {
                assert_eq!(me, format!("linux:{boot}:{namespace}:{this}:{start}"));
                // A process of another process id namespace (another container) cannot be told of.
                assert_eq!(is_alive(&format!("linux:{boot}:1{namespace}:{this}:{start}")), None);
                assert_eq!(
                    is_alive(&format!("linux:{boot}:1{namespace}:{pid}:1")),
                    None,
                    "not ended: elsewhere"
                );
            }
            // A system that does not show the namespace: the name earlier versions gave.
            None => assert_eq!(me, format!("linux:{boot}:{this}:{start}")),
        }
        // A name without a namespace (of an earlier version) is judged by its boot.
        assert_eq!(is_alive(&format!("linux:{boot}:{this}:{start}")), Some(true));
        assert_eq!(is_alive(&format!("linux:{boot}:{pid}:1")), Some(false));
    }
}
