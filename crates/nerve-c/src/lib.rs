//! The C API of nerve: `libnerve.so` / `libnerve.a`, declared by `include/nerve.h` (generated
//! from this crate by cbindgen), `include/node_api.h` (dora-rs's C node API) and
//! `include/operator_api.h` (dora-rs's C operator API).
//!
//! A C node connects, receives events, and sends bytes, Arrow arrays (through the Arrow C data
//! interface) or blocks of shared memory it fills in place:
//!
//! ```c
//! nerve_node *node;
//! if (nerve_node_init_from_env(&node) != NERVE_STATUS_OK) {
//!     fprintf(stderr, "%s\n", nerve_last_error());
//!     return 1;
//! }
//! nerve_event *event;
//! while (nerve_node_next_event(node, -1, &event) == NERVE_STATUS_OK) {
//!     nerve_event_type type;
//!     nerve_event_get_type(event, &type);
//!     if (type == NERVE_EVENT_TYPE_INPUT) {
//!         const uint8_t *data;
//!         size_t len;
//!         if (nerve_event_bytes(event, &data, &len) == NERVE_STATUS_OK)
//!             nerve_node_send_bytes(node, "out", NULL, data, len);
//!     }
//!     nerve_event_free(event);
//! }
//! nerve_node_free(node);
//! ```
//!
//! Topics (`nerve_publisher`, `nerve_subscriber`) and services (`nerve_client`, `nerve_server`)
//! need no dataflow: a message received is a `nerve_event` too, read with the same functions.
//! Nor do transforms (`nerve_tf_broadcaster`, `nerve_tf_buffer`). A node's parameters
//! (`nerve_node_param_*`) are the Rust node's, read and set from C and from `nerve param`.
//!
//! Every entry point returns a status (`NERVE_STATUS_OK`, or a negative code whose message
//! `nerve_last_error()` gives), checks each handle against the live ones before touching it,
//! and catches a Rust panic before it reaches C: misuse gets a code and a message, never a
//! crash.

mod args;
pub mod clock;
pub mod dora;
pub mod dora_operator;
pub mod error;
pub mod event;
mod handles;
pub mod node;
pub mod params;
pub mod sample;
pub mod service;
pub mod tf;
pub mod topic;
