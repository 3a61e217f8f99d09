//! What an interface file defines: fields with their types and defaults, and constants.

use std::fmt;

use crate::name::TypeName;

/// A primitive type of ROS 2 interface files.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Primitive {
    /// `bool`.
    Bool,
    /// `byte`: an opaque octet.
    Byte,
    /// `char`: an 8-bit character, a number in ROS 2.
    Char,
    /// `float32`.
    Float32,
    /// `float64`.
    Float64,
    /// `int8`.
    Int8,
    /// `uint8`.
    UInt8,
    /// `int16`.
    Int16,
    /// `uint16`.
    UInt16,
    /// `int32`.
    Int32,
    /// `uint32`.
    UInt32,
    /// `int64`.
    Int64,
    /// `uint64`.
    UInt64,
}

impl Primitive {
    /// Every primitive, with its name in interface files.
    pub const ALL: [(&'static str, Self); 13] = [
        ("bool", Self::Bool),
        ("byte", Self::Byte),
        ("char", Self::Char),
        ("float32", Self::Float32),
        ("float64", Self::Float64),
        ("int8", Self::Int8),
        ("uint8", Self::UInt8),
        ("int16", Self::Int16),
        ("uint16", Self::UInt16),
        ("int32", Self::Int32),
        ("uint32", Self::UInt32),
        ("int64", Self::Int64),
        ("uint64", Self::UInt64),
    ];

    /// The primitive named `s` in an interface file.
    #[must_use]
    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.iter().find(|(name, _)| *name == s).map(|(_, p)| *p)
    }

    /// Its name in interface files.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        Self::ALL.iter().find(|(_, p)| *p == self).map_or("?", |(name, _)| name)
    }

    /// The range of an integer type, `None` for the others.
    #[must_use]
    pub fn int_range(self) -> Option<(i128, i128)> {
        Some(match self {
            Self::Byte | Self::Char | Self::UInt8 => (0, u8::MAX.into()),
            Self::Int8 => (i8::MIN.into(), i8::MAX.into()),
            Self::Int16 => (i16::MIN.into(), i16::MAX.into()),
            Self::UInt16 => (0, u16::MAX.into()),
            Self::Int32 => (i32::MIN.into(), i32::MAX.into()),
            Self::UInt32 => (0, u32::MAX.into()),
            Self::Int64 => (i64::MIN.into(), i64::MAX.into()),
            Self::UInt64 => (0, u64::MAX.into()),
            Self::Bool | Self::Float32 | Self::Float64 => return None,
        })
    }
}

/// The type of one element of a field.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum BaseType {
    /// A number or a boolean.
    Primitive(Primitive),
    /// `string`, or `string<=N` with a bound.
    String(Option<usize>),
    /// `wstring`, or `wstring<=N`.
    WString(Option<usize>),
    /// Another message.
    Message(TypeName),
}

/// How many elements a field holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Array {
    /// One.
    Single,
    /// Exactly N: `T[N]`.
    Fixed(usize),
    /// Up to N: `T[<=N]`.
    Bounded(usize),
    /// Any number: `T[]`.
    Unbounded,
}

/// A field's full type.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct FieldType {
    /// The element type.
    pub base: BaseType,
    /// One element or a sequence of them.
    pub array: Array,
}

/// A value written in an interface file: a default or a constant.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// `true`, `false`.
    Bool(bool),
    /// An integer, within its type's range.
    Int(i128),
    /// A floating-point number.
    Float(f64),
    /// A string.
    Str(String),
    /// An array's elements.
    Array(Vec<Value>),
}

/// One field of a message.
#[derive(Debug, Clone, PartialEq)]
pub struct Field {
    /// Its name (lowercase).
    pub name: String,
    /// Its type.
    pub ty: FieldType,
    /// The default written in the file, if any (else the type's zero value).
    pub default: Option<Value>,
}

/// A named constant of a message (`uint8 RGB8 = 1`).
#[derive(Debug, Clone, PartialEq)]
pub struct Constant {
    /// Its name (uppercase).
    pub name: String,
    /// Its type: a primitive or a string.
    pub ty: BaseType,
    /// Its value.
    pub value: Value,
}

/// One message type: a `.msg` file, or one part of a `.srv` or `.action` file.
#[derive(Debug, Clone, PartialEq)]
pub struct Message {
    /// Its full name.
    pub name: TypeName,
    /// Its fields, in order.
    pub fields: Vec<Field>,
    /// Its constants.
    pub constants: Vec<Constant>,
}

impl fmt::Display for BaseType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Primitive(p) => f.write_str(p.as_str()),
            Self::String(None) => f.write_str("string"),
            Self::String(Some(n)) => write!(f, "string<={n}"),
            Self::WString(None) => f.write_str("wstring"),
            Self::WString(Some(n)) => write!(f, "wstring<={n}"),
            Self::Message(name) => write!(f, "{}/{}", name.package, name.name),
        }
    }
}

impl fmt::Display for FieldType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.base)?;
        match self.array {
            Array::Single => Ok(()),
            Array::Fixed(n) => write!(f, "[{n}]"),
            Array::Bounded(n) => write!(f, "[<={n}]"),
            Array::Unbounded => f.write_str("[]"),
        }
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Bool(b) => write!(f, "{b}"),
            Self::Int(i) => write!(f, "{i}"),
            Self::Float(x) => write!(f, "{x:?}"),
            Self::Str(s) => write!(f, "{s:?}"),
            Self::Array(items) => {
                f.write_str("[")?;
                for (i, v) in items.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{v}")?;
                }
                f.write_str("]")
            }
        }
    }
}

impl fmt::Display for Message {
    /// The definition as an interface file would write it, without comments.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for c in &self.constants {
            writeln!(f, "{} {}={}", c.ty, c.name, c.value)?;
        }
        for field in &self.fields {
            write!(f, "{} {}", field.ty, field.name)?;
            if let Some(d) = &field.default {
                write!(f, " {d}")?;
            }
            writeln!(f)?;
        }
        Ok(())
    }
}
