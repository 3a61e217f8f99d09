//! What can go wrong between nerve and ROS 2.

/// An error of the ROS 2 side of nerve.
#[derive(Debug, thiserror::Error)]
pub enum Ros2Error {
    /// A ROS 2 environment variable holds something ROS 2 itself would refuse.
    #[error("{var}={value}: {why}")]
    Environment {
        /// The variable.
        var: &'static str,
        /// Its value.
        value: String,
        /// What is wrong with it.
        why: String,
    },
    /// The DDS participant, a topic, a reader or a writer could not be created.
    #[error("{what}: {source}")]
    Dds {
        /// What was being created (`the DDS participant of domain 0`, `a writer on rt/chatter`).
        what: String,
        /// Why not.
        #[source]
        source: rustdds::dds::CreateError,
    },
    /// The ROS 2 node the bridge appears as could not be created.
    #[error("the ROS 2 node {name}: {why}")]
    Node {
        /// Its fully qualified name.
        name: String,
        /// Why not.
        why: String,
    },
    /// A message type is unknown or cannot be compiled.
    #[error(transparent)]
    Types(#[from] nerve_types::TypesError),
    /// A type name that is not one (the spec checks them, so only a hand-made configuration).
    #[error(transparent)]
    TypeName(#[from] nerve_types::NameError),
    /// A message could not be written to DDS.
    #[error("writing to {topic}: {why}")]
    Write {
        /// The DDS topic.
        topic: String,
        /// Why not.
        why: String,
    },
    /// The bridge's configuration (`NERVE_ROS2_BRIDGE`) is missing or not what nerve wrote.
    #[error("the bridge configuration: {0}")]
    Config(String),
    /// The bridge could not join the dataflow, or send on it.
    #[error(transparent)]
    Dataflow(#[from] nerve_node::NodeError),
}
