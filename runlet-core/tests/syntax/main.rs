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
mod tokens;
