import { BlockList, isIP } from 'node:net';

/**
 * Which IP addresses a server may connect to on behalf of someone else (a URL another party
 * chose): public unicast only. Refused: the unspecified, loopback, private (RFC 1918), shared
 * (CGNAT, RFC 6598), link-local (cloud metadata at 169.254.169.254 included), benchmarking,
 * documentation, multicast and reserved IPv4 ranges; and in IPv6 everything outside global
 * unicast (2000::/3: loopback, ULA fc00::/7, link-local, multicast, IPv4-mapped) plus the global
 * ranges that embed or translate an IPv4 address (NAT64, 6to4, Teredo) or are for documentation.
 *
 * @see RFC 6890 (special-purpose address registries), RFC 4291 2.5.5.2 (IPv4-mapped)
 */
const refused = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8], // "this network", 0.0.0.0 included
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // carrier-grade NAT
  ['127.0.0.0', 8],
  ['169.254.0.0', 16], // link-local, cloud metadata
  ['172.16.0.0', 12],
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.0.2.0', 24], // documentation
  ['192.88.99.0', 24], // 6to4 relay anycast
  ['192.168.0.0', 16],
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast included
] as const) {
  refused.addSubnet(network, prefix, 'ipv4');
}
for (const [network, prefix] of [
  ['64:ff9b::', 96], // NAT64 (would reach an IPv4 address of the translator's choice)
  ['64:ff9b:1::', 48], // local-use NAT64
  ['2001::', 32], // Teredo
  ['2001:2::', 48], // benchmarking
  ['2001:db8::', 32], // documentation
  ['2002::', 16], // 6to4
  ['3fff::', 20], // documentation
] as const) {
  refused.addSubnet(network, prefix, 'ipv6');
}

/** Global unicast: the only IPv6 space that may be public (RFC 4291 2.4). */
const globalUnicast = new BlockList();
globalUnicast.addSubnet('2000::', 3, 'ipv6');

const loopback = new BlockList();
loopback.addSubnet('127.0.0.0', 8, 'ipv4');
loopback.addAddress('::1', 'ipv6');

/**
 * Whether `address` (an IP literal as `dns.lookup` answers it, IPv6 without brackets) is a public
 * unicast address. Anything that is not an IP address is not.
 *
 * @example
 * isPublicAddress('93.184.215.14'); // true
 * isPublicAddress('169.254.169.254'); // false
 * isPublicAddress('::ffff:127.0.0.1'); // false
 */
export function isPublicAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return !refused.check(address, 'ipv4');
  if (family === 6) return globalUnicast.check(address, 'ipv6') && !refused.check(address, 'ipv6');
  return false;
}

/** Whether `address` is on the loopback interface (`127.0.0.0/8`, `::1`). */
export function isLoopbackAddress(address: string): boolean {
  const family = isIP(address);
  return family !== 0 && loopback.check(address, family === 4 ? 'ipv4' : 'ipv6');
}
