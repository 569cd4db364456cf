import { describe, expect, it } from 'vitest';
import { createResourceCatalog, createToolDescriptor, fromModelToolName, renderTools } from './index.ts';
import { config, entry, manifest, spec } from '../test/fixtures.ts';

const catalog = createResourceCatalog({
  snapshot: {
    plugins: [
      entry('core-fs', 'enabled', { bundled: true }),
      entry('mcp', 'enabled', { bundled: true, manifest: manifest({ id: 'mcp', kind: 'bridge' }) }),
    ],
  },
  bundled: [
    {
      manifest: { id: 'core-fs' },
      tools: [
        spec('read', 'Read a text file.', {
          inputSchema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
          outputSchema: { type: 'object', properties: { text: { type: 'string' } } },
          contract: { capabilities: ['fs.read'] },
        }),
        spec('write', 'Write a text file.', {
          outputSchema: { type: 'string' },
          contract: { sideEffects: true, capabilities: ['fs.write'] },
        }),
      ],
    },
    { manifest: { id: 'mcp' }, tools: [] },
  ],
  config: config(),
}).withDiscoveredTools('mcp', [
  spec('github.create_issue', 'Create an issue.', { contract: { capabilities: ['net.outbound'], sideEffects: true, idempotent: false } }),
  spec('github__create_issue', 'A name that would collide if __ were not escaped.'),
]);

describe('renderTools', () => {
  it('renders OpenAI function tools', () => {
    expect(catalog.render('openai')).toEqual([
      {
        type: 'function',
        function: {
          name: 'core-fs__read',
          description: 'Read a text file.',
          parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
        },
      },
      {
        type: 'function',
        function: {
          name: 'core-fs__write',
          description: 'Write a text file.',
          parameters: { type: 'object', properties: {}, additionalProperties: false },
        },
      },
      {
        type: 'function',
        function: {
          name: 'mcp__github__create_issue',
          description: 'Create an issue.',
          parameters: { type: 'object', properties: {}, additionalProperties: false },
        },
      },
      {
        type: 'function',
        function: {
          name: 'mcp_4e1186b49c94_github_create_issue',
          description: 'A name that would collide if __ were not escaped.',
          parameters: { type: 'object', properties: {}, additionalProperties: false },
        },
      },
    ]);
  });

  it('renders Anthropic tools', () => {
    expect(catalog.render('anthropic', [catalog.get('core-fs.read')!])).toEqual([
      {
        name: 'core-fs__read',
        description: 'Read a text file.',
        input_schema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
      },
    ]);
  });

  it('renders MCP tools with the qualified name as title, object output schemas only, and hints from the contract', () => {
    expect(renderTools(catalog.offered(), 'mcp')).toEqual([
      {
        name: 'core-fs__read',
        title: 'core-fs.read',
        description: 'Read a text file.',
        inputSchema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
        outputSchema: { type: 'object', properties: { text: { type: 'string' } } },
        annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
      },
      {
        name: 'core-fs__write',
        title: 'core-fs.write',
        description: 'Write a text file.',
        inputSchema: { type: 'object', properties: {}, additionalProperties: false },
        annotations: { readOnlyHint: false, idempotentHint: false, openWorldHint: false },
      },
      {
        name: 'mcp__github__create_issue',
        title: 'mcp.github.create_issue',
        description: 'Create an issue.',
        inputSchema: { type: 'object', properties: {}, additionalProperties: false },
        annotations: { readOnlyHint: false, idempotentHint: false, openWorldHint: true },
      },
      {
        name: 'mcp_4e1186b49c94_github_create_issue',
        title: 'mcp.github__create_issue',
        description: 'A name that would collide if __ were not escaped.',
        inputSchema: { type: 'object', properties: {}, additionalProperties: false },
        annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
      },
    ]);
  });

  it('maps every rendered name back to its tool through the catalog', () => {
    const names = catalog.render('anthropic').map((tool) => ('name' in tool ? tool.name : ''));
    expect(names.map((name) => fromModelToolName(name, catalog))).toEqual([
      'core-fs.read',
      'core-fs.write',
      'mcp.github.create_issue',
      'mcp.github__create_issue',
    ]);
    expect([fromModelToolName('core-fs.read', catalog), fromModelToolName('nope__x', catalog)]).toEqual([undefined, undefined]);
  });

  it('looks tools up by their model-API names too', () => {
    const summarize = (name: string) => {
      const found = catalog.lookup(name);
      return found.status === 'offered' ? found.descriptor.name : found;
    };
    expect(
      ['core-fs__read', 'mcp__github__create_issue', 'mcp_4e1186b49c94_github_create_issue', 'core-fs.read', 'core-fs__raed'].map(
        summarize,
      ),
    ).toEqual([
      'core-fs.read',
      'mcp.github.create_issue',
      'mcp.github__create_issue',
      'core-fs.read',
      { status: 'not_found', nearest: 'core-fs.read' },
    ]);
  });

  it('renders descriptors the catalog does not hold after its own names, never over them', () => {
    const foreign = createToolDescriptor({ ...catalog.get('core-fs.read')!, name: 'other.read', plugin: 'other' });
    expect(catalog.render('anthropic', [foreign, catalog.get('core-fs.read')!]).map((tool) => ('name' in tool ? tool.name : ''))).toEqual([
      'other__read',
      'core-fs__read',
    ]);
  });

  it('passes schemas through without copying them', () => {
    const [rendered] = renderTools([catalog.get('core-fs.read')!], 'openai');
    expect(rendered!.function.parameters).toBe(catalog.get('core-fs.read')!.inputSchema);
  });
});
