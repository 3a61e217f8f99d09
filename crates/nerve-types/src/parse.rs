//! Reading `.msg`, `.srv` and `.action` files.
//!
//! The grammar is ROS 2's: one field (`TYPE name [default]`) or constant (`TYPE NAME=value`)
//! per line, `#` comments, `---` between the parts of a service or an action.

use crate::definition::{Array, BaseType, Constant, Field, FieldType, Message, Primitive, Value};
use crate::name::{Kind, TypeName, is_type_name};

/// What is wrong in an interface file, and where.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{file}:{line}: {message}")]
pub struct ParseError {
    /// The file (a path, or `package/msg/Name.msg` for a shipped one).
    pub file: String,
    /// The line, from 1.
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

/// The parts a file of `kind` has, in order.
#[must_use]
pub fn parts(kind: Kind) -> &'static [&'static str] {
    match kind {
        Kind::Msg => &[""],
        Kind::Srv => &["Request", "Response"],
        Kind::Action => &["Goal", "Result", "Feedback"],
    }
}

/// Parses the file that defines `stem` (`sensor_msgs/msg/Image`, `std_srvs/srv/SetBool`):
/// one message for a `.msg`, the request and response of a `.srv`, the goal, result and
/// feedback of an `.action`.
///
/// # Errors
/// [`ParseError`] naming `file`, the line and the mistake.
pub fn parse_file(stem: &TypeName, text: &str, file: &str) -> Result<Vec<Message>, ParseError> {
    let names = parts(stem.kind);
    let sections = split_sections(text);
    if sections.len() != names.len() {
        let line = sections.last().map_or(1, |(first, _)| *first);
        return Err(ParseError {
            file: file.to_owned(),
            line,
            message: format!(
                "a .{} file has {} part(s) separated by `---`, this one has {}",
                stem.kind.as_str(),
                names.len(),
                sections.len()
            ),
        });
    }
    names
        .iter()
        .zip(sections)
        .map(|(part, (first, lines))| {
            let name = if part.is_empty() { stem.clone() } else { stem.part(part) };
            parse_message(name, first, &lines, file)
        })
        .collect()
}

/// The file's sections: the number of each one's first line, and its lines.
fn split_sections(text: &str) -> Vec<(usize, Vec<&str>)> {
    let mut sections = vec![(1, Vec::new())];
    for (i, line) in text.lines().enumerate() {
        if line.trim() == "---" {
            sections.push((i + 2, Vec::new()));
        } else if let Some((_, lines)) = sections.last_mut() {
            lines.push(line);
        }
    }
    sections
}

fn parse_message(name: TypeName, first: usize, lines: &[&str], file: &str) -> Result<Message, ParseError> {
    let mut message = Message { name, fields: Vec::new(), constants: Vec::new() };
    for (i, raw) in lines.iter().enumerate() {
        let line = strip_comment(raw).trim();
        if line.is_empty() {
            continue;
        }
        let err = |message: String| ParseError { file: file.to_owned(), line: first + i, message };
        match parse_line(&message.name.package, line).map_err(err)? {
            Entry::Field(f) => {
                if message.fields.iter().any(|g| g.name == f.name) {
                    return Err(err(format!("field `{}` is defined twice", f.name)));
                }
                message.fields.push(f);
            }
            Entry::Constant(c) => {
                if message.constants.iter().any(|d| d.name == c.name) {
                    return Err(err(format!("constant `{}` is defined twice", c.name)));
                }
                message.constants.push(c);
            }
        }
    }
    Ok(message)
}

enum Entry {
    Field(Field),
    Constant(Constant),
}

fn strip_comment(line: &str) -> &str {
    let mut quote = None;
    for (i, c) in line.char_indices() {
        match (quote, c) {
            (None, '#') => return &line[..i],
            (None, '"' | '\'') => quote = Some(c),
            (Some(q), c) if c == q => quote = None,
            _ => {}
        }
    }
    line
}

fn parse_line(package: &str, line: &str) -> Result<Entry, String> {
    let (type_token, rest) =
        line.split_once(char::is_whitespace).ok_or_else(|| format!("`{line}` has a type but no name"))?;
    let ty = parse_type(package, type_token)?;
    let rest = rest.trim_start();
    let name_end = rest.find(|c: char| c.is_whitespace() || c == '=').unwrap_or(rest.len());
    let (name, after) = (&rest[..name_end], rest[name_end..].trim_start());
    if let Some(value) = after.strip_prefix('=') {
        if ty.array != Array::Single || matches!(ty.base, BaseType::Message(_)) {
            return Err(format!("constant `{name}` must be a primitive or a string, not `{ty}`"));
        }
        if !is_constant_name(name) {
            return Err(format!("`{name}` is not a constant name (uppercase letters, digits and `_`)"));
        }
        let value = parse_value(&ty.base, value.trim()).map_err(|e| format!("constant `{name}`: {e}"))?;
        return Ok(Entry::Constant(Constant { name: name.to_owned(), ty: ty.base, value }));
    }
    if !is_field_name(name) {
        return Err(format!(
            "`{name}` is not a field name (lowercase letters, digits and single `_`, starting with a letter)"
        ));
    }
    let default = if after.is_empty() {
        None
    } else {
        Some(parse_default(&ty, after).map_err(|e| format!("default of `{name}`: {e}"))?)
    };
    Ok(Entry::Field(Field { name: name.to_owned(), ty, default }))
}

fn parse_type(package: &str, token: &str) -> Result<FieldType, String> {
    let (base, array) = match token.split_once('[') {
        None => (token, Array::Single),
        Some((base, bracket)) => {
            let inner = bracket.strip_suffix(']').ok_or_else(|| format!("`{token}`: an array type ends with `]`"))?;
            let count = |s: &str| s.parse::<usize>().map_err(|_| format!("`{token}`: `{s}` is not an array size"));
            let array = match inner.strip_prefix("<=") {
                _ if inner.is_empty() => Array::Unbounded,
                Some(bound) => Array::Bounded(count(bound)?),
                None => Array::Fixed(count(inner)?),
            };
            (base, array)
        }
    };
    let bound = |s: &str| s.parse::<usize>().map_err(|_| format!("`{token}`: `{s}` is not a string bound"));
    let base = if let Some(n) = base.strip_prefix("string<=") {
        BaseType::String(Some(bound(n)?))
    } else if let Some(n) = base.strip_prefix("wstring<=") {
        BaseType::WString(Some(bound(n)?))
    } else if base == "string" {
        BaseType::String(None)
    } else if base == "wstring" {
        BaseType::WString(None)
    } else if let Some(p) = Primitive::parse(base) {
        BaseType::Primitive(p)
    } else if base == "Header" {
        // ROS 1's spelling, still accepted by ROS 2's tools.
        BaseType::Message(TypeName::msg("std_msgs", "Header"))
    } else if base.contains('/') {
        let name = TypeName::parse(base).map_err(|e| e.to_string())?;
        if name.kind != Kind::Msg {
            return Err(format!("`{base}`: a field's type is a message, not a {}", name.kind.as_str()));
        }
        BaseType::Message(name)
    } else if is_type_name(base) {
        BaseType::Message(TypeName::msg(package, base))
    } else {
        return Err(format!("`{base}` is not a type (a primitive such as uint8, string, or a message)"));
    };
    Ok(FieldType { base, array })
}

fn parse_default(ty: &FieldType, text: &str) -> Result<Value, String> {
    if ty.array == Array::Single {
        return parse_value(&ty.base, text);
    }
    let inner = text
        .strip_prefix('[')
        .and_then(|t| t.strip_suffix(']'))
        .ok_or_else(|| format!("`{text}`: an array's default is written `[a, b, ...]`"))?;
    let items: Vec<Value> =
        split_items(inner).into_iter().map(|item| parse_value(&ty.base, item)).collect::<Result<_, _>>()?;
    match ty.array {
        Array::Fixed(n) if items.len() != n => Err(format!("{} values for an array of {n}", items.len())),
        Array::Bounded(n) if items.len() > n => Err(format!("{} values for an array of at most {n}", items.len())),
        _ => Ok(Value::Array(items)),
    }
}

/// The comma-separated items of an array default; commas inside quotes belong to a string.
fn split_items(inner: &str) -> Vec<&str> {
    if inner.trim().is_empty() {
        return Vec::new();
    }
    let (mut items, mut start, mut quote) = (Vec::new(), 0, None);
    for (i, c) in inner.char_indices() {
        match (quote, c) {
            (None, ',') => {
                items.push(inner[start..i].trim());
                start = i + 1;
            }
            (None, '"' | '\'') => quote = Some(c),
            (Some(q), c) if c == q => quote = None,
            _ => {}
        }
    }
    items.push(inner[start..].trim());
    items
}

fn parse_value(base: &BaseType, text: &str) -> Result<Value, String> {
    match base {
        BaseType::Primitive(Primitive::Bool) => match text {
            "true" | "True" | "1" => Ok(Value::Bool(true)),
            "false" | "False" | "0" => Ok(Value::Bool(false)),
            _ => Err(format!("`{text}` is not a bool (true or false)")),
        },
        BaseType::Primitive(p @ (Primitive::Float32 | Primitive::Float64)) => {
            text.parse::<f64>().map(Value::Float).map_err(|_| format!("`{text}` is not a {}", p.as_str()))
        }
        BaseType::Primitive(p) => {
            let (low, high) = p.int_range().unwrap_or((0, 0));
            let value = parse_int(text).ok_or_else(|| format!("`{text}` is not an integer"))?;
            if value < low || value > high {
                return Err(format!("{value} is out of the range of {} ({low} to {high})", p.as_str()));
            }
            Ok(Value::Int(value))
        }
        BaseType::String(bound) | BaseType::WString(bound) => {
            let s = unquote(text);
            match bound {
                Some(n) if s.chars().count() > *n => Err(format!("`{s}` is longer than the bound {n}")),
                _ => Ok(Value::Str(s)),
            }
        }
        BaseType::Message(name) => Err(format!("a field of type {name} cannot have a default")),
    }
}

fn parse_int(text: &str) -> Option<i128> {
    let (negative, digits) = match text.strip_prefix('-') {
        Some(d) => (true, d),
        None => (false, text.strip_prefix('+').unwrap_or(text)),
    };
    let magnitude = match digits.strip_prefix("0x").or_else(|| digits.strip_prefix("0X")) {
        Some(hex) => i128::from_str_radix(hex, 16).ok()?,
        None => digits.parse::<i128>().ok()?,
    };
    Some(if negative { -magnitude } else { magnitude })
}

fn unquote(text: &str) -> String {
    for q in ['"', '\''] {
        if let Some(inner) = text.strip_prefix(q).and_then(|t| t.strip_suffix(q)) {
            return inner.replace(&format!("\\{q}"), &q.to_string()).replace("\\\\", "\\");
        }
    }
    text.to_owned()
}

/// ROS 2's rule for field names.
fn is_field_name(s: &str) -> bool {
    s.starts_with(|c: char| c.is_ascii_lowercase())
        && s.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        && !s.contains("__")
        && !s.ends_with('_')
}

/// ROS 2's rule for constant names.
fn is_constant_name(s: &str) -> bool {
    s.starts_with(|c: char| c.is_ascii_uppercase())
        && s.chars().all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(kind: Kind, name: &str, text: &str) -> Result<Vec<Message>, ParseError> {
        let stem = TypeName { package: "pkg".into(), kind, name: name.into() };
        parse_file(&stem, text, "pkg/file")
    }

    #[test]
    fn reads_fields_arrays_bounds_defaults_and_constants() -> Result<(), ParseError> {
        let text = "# a comment\nuint8 RGB8 = 1 # the first\nstring NAME=\"a # b\"\n\
                    std_msgs/Header header\nPoint p  # same package\nfloat64[9] k\nint32[<=3] few [1, 2]\n\
                    string<=10 tag \"hi, there\"\nbool on true\nuint8[] data\nHeader h\n";
        let m = &parse(Kind::Msg, "Thing", text)?[0];
        assert_eq!(m.constants.len(), 2);
        assert_eq!(m.constants[0].value, Value::Int(1));
        assert_eq!(m.constants[1].value, Value::Str("a # b".into()));
        let types: Vec<String> = m.fields.iter().map(|f| format!("{} {}", f.ty, f.name)).collect();
        assert_eq!(
            types,
            [
                "std_msgs/Header header",
                "pkg/Point p",
                "float64[9] k",
                "int32[<=3] few",
                "string<=10 tag",
                "bool on",
                "uint8[] data",
                "std_msgs/Header h"
            ]
        );
        assert_eq!(m.fields[3].default, Some(Value::Array(vec![Value::Int(1), Value::Int(2)])));
        assert_eq!(m.fields[4].default, Some(Value::Str("hi, there".into())));
        Ok(())
    }

    #[test]
    fn a_service_and_an_action_have_their_parts() -> Result<(), ParseError> {
        let srv = parse(Kind::Srv, "SetBool", "bool data\n---\nbool success\nstring message\n")?;
        assert_eq!(
            srv.iter().map(|m| m.name.to_string()).collect::<Vec<_>>(),
            ["pkg/srv/SetBool_Request", "pkg/srv/SetBool_Response"]
        );
        let action = parse(Kind::Action, "Count", "int32 to\n---\nint32 reached\n---\n")?;
        assert_eq!(action.len(), 3);
        assert!(action[2].fields.is_empty());
        Ok(())
    }

    #[test]
    fn mistakes_name_the_file_the_line_and_the_problem() {
        for (text, line, says) in [
            ("uint8 a\nuint9 b\n", 2, "`uint9` is not a type"),
            ("uint8 a 300\n", 1, "out of the range of uint8"),
            ("int32[3] a [1, 2]\n", 1, "2 values for an array of 3"),
            ("string<=2 s \"abc\"\n", 1, "longer than the bound 2"),
            ("uint8 Bad\n", 1, "not a field name"),
            ("uint8 lower=1\n", 1, "not a constant name"),
            ("uint8 a\nuint8 a\n", 2, "defined twice"),
            ("pkg/Point p 3\n", 1, "cannot have a default"),
            ("float64[ a\n", 1, "ends with `]`"),
            ("uint8\n", 1, "no name"),
        ] {
            let e = parse(Kind::Msg, "T", text).err().map(|e| e.to_string()).unwrap_or_default();
            assert!(e.starts_with(&format!("pkg/file:{line}: ")) && e.contains(says), "{text:?}: {e}");
        }
        let e = parse(Kind::Srv, "S", "bool a\n").err().map(|e| e.to_string()).unwrap_or_default();
        assert!(e.contains("2 part(s)"), "{e}");
    }
}
