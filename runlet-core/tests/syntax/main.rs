//! Golden and property tests of the syntax front end.

mod catalogue;
mod corpus;
mod dump;
mod newlines;
mod paths;
mod reserved;
mod support;
mod tokens;
