//! What a journal says about a run's calls, read without the engine: the calls it records as
//! completed, the calls left dispatching, and how many iterations of each loop had calls in
//! flight at once (read off node ids: `scope segments|syntax path#digest`).

use std::collections::{BTreeMap, BTreeSet};

use runlet::analyze::hir::{ExprId, ExprKind, Program};
use runlet::engine::event::Event;
use runlet::plan::Plan;

/// Whether the journal records the run's end.
pub fn ended(events: &[Event]) -> bool {
    events.iter().any(|e| matches!(e, Event::RunSucceeded | Event::RunFailed { .. } | Event::RunCancelled))
}

/// The call nodes whose tool answered with a value.
pub fn completed(events: &[Event]) -> BTreeSet<String> {
    let completed = events.iter().filter_map(|e| match e {
        Event::CallCompleted { node, .. } => Some(node.to_string()),
        _ => None,
    });
    completed.collect()
}

/// The calls whose last `CallDispatchPrepared` nothing follows (no answer, failure,
/// cancellation or host decision), by node, with their tool; none once the run ended.
pub fn left_dispatching(events: &[Event]) -> BTreeMap<String, String> {
    let mut open = BTreeMap::new();
    if ended(events) {
        return open;
    }
    for event in events {
        match event {
            Event::CallDispatchPrepared { node, tool, .. } => {
                open.insert(node.to_string(), tool.to_string());
            }
            Event::CallCompleted { node, .. }
            | Event::CallFailed { node, .. }
            | Event::OrphanedCompletion { node }
            | Event::NodeCancelling { node }
            | Event::NodeCancelled { node }
            | Event::NodeFailed { node, .. }
            | Event::OperationResolved { node, .. }
            | Event::FreshGenerationAuthorized { node, .. } => {
                open.remove(&**node);
            }
            _ => {}
        }
    }
    open
}

/// The iteration bound of every loop of a program, by the loop's syntax path: its `limit`
/// (or the default) for a `for`, 1 for a `fold`.
pub struct LoopBounds {
    bounds: BTreeMap<String, usize>,
}

impl LoopBounds {
    pub fn of(program: &Program, default_limit: u32) -> LoopBounds {
        let plan = Plan::new(program);
        let mut bounds = BTreeMap::new();
        for (index, expr) in program.exprs.iter().enumerate() {
            let bound = match expr.kind {
                ExprKind::For { limit, .. } => limit.unwrap_or(default_limit).max(1),
                ExprKind::Fold { .. } => 1,
                _ => continue,
            };
            let path = plan.path(ExprId(index as u32));
            bounds.insert(without_digest(path).to_owned(), bound as usize);
        }
        LoopBounds { bounds }
    }

    /// Checks that no loop ever had more iterations with calls in flight than its bound. A call
    /// is in flight from its `CallDispatchPrepared` to its answer or the end of its node; a
    /// resumed worker starts with none (the crashed one's calls died with it) and counts again
    /// those it dispatches.
    pub fn check(&self, events: &[Event]) -> Result<(), String> {
        let mut in_flight: BTreeSet<&str> = BTreeSet::new();
        for (offset, event) in events.iter().enumerate() {
            match event {
                Event::CallDispatchPrepared { node, .. } => {
                    in_flight.insert(node);
                    self.within_bounds(&in_flight)
                        .map_err(|e| format!("at journal record {}: {e}", offset + 1))?;
                }
                Event::CallCompleted { node, .. }
                | Event::CallFailed { node, .. }
                | Event::OrphanedCompletion { node }
                | Event::NodeCancelled { node }
                | Event::NodeFailed { node, .. } => {
                    in_flight.remove(&**node);
                }
                Event::RunResumed => in_flight.clear(),
                _ => {}
            }
        }
        Ok(())
    }

    fn within_bounds(&self, in_flight: &BTreeSet<&str>) -> Result<(), String> {
        let mut active: BTreeMap<String, BTreeSet<&str>> = BTreeMap::new();
        for node in in_flight {
            for (instance, iteration) in self.iterations(node)? {
                active.entry(instance).or_default().insert(iteration);
            }
        }
        for (instance, iterations) in active {
            let (_, path) = instance.split_once('|').unwrap_or(("", &instance));
            let bound = self.bounds[path];
            if iterations.len() > bound {
                return Err(format!(
                    "loop `{instance}` has calls in flight in {} iterations, over its bound of {bound}: {iterations:?}",
                    iterations.len()
                ));
            }
        }
        Ok(())
    }

    /// The loop instances a call node is inside, each as `scope segments before its iteration|
    /// loop syntax path`, with the call's iteration of it. The node's iteration segments and the
    /// loop bodies in its syntax path nest alike, outermost first.
    fn iterations<'n>(&self, node: &'n str) -> Result<Vec<(String, &'n str)>, String> {
        let (scope, path) = node.split_once('|').unwrap_or(("", node));
        let path = without_digest(path);
        let segments: Vec<&str> = scope.split('/').filter(|s| !s.is_empty()).collect();
        let iterations = segments.iter().enumerate().filter(|(_, s)| is_iteration(s)).map(|(i, _)| i);
        let bodies = path.match_indices("/body/").filter_map(|(at, _)| {
            let owner = &path[..at];
            let (loop_path, kind) = owner.rsplit_once('/')?;
            matches!(kind, "for" | "fold").then_some(loop_path)
        });
        let (iterations, bodies): (Vec<usize>, Vec<&str>) = (iterations.collect(), bodies.collect());
        if iterations.len() != bodies.len() {
            return Err(format!(
                "node `{node}` has {} iteration segments for {} loop bodies",
                iterations.len(),
                bodies.len()
            ));
        }
        let mut found = Vec::new();
        for (segment, body) in iterations.into_iter().zip(bodies) {
            if !self.bounds.contains_key(body) {
                return Err(format!("node `{node}` is in a loop `{body}` the program does not have"));
            }
            found.push((format!("{}|{body}", segments[..segment].join("/")), segments[segment]));
        }
        Ok(found)
    }
}

/// A syntax path without the digest that ends it in node ids.
fn without_digest(path: &str) -> &str {
    path.split_once('#').map_or(path, |(path, _)| path)
}

/// Whether a scope segment is a loop iteration's or fold step's: `i<index>~<digest>`.
fn is_iteration(segment: &str) -> bool {
    segment
        .strip_prefix('i')
        .and_then(|rest| rest.split_once('~'))
        .is_some_and(|(index, _)| !index.is_empty() && index.bytes().all(|b| b.is_ascii_digit()))
}
