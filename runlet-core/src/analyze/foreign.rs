//! Names models bring from other languages (`None`, `True`, `len`, `print`, `JSON.stringify`):
//! what Runlet writes instead, for targeted fixes when the name is not bound or registered.

/// The Runlet literal a foreign literal name means: `None` → `null`, `True` → `true`.
pub(crate) fn literal(name: &str) -> Option<&'static str> {
    match name {
        "None" | "nil" | "undefined" | "NULL" | "Null" | "none" | "NaN" => Some("null"),
        "True" | "TRUE" => Some("true"),
        "False" | "FALSE" => Some("false"),
        _ => None,
    }
}

/// What to write instead of calling a built-in function of another language.
pub(crate) fn function(path: &str) -> Option<&'static str> {
    Some(match path {
        "len" | "count" | "length" | "size" => {
            "Runlet has no `len`: count with `fold n = 0 for x in xs { return n + 1 }`, or call a length intrinsic the host registers"
        }
        "print" | "println" | "puts" | "echo" | "log" | "console.log" | "console.error" => {
            "Runlet has no printing: return the value, or pass it to a tool"
        }
        "str" | "String" | "toString" => {
            "values convert to String where a String is expected; `\"\" + n` formats a number explicitly"
        }
        "int" | "float" | "Number" | "parseInt" | "parseFloat" => {
            "Runlet never parses text implicitly; call a parsing intrinsic the host registers, such as `number.parse`"
        }
        "range" => "Runlet has no ranges; iterate over a list with `for`",
        "sum" | "min" | "max" | "reduce" => {
            "reduce with `fold`: `total = fold acc = 0 for x in xs { return acc + x }`"
        }
        "map" | "filter" | "sorted" | "sort" | "list" | "dict" | "set" | "enumerate" | "zip" => {
            "transform lists with `for`, and filter with `skip if` inside its body"
        }
        "json.dumps" | "JSON.stringify" => {
            "objects format as canonical JSON where a String is expected; call `json.encode` if the host registers it"
        }
        "json.loads" | "JSON.parse" => "call a `json.decode` intrinsic if the host registers one",
        "isinstance" | "type" | "typeof" => {
            "Runlet has no runtime type tests; compare a discriminator property such as `x.kind == \"a\"`"
        }
        "keys" | "Object.keys" | "values" | "Object.values" | "items" | "Object.entries" => {
            "iterate an object with `for entry in obj { return entry.key }`: each entry is `{ key, value }`"
        }
        "append" | "push" => "build lists with `+`: `xs + [x]`",
        _ => return None,
    })
}

/// What to write instead of a property some languages give every list or string.
pub(crate) fn property(name: &str) -> Option<&'static str> {
    match name {
        "length" | "len" | "size" | "count" => Some(
            "lists and strings have no length property: count with `fold n = 0 for x in xs { return n + 1 }`, or call a length intrinsic the host registers",
        ),
        _ => None,
    }
}
