import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parseToolOverrides } from './overrides.ts';

describe('parseToolOverrides', () => {
  it('reads quoted and nested tables, dotted tool names included', () => {
    const text = `
["core-fs.read"]
description = "Read a UTF-8 text file from the workspace."
tags = ["files", "read"]
examples = [{ description = "the readme", input = { path = "README.md" } }]

[git-helper.status]
tags = ["scm"]

["mcp.github.create_issue"]
description = "Open a GitHub issue."
`;
    expect(parseToolOverrides(text)).toEqual({
      value: {
        'core-fs.read': {
          description: 'Read a UTF-8 text file from the workspace.',
          tags: ['files', 'read'],
          examples: [{ description: 'the readme', input: { path: 'README.md' } }],
        },
        'git-helper.status': { tags: ['scm'] },
        'mcp.github.create_issue': { description: 'Open a GitHub issue.' },
      },
      warnings: [],
      errors: [],
    });
  });

  it('accepts the committed config/tools.toml', () => {
    const path = fileURLToPath(new URL('../../../config/tools.toml', import.meta.url));
    expect(parseToolOverrides(readFileSync(path, 'utf8'), { file: 'config/tools.toml' }).errors).toEqual([]);
  });

  it('drops bad entries with precise errors and keeps the good ones', () => {
    const text = `
top = 1

["core-fs.read"]
description = ""
tags = "files"

["core-fs.write"]
description = "ok"
colour = "blue"

["core-fs.stat"]
examples = [{ description = "x" }, { description = "y", input = {} }]

[lonely]
description = "no plugin"

[core-fs.glob.deeper]
nonsense = true
`;
    expect(parseToolOverrides(text, { file: 'tools.toml' })).toEqual({
      value: { 'core-fs.write': { description: 'ok' } },
      warnings: [
        {
          code: 'UNKNOWN_KEY',
          message: 'tools.toml: core-fs.write.colour: unknown key; a tool override may set only description, tags and examples',
        },
      ],
      errors: [
        {
          code: 'CONFIG_SCHEMA',
          message: 'tools.toml: top: expected a table of overrides for a tool, e.g. ["core-fs.read"] with description, tags or examples',
        },
        { code: 'CONFIG_SCHEMA', message: 'tools.toml: core-fs.read.description: expected a non-empty string of at most 4096 characters' },
        { code: 'CONFIG_SCHEMA', message: 'tools.toml: core-fs.read.tags: expected an array of non-empty strings, e.g. tags = ["files"]' },
        {
          code: 'CONFIG_SCHEMA',
          message: 'tools.toml: core-fs.stat.examples.0: expected { description = "…", input = { … } } and nothing else',
        },
        {
          code: 'CONFIG_SCHEMA',
          message: 'tools.toml: lonely: not a fully qualified tool name; write the table as ["<plugin-id>.<tool>"]',
        },
        {
          code: 'CONFIG_SCHEMA',
          message: 'tools.toml: core-fs.glob.deeper.nonsense: unknown key; a tool override may set only description, tags and examples',
        },
      ],
    });
  });

  it('reports TOML syntax errors with line and column', () => {
    expect(parseToolOverrides('["core-fs.read"]\ndescription = \n')).toEqual({
      value: {},
      warnings: [],
      errors: [
        { code: 'TOML_SYNTAX', message: 'config/tools.toml: invalid TOML at line 2, column 15: Invalid TOML document: invalid value' },
      ],
    });
  });

  it('refuses prototype-polluting keys', () => {
    const result = parseToolOverrides('["__proto__"]\ndescription = "x"\n[a.constructor]\ndescription = "y"\n');
    expect(result.errors).toEqual([
      { code: 'FORBIDDEN_KEY', message: 'config/tools.toml: __proto__: the key "__proto__" is not allowed; remove it' },
      { code: 'FORBIDDEN_KEY', message: 'config/tools.toml: a.constructor: the key "constructor" is not allowed; remove it' },
    ]);
    expect(result.value).toEqual({});
    expect(({} as Record<string, unknown>).description).toBeUndefined();
  });

  it('warns about overrides for tools nobody declares, with a suggestion', () => {
    const result = parseToolOverrides('["core-fs.raed"]\ndescription = "x"\n["core-fs.read"]\ntags = []\n', {
      knownTools: ['core-fs.read', 'core-fs.write'],
    });
    expect(result).toEqual({
      value: { 'core-fs.raed': { description: 'x' }, 'core-fs.read': { tags: [] } },
      warnings: [
        {
          code: 'UNKNOWN_KEY',
          message: 'config/tools.toml: ["core-fs.raed"]: no tool has this name; did you mean "core-fs.read"? The override is ignored.',
        },
      ],
      errors: [],
    });
  });
});
