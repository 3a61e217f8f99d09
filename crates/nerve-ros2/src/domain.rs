//! The ROS 2 domain this process joins, from the variables ROS 2 itself reads.

use std::net::{IpAddr, Ipv4Addr};

use rustdds::{DomainParticipant, DomainParticipantBuilder};

use crate::error::Ros2Error;

/// Highest domain id whose RTPS ports still fit in 16 bits with ROS 2's port mapping.
const MAX_DOMAIN_ID: u16 = 232;

/// How far automatic discovery reaches (`ROS_AUTOMATIC_DISCOVERY_RANGE`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DiscoveryRange {
    /// This machine only: discovery and data stay on loopback.
    Localhost,
    /// The local networks (ROS 2's default, `SUBNET` and `SYSTEM_DEFAULT`).
    Subnet,
}

/// A ROS 2 domain: its id and how far discovery reaches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Domain {
    /// `ROS_DOMAIN_ID`, 0 unless set.
    pub id: u16,
    /// `ROS_AUTOMATIC_DISCOVERY_RANGE`; unset, nerve's own range (`NERVE_DISCOVERY_RANGE`,
    /// this host by default).
    pub range: DiscoveryRange,
}

impl Domain {
    /// The domain ROS 2 nodes started from this environment would join.
    ///
    /// # Errors
    /// A variable ROS 2 would refuse too (a domain id that is not a number up to 232, an
    /// unknown range), and what this DDS implementation cannot honour: `OFF` (it always
    /// discovers) and `ROS_STATIC_PEERS` (it has no static peer list). Refusing is better
    /// than joining a wider or a different graph than the user set.
    pub fn from_env() -> Result<Self, Ros2Error> {
        Self::from_vars(|name| std::env::var(name).ok())
    }

    fn from_vars(var: impl Fn(&str) -> Option<String>) -> Result<Self, Ros2Error> {
        let id = match var("ROS_DOMAIN_ID").filter(|v| !v.trim().is_empty()) {
            None => 0,
            Some(v) => v.trim().parse::<u16>().ok().filter(|id| *id <= MAX_DOMAIN_ID).ok_or_else(|| {
                Ros2Error::Environment { var: "ROS_DOMAIN_ID", value: v.clone(), why: out_of_range() }
            })?,
        };
        let range = match var("ROS_AUTOMATIC_DISCOVERY_RANGE").as_deref().map(str::trim) {
            // Unset, the bridge reaches as far as nerve's own discovery: this host unless the
            // dataflow or the user widened it (`NERVE_DISCOVERY_RANGE=subnet`). Nothing listens
            // beyond loopback unless asked.
            None | Some("") => match var(nerve_topic::session::RANGE_ENV).as_deref().map(str::trim) {
                Some("subnet") => DiscoveryRange::Subnet,
                _ => DiscoveryRange::Localhost,
            },
            Some("SUBNET" | "SYSTEM_DEFAULT") => DiscoveryRange::Subnet,
            Some("LOCALHOST") => DiscoveryRange::Localhost,
            Some(other) => {
                let why = if other == "OFF" {
                    "nerve's DDS (rustdds) cannot turn discovery off; use LOCALHOST to stay on this machine".to_owned()
                } else {
                    "expected SUBNET, LOCALHOST, OFF or SYSTEM_DEFAULT".to_owned()
                };
                return Err(Ros2Error::Environment {
                    var: "ROS_AUTOMATIC_DISCOVERY_RANGE",
                    value: other.to_owned(),
                    why,
                });
            }
        };
        if let Some(peers) = var("ROS_STATIC_PEERS").filter(|v| !v.trim().is_empty()) {
            return Err(Ros2Error::Environment {
                var: "ROS_STATIC_PEERS",
                value: peers,
                why: "nerve's DDS (rustdds) has no static peer list: it finds peers by multicast and, on this \
                      machine, on loopback; unset the variable"
                    .to_owned(),
            });
        }
        Ok(Self { id, range })
    }

    /// Domain `id` with discovery reaching `range`.
    ///
    /// # Errors
    /// [`Ros2Error::Environment`]: `id` is over 232.
    pub fn with_id(id: u16, range: DiscoveryRange) -> Result<Self, Ros2Error> {
        if id > MAX_DOMAIN_ID {
            return Err(Ros2Error::Environment { var: "--domain", value: id.to_string(), why: out_of_range() });
        }
        Ok(Self { id, range })
    }

    /// A DDS participant in this domain. With [`DiscoveryRange::Localhost`] it announces and
    /// listens only on loopback, so no packet leaves the machine.
    ///
    /// # Errors
    /// [`Ros2Error::Dds`]: its sockets cannot be opened.
    pub fn participant(&self) -> Result<DomainParticipant, Ros2Error> {
        let mut builder = DomainParticipantBuilder::new(self.id);
        if self.range == DiscoveryRange::Localhost {
            builder = builder.with_only_networks([IpAddr::V4(Ipv4Addr::LOCALHOST)]);
        }
        builder
            .build()
            .map_err(|source| Ros2Error::Dds { what: format!("the DDS participant of domain {}", self.id), source })
    }
}

fn out_of_range() -> String {
    format!("expected a domain id from 0 to {MAX_DOMAIN_ID}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn domain(vars: &[(&str, &str)]) -> Result<Domain, Ros2Error> {
        Domain::from_vars(|name| vars.iter().find(|(n, _)| *n == name).map(|(_, v)| (*v).to_owned()))
    }

    #[test]
    fn reads_what_ros_2_reads() {
        assert_eq!(domain(&[]).ok(), Some(Domain { id: 0, range: DiscoveryRange::Localhost }));
        let wide = domain(&[("NERVE_DISCOVERY_RANGE", "subnet")]);
        assert_eq!(wide.ok(), Some(Domain { id: 0, range: DiscoveryRange::Subnet }));
        let ros = domain(&[("NERVE_DISCOVERY_RANGE", "host"), ("ROS_AUTOMATIC_DISCOVERY_RANGE", "SUBNET")]);
        assert_eq!(ros.ok(), Some(Domain { id: 0, range: DiscoveryRange::Subnet }));
        let local = domain(&[("ROS_DOMAIN_ID", "42"), ("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")]);
        assert_eq!(local.ok(), Some(Domain { id: 42, range: DiscoveryRange::Localhost }));
    }

    #[test]
    fn refuses_what_it_cannot_honour() {
        for (vars, expected) in [
            (&[("ROS_DOMAIN_ID", "300")][..], "ROS_DOMAIN_ID=300: expected a domain id from 0 to 232"),
            (&[("ROS_DOMAIN_ID", "x")][..], "ROS_DOMAIN_ID=x"),
            (&[("ROS_AUTOMATIC_DISCOVERY_RANGE", "OFF")][..], "cannot turn discovery off"),
            (&[("ROS_AUTOMATIC_DISCOVERY_RANGE", "lan")][..], "expected SUBNET, LOCALHOST"),
            (&[("ROS_STATIC_PEERS", "10.0.0.2")][..], "no static peer list"),
        ] {
            let e = domain(vars).err().map(|e| e.to_string()).unwrap_or_default();
            assert!(e.contains(expected), "{vars:?}: {e}");
        }
    }
}
