//! The single-mistake corpus (`mistakes/*.txt`): programs that models trained on other languages
//! write, each with one mistake and its intended repair beside it, checked against a registry of
//! several namespaces with discriminated unions, optional and nullable fields
//! (`registries/mistakes.json`). The test prints how actionable the diagnostics are — exactly one
//! error per mistake, the first fix repairing it, the machine-applicable fixes alone repairing it,
//! `heal` with the registry repairing it — and how many fixes would change what the program means, and holds each
//! figure to its floor.
//!
//! A case is `=== name`, the mistaken program, `--- repair`, the intended program. `# key: value`
//! lines atop the mistake choose the registry and options as in the golden cases and apply to the
//! repair too. A fix *repairs* a program when the result checks without errors and calls the same
//! tools and intrinsics, and reads the same properties, as the intended repair; it *changes the
//! meaning* when the result checks clean but calls other tools or intrinsics.

use std::collections::BTreeSet;
use std::path::PathBuf;

use runlet::analyze::Analysis;
use runlet::diag::{Fix, apply_fixes};
use runlet::syntax::token::TokenKind;

use crate::support::{Setup, compatible, errors};

/// Floors the figures are held to (percent of the corpus); no fix may change the meaning.
const ONE_ERROR_FLOOR: f64 = 98.5;
const FIRST_FIX_FLOOR: f64 = 92.5;
const MACHINE_FLOOR: f64 = 79.0;
const HEAL_FLOOR: f64 = 77.0;

/// Rounds of machine-applicable fixes applied before giving up (one repair can reveal the next).
const MACHINE_ROUNDS: usize = 4;

struct Case {
    name: String,
    mistake: String,
    repair: String,
}

fn corpus() -> Vec<Case> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/analyze/mistakes");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|p| p.extension().is_some_and(|e| e == "txt"))
        .collect();
    files.sort();
    let mut cases = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        for block in text.split("\n=== ").map(|b| b.strip_prefix("=== ").unwrap_or(b)) {
            let (name, rest) =
                block.split_once('\n').unwrap_or_else(|| panic!("a case without text: {block}"));
            let (mistake, repair) =
                rest.split_once("--- repair\n").unwrap_or_else(|| panic!("{name}: no `--- repair` line"));
            let header: String =
                mistake.lines().take_while(|l| l.starts_with('#')).map(|l| format!("{l}\n")).collect();
            cases.push(Case {
                name: name.trim().to_owned(),
                mistake: mistake.to_owned(),
                repair: format!("{header}{repair}"),
            });
        }
    }
    cases
}

fn setup(source: &str) -> Setup {
    let mut setup = Setup::of(source);
    if !source.lines().any(|l| l.starts_with("# registry:")) {
        setup.registry = "mistakes".to_owned();
    }
    setup
}

/// What a program does, for comparing a repair with the intended one: the dotted paths it calls
/// (with repetitions) and the property names it reads after a `.`.
#[derive(Debug, PartialEq, Eq)]
struct Meaning {
    calls: Vec<String>,
    properties: BTreeSet<String>,
}

fn meaning(source: &str) -> Meaning {
    let lexed = runlet::syntax::lexer::lex(source);
    let tokens = &lexed.tokens;
    let text = |i: usize| &source[tokens[i].span.range()];
    let mut calls = Vec::new();
    let mut properties = BTreeSet::new();
    let mut i = 0;
    while i < tokens.len() {
        let starts_path =
            tokens[i].kind == TokenKind::Ident && (i == 0 || tokens[i - 1].kind != TokenKind::Dot);
        if !starts_path {
            if tokens[i].kind == TokenKind::Dot && tokens.get(i + 1).is_some_and(|t| t.kind != TokenKind::Dot)
            {
                properties.insert(text(i + 1).to_owned());
            }
            i += 1;
            continue;
        }
        let mut path = vec![text(i).to_owned()];
        let mut j = i + 1;
        while j + 1 < tokens.len()
            && tokens[j].kind == TokenKind::Dot
            && tokens[j + 1].kind == TokenKind::Ident
        {
            path.push(text(j + 1).to_owned());
            j += 2;
        }
        if tokens.get(j).is_some_and(|t| t.kind == TokenKind::LParen) {
            calls.push(path.join("."));
            i = j;
        } else {
            i += 1;
        }
    }
    calls.sort();
    Meaning { calls, properties }
}

/// How a candidate repair compares with the intended one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Outcome {
    /// Checks clean and does what the intended repair does.
    Repaired,
    /// Checks clean but calls other tools or intrinsics.
    MeaningChanged,
    /// Checks clean, same calls, other properties read.
    OtherProperties,
    /// Still has errors (or the fix did not apply).
    NotRepaired,
}

fn judge(setup: &Setup, candidate: Option<&str>, intended: &Meaning) -> Outcome {
    let Some(candidate) = candidate else { return Outcome::NotRepaired };
    if errors(&setup.analyze(candidate)) > 0 {
        return Outcome::NotRepaired;
    }
    let got = meaning(candidate);
    if got.calls != intended.calls {
        Outcome::MeaningChanged
    } else if got.properties != intended.properties {
        Outcome::OtherProperties
    } else {
        Outcome::Repaired
    }
}

/// The first fix a reader meets: the first fix of the first error that offers one.
fn first_fix(analysis: &Analysis) -> Option<&Fix> {
    analysis.diagnostics.iter().filter(|d| d.is_error()).flat_map(|d| &d.fixes).next()
}

/// Applies machine-applicable fixes round after round until the program checks clean or no
/// machine fix is left.
fn machine_repair(setup: &Setup, source: &str) -> Option<String> {
    let mut current = source.to_owned();
    for _ in 0..MACHINE_ROUNDS {
        let analysis = setup.analyze(&current);
        if errors(&analysis) == 0 {
            break;
        }
        let fixes = compatible(analysis.diagnostics.iter().filter(|d| d.is_error()));
        if fixes.is_empty() {
            return None;
        }
        current = apply_fixes(&current, fixes)?;
    }
    (current != source).then_some(current)
}

#[derive(Default)]
struct Tally {
    cases: usize,
    one_error: usize,
    first_fix: usize,
    machine: usize,
    heal: usize,
    meaning_changes: Vec<String>,
    misses: [Vec<String>; 4],
    invalid: Vec<String>,
}

fn percent(part: usize, whole: usize) -> f64 {
    100.0 * part as f64 / whole.max(1) as f64
}

#[test]
fn the_mistake_corpus_meets_its_figures() {
    let cases = corpus();
    assert!(cases.len() >= 200, "the corpus has only {} cases", cases.len());
    let names: BTreeSet<&str> = cases.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names.len(), cases.len(), "case names repeat");
    let mut tally = Tally::default();
    for case in &cases {
        let setup = setup(&case.mistake);
        let intended = setup.analyze(&case.repair);
        if errors(&intended) > 0 {
            tally.invalid.push(format!("{}: the repair has errors: {:?}", case.name, codes(&intended)));
            continue;
        }
        let intended = meaning(&case.repair);
        let analysis = setup.analyze(&case.mistake);
        let found = errors(&analysis);
        if found == 0 {
            tally.invalid.push(format!("{}: the mistake is not reported", case.name));
            continue;
        }
        tally.cases += 1;
        let miss = |slot: usize, outcome: Outcome, tally: &mut Tally, how: &str| {
            if outcome == Outcome::MeaningChanged {
                tally.meaning_changes.push(format!("{} ({how})", case.name));
            }
            tally.misses[slot].push(format!("{} {outcome:?}", case.name));
        };
        if found == 1 {
            tally.one_error += 1;
        } else {
            tally.misses[0].push(format!("{} {:?}", case.name, codes(&analysis)));
        }
        let fixed = first_fix(&analysis).and_then(|fix| apply_fixes(&case.mistake, [fix]));
        match judge(&setup, fixed.as_deref(), &intended) {
            Outcome::Repaired => tally.first_fix += 1,
            outcome => miss(1, outcome, &mut tally, "first fix"),
        }
        match judge(&setup, machine_repair(&setup, &case.mistake).as_deref(), &intended) {
            Outcome::Repaired => tally.machine += 1,
            outcome => miss(2, outcome, &mut tally, "machine fixes"),
        }
        let healed = runlet::analyze::heal(&case.mistake, &setup.registry(), &setup.inputs, &setup.options);
        match judge(&setup, healed.changed.then_some(healed.source.as_str()), &intended) {
            Outcome::Repaired => tally.heal += 1,
            outcome => miss(3, outcome, &mut tally, "heal"),
        }
    }
    report(&tally);
    assert!(tally.invalid.is_empty(), "invalid cases:\n{}", tally.invalid.join("\n"));
    let n = tally.cases;
    let figures = [
        ("exactly one error", percent(tally.one_error, n), ONE_ERROR_FLOOR),
        ("first fix repairs", percent(tally.first_fix, n), FIRST_FIX_FLOOR),
        ("machine fixes alone repair", percent(tally.machine, n), MACHINE_FLOOR),
        ("heal repairs", percent(tally.heal, n), HEAL_FLOOR),
    ];
    for (what, figure, floor) in figures {
        assert!(figure >= floor, "{what}: {figure:.1}% is below its floor of {floor}%");
    }
    assert!(tally.meaning_changes.is_empty(), "fixes that change the meaning: {:?}", tally.meaning_changes);
}

fn codes(analysis: &Analysis) -> Vec<String> {
    analysis.diagnostics.iter().filter(|d| d.is_error()).map(|d| d.code.to_string()).collect()
}

fn report(tally: &Tally) {
    let n = tally.cases;
    println!("mistake corpus: {n} single mistakes");
    println!(
        "  exactly one error:          {:5.1}% ({}/{n})  goal >= 97%",
        percent(tally.one_error, n),
        tally.one_error
    );
    println!(
        "  first fix repairs:          {:5.1}% ({}/{n})  goal >= 90%",
        percent(tally.first_fix, n),
        tally.first_fix
    );
    println!(
        "  machine fixes alone repair: {:5.1}% ({}/{n})  goal >= 70%",
        percent(tally.machine, n),
        tally.machine
    );
    println!("  heal repairs:               {:5.1}% ({}/{n})", percent(tally.heal, n), tally.heal);
    println!("  fixes that change meaning:  {}  goal 0", tally.meaning_changes.len());
    let headings = ["more than one error", "first fix misses", "machine fixes miss", "heal misses"];
    for (heading, misses) in headings.iter().zip(&tally.misses) {
        println!("{heading} ({}): {}", misses.len(), misses.join(", "));
    }
    println!("meaning changed: {}", tally.meaning_changes.join(", "));
}
