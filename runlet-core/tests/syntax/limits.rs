//! The front end's bounds: source size, nesting depth (100,000 levels give a diagnostic, not a
//! stack overflow), operators on a path however they nest, and diagnostic count; and the
//! deepest programs the default bounds accept go through every pass on a 2 MiB thread.

use runlet::diag::{Severity, codes};
use runlet::syntax::{ParseOptions, parse, parse_with};

const DEEP: usize = 100_000;

fn codes_of(source: &str) -> Vec<runlet::diag::Code> {
    parse(source).diagnostics.iter().map(|d| d.code).collect()
}

fn assert_too_deep(source: &str) {
    let options = ParseOptions { max_source_bytes: 8 << 20, ..ParseOptions::default() };
    let parse = parse_with(source, &options);
    let deep: Vec<_> = parse.diagnostics.iter().filter(|d| d.code == codes::NESTING_TOO_DEEP).collect();
    assert_eq!(deep.len(), 1, "{:?}", &parse.diagnostics);
    assert_eq!(parse.diagnostics.len(), 1, "a nesting failure cascades: {:?}", parse.diagnostics);
}

#[test]
fn deeply_nested_brackets_report_nesting_too_deep() {
    for (open, close) in [("(", ")"), ("[", "]"), ("{a: ", "}"), ("f(", ")"), ("x[", "]")] {
        assert_too_deep(&format!("x = {}1{}\nreturn x\n", open.repeat(DEEP), close.repeat(DEEP)));
        assert_too_deep(&format!("x = {}1\nreturn x\n", open.repeat(DEEP)));
    }
}

#[test]
fn long_operator_chains_report_nesting_too_deep() {
    assert_too_deep(&format!("x = {}1\nreturn x\n", "- ".repeat(DEEP)));
    assert_too_deep(&format!("x = {}1\nreturn x\n", "not ".repeat(DEEP)));
    assert_too_deep(&format!("x = 1{}\nreturn x\n", " + 1".repeat(DEEP)));
    assert_too_deep(&format!("x = a{}\nreturn x\n", ".b".repeat(DEEP)));
    assert_too_deep(&format!("x = 1{}\nreturn x\n", " if c else 1".repeat(DEEP)));
}

/// Chains nested in brackets, calls or lists stack their operators on one path: 20 levels of
/// 200-operator chains, each the first operand of the next, are a tree 4,000 operators deep,
/// which every later pass recursed through (a stack overflow from a 5 KiB program) before the
/// path, not each chain, was bounded. Nested as the last operand, each level adds one.
#[test]
fn chains_nested_inside_each_other_are_bounded_on_their_path() {
    let chain = " + 1".repeat(200);
    let nest = |open: &str, close: &str, first: bool| {
        let mut expr = "1".to_owned();
        for _ in 0..20 {
            expr = if first {
                format!("{open}{expr}{chain}{close}")
            } else {
                format!("{open}1{chain} + {expr}{close}")
            };
        }
        format!("x = {expr}\nreturn x\n")
    };
    for (open, close) in [("(", ")"), ("f(", ")"), ("[", "]"), ("{a: ", "}")] {
        assert_too_deep(&nest(open, close, true));
        assert_eq!(codes_of(&nest(open, close, false)), [], "220 operators on the deepest path");
    }
    // Past the bound through its last operand, the operator over it is the one reported.
    let short = ParseOptions { max_operator_chain: 2, ..ParseOptions::default() };
    let over = parse_with("x = 1 + (1 + (1 + 1))\nreturn x\n", &short).diagnostics;
    assert_eq!((over.len(), over[0].code, over[0].span.start), (1, codes::NESTING_TOO_DEEP, 6), "{over:?}");
    // The operators of sibling operands are on different paths: 20 chains of 200 side by side.
    let siblings = format!("x = [{}]\nreturn x\n", vec![format!("1{chain}"); 20].join(", "));
    assert_eq!(codes_of(&siblings), []);
}

/// The deepest programs `options` accept, one of each shape of depth: chains in brackets,
/// brackets, prefix operators, calls, lists, blocks, and one long chain of each kind.
fn deepest_programs(options: &ParseOptions) -> Vec<String> {
    let operators = options.max_operator_chain as usize;
    let program = |body: String| format!("x = {body}\nreturn x\n");
    let accepted = |source: &String| {
        parse_with(source, options).diagnostics.iter().all(|d| d.code != codes::NESTING_TOO_DEEP)
    };
    // Each shape as deep as the options let it go: its levels from the nesting bound down to
    // the first accepted.
    let deepest = |shape: &dyn Fn(usize) -> String| {
        (1..=options.max_nesting_depth as usize)
            .rev()
            .map(|levels| program(shape(levels)))
            .find(accepted)
            .expect("some depth is accepted")
    };
    let chained = |levels: usize| {
        let mut expr = "1".to_owned();
        for _ in 0..levels {
            expr = format!("({expr}{})", " + 1".repeat(operators / levels));
        }
        expr
    };
    let programs = vec![
        deepest(&chained),
        deepest(&|levels| format!("{}1{}", "(".repeat(levels), ")".repeat(levels))),
        deepest(&|levels| format!("{}1", "- ".repeat(levels))),
        deepest(&|levels| format!("{}1{}", "f(".repeat(levels), ")".repeat(levels))),
        deepest(&|levels| format!("{}1 + 1{}", "[1 + ".repeat(levels), "]".repeat(levels))),
        deepest(&|levels| format!("{}1{}", "if c { return ".repeat(levels), " }".repeat(levels))),
        deepest(&|levels| format!("{}1{}", "for a in b { return ".repeat(levels), " }".repeat(levels))),
        program(format!("1{}", " + 1".repeat(operators))),
        program(format!("1{}", " ?? 1".repeat(operators))),
    ];
    assert!(programs.iter().all(accepted), "every program is within the bounds");
    programs
}

/// Runs `passes` on a thread with a 2 MiB stack (a tokio worker's, most host threads').
fn on_a_2_mib_stack<T: Send + 'static>(passes: impl FnOnce() -> T + Send + 'static) -> T {
    let thread = std::thread::Builder::new().stack_size(2 << 20).spawn(passes).expect("a thread");
    thread.join().expect("the passes return on a 2 MiB stack")
}

/// At the highest bounds a host may set (the ceilings; the defaults are half of them; higher
/// settings are taken as them), the deepest programs parse and analyze on a 2 MiB stack,
/// however their depth is made up.
#[test]
fn the_deepest_programs_the_ceilings_accept_analyze_on_a_2_mib_stack() {
    let ceilings = ParseOptions {
        max_nesting_depth: ParseOptions::NESTING_CEILING,
        max_operator_chain: ParseOptions::OPERATOR_CHAIN_CEILING,
        ..ParseOptions::default()
    };
    for source in deepest_programs(&ceilings) {
        let parse =
            ParseOptions { max_nesting_depth: u32::MAX, max_operator_chain: u32::MAX, ..ceilings.clone() };
        let analysis = on_a_2_mib_stack(move || {
            let options = runlet::analyze::AnalyzeOptions { parse, ..Default::default() };
            let registry = runlet::registry::Registry::empty();
            runlet::analyze::analyze(&source, &registry, &runlet::analyze::Inputs::new(), &options)
        });
        assert!(
            analysis.diagnostics.iter().all(|d| d.code != codes::NESTING_TOO_DEEP),
            "{:?}",
            analysis.diagnostics
        );
    }
}

/// At the default bounds (which `fmt` and `heal` parse with), the deepest programs also format
/// and heal on a 2 MiB stack.
#[test]
fn the_deepest_programs_the_defaults_accept_format_and_heal_on_a_2_mib_stack() {
    for source in deepest_programs(&ParseOptions::default()) {
        let shown = source.chars().take(60).collect::<String>();
        let (formatted, healed) = on_a_2_mib_stack(move || {
            let formatted = runlet::syntax::format(&source).map(|text| text.len());
            (formatted, runlet::syntax::heal(&source))
        });
        // `??` is reported as a foreign operator, with its fix; nothing is too deep to format.
        let too_deep = |diagnostics: &[runlet::diag::Diagnostic]| {
            diagnostics.iter().any(|d| d.code == codes::NESTING_TOO_DEEP)
        };
        assert!(formatted.as_ref().map_or_else(|errors| !too_deep(errors), |_| true), "{shown}…");
        assert!(!too_deep(&healed.remaining) && !healed.source.is_empty(), "{shown}…");
    }
}

/// `a + b + c` is no nesting: a flat chain is bounded by `max_operator_chain` of its own, so a
/// chain of 129 terms is fine where 129 levels of brackets are not.
#[test]
fn a_flat_chain_is_not_nesting() {
    let options = ParseOptions::default();
    let chain = |terms: usize| format!("x = 1{}\nreturn x\n", " + 1".repeat(terms - 1));
    assert_eq!(codes_of(&chain(options.max_nesting_depth as usize + 1)), []);
    assert_eq!(codes_of(&chain(options.max_operator_chain as usize + 1)), []);
    let over = parse(&chain(options.max_operator_chain as usize + 2)).diagnostics;
    assert_eq!(over.iter().map(|d| d.code).collect::<Vec<_>>(), [codes::NESTING_TOO_DEEP]);
    assert!(over[0].message.contains("chains more than 256 binary operators"), "{}", over[0].message);
    let mixed = format!("x = 1{}\nreturn x\n", " + 2 * 3 - 4 / 5 > 0 and true".repeat(20));
    assert_eq!(codes_of(&mixed), [], "operators of several precedences chain too");
    let short = ParseOptions { max_operator_chain: 2, ..ParseOptions::default() };
    let reported: Vec<_> = parse_with(&chain(4), &short).diagnostics.iter().map(|d| d.code).collect();
    assert_eq!(reported, [codes::NESTING_TOO_DEEP]);
}

/// `a ?? b ?? c …` (reported as a foreign operator, with a fix) chains as `or` does: it is
/// bounded by `max_operator_chain`, and each `??` adds a few nodes to the tree read on from it.
/// Each once copied the tree so far, doubling it: 100,000 of them never finished parsing.
#[test]
fn a_chain_of_null_coalescing_is_bounded_and_grows_linearly() {
    let chain = |terms: usize| format!("x = a{}\nreturn x\n", " ?? a".repeat(terms));
    let nodes = |terms: usize| {
        let mut count = 0usize;
        runlet::syntax::path::walk(&parse(&chain(terms)).program, |_, _| count += 1);
        count
    };
    let (eight, sixteen) = (nodes(8), nodes(16));
    assert!(sixteen - eight <= 8 * 6, "8 more `??` added {} nodes", sixteen - eight);
    let options =
        ParseOptions { max_source_bytes: 8 << 20, max_diagnostics: 1_000, ..ParseOptions::default() };
    let long = parse_with(&chain(DEEP), &options).diagnostics;
    let count = |code| long.iter().filter(|d| d.code == code).count();
    assert_eq!(count(codes::NESTING_TOO_DEEP), 1);
    assert_eq!(count(codes::FOREIGN_OPERATOR), options.max_operator_chain as usize);
    assert_eq!(long.len(), options.max_operator_chain as usize + 1);
}

#[test]
fn deeply_nested_blocks_report_nesting_too_deep() {
    let ifs = format!("x = {}1{}\nreturn x\n", "if c { return ".repeat(DEEP), " }".repeat(DEEP));
    assert_too_deep(&ifs);
    let fors = format!("x = {}1{}\nreturn x\n", "for a in b { return ".repeat(DEEP), " }".repeat(DEEP));
    assert_too_deep(&fors);
    let boundaries = format!("x = {}1\nreturn x\n", "boundary { return ".repeat(DEEP));
    assert_too_deep(&boundaries);
}

#[test]
fn nesting_up_to_the_limit_is_accepted() {
    let options = ParseOptions::default();
    let levels = options.max_nesting_depth as usize - 4;
    let source = format!("x = {}1{}\nreturn x\n", "(".repeat(levels), ")".repeat(levels));
    assert_eq!(codes_of(&source), []);
    let over = format!("x = {}1{}\nreturn x\n", "(".repeat(levels + 8), ")".repeat(levels + 8));
    assert_eq!(codes_of(&over), [codes::NESTING_TOO_DEEP]);
}

#[test]
fn the_nesting_limit_is_configurable() {
    let options = ParseOptions { max_nesting_depth: 8, ..ParseOptions::default() };
    let source = "x = ((((((((((1))))))))))\nreturn x\n";
    let reported: Vec<_> = parse_with(source, &options).diagnostics.iter().map(|d| d.code).collect();
    assert_eq!(reported, [codes::NESTING_TOO_DEEP]);
    assert_eq!(codes_of(source), []);
}

#[test]
fn oversized_source_is_rejected_before_lexing() {
    let options = ParseOptions { max_source_bytes: 16, ..ParseOptions::default() };
    let parse = parse_with("x = 1234567890\nreturn x\n", &options);
    let reported: Vec<_> = parse.diagnostics.iter().map(|d| d.code).collect();
    assert_eq!(reported, [codes::SOURCE_TOO_LARGE]);
    assert!(parse.program.stmts.is_empty());
    assert!(parse_with("return 1", &options).diagnostics.is_empty());
}

#[test]
fn diagnostics_are_capped_with_one_note() {
    let options = ParseOptions { max_diagnostics: 5, ..ParseOptions::default() };
    let source = "@ ".repeat(10_000) + "\nreturn 1\n";
    let diagnostics = parse_with(&source, &options).diagnostics;
    assert_eq!(diagnostics.len(), 6);
    let last = diagnostics.last().expect("the cap note");
    assert_eq!((last.code, last.severity), (codes::TOO_MANY_DIAGNOSTICS, Severity::Note));
    assert!(diagnostics[..5].iter().all(|d| d.code == codes::UNEXPECTED_CHARACTER));
}

/// Every shape nested right up to the default limit parses on an ordinary test thread's stack:
/// the limit, not the stack, is what stops deep input.
#[test]
fn the_deepest_accepted_programs_fit_the_default_stack() {
    let shapes: [(&str, &str); 8] = [
        ("(", ")"),
        ("[", "]"),
        ("{a: ", "}"),
        ("f(", ")"),
        ("- ", ""),
        ("if c { return ", " }"),
        ("for a in b { return ", " }"),
        ("boundary { return ", " } catch e { return 0 }"),
    ];
    for (open, close) in shapes {
        let mut levels = 1;
        loop {
            let source = format!("x = {}1{}\nreturn x\n", open.repeat(levels), close.repeat(levels));
            let reported = codes_of(&source);
            if reported == [codes::NESTING_TOO_DEEP] {
                break;
            }
            assert_eq!(reported, [], "{source}");
            levels += 1;
        }
        assert!(levels > 20, "`{open}` nests only {levels} levels");
    }
}

/// Source-size-bounded inputs of many small pieces finish in time linear in their size: a block
/// of 20,000 unbound calls (each gets a fresh binding name) and an object of 80,000 keys.
#[test]
fn many_statements_or_keys_stay_linear() {
    let calls = "f(x)\n".repeat(20_000) + "return 1\n";
    let parse = parse(&calls);
    assert_eq!(parse.diagnostics.len(), ParseOptions::default().max_diagnostics + 1);
    assert_eq!(parse.diagnostics[0].fixes[0].edits[0].replacement, "f_result = ");
    assert_eq!(parse.diagnostics[1].fixes[0].edits[0].replacement, "f_result_2 = ");
    let keys: Vec<String> = (0..80_000).map(|i| format!("k{i}: 1")).collect();
    let object = format!("x = {{ {} }}\nreturn x\n", keys.join(", "));
    assert_eq!(codes_of(&object), []);
}

#[test]
fn fresh_binding_names_skip_declared_ones() {
    let source = "f_result_2 = 1\nf(x)\nf(x)\nf(x)\nreturn f_result_2\n";
    let names: Vec<String> =
        parse(source).diagnostics.iter().map(|d| d.fixes[0].edits[0].replacement.clone()).collect();
    assert_eq!(names, ["f_result = ", "f_result_3 = ", "f_result_4 = "]);
}
