//! Which addresses the gateway refuses to connect to for a stranger (the
//! outside services it reaches, OAuth clients' URLs): a guard against being
//! used to reach the server's own network.

use std::net::IpAddr;

/// Addresses a stranger may not make the gateway connect to: private,
/// loopback, link-local, shared (CGNAT), benchmarking, multicast and
/// unspecified ones, and IPv6 forms that carry such an IPv4 address
/// (mapped, NAT64 64:ff9b::/96, 6to4 2002::/16).
pub fn private_address(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => {
            let [a, b, ..] = v4.octets();
            v4.is_private()
                || v4.is_loopback()
                || v4.is_link_local()
                || v4.is_unspecified()
                || v4.is_broadcast()
                || v4.is_multicast()
                || (a == 100 && (b & 0xc0) == 64)
                || (a == 198 && (b & 0xfe) == 18)
        }
        IpAddr::V6(v6) => {
            let s = v6.segments();
            let embedded = |hi: u16, lo: u16| {
                let [a, b] = hi.to_be_bytes();
                let [c, d] = lo.to_be_bytes();
                private_address(IpAddr::V4(std::net::Ipv4Addr::new(a, b, c, d)))
            };
            v6.is_loopback()
                || v6.is_unspecified()
                || v6.is_multicast()
                || (s[0] & 0xfe00) == 0xfc00
                || (s[0] & 0xffc0) == 0xfe80
                || v6
                    .to_ipv4_mapped()
                    .is_some_and(|v4| private_address(IpAddr::V4(v4)))
                || (s[0] == 0x64
                    && s[1] == 0xff9b
                    && s[2..6] == [0, 0, 0, 0]
                    && embedded(s[6], s[7]))
                || (s[0] == 0x2002 && embedded(s[1], s[2]))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn private_addresses_are_recognised() {
        for p in [
            "127.0.0.1",
            "10.1.2.3",
            "192.168.0.1",
            "172.16.0.1",
            "169.254.1.1",
            "0.0.0.0",
            "100.64.0.1",
            "::1",
            "fd00::1",
            "fe80::1",
            "::ffff:127.0.0.1",
            "198.18.0.1",
            "224.0.0.1",
            "ff02::1",
            "64:ff9b::7f00:1",
            "2002:c0a8:1::1",
        ] {
            assert!(private_address(p.parse().unwrap()), "{p}");
        }
        for p in [
            "93.184.216.34",
            "142.250.74.109",
            "2a00:1450:4001::6d",
            "64:ff9b::5db8:d822",
            "2002:5db8:d822::1",
        ] {
            assert!(!private_address(p.parse().unwrap()), "{p}");
        }
    }
}
