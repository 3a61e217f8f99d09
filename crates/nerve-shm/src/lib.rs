//! nerve's shared-memory data plane: messages move between processes of one host without a
//! copy, a serialization step, or a daemon in the path.
//!
//! * [`segment`]: POSIX shared-memory objects, private to the user (mode 0600).
//! * [`names`]: every object of a run carries the run's prefix; [`names::RunNames::sweep`]
//!   removes them all.
//! * [`pool`]: per-output blocks allocated on demand, reused smallest-fit, freed oldest-first
//!   past a capacity; a block is reused only when every reader dropped it.
//! * [`ring`] and [`inbox`]: one bounded queue per input, drop-oldest or back-pressure, and one
//!   doorbell ([`doorbell`]) per node for all its inputs.
//! * [`message`]: the Arrow layout of a message inside its block.
//! * [`channel`]: the two ends of an edge.
//! * [`codec`]: arrays into and out of blocks, shared by every kind of endpoint.
//! * [`clock`]: the clock messages are stamped with, and the wall clock.
//! * [`sim_clock`]: a run's simulated time (`nerve run --sim-time`), shared by its nodes.
//! * [`sync`]: the poison-tolerant lock every nerve crate uses.
//!
//! ```
//! use std::sync::{Arc, atomic::AtomicBool};
//! use nerve_shm::{channel::*, inbox::*, names::RunNames, pool::*, ring::Policy};
//!
//! let names = RunNames::new(&format!("doc{}", std::process::id()));
//! // The runtime creates inboxes and block tables before nodes start.
//! let shape = [QueueShape { capacity: 4, policy: Policy::Backpressure }];
//! let reader_inbox = Arc::new(Inbox::create(&names.inbox(1), &shape)?);
//! let writer_inbox = Arc::new(Inbox::create(&names.inbox(0), &[])?);
//! BlockTable::create(&names.pool(0, 0))?;
//!
//! // Producer: lease a block, fill it, publish it.
//! let link = ReaderLink { inbox: reader_inbox.clone(), queue: 0, edge: 0 };
//! let pool = OutputPool::open(&names, 0, 0, DEFAULT_CAPACITY)?;
//! let mut fan_out = FanOut::new(pool, vec![link], Some(writer_inbox.clone()));
//! let mut lease = fan_out.lease(5)?;
//! lease.bytes_mut()[..5].copy_from_slice(b"hello");
//! fan_out.publish(lease, 5, 0, &AtomicBool::new(false));
//!
//! // Consumer: read the very same bytes in place.
//! let cache = BlockCache::open(&names, 0, 0, 0)?;
//! let mut input = Input::new(reader_inbox, 0, cache, Some(writer_inbox));
//! let (block, len) = input.recv().expect("a message")?;
//! assert_eq!(&block.bytes()[..len], b"hello");
//! names.sweep();
//! # Ok::<(), nerve_shm::ShmError>(())
//! ```

pub mod channel;
pub mod clock;
pub mod codec;
pub mod doorbell;
pub mod error;
pub mod inbox;
pub mod message;
pub mod names;
pub mod pool;
pub mod ring;
pub mod segment;
pub mod sim_clock;
pub mod sync;

pub use error::ShmError;
