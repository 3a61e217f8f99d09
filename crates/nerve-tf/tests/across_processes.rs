//! The transform tree across real processes: this test binary re-runs itself as the
//! broadcaster, and the test process listens only after the static transform was sent.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::Duration;

use nerve_tf::{
    BufferOptions, StampedTransform, StaticTransformBroadcaster, TfError, TfOptions, Transform, TransformBroadcaster,
    TransformBuffer,
};

const ROLE: &str = "NERVE_TF_TEST_ROLE";
const DOMAIN: &str = "NERVE_TF_TEST_DOMAIN";
const STEP_NS: i64 = 20_000_000;

/// Broadcaster side: base -> camera static, then world -> base moving along x at 1 m/s on a
/// 20 ms grid of stamps from 0, until the parent kills it.
fn broadcast(domain: u32) -> Result<(), TfError> {
    let options = TfOptions { domain };
    let fixed = StaticTransformBroadcaster::new(options.clone())?;
    let camera = Transform::new([0.0, 0.5, 0.0], [0.0, 0.0, 0.0, 1.0]).map_err(|why| TfError::Invalid {
        parent: "base".into(),
        child: "camera".into(),
        why: why.to_string(),
    })?;
    fixed.send(&[StampedTransform::new("base", "camera", 0, camera)])?;
    let moving = TransformBroadcaster::new(options)?;
    println!("static sent");
    for k in 0..10_000 {
        let base = Transform { translation: [k as f64 * 0.02, 0.0, 0.0], rotation: [0.0, 0.0, 0.0, 1.0] };
        moving.send(&[StampedTransform::new("world", "base", k * STEP_NS, base)])?;
        std::thread::sleep(Duration::from_nanos(STEP_NS as u64));
    }
    Ok(())
}

#[test]
fn a_late_listener_gets_static_and_interpolated_moving_transforms() -> Result<(), TfError> {
    if std::env::var(ROLE).is_ok() {
        let domain = std::env::var(DOMAIN).ok().and_then(|d| d.parse().ok()).expect("domain");
        return broadcast(domain);
    }
    let domain = 500_000 + std::process::id();
    let mut child = Command::new(std::env::current_exe().expect("test binary"))
        .args(["a_late_listener_gets_static_and_interpolated_moving_transforms", "--exact", "--nocapture"])
        .env(ROLE, "broadcaster")
        .env(DOMAIN, domain.to_string())
        .stdout(Stdio::piped())
        .spawn()
        .expect("broadcaster process");
    let stdout = child.stdout.take().expect("stdout");
    let ready = BufReader::new(stdout).lines().map_while(Result::ok).any(|l| l.contains("static sent"));
    // The static transform is out before the listener below exists: it must get it anyway.
    assert!(ready, "the broadcaster did not start");

    let buffer = TransformBuffer::new(BufferOptions { domain, ..Default::default() });
    let checked = buffer.and_then(|buffer| {
        let latest = buffer.lookup_wait("world", "camera", None, Duration::from_secs(30))?.stamp_ns;
        let when = latest + 3 * STEP_NS + STEP_NS / 4;
        let camera = buffer.lookup_wait("world", "camera", Some(when), Duration::from_secs(10))?;
        Ok((when, camera))
    });
    child.kill().expect("kill the broadcaster");
    child.wait().expect("reap the broadcaster");
    let (when, camera) = checked?;
    // base at x = when seconds (1 m/s), camera 0.5 m to its left.
    let x = when as f64 / 1e9;
    assert!((camera.transform.translation[0] - x).abs() < 1e-9, "{camera:?} at {when}");
    assert!((camera.transform.translation[1] - 0.5).abs() < 1e-9, "{camera:?}");
    Ok(())
}
