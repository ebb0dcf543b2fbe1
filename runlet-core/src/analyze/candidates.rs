//! The weighted candidate search of spec §3.4: Damerau-Levenshtein distance, common prefix,
//! keyboard adjacency, schema aliases and expected-type compatibility, ranked deterministically.

use std::sync::Arc;

use crate::diag::nearest;

/// One name a misspelling may have meant.
#[derive(Debug, Clone)]
pub(crate) struct Candidate {
    /// What is shown and inserted.
    pub name: String,
    /// What is compared with the misspelling (usually the name; a tool's last segment when
    /// matching a bare name).
    pub key: String,
    /// Shown after the name when the candidate is from another namespace or kind, such as
    /// `host input` or `tool in namespace shop`.
    pub label: Option<String>,
    /// Other names the candidate is known by (schema aliases).
    pub aliases: Arc<[Arc<str>]>,
    /// Whether its schema fits what the context expects, when that is known.
    pub fits: Option<bool>,
}

impl Candidate {
    pub fn named(name: impl Into<String>) -> Candidate {
        let name = name.into();
        Candidate { key: name.clone(), name, label: None, aliases: Arc::from([]), fits: None }
    }

    pub fn labelled(name: impl Into<String>, label: impl Into<String>) -> Candidate {
        Candidate { label: Some(label.into()), ..Candidate::named(name) }
    }

    /// `name` or `name (label)`.
    pub fn shown(&self) -> String {
        match &self.label {
            Some(label) => format!("{} ({label})", self.name),
            None => self.name.clone(),
        }
    }
}

/// A candidate with its score (lower is closer) and whether it is close enough to suggest.
#[derive(Debug, Clone)]
pub(crate) struct Ranked {
    pub candidate: Candidate,
    pub score: i64,
    /// Close enough to offer as a replacement, not only to list.
    pub close: bool,
    /// The misspelling is one of the candidate's aliases.
    pub via_alias: bool,
    /// Damerau-Levenshtein distance, ignoring case.
    pub distance: usize,
}

/// Pools up to this size order their not-close candidates by resemblance (they are listed as
/// "closest"); larger pools (every tool of a registry) list only close candidates, so scoring
/// the rest stays cheap.
const LISTED_POOL: usize = 64;

/// Every candidate ranked against `wanted`, closest first (ties by name).
pub(crate) fn rank(wanted: &str, candidates: impl IntoIterator<Item = Candidate>) -> Vec<Ranked> {
    let mut ranked = scored(wanted, candidates);
    sort(&mut ranked);
    ranked
}

/// Every candidate scored against `wanted`, in the order given.
pub(crate) fn scored(wanted: &str, candidates: impl IntoIterator<Item = Candidate>) -> Vec<Ranked> {
    let wanted = Wanted::new(wanted);
    let candidates: Vec<Candidate> = candidates.into_iter().collect();
    let listed = candidates.len() <= LISTED_POOL;
    candidates.into_iter().map(|candidate| score(&wanted, candidate, listed)).collect()
}

/// Orders scored candidates closest first, ties by name.
pub(crate) fn sort(ranked: &mut [Ranked]) {
    ranked.sort_by(|a, b| a.score.cmp(&b.score).then_with(|| a.candidate.name.cmp(&b.candidate.name)));
}

/// The misspelling, prepared once for scoring many candidates.
struct Wanted {
    lower: String,
}

impl Wanted {
    fn new(text: &str) -> Wanted {
        Wanted { lower: text.to_lowercase() }
    }
}

/// The one candidate that is clearly meant: close, and strictly closer than the next close one
/// — unless that one does not fit where the first does (the context rules it out).
pub(crate) fn clear_winner(ranked: &[Ranked]) -> Option<&Ranked> {
    let first = ranked.first().filter(|r| r.close)?;
    if first.via_alias {
        return Some(first);
    }
    let ruled_out = |r: &Ranked| r.candidate.fits == Some(false) && first.candidate.fits == Some(true);
    match ranked.iter().skip(1).find(|r| !ruled_out(r)) {
        Some(second) if second.close && second.distance <= first.distance => None,
        _ => Some(first),
    }
}

fn score(wanted: &Wanted, candidate: Candidate, listed: bool) -> Ranked {
    let name_lower = candidate.key.to_lowercase();
    let via_alias = candidate.aliases.iter().any(|a| a.to_lowercase() == wanted.lower);
    // Two paths of one namespace (`mail.draft`, `mail.send`) are told apart by what follows
    // it: the namespace they share counts toward neither their common prefix nor their length.
    let shared = shared_namespace(&wanted.lower, &name_lower);
    let (wanted_leaf, name_leaf) = (&wanted.lower[shared..], &name_lower[shared..]);
    let wanted_chars = wanted_leaf.chars().count();
    let name_chars = name_leaf.chars().count();
    let longer = wanted_chars.max(name_chars);
    let contains = wanted_chars >= 3
        && name_chars >= 3
        && (name_leaf.contains(wanted_leaf) || wanted_leaf.contains(name_leaf));
    // The distance is at least the difference in length: past half the longer word, no rule
    // below can call the candidate close, so in a pool too large to list, it is not needed.
    // Spellings too long to compare letter by letter are as far apart as can be, unless they
    // differ only in case.
    let length_gap = wanted_chars.abs_diff(name_chars);
    let uncompared = if name_leaf == wanted_leaf { 0 } else { longer };
    let distance = if !listed && length_gap > longer / 2 && !via_alias && !contains {
        length_gap
    } else {
        nearest::distance(wanted_leaf, name_leaf).unwrap_or(uncompared)
    };
    let case_only = distance == 0;
    let prefix = wanted_leaf.chars().zip(name_leaf.chars()).take_while(|(a, b)| a == b).count();
    // A misspelling of one or two letters is an edit or two from every short name: it does not
    // tell which was meant, so no name is close to it unless only its case differs.
    let guess = wanted_chars < 3;
    let close = via_alias
        || case_only
        || (!guess
            && (distance <= (longer / 3).max(1) || (prefix >= 3 && distance <= longer / 2) || contains));
    let adjacent = adjacent_substitutions(&wanted.lower, &name_lower);
    let mut score = 20 * distance as i64 - 8 * adjacent as i64 - 4 * prefix.min(4) as i64;
    score += match candidate.fits {
        Some(true) => -10,
        Some(false) => 15,
        None => 0,
    };
    if via_alias {
        score -= 1000;
    }
    if case_only {
        score -= 500;
    }
    if !close {
        // Candidates that are not close are only listed, ordered by shared letter pairs.
        let compared = listed && longer <= nearest::LONGEST_COMPARED;
        let resemblance = if compared { strsim::sorensen_dice(&wanted.lower, &name_lower) } else { 0.0 };
        score = 10_000 - (1000.0 * resemblance) as i64 + distance as i64;
    }
    Ranked { candidate, score, close, via_alias, distance }
}

/// The length in bytes of the namespace two dotted paths share, up to and including its last
/// dot (`mail.` of `mail.draft` and `mail.send`); 0 when they share none.
fn shared_namespace(a: &str, b: &str) -> usize {
    let common = a.bytes().zip(b.bytes()).take_while(|(x, y)| x == y).count();
    // Bytes, not characters: the common run may end inside one, but a dot is a byte of its own.
    a.as_bytes()[..common].iter().rposition(|&byte| byte == b'.').map_or(0, |dot| dot + 1)
}

/// Positions where two equally long words differ by a key next to the intended one.
fn adjacent_substitutions(a: &str, b: &str) -> usize {
    if a.chars().count() != b.chars().count() {
        return 0;
    }
    a.chars().zip(b.chars()).filter(|(x, y)| x != y && keyboard_adjacent(*x, *y)).count()
}

/// Whether two letters are neighbours on a QWERTY keyboard (same row, or diagonally adjacent).
fn keyboard_adjacent(a: char, b: char) -> bool {
    const ROWS: [&str; 3] = ["qwertyuiop", "asdfghjkl", "zxcvbnm"];
    let position =
        |c: char| ROWS.iter().enumerate().find_map(|(row, keys)| keys.find(c).map(|col| (row, col)));
    let (Some((ra, ca)), Some((rb, cb))) = (position(a), position(b)) else { return false };
    match ra.abs_diff(rb) {
        0 => ca.abs_diff(cb) == 1,
        // Each row is shifted half a key right of the one above.
        1 => {
            let (upper, lower) = if ra < rb { (ca, cb) } else { (cb, ca) };
            lower == upper || lower + 1 == upper
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(wanted: &str, pool: &[&str]) -> Vec<String> {
        rank(wanted, pool.iter().map(|n| Candidate::named(*n)))
            .into_iter()
            .filter(|r| r.close)
            .map(|r| r.candidate.name)
            .collect()
    }

    #[test]
    fn transpositions_and_adjacent_keys_rank_first() {
        assert_eq!(names("emali", &["email", "secondary_email", "name"]), ["email"]);
        // Names that are not close are listed by shared letter pairs (spec §3.4's example).
        let listed: Vec<String> = rank(
            "emali",
            ["id", "name", "mailing_address", "secondary_email", "email"].map(Candidate::named),
        )
        .into_iter()
        .take(3)
        .map(|r| r.candidate.name)
        .collect();
        assert_eq!(listed, ["email", "secondary_email", "mailing_address"]);
        // `custoner` is one adjacent-key slip from `customer`.
        assert_eq!(names("custoner", &["customers", "customer"]), ["customer", "customers"]);
        assert!(keyboard_adjacent('n', 'm') && keyboard_adjacent('a', 'q') && !keyboard_adjacent('a', 'p'));
    }

    #[test]
    fn aliases_and_expected_types_weigh_in() {
        let aliased = Candidate { aliases: Arc::from([Arc::from("mail")]), ..Candidate::named("email") };
        let ranked = rank("mail", [Candidate::named("main"), aliased]);
        assert_eq!(ranked[0].candidate.name, "email");
        assert!(ranked[0].via_alias && clear_winner(&ranked).is_some());
        let fits = Candidate { fits: Some(true), ..Candidate::named("orders") };
        let misfits = Candidate { fits: Some(false), ..Candidate::named("order") };
        let ranked = rank("ordes", [misfits, fits]);
        assert_eq!(ranked[0].candidate.name, "orders");
    }

    #[test]
    fn names_of_one_or_two_letters_are_never_close_but_by_case() {
        assert!(names("b", &["a", "y"]).is_empty());
        assert!(names("ib", &["id"]).is_empty());
        assert!(names("e", &["value"]).is_empty());
        assert_eq!(names("A", &["a", "b"]), ["a"]);
        assert_eq!(names("ordr", &["order", "id"]), ["order"]);
    }

    #[test]
    fn paths_of_one_namespace_are_told_apart_by_their_last_segments() {
        // `mail.` alone made `mail.send` look close to `mail.draft`.
        assert!(names("mail.draft", &["mail.send"]).is_empty());
        assert!(names("crm.delete", &["crm.update", "crm.customer"]).is_empty());
        assert_eq!(names("crm.custmer", &["crm.customer", "crm.update"]), ["crm.customer"]);
        assert_eq!(names("shop.ordrs", &["shop.orders"]), ["shop.orders"]);
        assert_eq!(shared_namespace("a.b.cd", "a.b.ce"), 4);
        assert_eq!(shared_namespace("ab.c", "ac.c"), 0);
        // `é` and `è` share their first byte: no slice may end inside them.
        assert_eq!(shared_namespace("café", "cafè"), 0);
        assert_eq!(shared_namespace("a.café", "a.cafè"), 2);
        assert!(names("名前", &["名字"]).len() <= 1);
    }

    #[test]
    fn a_closer_name_that_does_not_fit_leaves_the_one_that_does() {
        let fitting = Candidate { fits: Some(true), ..Candidate::named("cust") };
        let misfit = Candidate { fits: Some(false), ..Candidate::named("customer_id") };
        let ranked = rank("customer", [misfit.clone(), fitting.clone()]);
        assert_eq!(clear_winner(&ranked).map(|r| r.candidate.name.as_str()), Some("cust"));
        let unknown = Candidate { fits: None, ..misfit };
        let ranked = rank("customer", [unknown, fitting]);
        let winner = clear_winner(&ranked).map(|r| r.candidate.name.as_str());
        assert_eq!(winner, Some("customer_id"), "without the context, the closer one wins");
    }

    #[test]
    fn no_winner_between_equally_close_names() {
        let ranked = rank("cat", ["bat", "hat"].map(Candidate::named));
        assert!(clear_winner(&ranked).is_none());
        let ranked = rank("zzzzzz", ["customer"].map(Candidate::named));
        assert!(!ranked[0].close && clear_winner(&ranked).is_none());
    }
}
