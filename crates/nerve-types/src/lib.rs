//! ROS 2 message types for nerve: `.msg`, `.srv` and `.action` definitions, read from the
//! dataflow's folders, `NERVE_TYPES_PATH`, installed ROS 2 packages or the common interfaces
//! shipped here, and each mapped to an Arrow type so a typed message still travels zero-copy.
//!
//! ```
//! use nerve_types::{Registry, TypeName, arrow_type};
//!
//! let registry = Registry::new(&[]);
//! let image = TypeName::parse("sensor_msgs/Image")?;
//! let fields = registry.message(&image)?.fields.iter().map(|f| f.name.clone()).collect::<Vec<_>>();
//! assert_eq!(fields, ["header", "height", "width", "encoding", "is_bigendian", "step", "data"]);
//! println!("{}", arrow_type(&registry, &image)?);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod arrow;
mod cdr;
mod codegen;
mod composite;
mod cpp;
mod definition;
mod hash;
mod name;
mod parse;
mod port;
mod registry;
mod ros2msg;
mod rust;

pub use arrow::{arrow_type, primitive};
pub use cdr::{CdrError, Codec, from_cdr, to_cdr};
pub use cpp::{CPP_KEYWORDS, cpp_headers};
pub use definition::{Array, BaseType, Constant, Field, FieldType, Message, Primitive, Value};
pub use hash::type_hash;
pub use name::{Kind, NameError, TypeName};
pub use parse::{ParseError, parse_file, parts};
pub use port::{PortKind, PortType, PortTypeError, same_layout};
pub use registry::{Origin, Registry, TYPES_PATH_VAR, TypesError, UnknownType, shipped_packages};
pub use ros2msg::{registry_of, ros2msg};
pub use rust::{NODE_ROOT, RUST_KEYWORDS, rust_code};

/// The candidate closest to `given`, if it is close enough to be a typo of it.
fn nearest<'a>(given: &str, candidates: impl Iterator<Item = &'a str>) -> Option<&'a str> {
    candidates
        .map(|c| (strsim::normalized_damerau_levenshtein(given, c), c))
        .filter(|(score, _)| *score >= 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, c)| c)
}
