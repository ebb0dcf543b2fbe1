//! Names models bring from other languages (`None`, `True`, `len`, `print`, `JSON.stringify`,
//! `x.upper()`): the table of what Runlet writes instead, for targeted fixes when the name is not
//! bound or registered. `lower/absent.rs` turns an entry into an edit.

/// The Runlet literal a foreign literal name means: `None` → `null`, `True` → `true`.
pub(crate) fn literal(name: &str) -> Option<&'static str> {
    match name {
        "None" | "nil" | "undefined" | "NULL" | "Null" | "none" | "NaN" => Some("null"),
        "True" | "TRUE" => Some("true"),
        "False" | "FALSE" => Some("false"),
        _ => None,
    }
}

/// What a name deliberately absent from Runlet is written as (spec §7.3, STDLIB.md "Deliberately
/// out"). The table is consulted before any spelling search, so `list.sum` becomes a `fold`, never
/// the `list.sort` an edit distance would offer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Absent {
    /// The intrinsic, called with the same operands: `round(x)` is `number.round(x)`.
    Intrinsic(&'static str),
    /// `list.length` or `text.length`, by the operand's kind.
    Length,
    /// `list.slice` or `text.slice`, by the first operand's kind.
    Slice,
    /// `list.range(0, n)` or `list.range(a, b)`.
    Range,
    /// A string from a value: the value itself where text is being concatenated, else `"" + x`.
    Text,
    /// Text parsed as a number: `number.parse_integer` (`integer`) or `number.parse`.
    Parse {
        integer: bool,
    },
    /// A `fold` reducing the list: the sum, the largest or the smallest element.
    Sum,
    Max,
    Min,
    /// `y in xs`.
    Membership,
    /// `xs + [y]`.
    Append,
    /// `a + b`.
    Concat,
    /// `xs[0]`, `xs[-1]`.
    First,
    Last,
    /// `-x if x < 0 else x`.
    Abs,
    /// `m[k]`, or `m[k] if k in m else d`.
    Get,
    /// `for entry in m { return entry.key }` (`.value` for `Values`).
    Keys,
    Values,
    /// `text.join(parts, separator)`, whichever order the operands come in.
    Join,
    /// `"a {} b".format(x)`: the literal's pieces concatenated with the operands.
    Format,
    /// No rewrite: what to write instead, in words.
    Help(&'static str),
}

const NO_PRINT: &str = "Runlet has no printing: return the value, or pass it to a tool";
const NO_TYPE_TESTS: &str = "Runlet has no runtime type tests; compare a discriminator property such as `x.kind == \"a\"`, or test `x != null`";
const NO_LAMBDAS: &str = "Runlet has no lambdas: transform a list with `for x in xs { return … }`, and filter with `skip if` inside its body";

/// The Runlet form of a function some other language (or an older draft of the prelude) has,
/// by the path it is called with: `len`, `Math.floor`, `list.sum`, `json.dumps`.
pub(crate) fn function(path: &str) -> Option<Absent> {
    use Absent::*;
    Some(match path {
        "len" | "length" | "size" | "count" | "list.len" | "list.size" | "list.count" | "text.len"
        | "text.size" | "text.count" => Length,
        "range" | "list.range_of" => Range,
        "str" | "String" | "toString" | "text.from" | "number.to_string" | "number.to_text" | "text.of" => {
            Text
        }
        "int" | "parseInt" | "Number.parseInt" | "number.int" | "number.to_integer" => {
            Parse { integer: true }
        }
        "float" | "parseFloat" | "Number" | "Number.parseFloat" | "number.float" | "number.to_number" => {
            Parse { integer: false }
        }
        "sum" | "list.sum" | "number.sum" | "math.fsum" | "math.sum" => Sum,
        "max" | "list.max" | "number.max" | "Math.max" | "math.max" => Max,
        "min" | "list.min" | "number.min" | "Math.min" | "math.min" => Min,
        "round" | "Math.round" | "math.round" => Intrinsic("number.round"),
        "floor" | "Math.floor" | "math.floor" => Intrinsic("number.floor"),
        "ceil" | "Math.ceil" | "math.ceil" => Intrinsic("number.ceil"),
        "abs" | "Math.abs" | "math.abs" | "number.abs" => Abs,
        "sorted" | "list.sorted" => Intrinsic("list.sort"),
        "reversed" | "list.reversed" => Intrinsic("list.reverse"),
        "set" | "list.uniq" | "list.distinct" | "list.dedup" => Intrinsic("list.unique"),
        "json.dumps" | "JSON.stringify" | "json.encode" | "json.serialize" | "json.to_string" => {
            Intrinsic("json.stringify")
        }
        "json.loads" | "JSON.parse" | "json.decode" | "json.deserialize" => Intrinsic("json.parse"),
        "text.uppercase" | "text.to_upper" | "text.to_uppercase" | "text.toUpperCase" | "text.upcase" => {
            Intrinsic("text.upper")
        }
        "text.lowercase" | "text.to_lower" | "text.to_lowercase" | "text.toLowerCase" | "text.downcase" => {
            Intrinsic("text.lower")
        }
        "text.strip" | "text.trim_space" => Intrinsic("text.trim"),
        "text.startswith" | "text.startsWith" | "text.starts" => Intrinsic("text.starts_with"),
        "text.endswith" | "text.endsWith" | "text.ends" => Intrinsic("text.ends_with"),
        "text.substring" | "text.substr" => Intrinsic("text.slice"),
        "regex.match" | "regex.test" | "regex.search" | "regex.is_match" => Intrinsic("regex.matches"),
        "regex.findall" | "regex.find_iter" => Intrinsic("regex.find_all"),
        "regex.sub" | "regex.replace_all" => Intrinsic("regex.replace"),
        "datetime.now" | "Date.now" | "time.time" | "time.now_ms" => Intrinsic("time.now"),
        "text.contains" | "list.contains" | "list.includes" | "text.includes" | "list.has" => Membership,
        "list.append" | "list.push" | "append" | "push" => Append,
        "list.concat" | "text.concat" | "list.extend" => Concat,
        "list.first" | "list.head" => First,
        "list.last" => Last,
        "text.format" | "format" => Format,
        "print" | "println" | "puts" | "echo" | "log" | "console.log" | "console.error" | "console.info" => {
            Help(NO_PRINT)
        }
        "isinstance" | "type" | "typeof" => Help(NO_TYPE_TESTS),
        "map" | "filter" | "reduce" | "list.map" | "list.filter" | "list.reduce" | "list.any"
        | "list.all" | "any" | "all" | "enumerate" | "zip" | "list.group_by" | "list.sort_by" => {
            Help(NO_LAMBDAS)
        }
        "keys" | "Object.keys" | "object.keys" => Keys,
        "values" | "Object.values" | "object.values" => Values,
        "items" | "Object.entries" | "object.entries" => {
            Help("iterate an object with `for entry in obj { … }`: each entry is `{ key, value }`")
        }
        "hash.md5" | "hash.sha1" | "hash.sha512" => Intrinsic("hash.sha256"),
        _ => return None,
    })
}

/// The Runlet form of a method some other language gives lists, strings and objects, by its
/// name: `x.upper()` is `text.upper(x)`. The receiver is the first operand.
pub(crate) fn method(name: &str) -> Option<Absent> {
    use Absent::*;
    Some(match name {
        "upper" | "toUpperCase" | "to_uppercase" | "upcase" => Intrinsic("text.upper"),
        "lower" | "toLowerCase" | "to_lowercase" | "downcase" => Intrinsic("text.lower"),
        "strip" | "trim" | "trimmed" => Intrinsic("text.trim"),
        "split" => Intrinsic("text.split"),
        "replace" | "replaceAll" | "replace_all" => Intrinsic("text.replace"),
        "startswith" | "startsWith" | "starts_with" => Intrinsic("text.starts_with"),
        "endswith" | "endsWith" | "ends_with" => Intrinsic("text.ends_with"),
        "sort" | "sorted" => Intrinsic("list.sort"),
        "reverse" | "reversed" => Intrinsic("list.reverse"),
        "length" | "size" | "count" | "len" | "__len__" => Length,
        "slice" | "substring" | "substr" => Slice,
        "toString" | "__str__" | "to_string" | "str" => Text,
        "includes" | "contains" | "has" | "__contains__" => Membership,
        "push" | "append" | "add" => Append,
        "concat" | "extend" => Concat,
        "get" => Get,
        "keys" => Keys,
        "values" => Values,
        "join" => Join,
        "format" => Format,
        "map" | "filter" | "forEach" | "reduce" | "some" | "every" | "find" | "flatMap" => Help(NO_LAMBDAS),
        "items" | "entries" => {
            Help("iterate an object with `for entry in obj { … }`: each entry is `{ key, value }`")
        }
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

/// Names other APIs give a property (GitHub's `user.login` is GitLab's `author.username`), ranked
/// with the schema's own aliases: `issue.author` finds `user`, `user.name` finds `login`.
pub(crate) fn property_synonyms(name: &str) -> &'static [&'static str] {
    match name {
        "login" => &["username", "user_name", "handle", "name", "user_login"],
        "user" => &["author", "creator", "owner", "reporter", "submitter"],
        "number" => &["id", "num", "iid", "issue_number"],
        "comments" => &["comment_count", "comments_count", "num_comments"],
        "labels" => &["tags"],
        "body" => &["description", "content", "text"],
        "state" => &["status"],
        "status" => &["state"],
        "results" => &["items", "hits", "data"],
        "nodes" => &["items", "edges", "data", "issues"],
        _ => &[],
    }
}

/// Names other languages give a caught error (`except Exception as e`, `catch (error)`).
pub(crate) fn error_name(name: &str) -> bool {
    matches!(name, "err" | "error" | "e" | "ex" | "exc" | "exception" | "error_value")
}
