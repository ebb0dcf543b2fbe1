//! Snapshots of the normalized schemas of each registry fixture under `fixtures/`.

use runlet::schema::RegistryOptions;

use crate::{describe, read};

fn snapshot(fixture: &str) {
    let text = read(&format!("fixtures/{fixture}.json"));
    insta::assert_snapshot!(fixture, describe(&text, &RegistryOptions::default()));
}

#[test]
fn interfaces_example() {
    snapshot("interfaces_example");
}
