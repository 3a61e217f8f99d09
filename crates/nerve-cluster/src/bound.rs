//! The ports the system gave this process's listeners. An endpoint configured with port 0
//! (a daemon's default: the system picks) is worth nothing to anyone told it; Zenoh reports
//! the endpoints it listens on without the loopback ones, so the kernel's socket tables are
//! read instead.

use std::collections::HashSet;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

/// A socket of this process bound to `addr`, on UDP (QUIC) or TCP (TCP, TLS).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Bound {
    addr: SocketAddr,
    udp: bool,
}

/// `listen` with each port 0 replaced by the port this process's one matching listener got:
/// same address (or the unspecified one), same transport, and a port no other endpoint of
/// `listen` names. An endpoint with no such single listener is kept as it is.
pub(crate) fn with_bound_ports(listen: Vec<String>) -> Vec<String> {
    let sockets = own_sockets();
    let named: HashSet<u16> = listen.iter().filter_map(|e| parse(e)).map(|(_, addr, _)| addr.port()).collect();
    listen
        .into_iter()
        .map(|endpoint| {
            let Some((scheme, addr, rest)) = parse(&endpoint) else { return endpoint };
            if addr.port() != 0 {
                return endpoint;
            }
            let udp = matches!(scheme, "quic" | "udp");
            let ports: HashSet<u16> = sockets
                .iter()
                .filter(|s| s.udp == udp && (s.addr.ip() == addr.ip() || s.addr.ip().is_unspecified()))
                .map(|s| s.addr.port())
                .filter(|p| !named.contains(p))
                .collect();
            match ports.into_iter().collect::<Vec<_>>().as_slice() {
                [port] => format!("{scheme}/{}{rest}", SocketAddr::new(addr.ip(), *port)),
                _ => endpoint,
            }
        })
        .collect()
}

/// `scheme/ip:port` and what follows it (`?…`, `#…`), of an endpoint with a numeric address.
fn parse(endpoint: &str) -> Option<(&str, SocketAddr, &str)> {
    let (scheme, rest) = endpoint.split_once('/')?;
    let end = rest.find(['?', '#']).unwrap_or(rest.len());
    Some((scheme, rest[..end].parse().ok()?, &rest[end..]))
}

/// The listening TCP sockets and bound UDP sockets this process holds.
fn own_sockets() -> Vec<Bound> {
    let inodes: HashSet<u64> = std::fs::read_dir("/proc/self/fd")
        .map(|fds| {
            fds.flatten()
                .filter_map(|fd| std::fs::read_link(fd.path()).ok())
                .filter_map(|target| target.to_str()?.strip_prefix("socket:[")?.strip_suffix(']')?.parse().ok())
                .collect()
        })
        .unwrap_or_default();
    // TCP_LISTEN for TCP; a bound UDP socket is TCP_CLOSE in the kernel's table.
    [("tcp", false, "0A"), ("tcp6", false, "0A"), ("udp", true, "07"), ("udp6", true, "07")]
        .into_iter()
        .flat_map(|(table, udp, state)| {
            let text = std::fs::read_to_string(format!("/proc/self/net/{table}")).unwrap_or_default();
            table_sockets(&text, state)
                .into_iter()
                .filter(|(_, inode)| inodes.contains(inode))
                .map(move |(addr, _)| Bound { addr, udp })
                .collect::<Vec<_>>()
        })
        .collect()
}

/// The local addresses and inodes of the sockets in state `state` of a `/proc/net/{tcp,udp}[6]`
/// table.
fn table_sockets(text: &str, state: &str) -> Vec<(SocketAddr, u64)> {
    text.lines()
        .skip(1)
        .filter_map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            if fields.get(3) != Some(&state) {
                return None;
            }
            Some((hex_socket(fields.get(1)?)?, fields.get(9)?.parse().ok()?))
        })
        .collect()
}

/// `0100007F:1F90`: the address as the kernel prints it (32-bit words in this machine's byte
/// order), then the port.
fn hex_socket(text: &str) -> Option<SocketAddr> {
    let (ip, port) = text.split_once(':')?;
    let word = |i: usize| u32::from_str_radix(ip.get(i * 8..i * 8 + 8)?, 16).ok().map(u32::to_ne_bytes);
    let ip = match ip.len() {
        8 => IpAddr::V4(Ipv4Addr::from(word(0)?)),
        32 => {
            let mut bytes = [0u8; 16];
            for i in 0..4 {
                bytes[i * 4..i * 4 + 4].copy_from_slice(&word(i)?);
            }
            IpAddr::V6(Ipv6Addr::from(bytes))
        }
        _ => return None,
    };
    Some(SocketAddr::new(ip, u16::from_str_radix(port, 16).ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_port_zero_becomes_the_port_of_the_listener_bound_to_it() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a loopback listener");
        let port = listener.local_addr().expect("its address").port();
        let listen = vec!["tcp/127.0.0.1:0".to_owned(), "tcp/127.0.0.1:7447".to_owned()];
        assert_eq!(with_bound_ports(listen), vec![format!("tcp/127.0.0.1:{port}"), "tcp/127.0.0.1:7447".to_owned()]);
    }

    #[test]
    fn kernel_addresses_are_read_in_this_machines_byte_order() {
        let loopback = u32::from_ne_bytes([127, 0, 0, 1]);
        let text = format!("{loopback:08X}:1F90");
        assert_eq!(hex_socket(&text), Some(SocketAddr::from(([127, 0, 0, 1], 8080))));
        assert_eq!(
            parse("tcp/10.0.0.1:0#iface=eth0"),
            Some(("tcp", SocketAddr::from(([10, 0, 0, 1], 0)), "#iface=eth0"))
        );
    }
}
