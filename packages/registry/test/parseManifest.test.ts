import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { parseManifest } from '../src/parse.ts';

describe('parseManifest', () => {
  it('returns plain objects and arrays, also in free-form schemas (no parser tables leak out)', () => {
    const text =
      'schema_version = 1\nid = "plain"\nname = "Plain"\nversion = "1.0.0"\nkind = "toolset"\n[[tools]]\nname = "t"\ndescription = "d"\n[tools.input_schema]\ntype = "object"\n[tools.input_schema.properties.q]\ntype = "string"\n';
    const { manifest, errors } = parseManifest(new TextEncoder().encode(text));
    expect(errors).toEqual([]);
    const schema = manifest!.tools[0]!.input_schema as Record<string, unknown>;
    expect(Object.getPrototypeOf(schema)).toBe(Object.prototype);
    expect(Object.getPrototypeOf(schema.properties)).toBe(Object.prototype);
    expect(schema).toEqual({ type: 'object', properties: { q: { type: 'string' } } });
  });

  it('reports schema errors as key.path: message, with the declared id kept', () => {
    const text = 'schema_version = 1\nid = "bad"\nname = ""\nversion = "one"\nkind = "toolset"\n';
    const parsed = parseManifest(new TextEncoder().encode(text));
    expect(parsed.manifest).toBeNull();
    expect(parsed.declaredId).toBe('bad');
    expect(parsed.errors.map((e) => e.split(':')[0])).toEqual(['name', 'version']);
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
