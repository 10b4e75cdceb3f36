//! Other processes, as `/proc` shows them: is one dead, which ones hold a
//! string in their command line or environment.

/// A process found by [`processes_with`].
#[derive(Debug, Clone)]
pub struct Process {
    pub pid: i32,
    /// The command line, arguments separated by spaces: what a failure
    /// message shows (through `Debug`) of a process left running.
    #[allow(dead_code)]
    pub cmdline: String,
    /// Gone or a zombie (see [`is_dead`]).
    pub dead: bool,
}

/// Dead means gone or a zombie: PID 1 of the sandbox does not reap, so a
/// killed process can stay `Z`, and `kill -0` would still find it.
pub fn is_dead(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => {
            let state = stat
                .rfind(')')
                .and_then(|i| stat[i + 1..].split_whitespace().next());
            matches!(state, Some("Z" | "X"))
        }
    }
}

/// Every process whose `file` (`cmdline`, `environ`) holds `needle`,
/// zombies included.
pub fn processes_with(file: &str, needle: &str) -> Vec<Process> {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|entry| {
            let pid = entry.file_name().to_str()?.parse().ok()?;
            let bytes = std::fs::read(entry.path().join(file)).ok()?;
            if !String::from_utf8_lossy(&bytes)
                .replace('\0', " ")
                .contains(needle)
            {
                return None;
            }
            let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
            Some(Process {
                pid,
                cmdline: String::from_utf8_lossy(&cmdline).replace('\0', " "),
                dead: is_dead(pid),
            })
        })
        .collect()
}

/// The processes of [`processes_with`] that still live.
pub fn live_processes_with(file: &str, needle: &str) -> Vec<Process> {
    processes_with(file, needle)
        .into_iter()
        .filter(|p| !p.dead)
        .collect()
}
