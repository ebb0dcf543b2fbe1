//! The built-in SQLite journal a runtime's options select by file path and durability mode,
//! beside the host's journal vtable: opened with the core's `SqliteJournal`.

use std::sync::Arc;

use runlet::journal::{Durability, Journal, SqliteJournal};

use crate::error::{Error, RUNLET_ERR_INVALID_ARGUMENT, RUNLET_ERR_JOURNAL};
use crate::strings::runlet_str;

/// `sqlite_durability` of the runtime options: a commit is on stable storage before an append
/// returns (SQLite `synchronous=FULL`). The default, and the zero value.
pub const RUNLET_DURABILITY_FULL: u32 = 0;
/// `sqlite_durability` of the runtime options: commits survive a process crash, but a power
/// loss may drop the last ones (`synchronous=NORMAL` in WAL mode).
pub const RUNLET_DURABILITY_NORMAL: u32 = 1;

/// The SQLite journal at `path` (empty: none) opened with `durability`, refusing an unknown
/// mode; a file that cannot be opened as a journal is `RUNLET_ERR_JOURNAL` naming the core's
/// `RL7xxx` code.
///
/// # Safety
/// `path` points at its `len` readable bytes.
pub(crate) unsafe fn open(path: runlet_str, durability: u32) -> Result<Option<Arc<dyn Journal>>, Error> {
    // SAFETY: forwarded from the caller.
    let path = unsafe { path.to_str("sqlite_journal_path") }?;
    let durability = match durability {
        RUNLET_DURABILITY_FULL => Durability::Full,
        RUNLET_DURABILITY_NORMAL => Durability::Normal,
        other => {
            return Err(Error::new(
                RUNLET_ERR_INVALID_ARGUMENT,
                format!(
                    "`sqlite_durability` is {other}; it must be RUNLET_DURABILITY_FULL (0) or RUNLET_DURABILITY_NORMAL (1)"
                ),
            ));
        }
    };
    if path.is_empty() {
        return Ok(None);
    }
    let journal = SqliteJournal::open(path, durability).map_err(|error| {
        Error::new(
            RUNLET_ERR_JOURNAL,
            format!("the SQLite journal could not be opened ({}): {error}", error.code()),
        )
    })?;
    Ok(Some(Arc::new(journal)))
}
