import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import * as publicEntry from './index.ts';
import * as internalEntry from './internal.ts';

// The main entry is the plugin API: what docs/plugin-authoring.md, examples/ and the
// `trellis plugin new` template use. Every name here is a promise to plugin authors.
const PUBLIC_VALUES = [
  'CAPABILITIES',
  'DEFAULT_TOOL_CONTRACT',
  'DISCOVERY_ROOTS',
  'ERROR_CODES',
  'HOST_RESERVED_CODES',
  'ISOLATION_MODES',
  'MAX_MANIFEST_BYTES',
  'PLUGIN_ID_PATTERN',
  'PLUGIN_KINDS',
  'PROFILE_NAMES',
  'ProviderError',
  'SANDBOX_PROFILES',
  'TOOL_NAME_PATTERN',
  'ToolError',
  'definePlugin',
  'definePluginCode',
  'defineTool',
  'failOutcome',
  'isHostReservedCode',
  'isProviderError',
  'isToolError',
  'okOutcome',
  'resolveContract',
  'silentLogger',
];
const PUBLIC_TYPES = [
  'Canonicalized',
  'Capability',
  'ChatMessage',
  'Connector',
  'ConnectorDefinition',
  'ConnectorHost',
  'DiscoveryRoot',
  'DynamicToolSpec',
  'ErrorCode',
  'FinishReason',
  'HealthCheckRecord',
  'HostPluginView',
  'HostServices',
  'HostToolHit',
  'InboundMessage',
  'IsolationMode',
  'KeepAliveLease',
  'KeepAliveStore',
  'LifecycleReport',
  'LifecycleState',
  'LifecycleTransition',
  'Logger',
  'ManifestTool',
  'PluginCode',
  'PluginContext',
  'PluginContract',
  'PluginDefinition',
  'PluginDefinitionInput',
  'PluginKind',
  'PluginManifest',
  'PluginManifestInput',
  'PluginRuntime',
  'PartLifecycleReport',
  'PluginSettings',
  'ProfileName',
  'Provider',
  'ProviderDefinition',
  'ProviderEvent',
  'ProviderRequest',
  'ProviderTool',
  'ProviderToolCall',
  'ProviderUsage',
  'ReplyEvent',
  'SandboxProfile',
  'ToolContext',
  'ToolContract',
  'ToolDefinition',
  'ToolExample',
  'ToolFailure',
  'ToolImplementation',
  'ToolOutcome',
  'ToolProgress',
  'ToolSource',
  'ToolSourceFactory',
  'ToolSourceReason',
  'ToolSourceStartOptions',
  'ToolSpec',
  'WorkspacePaths',
];

const WHERE =
  'The main entry of @trellis/sdk is the plugin API. Put host helpers in src/internal.ts (`@trellis/sdk/internal`); ' +
  'add a name to the public list in src/publicExports.test.ts only when a plugin author needs it, and document it in docs/plugin-authoring.md.';

/** Every name an entry file exports (values and types), read from its `export … { … } from` lines. */
function exportedNames(file: string): string[] {
  const text = readFileSync(join(import.meta.dirname, file), 'utf8').replace(/^\s*\/\/.*$/gm, '');
  const statements = [...text.matchAll(/^export\b[^;]*;/gm)].map((m) => m[0]);
  const names: string[] = [];
  for (const statement of statements) {
    const list = /^export\s+(?:type\s+)?\{([^}]*)\}\s*from\s*'[^']+';$/.exec(statement.replace(/\s+/g, ' ').trim());
    if (list === null) throw new Error(`${file}: list exports as \`export { a, b } from './x.ts'\`, not \`${statement}\``);
    for (const spec of list[1]!.split(',')) {
      const name = spec
        .trim()
        .replace(/^type\s+/, '')
        .split(/\s+as\s+/)
        .pop()!
        .trim();
      if (name !== '') names.push(name);
    }
  }
  return names.sort();
}

describe('the public entry of @trellis/sdk', () => {
  it('exports exactly the plugin API values', () => {
    const extra = Object.keys(publicEntry).filter((name) => !PUBLIC_VALUES.includes(name));
    expect(extra, `${extra.join(', ')} in src/index.ts is not in the plugin API. ${WHERE}`).toEqual([]);
    expect(Object.keys(publicEntry).sort()).toEqual([...PUBLIC_VALUES].sort());
  });

  it('exports exactly the plugin API names, types included', () => {
    const names = exportedNames('index.ts');
    const listed = [...PUBLIC_VALUES, ...PUBLIC_TYPES];
    const extra = names.filter((name) => !listed.includes(name));
    expect(extra, `${extra.join(', ')} in src/index.ts is not in the plugin API. ${WHERE}`).toEqual([]);
    expect(names).toEqual([...listed].sort());
  });

  it('shares no name with @trellis/sdk/internal, so each helper has one import path', () => {
    const internalNames = exportedNames('internal.ts');
    expect(internalNames.filter((name) => exportedNames('index.ts').includes(name))).toEqual([]);
    // The runtime view agrees with the text the check reads.
    for (const name of Object.keys(internalEntry)) expect(internalNames).toContain(name);
    expect(internalNames).toContain('canonicalJson');
  });
});
