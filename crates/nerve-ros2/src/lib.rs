//! nerve and ROS 2 on one wire.
//!
//! ROS 2's default middleware is DDS/RTPS; this crate speaks it from pure Rust (`rustdds`, with
//! `ros2-client` for the ROS 2 node graph), so neither building nor running nerve needs a ROS
//! installation. Samples cross with nerve's own CDR codec ([`nerve_types::Codec`]): a ROS 2
//! message becomes the typed Arrow value of its type, and back, with one copy each way.
//!
//! - [`Domain`]: the ROS 2 domain and discovery settings (`ROS_DOMAIN_ID`,
//!   `ROS_AUTOMATIC_DISCOVERY_RANGE`, `ROS_STATIC_PEERS`) and the DDS participant they give.
//! - [`wire`]: ROS 2 topic and type names on DDS, CDR samples in and out.
//! - [`bridge`]: a dataflow's `ros2:` node ([`nerve_spec::ros2::Ros2Bridge`]) at run time.
//! - [`TransformJoin`]: nerve's transform tree and ROS 2's `/tf` and `/tf_static`, joined.
//! - [`TopicJoin`]: nerve's shared topics and ROS 2's topics, joined by name.
//! - [`ParameterServices`]: nerve nodes' parameters behind ROS 2's parameter services.

mod action;
mod action_client;
pub mod bridge;
mod domain;
mod error;
mod params;
mod qos;
mod service;
mod stop;
mod topics;
mod transforms;
pub mod wire;

pub use action::{GOAL_ID, GOAL_STATUS};
pub use domain::{DiscoveryRange, Domain};
pub use error::Ros2Error;
pub use params::ParameterServices;
pub use qos::dds_qos;
pub use service::REQUEST_ID;
pub use topics::{TopicJoin, TopicPatterns};
pub use transforms::{FROM_ROS2, TransformJoin};
