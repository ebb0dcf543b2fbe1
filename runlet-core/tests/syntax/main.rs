//! Golden and property tests of the syntax front end.

mod catalogue;
mod corpus;
mod dump;
mod support;
