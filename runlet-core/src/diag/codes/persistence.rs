//! Codes for persistence, replay and compatibility (RL7xxx).
//! Add a code here together with its catalogue entry in `docs/diagnostics/`.

declare_codes! {
    range PERSISTENCE;
    JOURNAL_RUN_EXISTS = 7001,
    JOURNAL_UNKNOWN_RUN = 7002,
    JOURNAL_SEQUENCE_CONFLICT = 7003,
    JOURNAL_INVALID_RECORD = 7004,
    JOURNAL_STORAGE = 7005,
    JOURNAL_CORRUPT_RECORD = 7006,
    JOURNAL_UNSUPPORTED_VERSION = 7007,
    /// The journal's store is damaged: a file that fails SQLite's integrity check or is not a
    /// database, or stored records out of their sequence.
    JOURNAL_CORRUPT_STORE = 7008,
    /// A cancellation was requested of a run that no live process owns in the journal.
    JOURNAL_RUN_NOT_OWNED = 7009,
    /// A run another live process owns was asked to be resumed, resolved or cancelled from the
    /// journal here: it is running there.
    RUN_OWNED_ELSEWHERE = 7010,
    /// A journal record was asked for that the store no longer keeps: it keeps only each run's
    /// latest records.
    JOURNAL_RECORD_FORGOTTEN = 7011,
    /// An append or claim by a process that no longer holds the run's lease in a shared
    /// journal: another worker took the run over, or this one could not renew its lease in
    /// time. Nothing was written.
    JOURNAL_LEASE_LOST = 7012,
    /// Stored bytes are not a canonical RCVE v1 value.
    INVALID_RCVE = 7201,
    /// Replaying a journal produced a different transition than the journal records.
    DETERMINISM_VIOLATION = 7108,
    /// A run header pins another program, registry, runtime version, configuration or
    /// encoding than the runtime asked to resume or recover the run.
    RUN_PIN_MISMATCH = 7301,
    /// A run header written before headers retained the program, registry and inputs: the
    /// run cannot be compiled again from its header alone.
    RUN_NOT_RETAINED = 7302,
    /// What a run header retains (registry file, inputs, limits) cannot be read back.
    RUN_RETAINED_UNREADABLE = 7303,
    /// A run written by a runtime version outside this runtime's declared replay
    /// compatibility.
    REPLAY_INCOMPATIBLE = 7304,
    /// A host asked to resume or recover a run whose journal holds its header but no event:
    /// its worker stopped before the run's start was committed, so nothing of it ran.
    RUN_NOT_STARTED = 7305,
    /// A run was resumed as many times as its host allows without ending, and the host's
    /// recovery at start parked it as failed instead of resuming it once more.
    RECOVERY_EXHAUSTED = 7306,
    /// A run's task panicked (a bug in the engine or in a Rust host's journal): the run stopped
    /// as of its last commit, and resuming it retries from there.
    RUN_TASK_PANICKED = 7307,
}
