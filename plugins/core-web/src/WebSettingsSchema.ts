import { z } from 'zod';

/** A host glob: letters, digits, `-`, `.`, `:` (IPv6) and `*`. */
const HostGlobSchema = z
  .string()
  .min(1)
  .max(253)
  .regex(/^[A-Za-z0-9*.:\-_]+$/, 'a host glob such as "example.com", "*.example.com" or "127.0.0.1"');

/**
 * `[runtime.tools.web]`: what core-web may fetch and how much. Every key has a safe default, so
 * `{}` is valid; unknown keys are refused.
 */
export const WebSettingsSchema = z
  .object({
    allow_private: z
      .boolean()
      .default(false)
      .describe(
        'Allow loopback, private (RFC 1918, fc00::/7), link-local, CGNAT, unspecified and multicast targets. ' +
          'Cloud-metadata endpoints stay refused. Meant for tests and trusted intranets.',
      ),
    private_hosts: z
      .array(HostGlobSchema)
      .max(1000)
      .default([])
      .describe(
        'Host globs (as written in the URL) that may resolve to internal addresses even when allow_private is false, ' +
          'e.g. ["wiki.corp.example"], or ["127.0.0.1"] in tests. Cloud-metadata endpoints stay refused.',
      ),
    allow_hosts: z
      .array(HostGlobSchema)
      .max(1000)
      .default([])
      .describe('When non-empty, only hosts matching one of these globs may be fetched (every redirect hop too).'),
    deny_hosts: z.array(HostGlobSchema).max(1000).default([]).describe('Hosts matching one of these globs are always refused.'),
    timeout_seconds: z.number().positive().max(300).default(20).describe('Whole fetch, all redirects and the body included.'),
    max_bytes: z
      .number()
      .int()
      .min(1024)
      .max(64 * 1024 * 1024)
      .default(2 * 1024 * 1024)
      .describe('Body bytes read (after decompression); the rest is not downloaded.'),
    max_text_chars: z
      .number()
      .int()
      .min(1000)
      .max(10_000_000)
      .default(200_000)
      .describe('Characters of converted text returned to the caller.'),
    user_agent: z.string().min(1).max(512).default('Trellis-core-web/0.1 (+https://github.com/trellis)').describe('User-Agent header.'),
  })
  .strict();

/** core-web's resolved settings. */
export type WebSettings = z.infer<typeof WebSettingsSchema>;
