//! Seeded simulation of the run core on small hand-built programs: calls complete and fail in
//! random orders, and after every reaction the harness checks the invariants of spec §11 that
//! these programs exercise (dependency and reachability safety, single selection, loop bound,
//! deterministic aggregates).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use super::state::{Control, NodeState, ScopeStatus};
use super::*;
use crate::analyze::hir::{BindingKind, ExprKind, Program, RegionId, RegionKind};
use crate::engine::event::Event;
use crate::engine::testing::{Builder, appendix_b, appendix_b_oracle, int, list};
use crate::plan::Plan;
use crate::registry::Registry;
use crate::value::{BinaryOp, DigestKey, Labelled, List, Value};

/// How the simulated tools answer: `Ok` values, or errors (retryable or not).
pub(super) type Oracle = dyn Fn(&str, &List, u32) -> Result<Value, ToolError>;

/// What one simulated run did.
#[derive(Debug)]
pub(super) struct Trace {
    pub(super) outcome: Outcome,
    pub(super) events: Vec<Event>,
    pub(super) dispatched: Vec<String>,
    /// Every dispatch request, in order.
    pub(super) requests: Vec<CallRequest>,
    /// The most loop iterations active at once, over every loop.
    pub(super) peak_iterations: usize,
    /// The most node slots the core held at once (live nodes and unreleased finished ones).
    pub(super) peak_held_nodes: usize,
}

/// Runs `program` to its end, answering in-flight calls in an order drawn from `seed`, and checks
/// the invariants after every reaction.
fn simulate(program: &Arc<Program>, registry: &Arc<Registry>, oracle: &Oracle, seed: u64) -> Trace {
    let start = Some(Input::Start { inputs: Vec::new() });
    continue_run(fresh_core(program, registry), Vec::new(), start, registry, oracle, seed)
}

pub(super) fn fresh_core(program: &Arc<Program>, registry: &Registry) -> RunCore {
    core_with(program, registry, RunSettings { default_loop_limit: 3, ..RunSettings::default() })
}

pub(super) fn core_with(program: &Arc<Program>, registry: &Registry, settings: RunSettings) -> RunCore {
    let plan = Arc::new(Plan::new(program));
    let key = DigestKey::new("test", b"test key").expect("valid key");
    RunCore::new(Arc::clone(program), plan, ToolTable::of(registry), settings, key)
}

/// Drives `core` from `first` (or, without one, by answering `in_flight`) to the run's end.
pub(super) fn continue_run(
    core: RunCore,
    in_flight: Vec<CallRequest>,
    first: Option<Input>,
    registry: &Registry,
    oracle: &Oracle,
    seed: u64,
) -> Trace {
    Simulation::new(core, in_flight, registry, seed).run(first, oracle)
}

/// A simulated shell: in-flight calls, cancelled calls still to acknowledge, and timers, each
/// answered in an order a seed draws.
pub(super) struct Simulation {
    pub(super) core: RunCore,
    pub(super) in_flight: Vec<CallRequest>,
    /// Calls whose token fired: they acknowledge, or complete late, in a drawn order.
    pub(super) cancelled: Vec<CallRequest>,
    pub(super) timers: Vec<TimerHandle>,
    pub(super) trace: Trace,
    names: Arc<[String]>,
    state: u64,
}

impl Simulation {
    pub(super) fn new(
        core: RunCore,
        in_flight: Vec<CallRequest>,
        registry: &Registry,
        seed: u64,
    ) -> Simulation {
        Simulation {
            core,
            in_flight,
            cancelled: Vec::new(),
            timers: Vec::new(),
            trace: Trace {
                outcome: Outcome::Cancelled,
                events: Vec::new(),
                dispatched: Vec::new(),
                requests: Vec::new(),
                peak_iterations: 0,
                peak_held_nodes: 0,
            },
            names: registry.tools().map(|(_, t)| t.name.to_string()).collect(),
            state: seed | 1,
        }
    }

    fn random(&mut self, n: usize) -> usize {
        self.state ^= self.state << 13;
        self.state ^= self.state >> 7;
        self.state ^= self.state << 17;
        (self.state % n as u64) as usize
    }

    /// The next input: a call answer, a cancelled call's acknowledgement or late answer, or a
    /// timer firing.
    fn draw(&mut self, oracle: &Oracle) -> Input {
        let (calls, cancelled, timers) = (self.in_flight.len(), self.cancelled.len(), self.timers.len());
        assert!(calls + cancelled + timers > 0, "the run is stuck: nothing in flight and not finished");
        let pick = self.random(calls + cancelled + timers);
        if pick < calls {
            let request = self.in_flight.swap_remove(pick);
            return self.answer(&request, oracle);
        }
        if pick < calls + cancelled {
            let request = self.cancelled.swap_remove(pick - calls);
            if self.random(2) == 0 {
                let error = ToolError::cancelled(&self.names[request.tool.index()]);
                return Input::ToolFailed { call: request.call, error };
            }
            return self.answer(&request, oracle);
        }
        Input::TimerFired { timer: self.timers.swap_remove(pick - calls - cancelled) }
    }

    fn answer(&self, request: &CallRequest, oracle: &Oracle) -> Input {
        match oracle(&self.names[request.tool.index()], &request.arguments, request.attempt) {
            Ok(value) => Input::ToolCompleted { call: request.call, value: Labelled::public(value) },
            Err(error) => Input::ToolFailed { call: request.call, error },
        }
    }

    /// Reacts to `input` and applies the effects; the run's end when it came.
    pub(super) fn step(&mut self, input: Input) -> Option<Outcome> {
        let effects = self.core.react(input);
        let mut appended = false;
        // Inputs the shell sends back at once: timer deadlines and samples.
        let mut armed = Vec::new();
        for effect in effects {
            match effect {
                Effect::Append(events) => {
                    appended = true;
                    self.trace.events.extend(events);
                }
                Effect::Dispatch(request) => {
                    assert!(appended, "a dispatch came before its events were appended");
                    self.trace.dispatched.push(self.names[request.tool.index()].clone());
                    self.trace.requests.push(request.clone());
                    self.in_flight.push(request);
                }
                Effect::Cancel(call) => {
                    let position = self.in_flight.iter().position(|r| r.call == call);
                    if let Some(request) = position.map(|p| self.in_flight.swap_remove(p)) {
                        self.cancelled.push(request);
                    }
                }
                Effect::StartTimer { timer, delay } => {
                    self.timers.push(timer);
                    armed.push(Input::TimerArmed { timer, deadline_unix_ms: delay.as_millis() as u64 });
                }
                Effect::CancelTimer(timer) => self.timers.retain(|t| *t != timer),
                Effect::Sample(request) => {
                    armed.push(Input::Sampled { call: request.call, answer: request.function.sample() })
                }
                Effect::AwaitPermits { call, .. } => armed.push(Input::PermitsGranted { call }),
                Effect::EnterScope { node, .. } => {
                    let recorded = self.trace.events.iter().rev().any(|event| {
                        matches!(event, Event::BoundaryAttemptStarted { node: n, .. }
                            | Event::LoopCollectionResolved { node: n, .. } if *n == node)
                    });
                    assert!(appended && recorded, "a scope began without its event: {node}");
                }
                Effect::Yield => armed.push(Input::Continue),
                Effect::Finish(outcome) => {
                    check_invariants(&self.core, &mut self.trace);
                    return Some(outcome);
                }
            }
        }
        check_invariants(&self.core, &mut self.trace);
        for input in armed {
            if let Some(outcome) = self.step(input) {
                return Some(outcome);
            }
        }
        None
    }

    pub(super) fn run(mut self, first: Option<Input>, oracle: &Oracle) -> Trace {
        let mut next = first;
        for _ in 0..10_000 {
            let input = match next.take() {
                Some(input) => input,
                None => self.draw(oracle),
            };
            if let Some(outcome) = self.step(input) {
                self.trace.outcome = outcome;
                return self.trace;
            }
        }
        panic!("the run did not finish within 10,000 reactions");
    }
}

fn check_invariants(core: &RunCore, trace: &mut Trace) {
    assert!(core.live_nodes() <= core.held_nodes(), "a live node sits in a released slot");
    trace.peak_held_nodes = trace.peak_held_nodes.max(core.held_nodes());
    // Loop bound (invariant 4): never more than `limit` iterations active.
    for node in core.arena.nodes.iter() {
        if let Control::Loop(state) = &node.control {
            assert!(
                state.active.len() <= state.limit,
                "{} iterations active, limit {}",
                state.active.len(),
                state.limit
            );
            trace.peak_iterations = trace.peak_iterations.max(state.active.len());
        }
    }
    // Dependency safety (invariant 1): a running or finished node had every dependency done.
    for node in core.arena.nodes.iter() {
        if matches!(node.state, NodeState::Running | NodeState::Succeeded) {
            assert_eq!(node.waiting, 0, "a node ran before its dependencies resolved");
        }
    }
    // Boundary ownership (invariant 5): only work under a failed or cancelled scope is
    // cancelled, and no node is dispatched twice (a retry never repeats work outside its
    // boundary; only a resume redispatches).
    for (index, node) in core.arena.nodes.iter().enumerate() {
        if matches!(node.state, NodeState::Cancelled | NodeState::Cancelling) {
            let mut scope = Some(node.scope);
            let mut owned_by_failure = false;
            while let Some(ix) = scope {
                let entry = &core.arena.scopes[ix];
                owned_by_failure |= matches!(entry.status, ScopeStatus::Failed | ScopeStatus::Cancelled);
                scope = entry.parent;
            }
            let id = core.node_id(NodeIx(index as u32));
            assert!(owned_by_failure, "{id} was cancelled though no scope owning it failed");
        }
    }
    let resumed = trace.events.iter().any(|e| matches!(e, Event::RunResumed));
    let mut prepared = BTreeSet::new();
    for event in &trace.events {
        if let Event::CallDispatchPrepared { node, .. } = event {
            assert!(resumed || prepared.insert(node.clone()), "{node} was dispatched twice");
        }
    }
    // Single selection (invariant 3): one branch decision per conditional node.
    let mut selected = BTreeSet::new();
    for event in &trace.events {
        if let Event::BranchSelected { node, .. } = event {
            assert!(selected.insert(node.clone()), "{node} selected twice");
        }
    }
}

/// Where call answers stand in `events`: each opens its reaction's batch, so the journal's prefix
/// before one is what a crash between two committed batches leaves.
pub(super) fn answer_positions(events: &[Event]) -> Vec<usize> {
    events
        .iter()
        .enumerate()
        .filter(|(_, e)| matches!(e, Event::CallCompleted { .. } | Event::CallFailed { .. }))
        .map(|(i, _)| i)
        .collect()
}

pub(super) fn value_of(outcome: &Outcome) -> Value {
    match outcome {
        Outcome::Succeeded(value) => value.value().clone(),
        other => panic!("expected success, got {other:?}"),
    }
}

#[test]
fn appendix_b_starts_both_identity_calls_first_and_concatenates_in_order() {
    let (program, registry) = appendix_b();
    for seed in 0..64 {
        let trace = simulate(&program, &registry, &appendix_b_oracle, seed);
        let first_two: BTreeSet<&str> = trace.dispatched[..2].iter().map(String::as_str).collect();
        assert_eq!(first_two, BTreeSet::from(["github.me", "linear.me"]), "seed {seed}");
        assert_eq!(
            value_of(&trace.outcome),
            list(vec!["i1".into(), "i2".into(), "p1".into()]),
            "seed {seed}"
        );
    }
}

/// `xs = items(); ys = for x in xs [limit 2] { w = audit(x) (effect root); skip if x == 2;
/// return score(x) }; return ys`.
fn scored_loop(limit: Option<u32>) -> (Arc<Program>, Arc<Registry>) {
    let mut b = Builder::new(&["items", "audit", "score"]);
    let root = RegionId(0);
    let items_call = b.call(root, "items", vec![]);
    let xs = b.let_(root, "xs", items_call, false);
    let body = b.region(RegionKind::ForBody);
    let item = b.binding("x", BindingKind::LoopItem);
    let x = b.expr(body, ExprKind::Binding(item));
    let audit = b.call(body, "audit", vec![x]);
    b.let_(body, "w", audit, true);
    let two = b.constant(body, int(2));
    let x_again = b.expr(body, ExprKind::Binding(item));
    let is_two = b.expr(body, ExprKind::Binary { op: BinaryOp::Eq, left: x_again, right: two });
    b.skip_if(body, is_two);
    let x_score = b.expr(body, ExprKind::Binding(item));
    let score = b.call(body, "score", vec![x_score]);
    b.result(body, score);
    let ys = b.expr(root, ExprKind::For { item, collection: xs, limit, body });
    b.result(root, ys);
    b.finish()
}

fn scored_loop_oracle(tool: &str, args: &List, attempt: u32) -> Result<Value, ToolError> {
    long_scored_loop_oracle(7, tool, args, attempt)
}

/// The `scored_loop` tools with `items` answering `1..=count`.
fn long_scored_loop_oracle(count: i64, tool: &str, args: &List, _attempt: u32) -> Result<Value, ToolError> {
    let first = || match args.iter().next() {
        Some(Value::Int(n)) => *n,
        other => panic!("unexpected argument {other:?}"),
    };
    Ok(match tool {
        "items" => list((1..=count).map(int).collect()),
        "audit" => Value::Bool(true),
        "score" => int(first() * 10),
        other => panic!("unexpected call to {other}"),
    })
}

#[test]
fn loop_results_keep_input_order_skip_drops_and_limit_bounds_iterations() {
    for limit in [Some(2), None] {
        let (program, registry) = scored_loop(limit);
        for seed in 0..64 {
            let trace = simulate(&program, &registry, &scored_loop_oracle, seed);
            let expected = list([1, 3, 4, 5, 6, 7].into_iter().map(|n| int(n * 10)).collect());
            assert_eq!(value_of(&trace.outcome), expected, "seed {seed}");
            let audits = trace.dispatched.iter().filter(|t| *t == "audit").count();
            let scores = trace.dispatched.iter().filter(|t| *t == "score").count();
            assert_eq!((audits, scores), (7, 6), "every effect root runs; skipped items are not scored");
            assert_eq!(
                trace.peak_iterations,
                limit.unwrap_or(3) as usize,
                "the limit is reached, not exceeded"
            );
        }
    }
}

#[test]
fn a_long_loop_holds_as_many_nodes_as_a_short_one() {
    let (program, registry) = scored_loop(Some(2));
    let peak_for = |count: i64, seed: u64| {
        let oracle =
            move |tool: &str, args: &List, attempt: u32| long_scored_loop_oracle(count, tool, args, attempt);
        let trace = simulate(&program, &registry, &oracle, seed);
        let kept = (1..=count).filter(|n| *n != 2).map(|n| int(n * 10)).collect();
        assert_eq!(value_of(&trace.outcome), list(kept), "seed {seed}: results in input order");
        trace.peak_held_nodes
    };
    for seed in 0..8 {
        let short = peak_for(20, seed);
        let long = peak_for(1_000, seed);
        assert!(long <= short, "seed {seed}: 1,000 items held {long} nodes at once, 20 items {short}");
        assert!(short <= 40, "seed {seed}: two active iterations held {short} nodes at once");
    }
}

#[test]
fn nodes_in_reused_slots_are_named_by_their_own_ids() {
    // A `limit 2` loop over 1,000 items gives the same few dozen node slots to node after node;
    // the ids the core keeps for recently named nodes must follow the slots' new occupants.
    let (program, registry) = scored_loop(Some(2));
    let oracle = |tool: &str, args: &List, attempt: u32| long_scored_loop_oracle(1_000, tool, args, attempt);
    for seed in 0..4 {
        let trace = simulate(&program, &registry, &oracle, seed);
        let mut planned = BTreeSet::new();
        for event in &trace.events {
            match event {
                Event::NodePlanned { node, .. } => {
                    assert!(planned.insert(node.clone()), "seed {seed}: `{node}` planned twice")
                }
                Event::NodeReady { node }
                | Event::CallDispatchPrepared { node, .. }
                | Event::CallCompleted { node, .. }
                | Event::NodeSucceeded { node } => {
                    assert!(planned.contains(node), "seed {seed}: `{node}` was never planned")
                }
                _ => {}
            }
        }
        assert!(planned.len() > 3_000, "seed {seed}: {} nodes planned", planned.len());
        assert!(trace.peak_held_nodes <= 40, "seed {seed}: {} slots held", trace.peak_held_nodes);
    }
}

/// `flag = check(); r = expensive() if flag else cheap(); unused = never(); return r`.
fn lazy_branch() -> (Arc<Program>, Arc<Registry>) {
    let mut b = Builder::new(&["check", "expensive", "cheap", "never"]);
    let root = RegionId(0);
    let check = b.call(root, "check", vec![]);
    let flag = b.let_(root, "flag", check, false);
    let then = b.region(RegionKind::Arm);
    let expensive = b.call(then, "expensive", vec![]);
    b.result(then, expensive);
    let otherwise = b.region(RegionKind::Arm);
    let cheap = b.call(otherwise, "cheap", vec![]);
    b.result(otherwise, cheap);
    let conditional = b.expr(root, ExprKind::Conditional { condition: flag, then, otherwise });
    let r = b.let_(root, "r", conditional, false);
    let never = b.call(root, "never", vec![]);
    b.let_(root, "unused", never, false);
    b.result(root, r);
    b.finish()
}

#[test]
fn only_the_selected_arm_runs_and_unreferenced_pure_work_never_does() {
    let (program, registry) = lazy_branch();
    for (flag, chosen) in [(true, "expensive"), (false, "cheap")] {
        let oracle = move |tool: &str, _: &List, _: u32| -> Result<Value, ToolError> {
            Ok(if tool == "check" { Value::Bool(flag) } else { Value::from(tool) })
        };
        let trace = simulate(&program, &registry, &oracle, 7);
        assert_eq!(trace.dispatched, vec!["check".to_owned(), chosen.to_owned()]);
        assert_eq!(value_of(&trace.outcome), Value::from(chosen));
    }
}

/// `r = boundary retry 2 { return flaky() } catch err { return err.code }; return r`.
fn retried_boundary() -> (Arc<Program>, Arc<Registry>) {
    let mut b = Builder::new(&["flaky"]);
    let root = RegionId(0);
    let body = b.region(RegionKind::BoundaryBody);
    let flaky = b.call(body, "flaky", vec![]);
    b.result(body, flaky);
    let catch = b.region(RegionKind::CatchBody);
    let error = b.binding("err", BindingKind::CatchError);
    let err = b.expr(catch, ExprKind::Binding(error));
    let code = b.field(catch, err, "code");
    b.result(catch, code);
    let boundary = b.expr(root, ExprKind::Boundary { retries: 2, body, error, catch });
    b.result(root, boundary);
    b.finish()
}

#[test]
fn boundary_retries_retryable_failures_then_catches() {
    let (program, registry) = retried_boundary();
    let recovers_on_third = |_: &str, _: &List, attempt: u32| -> Result<Value, ToolError> {
        if attempt < 3 {
            Err(ToolError::retryable("RATE_LIMITED", "slow down"))
        } else {
            Ok(Value::from("ok"))
        }
    };
    let trace = simulate(&program, &registry, &recovers_on_third, 1);
    assert_eq!(value_of(&trace.outcome), Value::from("ok"));
    assert_eq!(trace.dispatched.len(), 3);

    let always_fails = |_: &str, _: &List, _: u32| -> Result<Value, ToolError> {
        Err(ToolError::retryable("RATE_LIMITED", "slow down"))
    };
    let trace = simulate(&program, &registry, &always_fails, 1);
    assert_eq!(value_of(&trace.outcome), Value::from("RATE_LIMITED"));
    assert_eq!(trace.dispatched.len(), 3, "retry 2 means three attempts in all");

    let not_retryable =
        |_: &str, _: &List, _: u32| -> Result<Value, ToolError> { Err(ToolError::new("BAD_INPUT", "no")) };
    let trace = simulate(&program, &registry, &not_retryable, 1);
    assert_eq!(value_of(&trace.outcome), Value::from("BAD_INPUT"));
    assert_eq!(trace.dispatched.len(), 1, "a non-retryable failure goes straight to catch");
}

#[test]
fn a_failure_outside_any_boundary_fails_the_run_and_cancels_siblings() {
    let (program, registry) = appendix_b();
    let linear_down = |tool: &str, args: &List, attempt: u32| -> Result<Value, ToolError> {
        if tool == "linear.me" {
            Err(ToolError::new("DOWN", "linear is down"))
        } else {
            appendix_b_oracle(tool, args, attempt)
        }
    };
    for seed in 0..16 {
        let trace = simulate(&program, &registry, &linear_down, seed);
        match &trace.outcome {
            Outcome::Failed(error) => {
                assert_eq!(error.code, "DOWN");
                assert_eq!(error.tool.as_deref(), Some("linear.me"));
            }
            other => panic!("expected a failed run, got {other:?}"),
        }
        assert!(!trace.dispatched.iter().any(|t| t == "linear.issues"), "a dependent of a failed call ran");
        assert!(matches!(trace.events.last(), Some(Event::RunFailed { .. })));
    }
}

#[test]
fn the_same_completion_order_yields_the_same_events() {
    let (program, registry) = scored_loop(Some(2));
    for seed in 0..16 {
        let first = simulate(&program, &registry, &scored_loop_oracle, seed);
        let second = simulate(&program, &registry, &scored_loop_oracle, seed);
        assert_eq!(first.events, second.events, "seed {seed}");
    }
    let distinct: BTreeMap<usize, ()> = (0..16)
        .map(|seed| (simulate(&program, &registry, &scored_loop_oracle, seed).events.len(), ()))
        .collect();
    assert!(!distinct.is_empty());
}

/// Every program of this file with an oracle that answers it.
/// A hand-built program and the registry its calls name.
type Compiled = (Arc<Program>, Arc<Registry>);

fn corpus() -> Vec<(Compiled, Box<Oracle>)> {
    vec![
        (appendix_b(), Box::new(appendix_b_oracle)),
        (scored_loop(Some(2)), Box::new(scored_loop_oracle)),
        (scored_loop(None), Box::new(scored_loop_oracle)),
        (
            retried_boundary(),
            Box::new(|_: &str, _: &List, attempt: u32| {
                if attempt < 2 {
                    Err(ToolError::retryable("RATE_LIMITED", "slow down"))
                } else {
                    Ok(Value::from("ok"))
                }
            }),
        ),
        (
            lazy_branch(),
            Box::new(|tool: &str, _: &List, _: u32| {
                Ok(if tool == "check" { Value::Bool(true) } else { Value::from(tool) })
            }),
        ),
    ]
}

#[test]
fn replaying_a_journal_regenerates_it_exactly() {
    for ((program, registry), oracle) in corpus() {
        for seed in 0..16 {
            let trace = simulate(&program, &registry, &*oracle, seed);
            let resumed = crate::engine::replay(fresh_core(&program, &registry), &trace.events)
                .expect("replay matches");
            assert!(resumed.in_flight.is_empty());
            let (Some(Outcome::Succeeded(replayed)), Outcome::Succeeded(original)) =
                (&resumed.outcome, &trace.outcome)
            else {
                panic!("expected both runs to succeed");
            };
            assert_eq!(replayed.value(), original.value());
        }
    }
}

#[test]
fn a_run_resumes_from_any_committed_prefix_without_repeating_answered_calls() {
    for ((program, registry), oracle) in corpus() {
        let trace = simulate(&program, &registry, &*oracle, 3);
        for cut in answer_positions(&trace.events) {
            let prefix = &trace.events[..cut];
            let resumed =
                crate::engine::replay(fresh_core(&program, &registry), prefix).expect("prefix replays");
            let prepared = prefix.iter().filter(|e| matches!(e, Event::CallDispatchPrepared { .. })).count();
            let rest = continue_run(resumed.core, resumed.in_flight, None, &registry, &*oracle, 5);
            assert_eq!(
                prepared + rest.dispatched.len(),
                trace.dispatched.len(),
                "resuming repeated or lost a call"
            );
            assert_eq!(value_of(&rest.outcome), value_of(&trace.outcome));
        }
    }
}

#[test]
fn a_journal_that_disagrees_with_the_program_is_a_determinism_violation() {
    let (program, registry) = lazy_branch();
    let oracle = |tool: &str, _: &List, _: u32| {
        Ok(if tool == "check" { Value::Bool(true) } else { Value::from(tool) })
    };
    let mut events = simulate(&program, &registry, &oracle, 1).events;
    let selected = events.iter().position(|e| matches!(e, Event::BranchSelected { .. })).expect("a branch");
    if let Event::BranchSelected { arm, .. } = &mut events[selected] {
        *arm = crate::engine::event::Arm::Else;
    }
    let error = crate::engine::replay(fresh_core(&program, &registry), &events).expect_err("diverges");
    assert!(
        matches!(error, crate::engine::ReplayError::Diverged { seq, .. } if seq == selected as u64 + 1),
        "{error:?}"
    );
    assert_eq!(error.code().to_string(), "RL7108");
}

#[test]
fn a_retried_call_keeps_its_operation_identity_and_gets_a_new_node() {
    let (program, registry) = retried_boundary();
    let mut core = fresh_core(&program, &registry);
    let dispatched = |effects: Vec<Effect>| -> CallRequest {
        effects
            .into_iter()
            .find_map(|e| match e {
                Effect::Dispatch(request) => Some(request),
                _ => None,
            })
            .expect("a dispatch")
    };
    let first = dispatched(core.react(Input::Start { inputs: Vec::new() }));
    let error = ToolError::retryable("RATE_LIMITED", "slow down");
    let second = dispatched(core.react(Input::ToolFailed { call: first.call, error }));
    assert_eq!((first.attempt, second.attempt), (1, 2));
    assert_eq!(first.call_site, second.call_site);
    assert_eq!(first.dynamic_key, second.dynamic_key, "the attempt is not part of the dynamic key");
    assert_ne!(first.node_id, second.node_id, "each attempt's node is its own");
}
