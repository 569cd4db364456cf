import { RuntimeConfigSchema } from '@trellis/config';
import type { RuntimeConfig } from '@trellis/config';
import { resolveContract } from '@trellis/sdk';
import { PluginManifestSchema } from '@trellis/sdk/schema';
import type { PluginManifestInput, ToolContract, ToolSpec } from '@trellis/sdk';
import type { CatalogBundledView, CatalogPluginView, CatalogSnapshotView } from '../src/index.ts';

/** A manifest with defaults applied, as the registry would hold it. */
export function manifest(input: Partial<PluginManifestInput> & { id: string }): CatalogPluginView['manifest'] {
  return PluginManifestSchema.parse({ schema_version: 1, name: input.id, version: '1.0.0', kind: 'toolset', ...input });
}

/** A bundled tool spec as the build would embed it. */
export function spec(
  name: string,
  description: string,
  extra: {
    tags?: string[];
    contract?: Partial<ToolContract>;
    inputSchema?: Record<string, unknown>;
    outputSchema?: Record<string, unknown>;
  } = {},
): ToolSpec {
  return {
    name,
    description,
    inputSchema: extra.inputSchema ?? { type: 'object', properties: {}, additionalProperties: false },
    ...(extra.outputSchema === undefined ? {} : { outputSchema: extra.outputSchema }),
    tags: extra.tags ?? [],
    examples: [],
    contract: resolveContract(extra.contract),
  };
}

/** A snapshot entry. */
export function entry(
  id: string,
  state: string,
  options: { bundled?: boolean; reasons?: Array<{ code: string; message: string }>; manifest?: CatalogPluginView['manifest'] } = {},
): CatalogPluginView {
  return {
    id,
    state,
    bundled: options.bundled ?? false,
    reasons: options.reasons ?? [],
    manifest: options.manifest === undefined ? manifest({ id }) : options.manifest,
  };
}

export function config(input: Record<string, unknown> = {}): RuntimeConfig {
  return RuntimeConfigSchema.parse(input);
}

const readPath = { type: 'object', properties: { path: { type: 'string' } }, required: ['path'], additionalProperties: false };

/** Bundled descriptors of a small but realistic host. */
export const BUNDLED: CatalogBundledView[] = [
  {
    manifest: { id: 'builtin-tools' },
    tools: [
      spec('now', 'Return the current date and time in ISO 8601, optionally in a given IANA time zone.', { tags: ['time', 'clock'] }),
      spec('echo', 'Echo the input back unchanged; useful to test that tool calls work.', { tags: ['debug'] }),
      spec('search_tools', 'Search the catalog of available tools by keywords and return the best matches.', {
        tags: ['catalog', 'discovery'],
      }),
      spec('list_plugins', 'List every plugin with its state and the reasons for it.', { tags: ['introspection'] }),
    ],
  },
  {
    manifest: { id: 'core-fs' },
    tools: [
      spec('read', 'Read a text file from the workspace and return its contents.', {
        tags: ['files'],
        inputSchema: readPath,
        contract: { capabilities: ['fs.read'], deadlineMs: 120_000 },
      }),
      spec('write', 'Write text to a file in the workspace, creating or replacing it.', {
        tags: ['files'],
        contract: { capabilities: ['fs.write'], sideEffects: true, approval: 'ask' },
      }),
      spec('list', 'List the entries of a directory in the workspace.', {
        tags: ['files', 'directories'],
        contract: { capabilities: ['fs.read'] },
      }),
      spec('glob', 'Find files in the workspace whose paths match a glob pattern such as src/**/*.ts.', {
        tags: ['files', 'search'],
        contract: { capabilities: ['fs.read'] },
      }),
      spec('stat', 'Show size, type and modification time of a file or directory.', {
        tags: ['files', 'metadata'],
        contract: { capabilities: ['fs.read'] },
      }),
    ],
  },
  {
    manifest: { id: 'core-web' },
    tools: [
      spec('fetch', 'Fetch a URL over HTTP(S) and return the page as plain text.', {
        tags: ['web', 'http'],
        contract: { capabilities: ['net.outbound'] },
      }),
    ],
  },
  {
    manifest: { id: 'core-table' },
    tools: [
      spec('read_table', 'Read a CSV, TSV or JSON table and return its rows.', {
        tags: ['tables', 'csv'],
        contract: { capabilities: ['fs.read'] },
      }),
      spec('aggregate', 'Group table rows by columns and compute sums, counts and averages.', {
        tags: ['tables'],
        contract: { capabilities: ['fs.read'] },
      }),
    ],
  },
  {
    manifest: { id: 'openrouter' },
    tools: [
      spec('complete', 'Send a chat completion request to an OpenAI-compatible model.', {
        tags: ['llm'],
        contract: { capabilities: ['net.outbound'] },
      }),
    ],
  },
];

export const GIT_HELPER = manifest({
  id: 'git-helper',
  description: 'Git status and diff',
  capabilities: ['process.spawn'],
  sandbox: 'read-only-fs',
  runtime: { type: 'process', command: 'python3', args: ['git_helper.py'], timeout_seconds: 20 },
  tools: [
    { name: 'status', description: 'Show the working tree status of the git repository.', tags: ['git', 'vcs'] },
    {
      name: 'diff',
      description: 'Show changes between the working tree and the last commit as a unified diff.',
      tags: ['git'],
      timeout_seconds: 90,
      input_schema: { type: 'object', properties: { staged: { type: 'boolean' } } },
    },
    {
      name: 'commit',
      description: 'Record staged changes in a new commit with a message.',
      side_effects: true,
      approval: 'ask',
      tags: ['git'],
    },
  ],
});

/** A snapshot in deterministic order, with every state the catalog must handle. */
export const SNAPSHOT: CatalogSnapshotView = {
  plugins: [
    entry('builtin-tools', 'enabled', { bundled: true, reasons: [{ code: 'REQUIRED', message: 'required' }] }),
    entry('core-fs', 'enabled', { bundled: true }),
    entry('core-web', 'disabled', {
      bundled: true,
      reasons: [{ code: 'DENIED', message: '[plugins] deny names core-web; remove it to enable' }],
    }),
    entry('core-table', 'enabled', { bundled: true }),
    entry('openrouter', 'unavailable', {
      bundled: true,
      reasons: [{ code: 'MISSING_ENV', message: 'OPENROUTER_API_KEY is not set; export it to enable openrouter' }],
    }),
    entry('git-helper', 'enabled', { manifest: GIT_HELPER }),
    entry('git-helper', 'shadowed', {
      manifest: manifest({ id: 'git-helper', tools: [{ name: 'shadow', description: 'from the shadowed copy' }] }),
      reasons: [{ code: 'SHADOWED', message: 'shadowed by explicit' }],
    }),
    entry('broken', 'rejected', { manifest: null, reasons: [{ code: 'MANIFEST_INVALID', message: 'plugin.toml: id: required' }] }),
    entry('vendor-x', 'enabled', {
      manifest: manifest({
        id: 'vendor-x',
        capabilities: ['vendor.secret'],
        runtime: { type: 'http', endpoint: 'http://127.0.0.1:9/' },
        tools: [{ name: 'lookup', description: 'Look up a record in the vendor system.' }],
      }),
    }),
    entry('old-tool', 'rejected', {
      manifest: manifest({
        id: 'old-tool',
        runtime: { type: 'script', command: 'sh' },
        tools: [{ name: 'run', description: 'Runs the old tool.' }],
      }),
      reasons: [{ code: 'WORLD_WRITABLE', message: '/plugins/old-tool is writable by every user; chmod o-w it' }],
    }),
  ],
};
