//! `runlet-conformance [--host rust|c|go|all]… [--c-host PATH] [--go-host PATH] [--jobs N]
//! [PATH…]`: runs the conformance fixtures at PATH (default `conformance/v1`) through each host
//! asked for — the Rust host in this process over a memory and an SQLite journal, the C and Go
//! host programs — judges every observation against its fixture and against the other hosts',
//! prints one line per failure and then `N passed, N failed` (a fixture counts once per host),
//! and exits 0 only when everything passed. `conformance/run` builds the host programs and
//! calls it. `--plan FIXTURE` prints the plan a host program reads for one fixture.

mod external;
mod fixture;
mod judge;
mod observation;
mod plan;
mod rust_host;

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicUsize, Ordering};

use clap::{Parser, ValueEnum};

use crate::external::HostProgram;
use crate::fixture::{Entry, Fixture, load_suites};
use crate::judge::{disagreement, judge};
use crate::observation::Observation;
use crate::rust_host::RustJournal;

#[derive(Debug, Parser)]
#[command(
    name = "runlet-conformance",
    about = "Runs Runlet conformance fixtures through the Rust, C and Go hosts"
)]
struct Args {
    /// The hosts to run the fixtures through (repeatable; default all).
    #[arg(long = "host", value_enum)]
    hosts: Vec<HostArg>,
    /// The C host program (conformance/hosts/c), needed for `--host c`.
    #[arg(long, value_name = "PATH")]
    c_host: Option<PathBuf>,
    /// The Go host program (conformance/hosts/go), needed for `--host go`.
    #[arg(long, value_name = "PATH")]
    go_host: Option<PathBuf>,
    /// How many fixtures run at once.
    #[arg(long, default_value_t = 2)]
    jobs: usize,
    /// Print the plan of this fixture file (what the C and Go hosts read) and exit.
    #[arg(long, value_name = "FIXTURE")]
    plan: Option<PathBuf>,
    /// Fixture files or directories of them (searched recursively for `*.json`).
    paths: Vec<PathBuf>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum HostArg {
    Rust,
    C,
    Go,
    All,
}

/// One way of running a fixture, named as the report names it.
#[derive(Debug, Clone)]
enum Host {
    Rust(RustJournal),
    Program(HostProgram),
}

impl Host {
    fn name(&self) -> &'static str {
        match self {
            Host::Rust(journal) => journal.host_name(),
            Host::Program(program) => program.name,
        }
    }

    fn run(&self, fixture: &Fixture) -> Observation {
        match self {
            Host::Rust(journal) => rust_host::run(fixture, *journal),
            Host::Program(program) => program.run(fixture),
        }
    }
}

fn main() -> ExitCode {
    let args = Args::parse();
    if let Some(path) = &args.plan {
        return print_plan(path);
    }
    let hosts = match hosts(&args) {
        Ok(hosts) => hosts,
        Err(message) => {
            eprintln!("runlet-conformance: {message}");
            return ExitCode::from(2);
        }
    };
    let paths =
        if args.paths.is_empty() { vec![PathBuf::from("conformance/v1")] } else { args.paths.clone() };
    let entries = match load_suites(&paths) {
        Ok(entries) => entries,
        Err(message) => {
            eprintln!("runlet-conformance: {message}");
            return ExitCode::from(2);
        }
    };
    if entries.is_empty() {
        eprintln!("runlet-conformance: no fixtures under {paths:?}");
        return ExitCode::from(2);
    }
    let verdicts = run_all(&entries, &hosts, args.jobs.max(1));
    let mut stdout = std::io::stdout().lock();
    let (mut passed, mut failed) = (0, 0);
    for verdict in &verdicts {
        for (host, differences) in verdict {
            if differences.is_empty() {
                passed += 1;
            } else {
                failed += 1;
                let _ = writeln!(stdout, "FAIL {host} {}: {}", differences[0], differences[1..].join("; "));
            }
        }
    }
    let _ = writeln!(stdout, "{passed} passed, {failed} failed");
    if failed == 0 { ExitCode::SUCCESS } else { ExitCode::FAILURE }
}

/// The hosts asked for, with their programs.
fn hosts(args: &Args) -> Result<Vec<Host>, String> {
    let asked = if args.hosts.is_empty() { vec![HostArg::All] } else { args.hosts.clone() };
    let wants = |host: HostArg| asked.contains(&host) || asked.contains(&HostArg::All);
    let mut hosts = Vec::new();
    if wants(HostArg::Rust) {
        hosts.push(Host::Rust(RustJournal::Memory));
        hosts.push(Host::Rust(RustJournal::Sqlite));
        // The PostgreSQL journal runs where a server is named; CI always names one.
        match std::env::var(rust_host::POSTGRES_URL) {
            Ok(url) if !url.is_empty() => hosts.push(Host::Rust(RustJournal::Postgres)),
            _ if std::env::var("CI").is_ok_and(|ci| ci == "true") => {
                return Err(format!(
                    "CI=true and `{}` is not set: the rust/postgres host needs a server",
                    rust_host::POSTGRES_URL
                ));
            }
            _ => eprintln!("the rust/postgres host is skipped: `{}` is not set", rust_host::POSTGRES_URL),
        }
    }
    let program = |name: &'static str, flag: &str, path: &Option<PathBuf>| match path {
        Some(path) if path.is_file() => Ok(Host::Program(HostProgram { name, path: path.clone() })),
        Some(path) => Err(format!("the {name} host program `{}` does not exist", path.display())),
        None => Err(format!("`--host {name}` needs `{flag} PATH` (conformance/run builds it)")),
    };
    if wants(HostArg::C) {
        hosts.push(program("c", "--c-host", &args.c_host)?);
    }
    if wants(HostArg::Go) {
        hosts.push(program("go", "--go-host", &args.go_host)?);
    }
    Ok(hosts)
}

/// Per fixture, in suite order: each host's name and what differed (the fixture's name first).
type Verdict = Vec<(&'static str, Vec<String>)>;

/// Runs every fixture through every host, `jobs` fixtures at a time.
fn run_all(entries: &[Entry], hosts: &[Host], jobs: usize) -> Vec<Verdict> {
    let next = AtomicUsize::new(0);
    let mut verdicts: Vec<Option<Verdict>> = vec![None; entries.len()];
    let slots = parking_lot::Mutex::new(&mut verdicts);
    std::thread::scope(|scope| {
        for _ in 0..jobs.min(entries.len()) {
            scope.spawn(|| {
                loop {
                    let index = next.fetch_add(1, Ordering::SeqCst);
                    let Some(entry) = entries.get(index) else { break };
                    let verdict = run_one(entry, hosts);
                    slots.lock()[index] = Some(verdict);
                }
            });
        }
    });
    verdicts.into_iter().map(|verdict| verdict.expect("every fixture ran")).collect()
}

/// Runs one fixture through every host and judges each host, then each against the first.
fn run_one(entry: &Entry, hosts: &[Host]) -> Verdict {
    let name = entry.name();
    let fixture = match &entry.fixture {
        Ok(fixture) => fixture,
        Err(message) => {
            return hosts.iter().map(|host| (host.name(), vec![name.clone(), message.clone()])).collect();
        }
    };
    let observations: Vec<Observation> = hosts.iter().map(|host| host.run(fixture)).collect();
    let reference = &observations[0];
    hosts
        .iter()
        .zip(&observations)
        .enumerate()
        .map(|(index, (host, seen))| {
            let mut differences = judge(&fixture.expect, seen);
            if index > 0 && differences.is_empty() {
                differences.extend(
                    disagreement(reference, seen)
                        .into_iter()
                        .map(|d| format!("disagrees with {}: {d}", hosts[0].name())),
                );
            }
            if !differences.is_empty() {
                differences.insert(0, name.clone());
            }
            (host.name(), differences)
        })
        .collect()
}

fn print_plan(path: &std::path::Path) -> ExitCode {
    let entries = match load_suites(&[path.to_path_buf()]) {
        Ok(entries) => entries,
        Err(message) => {
            eprintln!("runlet-conformance: {message}");
            return ExitCode::from(2);
        }
    };
    for entry in entries {
        match entry.fixture.as_ref().map_err(Clone::clone).and_then(plan::plan) {
            Ok(plan) => {
                let _ = std::io::stdout().write_all(&plan);
            }
            Err(message) => {
                eprintln!("runlet-conformance: {}: {message}", entry.path.display());
                return ExitCode::from(2);
            }
        }
    }
    ExitCode::SUCCESS
}
