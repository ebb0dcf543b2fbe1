//! Keeping the graph model bounded on long loops (spec §6.3): once every node of an iteration of
//! a large loop has succeeded, its records are dropped and the iteration is kept as a count.

use std::collections::BTreeMap;

use super::model::GraphModel;
use super::node_id::iteration_index;
use super::state::NodeState;

/// Loops with more items than this have their finished iterations folded into counts; smaller
/// loops keep every record, so a snapshot may show them in full.
pub(crate) const FOLD_LOOPS_ABOVE: usize = 1024;

/// An iteration of a large loop (loop local id, item index).
pub(crate) type IterationKey = (String, usize);

/// The nodes of one unfinished iteration of a large loop.
#[derive(Debug, Clone, Default)]
struct OpenIteration {
    members: Vec<String>,
    unsettled: usize,
    all_succeeded: bool,
}

/// Consecutive folded iterations of one loop: the last item index and how many nodes they held.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct FoldedSpan {
    pub(crate) last: usize,
    pub(crate) nodes: usize,
}

/// The iterations of large loops the model is tracking or has folded.
#[derive(Debug, Clone)]
pub(crate) struct Retention {
    /// Loops with more items than this fold their finished iterations.
    fold_loops_above: usize,
    open: BTreeMap<IterationKey, OpenIteration>,
    /// Per loop local id: folded spans by first item index, never adjacent to each other.
    folded: BTreeMap<String, BTreeMap<usize, FoldedSpan>>,
    /// Nodes the record being applied settled, folded once it is fully applied.
    settled: Vec<String>,
    /// Whether a loop of more than `fold_loops_above` items was resolved. Until one is, no node
    /// is inside an iteration that folds, and nodes are not looked at one by one.
    folding: bool,
}

impl Default for Retention {
    fn default() -> Self {
        Retention::folding_loops_above(FOLD_LOOPS_ABOVE)
    }
}

impl Retention {
    pub(crate) fn folding_loops_above(items: usize) -> Retention {
        Retention {
            fold_loops_above: items,
            open: BTreeMap::new(),
            folded: BTreeMap::new(),
            settled: Vec::new(),
            folding: false,
        }
    }

    /// Notes that a loop resolved its collection of `items` items.
    pub(crate) fn loop_resolved(&mut self, items: usize) {
        self.folding |= items > self.fold_loops_above;
    }

    /// The folded spans of each loop, by loop local id.
    pub(crate) fn folded(&self) -> &BTreeMap<String, BTreeMap<usize, FoldedSpan>> {
        &self.folded
    }

    /// Notes that `local` reached a terminal state in the record being applied.
    pub(crate) fn settled(&mut self, local: &str) {
        if self.folding {
            self.settled.push(local.to_owned());
        }
    }

    fn is_folded(&self, (loop_node, index): &IterationKey) -> bool {
        self.folded
            .get(loop_node)
            .and_then(|spans| spans.range(..=*index).next_back())
            .is_some_and(|(_, span)| span.last >= *index)
    }

    /// Adds iteration `index` holding `nodes` nodes to `loop_node`'s spans, joining neighbours.
    fn fold(&mut self, loop_node: String, index: usize, nodes: usize) {
        let spans = self.folded.entry(loop_node).or_default();
        let mut first = index;
        let mut span = FoldedSpan { last: index, nodes };
        if let Some((&before, previous)) = spans.range(..index).next_back()
            && previous.last + 1 == index
        {
            first = before;
            span.nodes += previous.nodes;
        }
        if let Some(next) = spans.remove(&(index + 1)) {
            span.last = next.last;
            span.nodes += next.nodes;
        }
        spans.insert(first, span);
    }
}

impl GraphModel {
    /// The outermost iteration of a loop with more than [`FOLD_LOOPS_ABOVE`] items that `local`
    /// is inside.
    pub(crate) fn fold_key(&self, local: &str) -> Option<IterationKey> {
        if !self.retention.folding {
            return None;
        }
        let expr = self.context.expr_of(local)?;
        // Planned nodes ask this one by one: only iterations' owners get their ids built.
        let owners = self.context.owner_scopes(local, expr);
        owners.outermost_first().find_map(|scope| {
            let index = iteration_index(scope.segment)?;
            let owner = self.context.owner_local(&owners, scope);
            let items = self.nodes.get(owner.as_str())?.details().loop_items?;
            (items > self.retention.fold_loops_above).then_some((owner, index))
        })
    }

    /// Whether `local` was a node of an iteration folded into a count (it succeeded).
    pub(crate) fn folded_away(&self, local: &str) -> bool {
        !self.nodes.contains_key(local)
            && self.fold_key(local).is_some_and(|key| self.retention.is_folded(&key))
    }

    /// Counts the newly planned `local` in its large-loop iteration.
    pub(crate) fn track_planned(&mut self, seq: u64, local: &str) {
        let Some(key) = self.fold_key(local) else { return };
        if self.retention.is_folded(&key) {
            self.violations.push(format!(
                "record {seq} plans `{local}` in iteration {} of `{}`, which had finished",
                key.1, key.0
            ));
            return;
        }
        let iteration = self
            .retention
            .open
            .entry(key)
            .or_insert_with(|| OpenIteration { all_succeeded: true, ..Default::default() });
        iteration.members.push(local.to_owned());
        iteration.unsettled += 1;
    }

    /// Folds the iterations the record just applied finished: those past the first whose nodes
    /// all succeeded. Iterations with a failure or a cancellation keep their records.
    pub(crate) fn fold_finished_iterations(&mut self) {
        for local in std::mem::take(&mut self.retention.settled) {
            let Some(key) = self.fold_key(&local) else { continue };
            let succeeded = self.nodes.get(local.as_str()).is_some_and(|r| r.state == NodeState::Succeeded);
            let Some(iteration) = self.retention.open.get_mut(&key) else { continue };
            iteration.unsettled = iteration.unsettled.saturating_sub(1);
            iteration.all_succeeded &= succeeded;
            if iteration.unsettled > 0 {
                continue;
            }
            let Some(iteration) = self.retention.open.remove(&key) else { continue };
            if key.1 == 0 || !iteration.all_succeeded {
                continue;
            }
            for member in &iteration.members {
                self.forget(member);
            }
            self.retention.fold(key.0, key.1, iteration.members.len());
        }
    }

    /// Drops every record kept about `local`.
    fn forget(&mut self, local: &str) {
        let Some(record) = self.nodes.swap_remove(local) else { return };
        self.consumers.swap_remove(local);
        for input in &record.inputs {
            if let Some(consumers) = self.consumers.get_mut(input) {
                consumers.retain(|consumer| **consumer != *local);
                if consumers.is_empty() {
                    self.consumers.swap_remove(input);
                }
            }
        }
        self.permit_waits.remove(local);
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use async_trait::async_trait;

    use super::*;
    use crate::analyze::Inputs;
    use crate::engine::event::Event;
    use crate::engine::{Outcome, ToolCall, ToolError, ToolExecutor, ToolOutput};
    use crate::journal::{Journal, MemoryJournal};
    use crate::observe::{GraphSnapshot, SnapshotOptions, ViewPolicy};
    use crate::registry::{Registry, RegistryOptions};
    use crate::runtime::Runtime;
    use crate::value::{List, Value};

    const REGISTRY: &str = r#"{"tools": [
        {"name": "numbers", "params": [], "outputSchema": {"type": "array", "items": {"type": "integer"}}, "execution": "pure"},
        {"name": "pair", "params": [{"name": "n", "schema": {"type": "integer"}}], "outputSchema": {"type": "array", "items": {"type": "integer"}}, "execution": "pure"},
        {"name": "many", "params": [{"name": "n", "schema": {"type": "integer"}}], "outputSchema": {"type": "array", "items": {"type": "integer"}}, "execution": "pure"},
        {"name": "square", "params": [{"name": "n", "schema": {"type": "integer"}}], "outputSchema": {"type": "integer"}, "execution": "pure"}
    ]}"#;

    /// Answers `numbers` with `0..items`, `pair(n)` with two numbers above 10,000, `many(n)` with
    /// 60 numbers above 100,000 and `square(n)` with n², failing for 700.
    struct Tools {
        items: i64,
    }

    #[async_trait]
    impl ToolExecutor for Tools {
        async fn dispatch(&self, call: ToolCall) -> Result<ToolOutput, ToolError> {
            let ints = |values: Vec<i64>| {
                Value::from(List::new(values.into_iter().map(Value::Int).collect()).expect("a list"))
            };
            match (call.tool.as_ref(), call.arguments.iter().next()) {
                ("numbers", _) => Ok(ToolOutput::new(ints((0..self.items).collect()))),
                ("pair", Some(Value::Int(n))) => Ok(ToolOutput::new(ints(vec![n + 10_000, n + 20_000]))),
                ("many", Some(Value::Int(n))) => {
                    Ok(ToolOutput::new(ints((0..60).map(|k| 100_000 + n * 100 + k).collect())))
                }
                ("square", Some(Value::Int(700))) => Err(ToolError::new("NO_SQUARE", "refused")),
                ("square", Some(Value::Int(n))) => Ok(ToolOutput::new(Value::Int(n * n))),
                (tool, argument) => Err(ToolError::new("UNEXPECTED", format!("{tool}({argument:?})"))),
            }
        }
    }

    fn without_times(mut snapshot: GraphSnapshot) -> GraphSnapshot {
        for node in &mut snapshot.nodes {
            node.timestamps =
                crate::observe::Timestamps { planned_at_ms: None, started_at_ms: None, finished_at_ms: None };
        }
        snapshot
    }

    /// Runs `source` over `items` numbers and folds its journal into a model folding loops over
    /// `fold_above` items and into one keeping every record; returns both and the folding one's
    /// peak record count.
    fn fold_both_ways(source: &str, items: i64, fold_above: usize) -> (GraphModel, GraphModel, usize) {
        let journal = Arc::new(MemoryJournal::new());
        let registry =
            Registry::from_json_str(REGISTRY, &RegistryOptions::default()).expect("registry").registry;
        let runtime = Runtime::builder()
            .registry(registry)
            .executor(Arc::new(Tools { items }))
            .journal(journal.clone())
            .build()
            .expect("runtime");
        let program = runtime.compile(source, &Inputs::new()).expect("compiles");
        let run = runtime.start(&program, &Inputs::new()).expect("starts");
        let run_id = run.run_id().clone();
        let outcome = run.wait().expect("journal");
        assert!(matches!(outcome, Outcome::Succeeded(_)), "{outcome:?}");
        let records = tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("tokio")
            .block_on(journal.read(&run_id, 0, usize::MAX))
            .expect("reads");
        let context = program.graph_context(&run_id);
        let mut folding = GraphModel::new(Arc::clone(&context));
        folding.retention = Retention::folding_loops_above(fold_above);
        let mut keeping = GraphModel::new(context);
        keeping.retention = Retention::folding_loops_above(usize::MAX);
        let mut peak = 0;
        for record in &records {
            let (seq, event) = Event::decode(&record.bytes).expect("decodes");
            folding.apply(seq, &event, None);
            keeping.apply(seq, &event, None);
            peak = peak.max(folding.nodes.len());
        }
        (folding, keeping, peak)
    }

    /// Folding finished iterations as the events arrive gives the snapshots a model keeping
    /// every record gives, for detail limits up to the folding threshold; above it, the folded
    /// iterations stay in ranges.
    #[test]
    fn a_folding_model_shows_what_a_model_keeping_everything_shows() {
        const ITEMS: usize = 1_500;
        // Each item runs a small inner loop and a boundary whose call fails for item 700.
        let source = "return for n in numbers() limit 8 {\n    pairs = for m in pair(n) limit 2 {\n        return square(m)\n    }\n    safe = boundary {\n        return square(n)\n    } catch err {\n        return 0\n    }\n    return { pairs, safe }\n}\n";
        let (folding, keeping, peak) = fold_both_ways(source, ITEMS as i64, FOLD_LOOPS_ABOVE);
        assert!(keeping.nodes.len() > 10 * ITEMS, "{}", keeping.nodes.len());
        assert!(peak < 400, "the folding model stays small: {peak} records at its peak");
        assert_eq!(folding.retention.folded().values().map(BTreeMap::len).sum::<usize>(), 2, "split at 700");
        let view = ViewPolicy::everything();
        for limit in [10, 32, FOLD_LOOPS_ABOVE, 2 * ITEMS] {
            let options = SnapshotOptions { iteration_detail_limit: limit };
            let folded = without_times(folding.snapshot(&view, &options));
            assert!(folded.integrity_errors.is_empty(), "{:?}", folded.integrity_errors);
            if limit < ITEMS {
                assert_eq!(folded, without_times(keeping.snapshot(&view, &options)), "detail limit {limit}");
            } else {
                let iterations: usize = folded.iteration_ranges.iter().map(|r| r.iterations).sum();
                assert_eq!(iterations, ITEMS - 2, "only the first and the failed one are kept");
            }
        }
    }

    /// An inner loop long enough to fold inside an outer loop that is not: its folded
    /// iterations are counted in the outer iteration when a snapshot folds that one.
    #[test]
    fn an_inner_loop_folded_by_the_model_counts_in_the_outer_iteration_a_snapshot_folds() {
        let source = "return for n in numbers() limit 4 {\n    return for m in many(n) limit 8 {\n        return square(m)\n    }\n}\n";
        let (folding, keeping, peak) = fold_both_ways(source, 12, 50);
        assert!(peak * 4 < keeping.nodes.len(), "{peak} of {}", keeping.nodes.len());
        assert_eq!(folding.retention.folded().len(), 12, "every inner loop folded");
        let view = ViewPolicy::everything();
        for limit in [5, 50] {
            let options = SnapshotOptions { iteration_detail_limit: limit };
            let folded = without_times(folding.snapshot(&view, &options));
            assert!(folded.integrity_errors.is_empty(), "{:?}", folded.integrity_errors);
            assert_eq!(folded, without_times(keeping.snapshot(&view, &options)), "detail limit {limit}");
        }
    }
}
