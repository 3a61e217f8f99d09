//! Node parameters: typed values a node declares (in the dataflow's `params:` or from its code)
//! and that can be read and set while it runs.
//!
//! A parameter's type is fixed by its declaration: a bool, an int (`i64`), a float (`f64`), a
//! string, or a list of one of those. A value of another type is refused, except that an int is
//! accepted where a float is declared.
//!
//! ```
//! use nerve_spec::param::{ParamValue, parse_value};
//!
//! let speed = ParamValue::Float(1.5);
//! assert_eq!(parse_value("2")?.conform(&speed), Ok(ParamValue::Float(2.0)));
//! assert_eq!(parse_value("[1, 2.5]")?, ParamValue::FloatList(vec![1.0, 2.5]));
//! let wrong = parse_value("fast")?.conform(&speed).expect_err("a string is not a float");
//! assert_eq!(wrong.type_name(), "string");
//! # Ok::<(), nerve_spec::param::ParamValueError>(())
//! ```

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Value as Json;

use crate::tree::{self, Node, ScalarKind, Value};

/// Longest parameter key accepted.
pub const MAX_KEY_LEN: usize = 256;

/// Why text or JSON is not a parameter value ([`parse_value`], [`ParamValue::from_json`]); the
/// message names the value where it can, and callers say which parameter and where.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ParamValueError {
    /// An integer beyond `i64`.
    #[error("{0} is too large for an int (i64)")]
    TooLarge(serde_json::Number),
    /// A JSON number that is neither an `i64` nor a float.
    #[error("{0} is not a number a parameter can hold")]
    NotANumber(serde_json::Number),
    /// An integer written in YAML beyond `i64`, as written.
    #[error("{0} is out of range for an int (i64)")]
    OutOfRange(String),
    /// NaN or an infinity.
    #[error("{0} is not a finite number")]
    NotFinite(f64),
    /// `null` (or `~`).
    #[error("null has no type: give the parameter a value")]
    Null,
    /// A list inside a list, or a mapping inside a list.
    #[error("a list holds bool, int, float or string values, not lists or mappings")]
    Nested,
    /// A mapping where a value was expected.
    #[error("expected a bool, int, float, string or a list of one of those, found a mapping")]
    Mapping,
    /// A list whose values are of more than one type.
    #[error("a list's values must be of one type, found {first} and {other}")]
    MixedList {
        /// The first value's type, with its article (`an int`).
        first: String,
        /// The first value of another type's, likewise.
        other: String,
    },
    /// An empty list in a declaration: nothing tells its type.
    #[error("an empty list has no type: declare the parameter with at least one value")]
    EmptyList,
    /// No text at all.
    #[error("no value given")]
    NoValue,
    /// Text that is not YAML; the YAML reader's reason.
    #[error("{0}")]
    NotYaml(String),
}

/// What is wrong with a parameter key ([`check_key`]); the message names the key.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParamKeyError {
    /// The key is empty.
    #[error("a parameter key cannot be empty")]
    Empty,
    /// The key is longer than [`MAX_KEY_LEN`].
    #[error("a parameter key is at most {MAX_KEY_LEN} bytes long")]
    TooLong,
    /// A character outside the key alphabet.
    #[error("invalid character {bad:?} in parameter key `{key}`: use letters, digits, `_` and `.`")]
    BadCharacter {
        /// The key.
        key: String,
        /// Its first character that is not allowed.
        bad: char,
    },
    /// A `.` at either end, or two in a row.
    #[error("parameter key `{0}` has an empty group: `.` goes between names, as in `pid.kp`")]
    EmptyGroup(String),
}

/// The value of a parameter, and with it its type.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", content = "value", rename_all = "snake_case")]
pub enum ParamValue {
    /// `true` or `false`.
    Bool(bool),
    /// A whole number.
    Int(i64),
    /// A finite floating-point number.
    Float(f64),
    /// Text.
    String(String),
    /// A list of booleans.
    BoolList(Vec<bool>),
    /// A list of whole numbers.
    IntList(Vec<i64>),
    /// A list of finite floating-point numbers.
    FloatList(Vec<f64>),
    /// A list of strings.
    StringList(Vec<String>),
}

impl ParamValue {
    /// The type's name, as messages show it: `bool`, `int`, `float`, `string`, `list of int`…
    #[must_use]
    pub fn type_name(&self) -> &'static str {
        match self {
            Self::Bool(_) => "bool",
            Self::Int(_) => "int",
            Self::Float(_) => "float",
            Self::String(_) => "string",
            Self::BoolList(_) => "list of bool",
            Self::IntList(_) => "list of int",
            Self::FloatList(_) => "list of float",
            Self::StringList(_) => "list of string",
        }
    }

    /// The type's name with its article, for messages: `an int`, `a list of float`.
    #[must_use]
    pub fn a_type(&self) -> String {
        let name = self.type_name();
        if name == "int" { "an int".to_owned() } else { format!("a {name}") }
    }

    /// This value as a parameter declared as `declared` holds it: the same type, an int as a
    /// float, a list of ints as a list of floats, or an empty list as any list.
    ///
    /// # Errors
    /// Another type: the value is handed back.
    pub fn conform(self, declared: &ParamValue) -> Result<ParamValue, ParamValue> {
        use ParamValue as P;
        #[allow(clippy::cast_precision_loss)] // an int set on a float parameter is read as the float nearest to it
        let float = |i: i64| i as f64;
        match (self, declared) {
            (v @ P::Bool(_), P::Bool(_))
            | (v @ P::Int(_), P::Int(_))
            | (v @ P::Float(_), P::Float(_))
            | (v @ P::String(_), P::String(_))
            | (v @ P::BoolList(_), P::BoolList(_))
            | (v @ P::IntList(_), P::IntList(_))
            | (v @ P::FloatList(_), P::FloatList(_))
            | (v @ P::StringList(_), P::StringList(_)) => Ok(v),
            (P::Int(i), P::Float(_)) => Ok(P::Float(float(i))),
            (P::IntList(l), P::FloatList(_)) => Ok(P::FloatList(l.into_iter().map(float).collect())),
            (v, declared) if v.is_empty_list() && declared.is_list() => Ok(declared.emptied()),
            (v, _) => Err(v),
        }
    }

    fn is_list(&self) -> bool {
        matches!(self, Self::BoolList(_) | Self::IntList(_) | Self::FloatList(_) | Self::StringList(_))
    }

    fn is_empty_list(&self) -> bool {
        match self {
            Self::BoolList(l) => l.is_empty(),
            Self::IntList(l) => l.is_empty(),
            Self::FloatList(l) => l.is_empty(),
            Self::StringList(l) => l.is_empty(),
            _ => false,
        }
    }

    /// An empty list of this list's type (a scalar is returned as it is).
    fn emptied(&self) -> ParamValue {
        match self {
            Self::BoolList(_) => Self::BoolList(Vec::new()),
            Self::IntList(_) => Self::IntList(Vec::new()),
            Self::FloatList(_) => Self::FloatList(Vec::new()),
            Self::StringList(_) => Self::StringList(Vec::new()),
            scalar => scalar.clone(),
        }
    }

    /// The plain JSON value: `true`, `3`, `1.5`, `"fast"`, `[1, 2]`.
    #[must_use]
    pub fn to_json(&self) -> Json {
        match self {
            Self::Bool(b) => Json::from(*b),
            Self::Int(i) => Json::from(*i),
            Self::Float(f) => Json::from(*f),
            Self::String(s) => Json::from(s.as_str()),
            Self::BoolList(l) => Json::from(l.clone()),
            Self::IntList(l) => Json::from(l.clone()),
            Self::FloatList(l) => Json::from(l.clone()),
            Self::StringList(l) => Json::from(l.clone()),
        }
    }

    /// The value a plain JSON value stands for; the type is read from it (an empty list is a
    /// list of any type, see [`ParamValue::conform`]).
    ///
    /// # Errors
    /// [`ParamValueError`] for `null`, an object, a number that is neither an `i64` nor a finite
    /// float, a list of lists or of mixed types; the error says which.
    pub fn from_json(json: &Json) -> Result<ParamValue, ParamValueError> {
        let scalar = |v: &Json| -> Result<ParamValue, ParamValueError> {
            match v {
                Json::Bool(b) => Ok(ParamValue::Bool(*b)),
                Json::Number(n) => match (n.as_i64(), n.as_f64()) {
                    (Some(i), _) => Ok(ParamValue::Int(i)),
                    (None, _) if n.is_u64() => Err(ParamValueError::TooLarge(n.clone())),
                    (None, Some(f)) => finite(f),
                    (None, None) => Err(ParamValueError::NotANumber(n.clone())),
                },
                Json::String(s) => Ok(ParamValue::String(s.clone())),
                Json::Null => Err(ParamValueError::Null),
                Json::Array(_) => Err(ParamValueError::Nested),
                Json::Object(_) => Err(ParamValueError::Mapping),
            }
        };
        match json {
            Json::Array(items) => list(items.iter().map(scalar).collect::<Result<Vec<_>, _>>()?),
            one => scalar(one),
        }
    }
}

/// Shown as a YAML flow value: `true`, `3`, `1.5`, `fast`, `[1, 2]`, `["a b", c]`: what
/// `nerve param set` accepts back. Floats keep their point (`2.0`), so they read as floats.
impl fmt::Display for ParamValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fn items<T>(f: &mut fmt::Formatter<'_>, l: &[T], one: impl Fn(&T) -> String) -> fmt::Result {
            write!(f, "[{}]", l.iter().map(one).collect::<Vec<_>>().join(", "))
        }
        match self {
            Self::Bool(b) => write!(f, "{b}"),
            Self::Int(i) => write!(f, "{i}"),
            Self::Float(x) => write!(f, "{x:?}"),
            Self::String(s) => f.write_str(s),
            Self::BoolList(l) => items(f, l, ToString::to_string),
            Self::IntList(l) => items(f, l, ToString::to_string),
            Self::FloatList(l) => items(f, l, |x| format!("{x:?}")),
            // JSON quoting is valid YAML flow quoting, and keeps `a, b` one item.
            Self::StringList(l) => items(f, l, |s| Json::from(s.as_str()).to_string()),
        }
    }
}

fn finite(f: f64) -> Result<ParamValue, ParamValueError> {
    if f.is_finite() { Ok(ParamValue::Float(f)) } else { Err(ParamValueError::NotFinite(f)) }
}

/// The list of these items: all of one type, ints among floats read as floats.
fn list(items: Vec<ParamValue>) -> Result<ParamValue, ParamValueError> {
    use ParamValue as P;
    let numbers = items.iter().all(|v| matches!(v, P::Int(_) | P::Float(_)));
    if numbers && items.iter().any(|v| matches!(v, P::Float(_))) {
        #[allow(clippy::cast_precision_loss)] // ints written among floats are read as the nearest float
        let floats = items.into_iter().filter_map(|v| match v {
            P::Float(f) => Some(f),
            P::Int(i) => Some(i as f64),
            _ => None,
        });
        return Ok(P::FloatList(floats.collect()));
    }
    if let (Some(first), Some(other)) =
        (items.first(), items.iter().find(|v| items.first().is_some_and(|f| f.type_name() != v.type_name())))
    {
        return Err(ParamValueError::MixedList { first: first.a_type(), other: other.a_type() });
    }
    Ok(match items.first() {
        Some(P::Bool(_)) => {
            P::BoolList(items.into_iter().filter_map(|v| if let P::Bool(b) = v { Some(b) } else { None }).collect())
        }
        Some(P::Int(_)) => {
            P::IntList(items.into_iter().filter_map(|v| if let P::Int(i) = v { Some(i) } else { None }).collect())
        }
        _ => {
            P::StringList(items.into_iter().filter_map(|v| if let P::String(s) = v { Some(s) } else { None }).collect())
        }
    })
}

/// Checks a parameter key: letters, digits and `_`, with `.` between groups (`pid.kp`).
///
/// # Errors
/// [`ParamKeyError`]: what is wrong with it.
pub fn check_key(key: &str) -> Result<(), ParamKeyError> {
    if key.is_empty() {
        return Err(ParamKeyError::Empty);
    }
    if key.len() > MAX_KEY_LEN {
        return Err(ParamKeyError::TooLong);
    }
    if let Some(bad) = key.chars().find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '.'))) {
        return Err(ParamKeyError::BadCharacter { key: key.to_owned(), bad });
    }
    if key.split('.').any(str::is_empty) {
        return Err(ParamKeyError::EmptyGroup(key.to_owned()));
    }
    Ok(())
}

/// Parses a value written as YAML: a scalar (`1.5`, `true`, `fast`, `"3"`) or a flow list
/// (`[1, 2]`), as `nerve param set` takes it.
///
/// # Errors
/// [`ParamValueError`] for text that is not YAML, empty, null, a mapping, or a list that is not
/// all of one type.
pub fn parse_value(text: &str) -> Result<ParamValue, ParamValueError> {
    match tree::parse(text) {
        Ok(Some(node)) => from_yaml(&node),
        Ok(None) => Err(ParamValueError::NoValue),
        Err(problems) => Err(ParamValueError::NotYaml(
            problems.first().map_or_else(|| "not a YAML value".to_owned(), |p| p.message.clone()),
        )),
    }
}

/// The parameter value of a YAML node that is not a mapping (mappings group keys; the caller
/// walks them).
pub(crate) fn from_yaml(node: &Node) -> Result<ParamValue, ParamValueError> {
    let scalar = |node: &Node| -> Result<ParamValue, ParamValueError> {
        let Value::Scalar(s) = &node.value else {
            return Err(if matches!(node.value, Value::Map(_)) {
                ParamValueError::Mapping
            } else {
                ParamValueError::Nested
            });
        };
        match s.kind {
            ScalarKind::Null => Err(ParamValueError::Null),
            ScalarKind::Bool(b) => Ok(ParamValue::Bool(b)),
            ScalarKind::Int(i) => {
                i64::try_from(i).map(ParamValue::Int).map_err(|_| ParamValueError::OutOfRange(s.text.clone()))
            }
            ScalarKind::Float(f) => finite(f),
            ScalarKind::Str => Ok(ParamValue::String(s.text.clone())),
        }
    };
    match &node.value {
        Value::Seq(items) if items.is_empty() => Err(ParamValueError::EmptyList),
        Value::Seq(items) => list(items.iter().map(scalar).collect::<Result<Vec<_>, _>>()?),
        _ => scalar(node),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_from_text() {
        assert_eq!(parse_value("1.5"), Ok(ParamValue::Float(1.5)));
        assert_eq!(parse_value("-3"), Ok(ParamValue::Int(-3)));
        assert_eq!(parse_value("true"), Ok(ParamValue::Bool(true)));
        assert_eq!(parse_value("fast"), Ok(ParamValue::String("fast".into())));
        assert_eq!(parse_value("'3'"), Ok(ParamValue::String("3".into())));
        assert_eq!(parse_value("[1, 2]"), Ok(ParamValue::IntList(vec![1, 2])));
        assert_eq!(parse_value("[1, 2.5]"), Ok(ParamValue::FloatList(vec![1.0, 2.5])));
        assert_eq!(parse_value("[a, 'b c']"), Ok(ParamValue::StringList(vec!["a".into(), "b c".into()])));
        for bad in ["", "~", "{a: 1}", "[1, x]", "[[1]]", "[]", ".inf", "99999999999999999999", "[1"] {
            assert!(parse_value(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn types_are_kept() {
        let float = ParamValue::Float(0.0);
        assert_eq!(ParamValue::Int(2).conform(&float), Ok(ParamValue::Float(2.0)));
        assert_eq!(ParamValue::Float(2.0).conform(&ParamValue::Int(0)), Err(ParamValue::Float(2.0)));
        assert_eq!(ParamValue::String("1".into()).conform(&float), Err(ParamValue::String("1".into())));
        let ints = ParamValue::IntList(vec![1]);
        assert_eq!(ParamValue::StringList(vec![]).conform(&ints), Ok(ParamValue::IntList(vec![])));
        assert_eq!(
            ParamValue::IntList(vec![3]).conform(&ParamValue::FloatList(vec![])),
            Ok(ParamValue::FloatList(vec![3.0]))
        );
        assert!(ParamValue::StringList(vec![]).conform(&float).is_err());
    }

    #[test]
    fn json_and_display_round_trip() {
        for text in ["true", "-7", "2.0", "fast", "[1, 2]", "[0.5, 2.0]", "[\"a, b\", \"c\"]", "[false]"] {
            let value = parse_value(text).expect("valid");
            assert_eq!(value.to_string(), text);
            assert_eq!(ParamValue::from_json(&value.to_json()), Ok(value.clone()), "{text}");
            assert_eq!(parse_value(&value.to_string()), Ok(value));
        }
        assert!(ParamValue::from_json(&serde_json::json!({"a": 1})).is_err());
        assert!(ParamValue::from_json(&serde_json::json!([1, "a"])).is_err());
        assert!(ParamValue::from_json(&serde_json::json!(u64::MAX)).is_err());
    }

    #[test]
    fn keys() {
        for good in ["speed", "pid.kp", "a_1.b2"] {
            assert!(check_key(good).is_ok(), "{good}");
        }
        for bad in ["", "a-b", ".a", "a.", "a..b", "a b", "é"] {
            assert!(check_key(bad).is_err(), "{bad}");
        }
    }
}
