/**
 * Where a wake webhook may go: the address rules as a table (each address by default, and with
 * private destinations allowed), and the URL rules.
 */
import { describe, expect, it } from 'vitest';
import { checkWebhookDestination, isForbiddenAddress } from '../../src/faces/wake/webhook-destination.js';

/** [address, forbidden by default, forbidden with allowPrivate] */
const ADDRESSES: readonly [string, boolean, boolean][] = [
  // Public.
  ['93.184.216.34', false, false],
  ['8.8.8.8', false, false],
  ['1.1.1.1', false, false],
  ['2606:4700:4700::1111', false, false],
  ['[2a00:1450:4001:81c::200e]', false, false],
  ['::ffff:8.8.8.8', false, false],
  ['::ffff:808:808', false, false],
  // Loopback.
  ['127.0.0.1', true, false],
  ['127.255.255.254', true, false],
  ['::1', true, false],
  ['[::1]', true, false],
  ['0:0:0:0:0:0:0:1', true, false],
  ['::ffff:127.0.0.1', true, false],
  // Private, link-local, shared, unique-local, NAT64.
  ['10.0.0.1', true, false],
  ['10.255.255.255', true, false],
  ['172.16.0.1', true, false],
  ['172.31.255.255', true, false],
  ['192.168.1.1', true, false],
  ['169.254.169.254', true, false],
  ['169.254.0.1', true, false],
  ['100.64.0.1', true, false],
  ['100.127.255.255', true, false],
  ['198.18.0.1', true, false],
  ['fc00::1', true, false],
  ['fd12:3456:789a::1', true, false],
  ['fe80::1', true, false],
  ['fe80::1%eth0', true, false],
  ['febf::1', true, false],
  ['::ffff:10.0.0.1', true, false],
  ['::ffff:169.254.169.254', true, false],
  ['::ffff:a9fe:a9fe', true, false],
  ['64:ff9b::a9fe:a9fe', true, false],
  ['64:ff9b::8.8.8.8', true, false],
  ['64:ff9b:1::1', true, false],
  // Just outside the private ranges: public.
  ['172.15.255.255', false, false],
  ['172.32.0.1', false, false],
  ['100.63.255.255', false, false],
  ['100.128.0.1', false, false],
  ['169.253.255.255', false, false],
  ['11.0.0.1', false, false],
  ['fbff::1', true, true], // outside 2000::/3 and fc00::/7: unassigned
  // Never: unspecified, this network, multicast, reserved, documentation, relays.
  ['0.0.0.0', true, true],
  ['0.1.2.3', true, true],
  ['::', true, true],
  ['0:0:0:0:0:0:0:0', true, true],
  ['::ffff:0.0.0.0', true, true],
  ['224.0.0.1', true, true],
  ['239.255.255.250', true, true],
  ['240.0.0.1', true, true],
  ['255.255.255.255', true, true],
  ['192.0.0.8', true, true],
  ['192.0.2.1', true, true],
  ['198.51.100.7', true, true],
  ['203.0.113.9', true, true],
  ['192.88.99.1', true, true],
  ['ff02::1', true, true],
  ['ff0e::1', true, true],
  ['2001:db8::1', true, true],
  ['2001::1', true, true],
  ['2002:c0a8:101::1', true, true],
  ['3fff::1', true, true],
  ['100::1', true, true],
  ['::127.0.0.1', true, true],
  ['::ffff:0:7f00:1', true, true],
  // Not an address: never.
  ['', true, true],
  ['localhost', true, true],
  ['127.1', true, true],
  ['0x7f.0.0.1', true, true],
  ['010.0.0.1', true, true],
  ['256.0.0.1', true, true],
  ['1.2.3.4.5', true, true],
  ['1:2:3:4:5:6:7:8:9', true, true],
  ['1::2::3', true, true],
  ['12345::1', true, true],
  ['::ffff:1.2.3', true, true],
  ['2606:4700::1111 ', true, true],
];

describe('isForbiddenAddress', () => {
  it.each(ADDRESSES)('%s: forbidden %s, with allowPrivate %s', (ip, forbidden, forbiddenWhenPrivate) => {
    expect(isForbiddenAddress(ip)).toBe(forbidden);
    expect(isForbiddenAddress(ip, { allowPrivate: true })).toBe(forbiddenWhenPrivate);
  });

  it('admits loopback, and only loopback, under allowLoopback (the testing switch)', () => {
    expect(isForbiddenAddress('127.0.0.1', { allowLoopback: true })).toBe(false);
    expect(isForbiddenAddress('::1', { allowLoopback: true })).toBe(false);
    expect(isForbiddenAddress('10.0.0.1', { allowLoopback: true })).toBe(true);
    expect(isForbiddenAddress('169.254.169.254', { allowLoopback: true })).toBe(true);
    expect(isForbiddenAddress('0.0.0.0', { allowLoopback: true })).toBe(true);
  });
});

describe('checkWebhookDestination', () => {
  const refusal = (url: unknown, options = {}) => {
    const checked = checkWebhookDestination(url, options);
    return 'refusal' in checked ? checked.refusal : 'ok';
  };

  it.each([
    ['https://hooks.example.com/sess', {}, 'ok'],
    ['https://hooks.example.com:8443/a/b?token=t0k3n', {}, 'ok'],
    ['https://93.184.216.34/hook', {}, 'ok'],
    ['https://[2606:4700:4700::1111]/hook', {}, 'ok'],
    ['http://hooks.example.com/sess', {}, 'insecure_url'],
    ['http://hooks.example.com/sess', { allowInsecureLocalhost: true }, 'insecure_url'],
    ['http://10.0.0.1/sess', { allowInsecureLocalhost: true, allowPrivate: true }, 'insecure_url'],
    ['http://localhost:8080/hook', {}, 'insecure_url'],
    ['http://localhost:8080/hook', { allowInsecureLocalhost: true }, 'ok'],
    ['http://127.0.0.1:8080/hook', { allowInsecureLocalhost: true }, 'ok'],
    ['http://[::1]:8080/hook', { allowInsecureLocalhost: true }, 'ok'],
    ['ftp://hooks.example.com/', {}, 'insecure_url'],
    ['https://127.0.0.1/hook', {}, 'forbidden_address'],
    ['https://127.0.0.1/hook', { allowInsecureLocalhost: true }, 'ok'],
    ['https://0x7f000001/hook', {}, 'forbidden_address'],
    ['https://2130706433/hook', {}, 'forbidden_address'],
    ['https://169.254.169.254/latest/meta-data', {}, 'forbidden_address'],
    ['https://10.1.2.3/hook', {}, 'forbidden_address'],
    ['https://10.1.2.3/hook', { allowPrivate: true }, 'ok'],
    ['https://[::ffff:127.0.0.1]/hook', {}, 'forbidden_address'],
    ['https://[fd00::1]/hook', {}, 'forbidden_address'],
    ['https://0.0.0.0/hook', { allowPrivate: true }, 'forbidden_address'],
    ['https://user:pass@hooks.example.com/', {}, 'invalid_url'],
    ['https://@hooks.example.com/', {}, 'invalid_url'],
    ['https://hooks.example.com/#frag', {}, 'invalid_url'],
    ['https://hooks.example.com/a b', {}, 'invalid_url'],
    ['https://hooks.example.com\\@evil.example/', {}, 'invalid_url'],
    [' https://hooks.example.com/', {}, 'invalid_url'],
    ['hooks.example.com/sess', {}, 'invalid_url'],
    ['', {}, 'invalid_url'],
    [`https://hooks.example.com/${'a'.repeat(2048)}`, {}, 'invalid_url'],
    [42, {}, 'invalid_url'],
    ['https://hooks.example.com/', { allowedHosts: ['hooks.example.com'] }, 'ok'],
    ['https://HOOKS.example.com/', { allowedHosts: ['hooks.example.com'] }, 'ok'],
    ['https://other.example.com/', { allowedHosts: ['hooks.example.com'] }, 'host_not_allowed'],
    ['https://sub.hooks.example.com/', { allowedHosts: ['hooks.example.com'] }, 'host_not_allowed'],
  ])('%s with %o: %s', (url, options, expected) => {
    expect(refusal(url, options)).toBe(expected);
  });

  it('gives loopback addresses only to a loopback host name under the testing switch', () => {
    const local = checkWebhookDestination('http://localhost:1/', { allowInsecureLocalhost: true });
    const remote = checkWebhookDestination('https://hooks.example.com/', { allowInsecureLocalhost: true });
    expect('policy' in local && local.policy.allowLoopback).toBe(true);
    expect('policy' in remote && remote.policy.allowLoopback).toBe(false);
  });
});
