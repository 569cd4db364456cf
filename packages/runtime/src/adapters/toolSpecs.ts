import { TOOL_NAME_PATTERN } from '@trellis/sdk';
import type { PluginManifest, ToolContract, ToolSpec } from '@trellis/sdk';

function contractFor(
  manifest: PluginManifest,
  tool: { side_effects?: boolean; idempotent?: boolean; timeout_seconds?: number; approval?: 'auto' | 'ask' },
): ToolContract {
  const sideEffects = tool.side_effects ?? manifest.side_effects;
  const runtimeTimeout = manifest.runtime?.timeout_seconds ?? 30;
  return {
    sideEffects,
    capabilities: [...manifest.capabilities],
    sandbox: manifest.sandbox,
    deadlineMs: Math.round((tool.timeout_seconds ?? runtimeTimeout) * 1000),
    maxRetries: 0,
    idempotent: tool.idempotent ?? !sideEffects,
    isolation: 'process',
    approval: tool.approval ?? 'auto',
  };
}

/** The tools a manifest declares in `[[tools]]`, as specs with the contract the manifest implies. */
export function manifestToolSpecs(manifest: PluginManifest): ToolSpec[] {
  return manifest.tools.map((tool) => ({
    name: tool.name,
    description: tool.description,
    inputSchema: tool.input_schema,
    ...(tool.output_schema === undefined ? {} : { outputSchema: tool.output_schema }),
    tags: [...tool.tags],
    examples: [],
    contract: contractFor(manifest, tool),
  }));
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Turns a plugin's own tool list (`get_tools_response.tools`, `GET /tools`) into specs. Accepts
 * `parameters`, `input_schema` or `inputSchema` for the input schema and `returns`,
 * `output_schema` or `outputSchema` for the output. A manifest `[[tools]]` entry of the same
 * name wins for description, schemas and contract. Malformed entries are skipped and named.
 */
export function discoveredToolSpecs(manifest: PluginManifest, reported: unknown): { tools: ToolSpec[]; problems: string[] } {
  const problems: string[] = [];
  const tools: ToolSpec[] = [];
  if (!Array.isArray(reported)) return { tools, problems: ['tools is not an array'] };
  const declared = new Map(manifestToolSpecs(manifest).map((t) => [t.name, t]));
  const seen = new Set<string>();
  reported.forEach((entry, index) => {
    if (!isObject(entry) || typeof entry.name !== 'string' || !TOOL_NAME_PATTERN.test(entry.name)) {
      problems.push(`tools[${index}]: needs a name of letters, digits, _ or - starting with a letter`);
      return;
    }
    if (seen.has(entry.name)) {
      problems.push(`tools[${index}]: duplicate tool name ${entry.name}`);
      return;
    }
    seen.add(entry.name);
    const fromManifest = declared.get(entry.name);
    if (fromManifest) {
      tools.push(fromManifest);
      return;
    }
    const input = entry.parameters ?? entry.input_schema ?? entry.inputSchema ?? { type: 'object' };
    const output = entry.returns ?? entry.output_schema ?? entry.outputSchema;
    if (!isObject(input)) {
      problems.push(`tools[${index}] (${entry.name}): the input schema is not an object`);
      return;
    }
    tools.push({
      name: entry.name,
      description: typeof entry.description === 'string' ? entry.description : '',
      inputSchema: input,
      ...(isObject(output) ? { outputSchema: output } : {}),
      tags: Array.isArray(entry.tags) ? entry.tags.filter((t): t is string => typeof t === 'string') : [],
      examples: [],
      contract: contractFor(manifest, {}),
    });
  });
  return { tools, problems };
}
