//! ROS 2 message types as plain Rust structs, each convertible to the Arrow value nerve sends
//! (and back), so a Rust node uses typed messages without writing Arrow by hand.
//!
//! Every interface nerve ships (`std_msgs`, `geometry_msgs`, `sensor_msgs`, …) is here as a
//! module per package: `sensor_msgs::msg::Image`, `std_srvs::srv::SetBool_Request`,
//! `action_msgs::msg::GoalInfo`. Fields take the ROS defaults, constants are associated
//! constants, and a sequence of numbers is a [`Seq`]: read from a received message it views the
//! sender's shared memory in place, built from a `Vec` it takes the vector without a copy.
//!
//! ```
//! use nerve_msgs::Message;
//! use nerve_msgs::sensor_msgs::msg::Image;
//!
//! let image = Image { height: 2, width: 2, encoding: "mono8".into(), step: 2, data: vec![1, 2, 3, 4].into(), ..Image::default() };
//! let value = image.to_arrow()?;             // what `Node::send_message` sends
//! let back = Image::from_arrow(&value)?;     // what a reader gets from the message's data
//! assert_eq!(back, image);
//! assert_eq!(&back.data[..], &[1, 2, 3, 4]);
//! # Ok::<(), nerve_msgs::MessageError>(())
//! ```
//!
//! Message packages of your own: `nerve types rust my_msgs --out src/my_msgs.rs` (or
//! `nerve_types::rust_code` in a build script) writes the same code for them.

mod column;
#[rustfmt::skip]
mod generated;
mod seq;

pub use arrow_array;
pub use arrow_schema;
pub use column::{Column, Message, MessageError, Scalar, column_of, struct_column, struct_fields};
pub use generated::*;
pub use seq::Seq;
