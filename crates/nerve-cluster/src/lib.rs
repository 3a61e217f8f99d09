//! One dataflow over several machines.
//!
//! A **coordinator** ([`coordinator::serve`], `nerve coordinator`) knows every machine's
//! **daemon** ([`machine::serve`], `nerve daemon --machine-id ID`). `nerve start` hands it a
//! dataflow; it places each node on its `deploy: {machine: ID}` (by default, the machine
//! `nerve start` runs on), sends every daemon the dataflow and the placement, waits until every
//! node on every machine is ready, then starts them all at once. A machine that does not
//! answer fails the start with an error naming it, and every part readied elsewhere is
//! stopped.
//!
//! On a machine, nodes talk through shared memory exactly as under `nerve run`. Between
//! machines, each output read elsewhere goes on the network once, over Zenoh, and each machine
//! that reads it writes it into shared memory once for all its readers (the
//! [message bridge](bridge)). Messages keep their Arrow type, metadata and sender's stamp.
//!
//! Everything meets over Zenoh: daemons find the coordinator at an address or by multicast
//! scouting; the tools ask it at its address ([`net`]). Nothing listens beyond loopback unless
//! asked, and TLS (mutual, if wanted) covers every link ([`net::Tls`]).
//!
//! ```no_run
//! use nerve_cluster::{Cluster, NetOptions};
//!
//! let cluster = Cluster::connect(&NetOptions::default())?;
//! for daemon in cluster.check()?.daemons {
//!     println!("{} on {}", daemon.machine, daemon.process.hostname);
//! }
//! # Ok::<(), nerve_cluster::ClusterError>(())
//! ```

mod bound;
pub mod bridge;
mod client;
pub mod coordinator;
mod error;
pub mod keys;
pub mod machine;
pub mod net;
pub mod placement;
pub mod protocol;

pub use client::{Cluster, new_dataflow_id};
pub use error::ClusterError;
pub use net::{NetOptions, Role};
