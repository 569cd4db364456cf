import { createHash } from 'node:crypto';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { parse } from 'smol-toml';
import { describe, expect, it } from 'vitest';
import { PluginManifestSchema, pluginManifestJsonSchema } from '@trellis/sdk/schema';
import { stableStringify } from '../src/index.ts';
import { parseManifest } from '../src/parse.ts';
import { validateManifestFast, withPlainSchemas } from '../src/validateManifestFast.ts';

/** Every detail zod's output has: key order, prototypes (plain or null), types, values. */
function dump(value: unknown): string {
  if (value === null || typeof value !== 'object') return `${typeof value}:${String(value)}`;
  if (Array.isArray(value)) return `[${value.map(dump).join(',')}]`;
  const proto = Object.getPrototypeOf(value);
  const tag = proto === null ? 'null-proto' : proto === Object.prototype ? 'object' : (proto as { constructor?: { name?: string } }).constructor?.name ?? '?';
  return `${tag}{${Reflect.ownKeys(value)
    .map((k) => `${String(k)}=${dump((value as Record<string | symbol, unknown>)[k])}`)
    .join(',')}}`;
}

const BASE = `schema_version = 1
id = "git-helper"
name = "Git helper"
version = "0.3.0"
kind = "toolset"
`;
const RUNTIME = `
[runtime]
type = "process"
command = "python3"
args = ["main.py", "--serve"]
`;
const TOOL = `
[[tools]]
name = "status"
description = "Show git status"
input_schema = { type = "object", properties = { short = { type = "boolean" } } }
`;

// [label, TOML text]. The first group is the shape the fast check takes; the rest it must either
// take with zod's exact result or leave to zod.
const CASES: ReadonlyArray<readonly [string, string]> = [
  ['minimal', BASE],
  ['with runtime and tool', BASE + RUNTIME + TOOL],
  ['every top-level field', `${BASE}description = "d"\nside_effects = true\ncapabilities = ["fs.read", "net.outbound"]\nsandbox = "read-only-fs"\nrequires_env = ["TOKEN", "_X1"]\nrequires_commands = ["python3", "g++"]\nprofile = "full"\nrequired = true\nconfig_schema = { type = "object", "1" = 2, b = { c = [1, { d = 2 }] } }\n${RUNTIME}${TOOL}`],
  ['process runtime, every field', `${BASE}[runtime]\ntype = "process"\ncommand = "./run"\nargs = []\ntimeout_seconds = 0.5\nenv = { A_1 = "x", B = "" }\nrestart_on_crash = false\nmax_restarts = 100\nrestart_delay_seconds = 0\nhealth_check_interval_seconds = 86400\nmax_memory_mb = 512\n`],
  ['script runtime', `${BASE}[runtime]\ntype = "script"\ncommand = "node"\nmax_output_bytes = 10\nmax_memory_mb = 1\n`],
  ['tool, every field', `${BASE}[[tools]]\nname = "a_b-C"\ndescription = "x"\noutput_schema = { type = "string" }\ntags = ["t"]\nside_effects = false\nidempotent = true\ntimeout_seconds = 86400\napproval = "ask"\n[[tools]]\nname = "two"\ndescription = "y"\n`],
  ['no tools array written', `${BASE}tools = []\n`],
  ['semver with build', `${BASE.replace('0.3.0', '1.2.3-rc.1')}`],
  ['schema_version written 1.0 (TOML gives the number 1)', BASE.replace('schema_version = 1', 'schema_version = 1.0')],
  // Left to zod (valid or not): the result must be zod's.
  ['http runtime', `${BASE}[runtime]\ntype = "http"\nendpoint = "https://example.com/x"\n`],
  ['unknown key', `${BASE}extra = 1\n`],
  ['unknown runtime key', `${BASE}[runtime]\ntype = "process"\ncommand = "x"\nendpoint = "y"\n`],
  ['unknown tool key', `${BASE}[[tools]]\nname = "a"\ndescription = "b"\nwhat = 1\n`],
  ['bad id', BASE.replace('git-helper', 'Git_Helper')],
  ['id too long', BASE.replace('git-helper', 'a'.repeat(65))],
  ['empty name', BASE.replace('"Git helper"', '""')],
  ['long name', BASE.replace('"Git helper"', `"${'n'.repeat(129)}"`)],
  ['bad version', BASE.replace('0.3.0', '1.2')],
  ['bad kind', BASE.replace('toolset', 'toolkit')],
  ['schema_version 2', BASE.replace('schema_version = 1', 'schema_version = 2')],
  ['schema_version string', BASE.replace('schema_version = 1', 'schema_version = "1"')],
  ['missing id', BASE.replace('id = "git-helper"\n', '')],
  ['long description', `${BASE}description = "${'d'.repeat(4097)}"\n`],
  ['side_effects string', `${BASE}side_effects = "yes"\n`],
  ['bad capability', `${BASE}capabilities = ["fs"]\n`],
  ['capability not a string', `${BASE}capabilities = [1]\n`],
  ['bad sandbox', `${BASE}sandbox = "none"\n`],
  ['bad env name', `${BASE}requires_env = ["1X"]\n`],
  ['bad command name', `${BASE}requires_commands = ["/usr/bin/x"]\n`],
  ['bad profile', `${BASE}profile = "huge"\n`],
  ['required string', `${BASE}required = "no"\n`],
  ['runtime not a table', `${BASE}runtime = "process"\n`],
  ['runtime without type', `${BASE}[runtime]\ncommand = "x"\n`],
  ['empty command', `${BASE}[runtime]\ntype = "process"\ncommand = ""\n`],
  ['args not strings', `${BASE}[runtime]\ntype = "process"\ncommand = "x"\nargs = [1]\n`],
  ['zero timeout', `${BASE}[runtime]\ntype = "process"\ncommand = "x"\ntimeout_seconds = 0\n`],
  ['huge timeout', `${BASE}[runtime]\ntype = "process"\ncommand = "x"\ntimeout_seconds = 86401\n`],
  ['inf timeout', `${BASE}[runtime]\ntype = "process"\ncommand = "x"\ntimeout_seconds = inf\n`],
  ['nan timeout', `${BASE}[runtime]\ntype = "process"\ncommand = "x"\ntimeout_seconds = nan\n`],
  ['bad env key', `${BASE}[runtime]\ntype = "process"\ncommand = "x"\nenv = { 1A = "x" }\n`],
  ['numeric env key', `${BASE}[runtime]\ntype = "process"\ncommand = "x"\nenv = { 12 = "x" }\n`],
  ['env value not a string', `${BASE}[runtime]\ntype = "process"\ncommand = "x"\nenv = { A = 1 }\n`],
  ['fractional max_restarts', `${BASE}[runtime]\ntype = "process"\ncommand = "x"\nmax_restarts = 1.5\n`],
  ['max_restarts 101', `${BASE}[runtime]\ntype = "process"\ncommand = "x"\nmax_restarts = 101\n`],
  ['negative delay', `${BASE}[runtime]\ntype = "process"\ncommand = "x"\nrestart_delay_seconds = -1\n`],
  ['zero memory', `${BASE}[runtime]\ntype = "script"\ncommand = "x"\nmax_memory_mb = 0\n`],
  ['huge integer memory', `${BASE}[runtime]\ntype = "script"\ncommand = "x"\nmax_memory_mb = 1e20\n`],
  ['zero max_output_bytes', `${BASE}[runtime]\ntype = "script"\ncommand = "x"\nmax_output_bytes = 0\n`],
  ['restart_on_crash string', `${BASE}[runtime]\ntype = "process"\ncommand = "x"\nrestart_on_crash = "yes"\n`],
  ['tools not an array', `${BASE}[tools]\nname = "a"\n`],
  ['bad tool name', `${BASE}[[tools]]\nname = "1a"\ndescription = "b"\n`],
  ['tool without description', `${BASE}[[tools]]\nname = "a"\n`],
  ['input_schema not a table', `${BASE}[[tools]]\nname = "a"\ndescription = "b"\ninput_schema = "x"\n`],
  ['input_schema a date', `${BASE}[[tools]]\nname = "a"\ndescription = "b"\ninput_schema = 1979-05-27\n`],
  ['bad approval', `${BASE}[[tools]]\nname = "a"\ndescription = "b"\napproval = "never"\n`],
  ['tool timeout zero', `${BASE}[[tools]]\nname = "a"\ndescription = "b"\ntimeout_seconds = 0\n`],
  ['tags not strings', `${BASE}[[tools]]\nname = "a"\ndescription = "b"\ntags = [true]\n`],
  ['config_schema not a table', `${BASE}config_schema = [1]\n`],
  ['a date value', `${BASE}description = 1979-05-27T07:32:00Z\n`],
];

describe('validateManifestFast', () => {
  it('returns exactly what the zod schema returns, or leaves the document to zod', () => {
    const outcomes = CASES.map(([label, text]) => {
      const doc = parse(text);
      const fast = validateManifestFast(doc);
      const zod = PluginManifestSchema.safeParse(parse(text));
      const same = fast === null || (zod.success && dump(fast) === dump(withPlainSchemas(zod.data)));
      return { label, fast: fast !== null, zod: zod.success, same };
    });
    expect(outcomes.filter((o) => !o.same)).toEqual([]);
    // The common valid shapes take the fast path; everything after them goes to zod.
    expect(outcomes.filter((o) => o.fast).map((o) => o.label)).toEqual(CASES.slice(0, 9).map(([label]) => label));
    expect(outcomes.filter((o) => o.zod).map((o) => o.label)).toEqual([...CASES.slice(0, 9).map(([label]) => label), 'http runtime']);
  });

  it('returns a deep-frozen manifest, so defaults shared between manifests cannot leak a change', () => {
    const a = validateManifestFast(parse(BASE + TOOL.replace(/input_schema.*\n/, '')))!;
    const b = validateManifestFast(parse(BASE + TOOL.replace(/input_schema.*\n/, '')))!;
    expect(a.tools[0]!.input_schema).toEqual({ type: 'object' });
    expect(a.requires_env).toBe(b.requires_env);
    const frozen = (value: unknown): boolean =>
      value === null || typeof value !== 'object' || (Object.isFrozen(value) && Object.values(value).every(frozen));
    expect(frozen(a)).toBe(true);
    expect(() => (a.requires_env as string[]).push('X')).toThrow(TypeError);
    const withSchema = validateManifestFast(parse(BASE + TOOL))!;
    expect(frozen(withSchema)).toBe(true);
    expect(Object.getPrototypeOf(withSchema.tools[0]!.input_schema)).toBe(Object.prototype);
  });

  it('copies the rules of the plugin.toml schema it was written against (update validateManifestFast.ts with the schema)', () => {
    const digest = createHash('sha256').update(stableStringify(pluginManifestJsonSchema())).digest('hex');
    expect(digest).toBe('3ffb10c16e0c0265e1abea52a82a7902ac6672397424f5b9dc78ddd0c9460e5e');
  });
});

describe('what a manifest keeps alive', () => {
  it('keeps its own strings, not the whole document text they were cut from', () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    // 400 manifests, each 128 KiB of comment around a long description and tool text: kept as
    // slices of the document, the manifests would hold ~50 MB of text; as copies, a few hundred KB.
    const padding = `# ${'x'.repeat(1024)}\n`.repeat(128);
    const manifests: unknown[] = [];
    gc();
    const before = process.memoryUsage().heapUsed;
    for (let i = 0; i < 400; i += 1) {
      const text = `${padding}schema_version = 1\nid = "kept-strings-${i}"\nname = "A plugin with a long name ${i}"\nversion = "1.0.0"\nkind = "toolset"\ndescription = "A description long enough to be kept as a slice of the document ${i}"\ncapabilities = ["fs.read.everything"]\n[[tools]]\nname = "lookup"\ndescription = "Looks something up in a long enough sentence ${i}"\ninput_schema = { type = "object", description = "an input schema with a long description ${i}" }\n${i % 2 === 0 ? `[runtime]\ntype = "http"\nendpoint = "http://127.0.0.1:8080/a/long/enough/path/${i}"\n` : ''}${padding}`;
      const parsed = parseManifest(new TextEncoder().encode(text));
      expect(parsed.errors).toEqual([]);
      manifests.push(parsed.manifest);
    }
    gc();
    const kept = process.memoryUsage().heapUsed - before;
    expect(manifests).toHaveLength(400);
    // Half went through zod (an http runtime is not the fast check's shape): the same holds there.
    expect(manifests.filter((m) => (m as { runtime?: { type: string } }).runtime?.type === 'http')).toHaveLength(200);
    expect(kept).toBeLessThan(10 * 1024 * 1024);
  });
});

describe('the depth limit of free-form schemas', () => {
  it('admits a schema with objects 32 levels below it and refuses one with 33', () => {
    const withKeys = (n: number): Uint8Array =>
      new TextEncoder().encode(
        `schema_version = 1\nid = "deep"\nname = "Deep"\nversion = "1.0.0"\nkind = "toolset"\n[[tools]]\nname = "t"\ndescription = "d"\n[tools.input_schema]\n${Array.from({ length: n }, (_, i) => `k${i}`).join('.')} = 1\n`,
      );
    expect(parseManifest(withKeys(33)).errors).toEqual([]);
    expect(parseManifest(withKeys(34)).errors).toEqual(['tools[0].input_schema: nests deeper than 32 levels; flatten it']);
  });
});
