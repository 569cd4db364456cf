import { describe, expect, it } from 'vitest';
import { checkAddress } from '../src/checkUrl.ts';
import { checkConnectedAddress } from '../src/fetchUrl.ts';
import { WebSettingsSchema } from '../src/WebSettingsSchema.ts';
import { refusalOf } from './refusalOf.ts';

// The last check of a fetch runs on the socket's remote address, after connect and before the
// request is written (fetchUrl destroys the request when it throws). Called directly here: no
// connection is made.

const DEFAULTS = WebSettingsSchema.parse({});
const OPEN = WebSettingsSchema.parse({ allow_private: true });

describe('the address the socket connected to', () => {
  const settings = WebSettingsSchema.parse({ private_hosts: ['site.test'] });

  it('passes when it is the checked address, in any spelling', () => {
    expect(() =>
      checkConnectedAddress({ remoteAddress: '127.0.0.1', pinned: '127.0.0.1', host: 'site.test', settings, where: 'url' }),
    ).not.toThrow();
    expect(() =>
      checkConnectedAddress({ remoteAddress: '::ffff:127.0.0.1', pinned: '::ffff:7f00:1', host: 'site.test', settings, where: 'url' }),
    ).not.toThrow();
  });

  it('refuses any other address, and a checked one that is not allowed', () => {
    expect(
      refusalOf(() => checkConnectedAddress({ remoteAddress: '10.0.0.5', pinned: '127.0.0.1', host: 'site.test', settings, where: 'url' })),
    ).toEqual({
      code: 'NOT_ALLOWED',
      message: 'url: the connection for site.test went to 10.0.0.5, not to the checked address 127.0.0.1; nothing was sent.',
    });
    expect(
      refusalOf(() => checkConnectedAddress({ remoteAddress: undefined, pinned: '127.0.0.1', host: 'site.test', settings, where: 'url' }))
        .code,
    ).toBe('NOT_ALLOWED');
    expect(
      refusalOf(() =>
        checkConnectedAddress({ remoteAddress: '169.254.169.254', pinned: '169.254.169.254', host: 'site.test', settings, where: 'url' }),
      ).message,
    ).toMatch(/cloud-metadata/);
  });

  it('checkAddress refuses what checkUrl refuses, for resolved addresses', () => {
    expect(refusalOf(() => checkAddress({ host: 'x.test', address: '::ffff:0:7f00:1', settings: DEFAULTS, where: 'url' })).code).toBe(
      'NOT_ALLOWED',
    );
    expect(() => checkAddress({ host: 'x.test', address: '::ffff:0:7f00:1', settings: OPEN, where: 'url' })).not.toThrow();
  });
});
