import test from 'ava';
import { addressKey } from '../api/services/auth/client-address.ts';

test('addressKey: IPv4 as is, IPv4-mapped IPv6 as its IPv4, IPv6 as its /64 however it is written', (t) => {
  t.is(addressKey('203.0.113.7'), '203.0.113.7');
  t.is(addressKey('::ffff:203.0.113.7'), '203.0.113.7');
  t.is(addressKey('::FFFF:cb00:7107'), '203.0.113.7');
  for (const written of [
    '2001:db8:1:2::1',
    '2001:0db8:0001:0002:0000:0000:0000:0001',
    '2001:DB8:1:2:ffff:ffff:ffff:ffff',
    '2001:db8:1:2::1.2.3.4',
    '2001:db8:1:2::9%eth0',
  ]) {
    t.is(addressKey(written), '2001:db8:1:2::/64', written);
  }
  t.is(addressKey('2001:db8:1:3::1'), '2001:db8:1:3::/64');
  t.is(addressKey('::1'), '0:0:0:0::/64');
  t.is(addressKey('2001:db8::'), '2001:db8:0:0::/64');
  t.is(addressKey('::'), '0:0:0:0::/64');
  t.is(addressKey('not an address'), 'not an address');
});
