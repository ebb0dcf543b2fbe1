//! Property test: generated valid programs written with arbitrary layout (line breaks inside
//! brackets, trailing commas, comments, semicolons) format to the same tree, keep every comment,
//! and format idempotently.

use proptest::prelude::*;
use runlet::syntax::quote_string;

/// The shape of a generated expression; layout is chosen when it is written.
#[derive(Debug, Clone)]
enum Gen {
    Int(u32),
    Float(u16),
    Str(&'static str),
    Bool(bool),
    Null,
    Input(u8),
    List(Vec<Gen>),
    Object(Vec<Gen>),
    Call(Vec<Gen>),
    Member(Box<Gen>, &'static str),
    Index(Box<Gen>, Box<Gen>),
    Binary(&'static str, Box<Gen>, Box<Gen>),
    Not(Box<Gen>),
    Conditional(Box<Gen>, Box<Gen>, Option<Box<Gen>>),
    For(Box<Gen>, Box<Gen>, Option<u8>),
    If(Box<Gen>, Box<Gen>, Box<Gen>),
}

const STRINGS: [&str; 5] = ["plain", "quote \" and \\ backslash", "tab\tnewline\n", "é ☃ 😀", "\u{1}\u{1f}"];
const FIELDS: [&str; 6] = ["email", "id", "limit", "return", "items", "for"];
const OPERATORS: [&str; 8] = ["+", "-", "*", "and", "or", "==", "<", "in"];

fn expression() -> impl Strategy<Value = Gen> {
    let leaf = prop_oneof![
        any::<u32>().prop_map(Gen::Int),
        any::<u16>().prop_map(Gen::Float),
        prop::sample::select(&STRINGS[..]).prop_map(Gen::Str),
        any::<bool>().prop_map(Gen::Bool),
        Just(Gen::Null),
        (0u8..3).prop_map(Gen::Input),
    ];
    leaf.prop_recursive(4, 40, 4, |inner| {
        let boxed = inner.clone().prop_map(Box::new);
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Gen::List),
            prop::collection::vec(inner.clone(), 0..4).prop_map(Gen::Object),
            prop::collection::vec(inner.clone(), 0..4).prop_map(Gen::Call),
            (boxed.clone(), prop::sample::select(&FIELDS[..])).prop_map(|(e, f)| Gen::Member(e, f)),
            (boxed.clone(), boxed.clone()).prop_map(|(e, i)| Gen::Index(e, i)),
            (prop::sample::select(&OPERATORS[..]), boxed.clone(), boxed.clone())
                .prop_map(|(op, l, r)| Gen::Binary(op, l, r)),
            boxed.clone().prop_map(Gen::Not),
            (boxed.clone(), boxed.clone(), prop::option::of(boxed.clone()))
                .prop_map(|(t, c, o)| Gen::Conditional(t, c, o)),
            (boxed.clone(), boxed.clone(), prop::option::of(1u8..20)).prop_map(|(c, b, l)| Gen::For(c, b, l)),
            (boxed.clone(), boxed.clone(), boxed).prop_map(|(c, t, e)| Gen::If(c, t, e)),
        ]
    })
}

/// Writes generated programs, drawing layout choices from a seeded generator.
struct Writer {
    out: String,
    state: u64,
    comments: u32,
    names: u32,
}

impl Writer {
    fn choose(&mut self, n: u64) -> u64 {
        self.state ^= self.state << 13;
        self.state ^= self.state >> 7;
        self.state ^= self.state << 17;
        self.state % n
    }

    /// A gap where a line break or a comment is allowed (inside brackets).
    fn gap(&mut self) {
        match self.choose(6) {
            0 => self.out.push('\n'),
            1 => {
                self.comments += 1;
                let marker = if self.choose(2) == 0 { "#" } else { "//" };
                self.out.push_str(&format!(" {marker} note {}\n", self.comments));
            }
            2 => self.out.push_str("   "),
            _ => {}
        }
    }

    fn group(&mut self, open: &str, items: &[Gen], close: &str, item: fn(&mut Self, usize, &Gen)) {
        self.out.push_str(open);
        for (i, element) in items.iter().enumerate() {
            self.gap();
            item(self, i, element);
            if i + 1 < items.len() || self.choose(2) == 0 {
                self.out.push(',');
            }
        }
        self.gap();
        self.out.push_str(close);
    }

    fn operand(&mut self, expr: &Gen) {
        let simple = matches!(expr, Gen::Str(_) | Gen::Bool(_) | Gen::Null | Gen::Input(_));
        if !simple {
            self.out.push('(');
        }
        self.expr(expr);
        if !simple {
            self.out.push(')');
        }
    }

    fn block_return(&mut self, value: &Gen) {
        self.out.push_str(" {");
        if self.choose(2) == 0 {
            self.names += 1;
            let name = format!("inner{}", self.names);
            self.out.push_str(&format!("\n{name} = "));
            self.expr(value);
            let separator = if self.choose(2) == 0 { "\n" } else { "; " };
            self.out.push_str(separator);
            self.out.push_str(&format!("return {name}"));
        } else {
            self.out.push_str(" return ");
            self.expr(value);
        }
        let close = if self.choose(2) == 0 { " }" } else { "\n}" };
        self.out.push_str(close);
    }

    fn expr(&mut self, expr: &Gen) {
        match expr {
            Gen::Int(n) => self.out.push_str(&n.to_string()),
            Gen::Float(n) => self.out.push_str(&format!("{n}.5")),
            Gen::Str(s) => self.out.push_str(&quote_string(s)),
            Gen::Bool(b) => self.out.push_str(&b.to_string()),
            Gen::Null => self.out.push_str("null"),
            Gen::Input(i) => self.out.push_str(["alpha", "beta", "gamma"][*i as usize]),
            Gen::List(items) => self.group("[", items, "]", |w, _, e| w.expr(e)),
            Gen::Object(items) => self.group("{", items, "}", |w, i, e| {
                match w.choose(3) {
                    0 => w.out.push_str(&format!("key{i}: ")),
                    1 => w.out.push_str(&format!("\"key {i}\": ")),
                    _ => w.out.push_str(&format!("{}: ", FIELDS[i % FIELDS.len()])),
                }
                w.expr(e);
            }),
            Gen::Call(args) => {
                self.out.push_str("tools.call");
                self.group("(", args, ")", |w, _, e| w.expr(e));
            }
            Gen::Member(target, field) => {
                self.operand(target);
                self.out.push('.');
                self.out.push_str(field);
            }
            Gen::Index(target, index) => {
                self.operand(target);
                self.out.push('[');
                self.expr(index);
                self.out.push(']');
            }
            Gen::Binary(op, left, right) => {
                self.operand(left);
                self.out.push_str(&format!(" {op} "));
                self.operand(right);
            }
            Gen::Not(operand) => {
                self.out.push_str("not ");
                self.operand(operand);
            }
            Gen::Conditional(then, condition, otherwise) => {
                self.operand(then);
                self.out.push_str(" if ");
                self.operand(condition);
                if let Some(otherwise) = otherwise {
                    self.out.push_str(" else ");
                    self.operand(otherwise);
                }
            }
            Gen::For(collection, body, limit) => {
                self.names += 1;
                self.out.push_str(&format!("for item{} in ", self.names));
                self.operand(collection);
                if let Some(limit) = limit {
                    self.out.push_str(&format!(" limit {limit}"));
                }
                self.block_return(body);
            }
            Gen::If(condition, then, otherwise) => {
                self.out.push_str("if ");
                self.operand(condition);
                self.block_return(then);
                self.out.push_str(" else");
                self.block_return(otherwise);
            }
        }
    }
}

fn program(bindings: &[Gen], result: &Gen, seed: u64) -> String {
    let mut writer = Writer { out: String::new(), state: seed | 1, comments: 0, names: 0 };
    for (i, value) in bindings.iter().enumerate() {
        if writer.choose(4) == 0 {
            writer.out.push_str("# about the next binding\n");
        }
        writer.out.push_str(&format!("v{i} = "));
        writer.expr(value);
        let separator = ["\n", ";\n", "\n\n", "; "][writer.choose(4) as usize];
        writer.out.push_str(separator);
    }
    writer.out.push_str("return ");
    writer.expr(result);
    writer.out.push('\n');
    writer.out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn generated_programs_format_faithfully(
        bindings in prop::collection::vec(expression(), 0..4),
        result in expression(),
        seed: u64,
    ) {
        let source = program(&bindings, &result, seed);
        super::format_and_check(&source);
    }
}
