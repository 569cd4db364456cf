import { parse } from 'smol-toml';
import { formatIssues, issueToString, nestsDeeperThan } from '@trellis/sdk/internal';
import { PluginManifestSchema } from '@trellis/sdk/schema';
import type { PluginManifest } from '@trellis/sdk';
import { parseTomlFast } from './parseTomlFast.ts';
import { ownedManifest } from './ownedManifest.ts';

/** Deepest nesting of tables and arrays a manifest may use. */
export const MAX_MANIFEST_DEPTH = 32;

/** What {@link parseManifest} returns: the manifest, or every problem as `key.path: message` / `line L, column C: …`. */
export interface ParsedManifest {
  readonly manifest: PluginManifest | null;
  /** The `id` string from the document when it has one, even if the manifest is otherwise invalid. */
  readonly declaredId: string | null;
  readonly errors: readonly string[];
}

const decoder = new TextDecoder('utf-8', { fatal: true });

/**
 * `TRELLIS_TOML_FAST_PATH=0` sends every manifest to smol-toml: for triage, when a manifest is read
 * differently than expected and the hand-written subset parser is the suspect. Read once per process.
 */
const tomlFastPath = process.env.TRELLIS_TOML_FAST_PATH !== '0';

/**
 * Parses `plugin.toml` bytes: strict UTF-8, TOML (duplicate keys and `__proto__`-like keys are
 * errors, nesting is capped), then the plugin.toml schema with defaults applied. Pure.
 */
export function parseManifest(bytes: Uint8Array): ParsedManifest {
  let text: string;
  try {
    text = decoder.decode(bytes);
  } catch {
    return { manifest: null, declaredId: null, errors: ['the file is not valid UTF-8; save it as UTF-8'] };
  }
  if (text.includes('\u0000')) return { manifest: null, declaredId: null, errors: ['the file contains a NUL byte; it is not a text file'] };
  // The common subset of TOML is parsed by hand (the same data, a third of the time); anything
  // else, every invalid document included, gets smol-toml's verdict and wording.
  let doc = tomlFastPath ? parseTomlFast(text) : null;
  if (doc === null) {
    try {
      doc = parse(text, { maxDepth: MAX_MANIFEST_DEPTH, unsafeKeyBehaviour: 'throw' }) as Record<string, unknown>;
    } catch (error) {
      const e = error as { message?: unknown; line?: unknown; column?: unknown };
      const first = String(e.message ?? error)
        .split('\n', 1)[0]!
        .replace(/^Invalid TOML document: /, '');
      const where = typeof e.line === 'number' && typeof e.column === 'number' ? `line ${e.line}, column ${e.column}: ` : '';
      return { manifest: null, declaredId: null, errors: [`${where}TOML syntax error: ${first}`] };
    }
  }
  const declaredId = typeof doc.id === 'string' ? doc.id : null;
  // The manifest rules have one source: the zod schema in @trellis/sdk.
  const result = PluginManifestSchema.safeParse(doc);
  if (!result.success) {
    return { manifest: null, declaredId, errors: formatIssues(result.error).map(issueToString) };
  }
  const manifest = ownedManifest(result.data);
  // The schema fixes the shape everywhere except the free-form JSON Schemas; only
  // there can dotted keys or table headers nest without bound, so only there is depth checked.
  const deep = tooDeepFreeForm(manifest);
  if (deep !== null) {
    return { manifest: null, declaredId, errors: [`${deep}: nests deeper than ${MAX_MANIFEST_DEPTH} levels; flatten it`] };
  }
  return { manifest, declaredId, errors: [] };
}

/**
 * Whether a free-form JSON Schema nests more than {@link MAX_MANIFEST_DEPTH} levels below the
 * schema itself (dotted keys and table headers can nest far deeper than the parser's inline limit).
 */
const tooDeep = (schema: unknown): boolean => nestsDeeperThan(schema, MAX_MANIFEST_DEPTH + 1);

/** The key path of the first free-form JSON Schema that nests too deep, or null (a plain loop: no per-manifest list or closure). */
function tooDeepFreeForm(m: PluginManifest): string | null {
  if (m.config_schema !== undefined && tooDeep(m.config_schema)) return 'config_schema';
  const tools = m.tools;
  for (let i = 0; i < tools.length; i += 1) {
    const tool = tools[i]!;
    if (tooDeep(tool.input_schema)) return `tools[${i}].input_schema`;
    if (tool.output_schema !== undefined && tooDeep(tool.output_schema)) return `tools[${i}].output_schema`;
  }
  return null;
}
