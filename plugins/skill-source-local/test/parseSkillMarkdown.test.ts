import { describe, expect, it } from 'vitest';
import { parseSkillMarkdown } from '../src/parseSkillMarkdown.ts';

const file = '/skills/demo/SKILL.md';

describe('parseSkillMarkdown', () => {
  it('splits front matter and body and reads scripts as a list or a map', () => {
    const list = parseSkillMarkdown({
      file,
      text: '---\nname: demo\ndescription: Demo skill.\nscripts: [main.py, tools/fmt.sh]\nlicense: MIT\ninput_schema:\n  type: object\n---\n\n# Demo\nBody.\n',
    });
    expect(list).toEqual({
      ok: true,
      value: {
        name: 'demo',
        description: 'Demo skill.',
        scripts: [
          { name: 'main.py', path: 'main.py' },
          { name: 'tools/fmt.sh', path: 'tools/fmt.sh' },
        ],
        inputSchema: { type: 'object' },
        body: '# Demo\nBody.\n',
      },
    });
    const map = parseSkillMarkdown({ file, text: '\uFEFF---\nname: demo\ndescription: d\nscripts:\n  main: run.mjs\n---\nx' });
    expect(map).toEqual({
      ok: true,
      value: { name: 'demo', description: 'd', scripts: [{ name: 'main', path: 'run.mjs' }], inputSchema: undefined, body: 'x' },
    });
  });

  it('names the file and says how to fix a missing or unclosed front matter', () => {
    expect(parseSkillMarkdown({ file, text: '# Just markdown\n' })).toEqual({
      ok: false,
      errors: [
        {
          code: 'MANIFEST_INVALID',
          message: `${file}: has no front matter: the first line must be \`---\`, followed by YAML with \`name\` and \`description\`, closed by another \`---\` line`,
        },
      ],
    });
    expect(parseSkillMarkdown({ file, text: '---\nname: x\n' })).toEqual({
      ok: false,
      errors: [{ code: 'MANIFEST_INVALID', message: `${file}: front matter is not closed: add a line \`---\` after the YAML` }],
    });
  });

  it('reports YAML syntax errors with the line in the file', () => {
    const result = parseSkillMarkdown({ file, text: '---\nname: demo\ndescription: [unclosed\n---\n' });
    expect(result).toEqual({
      ok: false,
      errors: [
        {
          code: 'MANIFEST_INVALID',
          message: `${file}: front matter is not valid YAML (line 3): Flow sequence in block collection must be sufficiently indented and end with a ]`,
        },
      ],
    });
  });

  it('names each bad key', () => {
    const result = parseSkillMarkdown({ file, text: '---\nname: "bad name!"\nscripts: [""]\ninput_schema: 3\n---\n' });
    expect(result).toEqual({
      ok: false,
      errors: [
        {
          code: 'MANIFEST_INVALID',
          message: `${file}: front matter key \`name\`: must be 1–64 letters, digits, ".", "_" or "-", starting and ending with a letter or digit`,
        },
        {
          code: 'MANIFEST_INVALID',
          message: `${file}: front matter key \`description\`: is required: one line saying what the skill does and when to use it`,
        },
        {
          code: 'MANIFEST_INVALID',
          message: `${file}: front matter key \`scripts[0]\`: must be a non-empty path relative to the skill folder`,
        },
        {
          code: 'MANIFEST_INVALID',
          message: `${file}: front matter key \`input_schema\`: must be a JSON Schema object, e.g. \`{ type: object, properties: { … } }\``,
        },
      ],
    });
  });

  it('refuses a front matter that is not a mapping, and duplicate keys', () => {
    expect(parseSkillMarkdown({ file, text: '---\n- a\n---\n' })).toEqual({
      ok: false,
      errors: [
        { code: 'MANIFEST_INVALID', message: `${file}: front matter must be a YAML mapping with at least \`name\` and \`description\`` },
      ],
    });
    const dup = parseSkillMarkdown({ file, text: '---\nname: a\nname: b\ndescription: d\n---\n' });
    expect(dup).toEqual({
      ok: false,
      errors: [{ code: 'MANIFEST_INVALID', message: `${file}: front matter is not valid YAML (line 3): Map keys must be unique` }],
    });
  });

  it('refuses front matter nested too deeply for the YAML parser with a message that says so', () => {
    const deep = `---\nname: deep\ndescription: d\ninput_schema: {a: ${'['.repeat(10_000)}${']'.repeat(10_000)}}\n---\n`;
    expect(parseSkillMarkdown({ file, text: deep })).toEqual({
      ok: false,
      errors: [
        {
          code: 'MANIFEST_INVALID',
          message: `${file}: front matter nests too deeply to read (line 4); an input_schema may nest at most 32 levels, flatten it`,
        },
      ],
    });
  });
});
