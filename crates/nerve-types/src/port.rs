//! Types declared on a dataflow's ports (`output_types:`, `input_types:`): a ROS 2 message
//! name, or a type URN of dora-rs's `std/` library, mapped to the nearest ROS 2 message where
//! one exists so both spellings of one type meet.

use std::collections::BTreeMap;
use std::fmt;

use arrow_schema::DataType;

use crate::arrow::arrow_type;
use crate::name::{Kind, TypeName};
use crate::registry::{Registry, TypesError};

/// What a declared type stands for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PortKind {
    /// A ROS 2 message: its Arrow type comes from its definition.
    Message(TypeName),
    /// A dora-rs core type with a fixed Arrow type (`std/core/v1/Float32`).
    Arrow(DataType),
    /// `std/core/v1/Bytes`: any value; an input of this type accepts every output.
    Bytes,
    /// A dora-rs type with no ROS 2 counterpart and no fixed layout (`std/vision/v1/BoundingBox`):
    /// checked by name only.
    Named,
}

/// A type declared on a port.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PortType {
    /// The name compared between the two ends of an edge: `package/msg/Name` for a message, the
    /// URN without parameters for the other dora-rs types.
    pub name: String,
    /// A dora-rs URN's parameters (`[encoding=rgb8]`), by key.
    pub params: BTreeMap<String, String>,
    /// What the name stands for.
    pub kind: PortKind,
}

/// Why a declared type is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PortTypeError {
    /// `std/...` that dora-rs does not define.
    #[error("`{urn}` is not a type of dora-rs's std library; {}", match suggestion {
        Some(s) => format!("did you mean `{s}`?"),
        None => format!("it has {}", DORA_STD.iter().map(|(u, _)| *u).collect::<Vec<_>>().join(", ")),
    })]
    UnknownUrn {
        /// The URN given.
        urn: String,
        /// The nearest URN it has, if one is close.
        suggestion: Option<&'static str>,
    },
    /// Neither a ROS 2 name nor a URN.
    #[error(transparent)]
    Name(#[from] crate::name::NameError),
    /// A malformed `[key=value,...]` suffix.
    #[error("`{0}`: parameters are written `[key=value,...]`")]
    Params(String),
    /// A service or action where a message belongs.
    #[error("`{0}`: a port carries messages; a service or an action is not one")]
    NotMessage(String),
}

/// dora-rs's `std/` library: each URN and the ROS 2 message it means, or its own layout.
const DORA_STD: &[(&str, DoraType)] = &[
    ("std/core/v1/Float32", DoraType::Arrow(DataType::Float32)),
    ("std/core/v1/Float64", DoraType::Arrow(DataType::Float64)),
    ("std/core/v1/Int32", DoraType::Arrow(DataType::Int32)),
    ("std/core/v1/Int64", DoraType::Arrow(DataType::Int64)),
    ("std/core/v1/UInt8", DoraType::Arrow(DataType::UInt8)),
    ("std/core/v1/UInt32", DoraType::Arrow(DataType::UInt32)),
    ("std/core/v1/UInt64", DoraType::Arrow(DataType::UInt64)),
    ("std/core/v1/String", DoraType::Arrow(DataType::Utf8)),
    ("std/core/v1/Bool", DoraType::Arrow(DataType::Boolean)),
    ("std/core/v1/Bytes", DoraType::Bytes),
    ("std/math/v1/Vector3", DoraType::Ros("geometry_msgs", "Vector3")),
    ("std/math/v1/Quaternion", DoraType::Ros("geometry_msgs", "Quaternion")),
    ("std/math/v1/Pose", DoraType::Ros("geometry_msgs", "Pose")),
    ("std/math/v1/Transform", DoraType::Ros("geometry_msgs", "Transform")),
    ("std/control/v1/Twist", DoraType::Ros("geometry_msgs", "Twist")),
    ("std/control/v1/JointState", DoraType::Ros("sensor_msgs", "JointState")),
    ("std/control/v1/Odometry", DoraType::Ros("nav_msgs", "Odometry")),
    ("std/media/v1/Image", DoraType::Ros("sensor_msgs", "Image")),
    ("std/media/v1/CompressedImage", DoraType::Ros("sensor_msgs", "CompressedImage")),
    ("std/media/v1/PointCloud", DoraType::Ros("sensor_msgs", "PointCloud2")),
    ("std/media/v1/AudioFrame", DoraType::Named),
    ("std/vision/v1/BoundingBox", DoraType::Named),
    ("std/vision/v1/Detection", DoraType::Named),
    ("std/vision/v1/Segmentation", DoraType::Named),
];

enum DoraType {
    Arrow(DataType),
    Bytes,
    Ros(&'static str, &'static str),
    Named,
}

impl PortType {
    /// Reads a declared type: `sensor_msgs/msg/Image`, `sensor_msgs/Image`, or a dora-rs URN
    /// such as `std/media/v1/Image[encoding=rgb8]`.
    ///
    /// # Errors
    /// [`PortTypeError`] naming what is wrong.
    pub fn parse(text: &str) -> Result<Self, PortTypeError> {
        let (base, params) = match text.split_once('[') {
            None => (text, BTreeMap::new()),
            Some((base, rest)) => {
                let inner = rest.strip_suffix(']').ok_or_else(|| PortTypeError::Params(text.to_owned()))?;
                let params = inner
                    .split(',')
                    .map(|kv| {
                        let (k, v) = kv.split_once('=').ok_or_else(|| PortTypeError::Params(text.to_owned()))?;
                        Ok((k.trim().to_owned(), v.trim().to_owned()))
                    })
                    .collect::<Result<_, PortTypeError>>()?;
                (base, params)
            }
        };
        if base.starts_with("std/") {
            let (urn, dora) =
                DORA_STD.iter().find(|(urn, _)| *urn == base).ok_or_else(|| PortTypeError::UnknownUrn {
                    urn: base.to_owned(),
                    suggestion: crate::nearest(base, DORA_STD.iter().map(|(u, _)| *u)),
                })?;
            let (name, kind) = match dora {
                DoraType::Arrow(ty) => ((*urn).to_owned(), PortKind::Arrow(ty.clone())),
                DoraType::Bytes => ((*urn).to_owned(), PortKind::Bytes),
                DoraType::Named => ((*urn).to_owned(), PortKind::Named),
                DoraType::Ros(package, name) => {
                    let t = TypeName::msg(package, name);
                    (t.to_string(), PortKind::Message(t))
                }
            };
            return Ok(Self { name, params, kind });
        }
        let t = TypeName::parse(base)?;
        if t.kind != Kind::Msg && !t.name.contains('_') {
            return Err(PortTypeError::NotMessage(text.to_owned()));
        }
        Ok(Self { name: t.to_string(), params, kind: PortKind::Message(t) })
    }

    /// Whether an input declared with this type takes what an output declared `sent` sends:
    /// the same type, parameters that agree where both give them, or any type for `Bytes`.
    #[must_use]
    pub fn accepts(&self, sent: &PortType) -> bool {
        if self.kind == PortKind::Bytes {
            return true;
        }
        self.name == sent.name && self.params.iter().all(|(k, v)| sent.params.get(k).is_none_or(|s| s == v))
    }

    /// The Arrow type a value sent on such a port must have; `None` when any layout goes
    /// (`Bytes`, and dora-rs types without a fixed layout).
    ///
    /// # Errors
    /// A message type the registry cannot resolve.
    pub fn arrow_type(&self, registry: &Registry) -> Result<Option<DataType>, TypesError> {
        match &self.kind {
            PortKind::Message(t) => arrow_type(registry, t).map(Some),
            PortKind::Arrow(ty) => Ok(Some(ty.clone())),
            PortKind::Bytes | PortKind::Named => Ok(None),
        }
    }
}

impl fmt::Display for PortType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name)?;
        if !self.params.is_empty() {
            let params: Vec<String> = self.params.iter().map(|(k, v)| format!("{k}={v}")).collect();
            write!(f, "[{}]", params.join(","))?;
        }
        Ok(())
    }
}

/// Whether `actual` has the layout of `expected`: the same types all the way down, whatever
/// the nullability and the names of list items (a `pyarrow` value built from Python objects
/// has nullable fields).
#[must_use]
pub fn same_layout(expected: &DataType, actual: &DataType) -> bool {
    use DataType::{FixedSizeList, LargeList, List, Struct};
    match (expected, actual) {
        (Struct(a), Struct(b)) => {
            a.len() == b.len()
                && a.iter()
                    .zip(b.iter())
                    .all(|(x, y)| x.name() == y.name() && same_layout(x.data_type(), y.data_type()))
        }
        (List(a), List(b)) | (LargeList(a), LargeList(b)) => same_layout(a.data_type(), b.data_type()),
        (FixedSizeList(a, n), FixedSizeList(b, m)) => n == m && same_layout(a.data_type(), b.data_type()),
        _ => expected == actual,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    use arrow_schema::Field;

    fn port(s: &str) -> PortType {
        PortType::parse(s).unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn both_spellings_and_dora_urns_meet() {
        assert!(port("sensor_msgs/msg/Image").accepts(&port("sensor_msgs/Image")));
        assert!(port("sensor_msgs/msg/Image").accepts(&port("std/media/v1/Image")));
        assert!(!port("sensor_msgs/msg/CompressedImage").accepts(&port("std/media/v1/Image")));
        assert!(port("std/core/v1/Bytes").accepts(&port("std/core/v1/Float32")));
        assert!(!port("std/core/v1/Float32").accepts(&port("std/core/v1/Bytes")));
        assert!(port("std/media/v1/AudioFrame").accepts(&port("std/media/v1/AudioFrame[sample_type=f32]")));
        assert!(
            !port("std/media/v1/AudioFrame[sample_type=i16]")
                .accepts(&port("std/media/v1/AudioFrame[sample_type=f32]"))
        );
        assert_eq!(port("std/control/v1/Odometry").to_string(), "nav_msgs/msg/Odometry");
    }

    #[test]
    fn unknown_urns_and_services_are_refused() {
        let e = PortType::parse("std/vision/v1/BoundingBx").err().map(|e| e.to_string()).unwrap_or_default();
        assert!(
            e.contains("`std/vision/v1/BoundingBx` is not a type") && e.contains("std/vision/v1/BoundingBox"),
            "{e}"
        );
        assert!(matches!(PortType::parse("std_srvs/srv/SetBool"), Err(PortTypeError::NotMessage(_))));
        assert!(PortType::parse("std_srvs/srv/SetBool_Request").is_ok());
        assert!(matches!(PortType::parse("std/media/v1/Image[encoding"), Err(PortTypeError::Params(_))));
    }

    #[test]
    fn layouts_compare_types_not_nullability() {
        let strict = DataType::Struct(
            vec![Field::new("data", DataType::List(Arc::new(Field::new("item", DataType::UInt8, false))), false)]
                .into(),
        );
        let loose = DataType::Struct(
            vec![Field::new("data", DataType::List(Arc::new(Field::new("element", DataType::UInt8, true))), true)]
                .into(),
        );
        let wrong = DataType::Struct(
            vec![Field::new("data", DataType::List(Arc::new(Field::new("item", DataType::Int8, false))), false)].into(),
        );
        assert!(same_layout(&strict, &loose));
        assert!(!same_layout(&strict, &wrong));
        assert!(!same_layout(&DataType::Float32, &DataType::Float64));
    }
}
