//! What expects a value (a tool parameter, a property of a tool's input, a condition, an
//! operand): built cheaply while lowering, rendered to words and registry pointers only when a
//! diagnostic or lint needs them.

use std::rc::Rc;
use std::sync::Arc;

use crate::registry::{Registry, ToolId};

/// The context a value meets. Cloning shares it.
#[derive(Debug, Clone)]
pub(crate) struct Context(Rc<Place>);

#[derive(Debug)]
enum Place {
    /// Named by fixed words, such as "the condition".
    Named(String),
    /// Positional parameter `index` of a tool.
    Parameter {
        tool: ToolId,
        index: usize,
    },
    /// The one object argument of a tool.
    Input {
        tool: ToolId,
    },
    Property {
        parent: Context,
        name: Arc<str>,
    },
    /// The elements (or map values) of what the parent expects.
    Element {
        parent: Context,
    },
}

impl Context {
    pub fn new(what: impl Into<String>) -> Context {
        Context(Rc::new(Place::Named(what.into())))
    }

    pub fn parameter(tool: ToolId, index: usize) -> Context {
        Context(Rc::new(Place::Parameter { tool, index }))
    }

    pub fn input(tool: ToolId) -> Context {
        Context(Rc::new(Place::Input { tool }))
    }

    /// The context of property `name` of the object this context expects.
    pub fn property(&self, name: &str) -> Context {
        Context(Rc::new(Place::Property { parent: self.clone(), name: Arc::from(name) }))
    }

    /// The context of the elements (or map values) of what this context expects.
    pub fn element(&self) -> Context {
        Context(Rc::new(Place::Element { parent: self.clone() }))
    }

    /// The tool whose input this is (part of).
    pub fn tool(&self) -> Option<ToolId> {
        match &*self.0 {
            Place::Named(_) => None,
            Place::Parameter { tool, .. } | Place::Input { tool } => Some(*tool),
            Place::Property { parent, .. } | Place::Element { parent } => parent.tool(),
        }
    }

    /// Such as "parameter `customer_id` of `crm.customer`", for messages.
    pub fn what(&self, registry: &Registry) -> String {
        match &*self.0 {
            Place::Named(what) => what.clone(),
            Place::Parameter { tool, index } => {
                let descriptor = registry.tool(*tool);
                let name = descriptor
                    .input
                    .positional
                    .as_ref()
                    .and_then(|p| p.get(*index))
                    .map(|p| p.name.to_string());
                format!("parameter `{}` of `{}`", name.unwrap_or_default(), descriptor.name)
            }
            Place::Input { tool } => format!("the input of `{}`", registry.tool(*tool).name),
            Place::Property { parent, name } => format!("property `{name}` of {}", parent.what(registry)),
            Place::Element { parent } => format!("an element of {}", parent.what(registry)),
        }
    }

    /// "`linear.issues`" when this is (part of) a tool's input.
    pub fn owner(&self, registry: &Registry) -> Option<String> {
        self.tool().map(|tool| format!("`{}`", registry.tool(tool).name))
    }

    /// The parameter or property name at this position.
    pub fn name(&self, registry: &Registry) -> Option<String> {
        match &*self.0 {
            Place::Parameter { tool, index } => {
                registry.tool(*tool).input.positional.as_ref()?.get(*index).map(|p| p.name.to_string())
            }
            Place::Property { name, .. } => Some(name.to_string()),
            Place::Named(_) | Place::Input { .. } | Place::Element { .. } => None,
        }
    }

    /// The documentation of this position in the tool's registry entry.
    pub fn description(&self, registry: &Registry) -> Option<String> {
        let tool = registry.tool(self.tool()?);
        if let Place::Parameter { index, .. } = &*self.0 {
            return tool.input.positional.as_ref()?.get(*index)?.description.clone();
        }
        tool.docs.get(&self.pointer()?)?.description.clone()
    }

    /// The JSON pointer of this position in the tool's registry entry (`/inputSchema/properties/owner`).
    fn pointer(&self) -> Option<String> {
        Some(match &*self.0 {
            Place::Named(_) => return None,
            Place::Parameter { index, .. } => format!("/params/{index}/schema"),
            Place::Input { .. } => "/inputSchema".to_owned(),
            Place::Property { parent, name } => {
                format!("{}/properties/{}", parent.pointer()?, name.replace('~', "~0").replace('/', "~1"))
            }
            Place::Element { parent } => format!("{}/items", parent.pointer()?),
        })
    }
}
