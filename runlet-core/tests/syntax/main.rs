//! Golden and property tests of the syntax front end.

mod catalogue;
mod corpus;
mod dump;
mod grammar;
mod limits;
mod newlines;
mod paths;
mod reserved;
mod robustness;
mod support;
#[path = "../common/token_soup.rs"]
mod token_soup;
mod tokens;
