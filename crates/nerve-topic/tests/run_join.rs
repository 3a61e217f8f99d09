//! A process joins a run for as long as it holds the guard (a `path: dynamic` node started by
//! hand, while connected): alone in its test binary, as the run a process is in is global.

use nerve_topic::TopicError;
use nerve_topic::run_scope::{Membership, RunScope, join, membership, resolve};

#[test]
fn a_process_is_in_a_run_it_joined_until_it_leaves() -> Result<(), TopicError> {
    let outside = membership()?;
    let guard = join(Membership::new("joined-run", ["shared/name"])?);
    assert_eq!(resolve("camera", &RunScope::Inherit)?.key, "~joined-run/camera");
    assert_eq!(resolve("shared/name", &RunScope::Inherit)?.key, "shared/name");
    drop(guard);
    assert_eq!(membership()?, outside, "the process left the run with the guard");
    Ok(())
}
