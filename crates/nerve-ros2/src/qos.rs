//! A bridged topic's QoS (dora-rs's `qos:` keys) as DDS policies.

use nerve_spec::ros2::{Ros2Durability, Ros2History, Ros2Liveliness, Ros2Qos};
use rustdds::policy::{Durability, History, Liveliness, Reliability};
use rustdds::{QosPolicies, QosPolicyBuilder};

/// How long a reliable write blocks on a full history when `max_blocking_time` is not set:
/// ROS 2's own default.
const DEFAULT_MAX_BLOCKING_MS: i64 = 100;

/// The DDS policies of `qos`.
#[must_use]
pub fn dds_qos(qos: &Ros2Qos) -> QosPolicies {
    let duration = |d: std::time::Duration| rustdds::Duration::from_std(d);
    let reliability = if qos.reliable {
        Reliability::Reliable {
            max_blocking_time: qos
                .max_blocking_time
                .map_or_else(|| rustdds::Duration::from_millis(DEFAULT_MAX_BLOCKING_MS), duration),
        }
    } else {
        Reliability::BestEffort
    };
    let lease_duration = qos.lease_duration.map_or(rustdds::Duration::INFINITE, duration);
    QosPolicyBuilder::new()
        .reliability(reliability)
        .durability(match qos.durability {
            Ros2Durability::Volatile => Durability::Volatile,
            Ros2Durability::TransientLocal => Durability::TransientLocal,
        })
        .history(match qos.history {
            Ros2History::KeepLast(depth) => History::KeepLast { depth: i32::try_from(depth).unwrap_or(i32::MAX) },
            Ros2History::KeepAll => History::KeepAll,
        })
        .liveliness(match qos.liveliness {
            Ros2Liveliness::Automatic => Liveliness::Automatic { lease_duration },
            Ros2Liveliness::ManualByParticipant => Liveliness::ManualByParticipant { lease_duration },
            Ros2Liveliness::ManualByTopic => Liveliness::ManualByTopic { lease_duration },
        })
        .build()
}
