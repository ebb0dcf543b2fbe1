//! A readable text form of HIR for tests and debugging: regions as indented blocks, effect roots
//! marked, conversions and runtime Boolean checks spelled out, bindings with their schemas.

use std::fmt::Write;

use crate::registry::Registry;
use crate::value::to_serde_json;

use super::hir::{ExprId, ExprKind, LogicalOp, ObjectEntry, Program, ProjectKey, RegionId, Step};

/// The whole program as text. `registry` must be the one it was analyzed against.
pub fn dump(program: &Program, registry: &Registry) -> String {
    let mut dumper = Dumper { program, registry, out: String::new(), indent: 0 };
    for input in &program.inputs {
        let _ = writeln!(dumper.out, "input {}: {}", input.name, program.schemas.display(input.schema));
    }
    dumper.region(program.root);
    dumper.out.push('\n');
    dumper.out
}

struct Dumper<'a> {
    program: &'a Program,
    registry: &'a Registry,
    out: String,
    indent: usize,
}

impl Dumper<'_> {
    fn line_start(&mut self) {
        self.out.push('\n');
        for _ in 0..self.indent {
            self.out.push_str("  ");
        }
    }

    fn region(&mut self, id: RegionId) {
        let region = self.program.region(id);
        let _ = write!(self.out, "{:?} {{", region.kind);
        self.indent += 1;
        for step in &region.steps {
            self.line_start();
            match step {
                Step::Let { binding, value, root } => {
                    let binding = self.program.binding(*binding);
                    let marker = if *root { "root " } else { "" };
                    let schema = self.program.schemas.display(binding.schema).to_string();
                    let _ = write!(self.out, "{marker}let {}: {schema} = ", binding.name);
                    self.expr(*value);
                }
                Step::Skip { condition, .. } => {
                    self.out.push_str("skip");
                    if let Some(condition) = condition {
                        self.out.push_str(" if ");
                        self.expr(*condition);
                    }
                }
            }
        }
        self.line_start();
        self.out.push_str("return ");
        self.expr(region.result);
        self.indent -= 1;
        self.line_start();
        self.out.push('}');
    }

    fn list(&mut self, items: &[ExprId]) {
        for (i, &item) in items.iter().enumerate() {
            if i > 0 {
                self.out.push_str(", ");
            }
            self.expr(item);
        }
    }

    fn expr(&mut self, id: ExprId) {
        let expr = self.program.expr(id);
        match &expr.kind {
            ExprKind::Const(value) => match to_serde_json(value) {
                Ok(json) => {
                    let _ = write!(self.out, "{json}");
                }
                Err(_) => {
                    let _ = write!(self.out, "{value:?}");
                }
            },
            ExprKind::Input(input) => {
                let _ = write!(self.out, "input {}", self.program.input(*input).name);
            }
            ExprKind::Binding(binding) => self.out.push_str(&self.program.binding(*binding).name),
            ExprKind::Call { tool, args } => {
                let tool = self.registry.tool(*tool);
                let _ = write!(self.out, "{}[{}](", tool.name, tool.execution);
                self.list(args);
                self.out.push(')');
            }
            ExprKind::Intrinsic { function, args } => {
                let _ = write!(self.out, "{function}[intrinsic](");
                self.list(args);
                self.out.push(')');
            }
            ExprKind::Unary { op, operand } => {
                let _ = write!(self.out, "({op} ");
                self.expr(*operand);
                self.out.push(')');
            }
            ExprKind::Binary { op, left, right } => {
                self.out.push('(');
                self.expr(*left);
                let _ = write!(self.out, " {op} ");
                self.expr(*right);
                self.out.push(')');
            }
            ExprKind::Logical { op, left, right } => {
                self.out.push('(');
                self.expr(*left);
                self.out.push_str(match op {
                    LogicalOp::And => " and ",
                    LogicalOp::Or => " or ",
                });
                self.region(*right);
                self.out.push(')');
            }
            ExprKind::Conditional { condition, then, otherwise } => {
                self.out.push_str("if ");
                self.expr(*condition);
                self.out.push_str(" then ");
                self.region(*then);
                self.out.push_str(" else ");
                self.region(*otherwise);
            }
            ExprKind::List(items) => {
                self.out.push('[');
                self.list(items);
                self.out.push(']');
            }
            ExprKind::Object(entries) => {
                self.out.push('{');
                for (i, entry) in entries.iter().enumerate() {
                    self.out.push_str(if i > 0 { ", " } else { " " });
                    match entry {
                        ObjectEntry::Static { key, value } => {
                            let _ = write!(self.out, "{key}: ");
                            self.expr(*value);
                        }
                        ObjectEntry::Computed { key, value } => {
                            self.out.push('[');
                            self.expr(*key);
                            self.out.push_str("]: ");
                            self.expr(*value);
                        }
                    }
                }
                self.out.push_str(" }");
            }
            ExprKind::Project { target, key } => {
                self.expr(*target);
                match key {
                    ProjectKey::Field(name) => {
                        let _ = write!(self.out, ".{name}");
                    }
                    ProjectKey::Index(index) => {
                        self.out.push('[');
                        self.expr(*index);
                        self.out.push(']');
                    }
                }
            }
            ExprKind::Convert { value, target } => {
                self.out.push_str("convert(");
                self.expr(*value);
                let _ = write!(self.out, " -> {})", self.program.schemas.display(*target));
            }
            ExprKind::ExpectBoolean(value) => {
                self.out.push_str("expect_boolean(");
                self.expr(*value);
                self.out.push(')');
            }
            ExprKind::For { item, collection, limit, body } => {
                let _ = write!(self.out, "for {} in ", self.program.binding(*item).name);
                self.expr(*collection);
                if let Some(limit) = limit {
                    let _ = write!(self.out, " limit {limit}");
                }
                self.out.push(' ');
                self.region(*body);
            }
            ExprKind::Fold { accumulator, init, item, collection, body } => {
                let accumulator = self.program.binding(*accumulator);
                let _ = write!(
                    self.out,
                    "fold {}: {} = ",
                    accumulator.name,
                    self.program.schemas.display(accumulator.schema)
                );
                self.expr(*init);
                let _ = write!(self.out, " for {} in ", self.program.binding(*item).name);
                self.expr(*collection);
                self.out.push(' ');
                self.region(*body);
            }
            ExprKind::Boundary { retries, body, error, catch } => {
                let _ = write!(self.out, "boundary retry {retries} ");
                self.region(*body);
                let _ = write!(self.out, " catch {} ", self.program.binding(*error).name);
                self.region(*catch);
            }
            ExprKind::Fail { code, message, details } => {
                self.out.push_str("fail(");
                self.expr(*code);
                self.out.push_str(", ");
                self.expr(*message);
                if let Some(details) = details {
                    self.out.push_str(", ");
                    self.expr(*details);
                }
                self.out.push(')');
            }
        }
    }
}
