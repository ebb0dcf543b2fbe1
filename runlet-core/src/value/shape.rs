//! Conversion targets: a small arena of target shapes (the runtime face of the schema
//! vocabulary of spec §3.1) that conversions read and that schemas are mapped onto.

use std::sync::Arc;

use super::sensitivity::Sensitivity;

/// Identifies one node of a [`Shapes`] arena.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ShapeId(u32);

/// What a conversion may produce at one position.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Shape {
    /// Accepts every value unchanged.
    Any,
    Null,
    Boolean,
    Integer,
    Number,
    String,
    Bytes,
    /// A list whose elements convert to the given shape.
    List(ShapeId),
    /// A string-keyed map whose values convert to the given shape.
    Map(ShapeId),
    Object(ObjectShape),
    /// One of several shapes; an optional/nullable `T` is `Union([T, Null])`.
    Union(Vec<ShapeId>),
}

/// The declared properties of an object target, sorted by name, and what happens to others.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ObjectShape {
    properties: Vec<PropertyShape>,
    additional: Option<ShapeId>,
}

/// One declared property of an object target.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PropertyShape {
    pub name: Arc<str>,
    pub shape: ShapeId,
    pub required: bool,
}

impl ObjectShape {
    /// An object target with `properties` (a repeated name keeps its last declaration) and
    /// `additional`: the shape undeclared properties convert to, or `None` to reject them.
    pub fn new(mut properties: Vec<PropertyShape>, additional: Option<ShapeId>) -> ObjectShape {
        properties.sort_by(|a, b| a.name.cmp(&b.name));
        let mut unique: Vec<PropertyShape> = Vec::with_capacity(properties.len());
        for property in properties {
            match unique.last_mut() {
                Some(last) if last.name == property.name => *last = property,
                _ => unique.push(property),
            }
        }
        ObjectShape { properties: unique, additional }
    }

    /// The declared properties in name order.
    pub fn properties(&self) -> &[PropertyShape] {
        &self.properties
    }

    pub fn property(&self, name: &str) -> Option<&PropertyShape> {
        self.properties.binary_search_by(|p| (*p.name).cmp(name)).ok().map(|i| &self.properties[i])
    }

    pub fn additional(&self) -> Option<ShapeId> {
        self.additional
    }
}

/// A shape and the sensitivity label it puts on every value converted to it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShapeNode {
    pub shape: Shape,
    pub sensitivity: Sensitivity,
}

/// An arena of shapes. Nodes refer to each other by [`ShapeId`], so recursive schemas are
/// expressed by [`Shapes::declare`]-ing a node first and [`Shapes::define`]-ing it later.
#[derive(Debug, Clone, Default)]
pub struct Shapes {
    nodes: Vec<ShapeNode>,
}

impl Shapes {
    pub fn new() -> Shapes {
        Shapes::default()
    }

    /// Adds a public shape.
    pub fn add(&mut self, shape: Shape) -> ShapeId {
        self.add_labelled(shape, Sensitivity::Public)
    }

    /// Adds a shape whose values carry at least `sensitivity`.
    pub fn add_labelled(&mut self, shape: Shape, sensitivity: Sensitivity) -> ShapeId {
        let id = ShapeId(u32::try_from(self.nodes.len()).unwrap_or(u32::MAX));
        self.nodes.push(ShapeNode { shape, sensitivity });
        id
    }

    /// Reserves a node (initially `Any`) to be defined later, for recursive shapes.
    pub fn declare(&mut self) -> ShapeId {
        self.add(Shape::Any)
    }

    /// Sets the node `id`; returns `false` if `id` is not a node of this arena.
    pub fn define(&mut self, id: ShapeId, shape: Shape, sensitivity: Sensitivity) -> bool {
        match self.nodes.get_mut(id.0 as usize) {
            Some(node) => {
                *node = ShapeNode { shape, sensitivity };
                true
            }
            None => false,
        }
    }

    /// The node `id`, or `None` for an id from another arena.
    pub fn get(&self, id: ShapeId) -> Option<&ShapeNode> {
        self.nodes.get(id.0 as usize)
    }

    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// Whether `id` accepts Null as it is: Null, Any, or a union with such a variant.
    pub fn accepts_null(&self, id: ShapeId) -> bool {
        self.accepts_null_within(id, self.nodes.len())
    }

    fn accepts_null_within(&self, id: ShapeId, hops: usize) -> bool {
        match self.get(id).map(|node| &node.shape) {
            Some(Shape::Null | Shape::Any) => true,
            Some(Shape::Union(variants)) if hops > 0 => {
                variants.iter().any(|&variant| self.accepts_null_within(variant, hops - 1))
            }
            _ => false,
        }
    }

    /// A short name for diagnostics: `Integer`, `List`, `Object`, `Map`,
    /// `Null | String` for a union.
    pub fn name(&self, id: ShapeId) -> String {
        let mut out = String::new();
        self.write_name(id, &mut out, 2);
        out
    }

    fn write_name(&self, id: ShapeId, out: &mut String, budget: usize) {
        let name = match self.get(id).map(|node| &node.shape) {
            None => "undefined shape",
            Some(Shape::Any) => "Any",
            Some(Shape::Null) => "Null",
            Some(Shape::Boolean) => "Boolean",
            Some(Shape::Integer) => "Integer",
            Some(Shape::Number) => "Number",
            Some(Shape::String) => "String",
            Some(Shape::Bytes) => "Bytes",
            Some(Shape::List(_)) => "List",
            Some(Shape::Map(_)) => "Map",
            Some(Shape::Object(_)) => "Object",
            Some(Shape::Union(variants)) => {
                if budget == 0 {
                    out.push_str("Union");
                    return;
                }
                for (i, &variant) in variants.iter().enumerate() {
                    if i > 0 {
                        out.push_str(" | ");
                    }
                    self.write_name(variant, out, budget - 1);
                }
                return;
            }
        };
        out.push_str(name);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recursive_shapes_are_declared_then_defined() {
        let mut shapes = Shapes::new();
        let tree = shapes.declare();
        let children = shapes.add(Shape::List(tree));
        let node = ObjectShape::new(
            vec![PropertyShape { name: "children".into(), shape: children, required: true }],
            None,
        );
        assert!(shapes.define(tree, Shape::Object(node), Sensitivity::Public));
        assert_eq!(shapes.name(tree), "Object");
        assert!(!shapes.define(ShapeId(99), Shape::Any, Sensitivity::Public));
        assert!(shapes.get(ShapeId(99)).is_none());
    }

    #[test]
    fn null_acceptance_and_names() {
        let mut shapes = Shapes::new();
        let string = shapes.add(Shape::String);
        let null = shapes.add(Shape::Null);
        let nullable = shapes.add(Shape::Union(vec![string, null]));
        let cyclic = shapes.declare();
        shapes.define(cyclic, Shape::Union(vec![cyclic, string]), Sensitivity::Public);
        assert!(shapes.accepts_null(nullable));
        assert!(!shapes.accepts_null(string));
        assert!(!shapes.accepts_null(cyclic));
        assert_eq!(shapes.name(nullable), "String | Null");
        assert_eq!(shapes.name(cyclic), "Union | String | String");
    }

    #[test]
    fn object_properties_are_sorted_and_unique() {
        let mut shapes = Shapes::new();
        let int = shapes.add(Shape::Integer);
        let object = ObjectShape::new(
            vec![
                PropertyShape { name: "b".into(), shape: int, required: true },
                PropertyShape { name: "a".into(), shape: int, required: true },
                PropertyShape { name: "b".into(), shape: int, required: false },
            ],
            Some(int),
        );
        let names: Vec<&str> = object.properties().iter().map(|p| &*p.name).collect();
        assert_eq!(names, ["a", "b"]);
        assert_eq!(object.property("b").map(|p| p.required), Some(false));
        assert_eq!(object.additional(), Some(int));
    }
}
