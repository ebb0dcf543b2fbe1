//! The identity of a compiled program (source digest, registry digest, language version) and the
//! immutable `CompiledProgram` the engine carries: that identity with the program's HIR.

use std::sync::Arc;

use sha2::{Digest as _, Sha256};

use crate::registry::Registry;
use crate::value::Digest;

use super::hir::Program;

/// The Runlet language version this analyzer implements.
pub const LANGUAGE_VERSION: u32 = 1;

/// What a run pins about its program: the exact source, the registry and the language version.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct WorkflowIdentity {
    /// SHA-256 of the exact source bytes (`sha256:…`), as diagnostics' `source_digest`.
    pub source_digest: Digest,
    /// [`Registry::digest`] of the registry the program was analyzed against.
    pub registry_digest: Digest,
    pub language_version: u32,
}

impl WorkflowIdentity {
    pub fn new(source: &str, registry: &Registry) -> WorkflowIdentity {
        WorkflowIdentity {
            source_digest: Digest::Sha256(Sha256::digest(source.as_bytes()).into()),
            registry_digest: registry.digest().clone(),
            language_version: LANGUAGE_VERSION,
        }
    }
}

/// A program that analyzed without errors, ready to plan and run any number of times
/// concurrently: immutable, cheap to clone, `Send + Sync`.
#[derive(Debug, Clone)]
pub struct CompiledProgram {
    identity: WorkflowIdentity,
    program: Arc<Program>,
}

impl CompiledProgram {
    pub fn new(identity: WorkflowIdentity, program: Program) -> CompiledProgram {
        CompiledProgram { identity, program: Arc::new(program) }
    }

    pub fn identity(&self) -> &WorkflowIdentity {
        &self.identity
    }

    /// The analyzed program.
    pub fn program(&self) -> &Program {
        &self.program
    }

    /// The analyzed program, shared (runs hold it for their whole life).
    pub fn shared_program(&self) -> Arc<Program> {
        Arc::clone(&self.program)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compiled_programs_are_send_and_sync() {
        fn assert_send_sync<T: Send + Sync>() {}
        assert_send_sync::<CompiledProgram>();
    }
}
