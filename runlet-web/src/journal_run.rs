//! A journal's run rebuilt for drawing from its header alone: the retained source analyzed
//! against the retained registry file with the retained inputs and limits, giving the graph
//! context the core folds the run's records with. Nothing here runs or calls anything.

use std::sync::Arc;

use runlet::analyze::analyze;
use runlet::journal::RunHeader;
use runlet::observe::{GraphContext, ProgramGraph};
use runlet::plan::Plan;
use runlet::registry::RegistryOptions;
use runlet::runtime::RetainedProgram;

use crate::catalog::WebError;

/// The graph context of the run `header` starts, and its program's source text.
pub(crate) fn open_graph_context(header: &RunHeader) -> Result<(Arc<GraphContext>, Arc<str>), WebError> {
    let run = header.run_id.to_string();
    let not_drawable = |reason: String| WebError::NotDrawable { run: run.clone(), reason };
    let retained = RetainedProgram::from_header(header, &RegistryOptions::default())
        .map_err(|error| not_drawable(error.to_string()))?;
    let Some(registry) = retained.registry else {
        return Err(not_drawable("its header retains no registry file".to_owned()));
    };
    let analysis = analyze(&retained.source, &registry, &retained.inputs, &retained.limits.analyze_options());
    let hir = match analysis.hir {
        Some(hir) if !analysis.has_errors() => hir,
        _ => return Err(not_drawable("its retained program does not compile with this runtime".to_owned())),
    };
    let plan = Arc::new(Plan::new(&hir));
    let graph = ProgramGraph::new(&analysis.identity.source_digest, Arc::new(hir), plan, Arc::new(registry));
    Ok((Arc::new(GraphContext::new(header.run_id.as_str(), Arc::new(graph))), retained.source))
}
