import { describe, expect, it } from 'vitest';
import type { ToolSpec } from '@trellis/sdk';
import { createResourceCatalog } from './index.ts';
import { BUNDLED, SNAPSHOT, config, spec } from '../test/fixtures.ts';

// A dynamic tool source (the mcp bridge) lists a tool it withholds with `unavailable`: the catalog
// knows it, describes it, and refuses it with the source's own code and message.
describe('withheld discovered tools', () => {
  const withheld = {
    ...spec('log', 'Show the commit log.'),
    unavailable: { code: 'TOOL_CHANGED', message: 'git-helper.log is withheld: its description changed since it was pinned' },
  } as ToolSpec;
  const catalog = createResourceCatalog({ snapshot: SNAPSHOT, bundled: BUNDLED, config: config({}) }).withDiscoveredTools('git-helper', [
    withheld,
    spec('blame', 'Who wrote a line.'),
  ]);

  it('is known and described, but not offered, with the reason the source gave', () => {
    expect(catalog.get('git-helper.log')?.description).toBe('Show the commit log.');
    expect(catalog.offered().map((d) => d.name)).not.toContain('git-helper.log');
    expect(catalog.offered().map((d) => d.name)).toContain('git-helper.blame');
    expect(catalog.availability().find((a) => a.name === 'git-helper.log')).toEqual({
      name: 'git-helper.log',
      plugin: 'git-helper',
      offered: false,
      reason: { code: 'TOOL_CHANGED', message: 'git-helper.log is withheld: its description changed since it was pinned' },
    });
    const lookup = catalog.lookup('git-helper.log');
    expect(lookup.status === 'unavailable' ? lookup.reason : undefined).toEqual({
      code: 'TOOL_CHANGED',
      message: 'git-helper.log is withheld: its description changed since it was pinned',
    });
  });

  it('keeps the annotations a source reported, as reported', () => {
    const annotated = createResourceCatalog({ snapshot: SNAPSHOT, bundled: BUNDLED, config: config({}) }).withDiscoveredTools(
      'git-helper',
      [{ ...spec('log', 'Show the commit log.'), annotations: { readOnlyHint: true, title: 'Git log' } } as ToolSpec],
    );
    expect(annotated.get('git-helper.log')?.annotations).toEqual({ readOnlyHint: true, title: 'Git log' });
    expect(catalog.get('git-helper.blame')?.annotations).toBeUndefined();
  });

  it('ignores a malformed reason (the tool is then offered like any other)', () => {
    const odd = createResourceCatalog({ snapshot: SNAPSHOT, bundled: BUNDLED, config: config({}) }).withDiscoveredTools('git-helper', [
      { ...spec('log', 'Show the commit log.'), unavailable: { code: 7 } } as unknown as ToolSpec,
    ]);
    expect(odd.offered().map((d) => d.name)).toContain('git-helper.log');
  });
});
