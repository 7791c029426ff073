/**
 * The public-address rule of the pinned fetch (src/net/public-address.ts): what a URL chosen by
 * someone else may make the server connect to.
 */
import { describe, expect, it } from 'vitest';
import { isLoopbackAddress, isPublicAddress } from '../../src/net/public-address.js';

describe('isPublicAddress', () => {
  it('accepts public unicast, IPv4 and IPv6', () => {
    for (const address of [
      '93.184.215.14',
      '8.8.8.8',
      '1.1.1.1',
      '172.32.0.1',
      '100.128.0.1',
      '2606:4700::1111',
      '2a00:1450:4001::200e',
    ]) {
      expect(isPublicAddress(address), address).toBe(true);
    }
  });

  it('refuses every address that is not public', () => {
    for (const address of [
      '0.0.0.0',
      '0.1.2.3',
      '10.0.0.1',
      '100.64.0.1',
      '100.127.255.255',
      '127.0.0.1',
      '127.255.0.9',
      '169.254.169.254',
      '172.16.0.1',
      '172.31.255.255',
      '192.0.0.8',
      '192.0.2.1',
      '192.168.1.1',
      '198.18.0.1',
      '198.51.100.7',
      '203.0.113.9',
      '224.0.0.1',
      '239.255.255.250',
      '240.0.0.1',
      '255.255.255.255',
      '::',
      '::1',
      '::ffff:127.0.0.1',
      '::ffff:7f00:1',
      '::ffff:a9fe:a9fe',
      '::ffff:8.8.8.8',
      'fc00::1',
      'fd12:3456::1',
      'fe80::1',
      'ff02::1',
      '64:ff9b::7f00:1',
      '2001::1',
      '2001:db8::1',
      '2002:7f00:1::',
      '100::1',
      'fec0::1',
      'localhost',
      'not an address',
      '',
    ]) {
      expect(isPublicAddress(address), address).toBe(false);
    }
  });
});

describe('isLoopbackAddress', () => {
  it('is 127.0.0.0/8 and ::1 only', () => {
    expect(isLoopbackAddress('127.0.0.1')).toBe(true);
    expect(isLoopbackAddress('127.1.2.3')).toBe(true);
    expect(isLoopbackAddress('::1')).toBe(true);
    expect(isLoopbackAddress('10.0.0.1')).toBe(false);
    expect(isLoopbackAddress('0.0.0.0')).toBe(false);
    expect(isLoopbackAddress('localhost')).toBe(false);
  });
});
