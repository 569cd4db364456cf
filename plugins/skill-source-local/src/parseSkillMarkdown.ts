import { ERROR_CODES } from '@trellis/sdk';
import { formatIssues } from '@trellis/sdk/internal';
import { parseDocument } from 'yaml';
import { z } from 'zod';
import { MAX_INPUT_SCHEMA_DEPTH } from './compileInputSchema.ts';
import type { Reason } from './Reason.ts';

/** Skill names: what `run { name }` takes. Letters, digits, `.`, `_`, `-`; at most 64 characters. */
export const SKILL_NAME_PATTERN = /^[A-Za-z0-9](?:[A-Za-z0-9._-]{0,62}[A-Za-z0-9])?$/;

const ScriptPathSchema = z
  .string()
  .min(1, 'must be a non-empty path relative to the skill folder')
  .refine((p) => !p.includes('\0'), 'must not contain a NUL byte')
  .refine((p) => !p.startsWith('/'), 'must be relative to the skill folder, not absolute');

/** The YAML front matter of a SKILL.md. Other keys (license, metadata, …) are allowed and ignored. */
export const SkillFrontMatterSchema = z.looseObject({
  name: z
    .string({
      error: (issue) =>
        issue.input === undefined ? 'is required: the name `run` and `read` take, e.g. `name: pdf-report`' : 'must be a string',
    })
    .regex(SKILL_NAME_PATTERN, 'must be 1–64 letters, digits, ".", "_" or "-", starting and ending with a letter or digit'),
  description: z
    .string({
      error: (issue) =>
        issue.input === undefined ? 'is required: one line saying what the skill does and when to use it' : 'must be a string',
    })
    .trim()
    .min(1, 'must say what the skill does and when to use it')
    .max(1024, 'must be at most 1024 characters'),
  scripts: z
    .union([
      z.array(ScriptPathSchema),
      z.record(z.string().regex(SKILL_NAME_PATTERN, 'script names follow the skill name rules'), ScriptPathSchema),
    ])
    .optional(),
  input_schema: z
    .record(z.string(), z.unknown(), { error: 'must be a JSON Schema object, e.g. `{ type: object, properties: { … } }`' })
    .optional(),
});

/** One script a skill declares: the name `run { script }` takes and its path relative to the skill folder. */
export interface DeclaredScript {
  readonly name: string;
  readonly path: string;
}

/** A SKILL.md split and checked. */
export interface ParsedSkillMarkdown {
  readonly name: string;
  readonly description: string;
  readonly scripts: readonly DeclaredScript[];
  readonly inputSchema: Readonly<Record<string, unknown>> | undefined;
  /** The Markdown after the front matter. */
  readonly body: string;
}

/** Result of `parseSkillMarkdown`: a value or the reasons it is not one. */
export type ParseSkillMarkdownResult =
  { readonly ok: true; readonly value: ParsedSkillMarkdown } | { readonly ok: false; readonly errors: readonly Reason[] };

/** How many alias expansions front matter may need; a real skill needs a handful at most. */
const MAX_ALIAS_COUNT = 50;

/**
 * Splits a SKILL.md into YAML front matter and Markdown body and checks the front matter. Errors
 * name `file`, the line (YAML syntax) or the key, and say what to write instead.
 */
export function parseSkillMarkdown(options: { readonly text: string; readonly file: string }): ParseSkillMarkdownResult {
  const { file } = options;
  const invalid = (message: string): ParseSkillMarkdownResult => ({
    ok: false,
    errors: [{ code: ERROR_CODES.MANIFEST_INVALID, message: `${file}: ${message}` }],
  });
  const text = options.text.startsWith('\uFEFF') ? options.text.slice(1) : options.text;
  if (text.includes('\0')) return invalid('contains a NUL byte; SKILL.md must be UTF-8 text');
  const lines = text.split('\n');
  if ((lines[0] ?? '').trimEnd() !== '---') {
    return invalid(
      'has no front matter: the first line must be `---`, followed by YAML with `name` and `description`, closed by another `---` line',
    );
  }
  const end = lines.findIndex((line, i) => i > 0 && (line.trimEnd() === '---' || line.trimEnd() === '...'));
  if (end === -1) return invalid('front matter is not closed: add a line `---` after the YAML');

  const yamlText = lines.slice(1, end).join('\n');
  const doc = parseDocument(yamlText, { prettyErrors: true, uniqueKeys: true });
  if (doc.errors.length > 0) {
    const messages = doc.errors.map((e) => {
      // linePos is 1-based within the YAML; the YAML starts on the file's second line.
      const line = e.linePos?.[0]?.line;
      const where = line === undefined ? '' : ` (line ${line + 1})`;
      // The parser recurses per level: absurd nesting (an input_schema thousands deep) overflows the stack, once per open level.
      if (e.message.includes('Maximum call stack size exceeded')) {
        return `${file}: front matter nests too deeply to read${where}; an input_schema may nest at most ${MAX_INPUT_SCHEMA_DEPTH} levels, flatten it`;
      }
      return `${file}: front matter is not valid YAML${where}: ${(e.message.split('\n')[0] ?? '').replace(/ at line \d+, column \d+:?$/, '')}`;
    });
    return { ok: false, errors: [...new Set(messages)].map((message) => ({ code: ERROR_CODES.MANIFEST_INVALID, message })) };
  }
  let data: unknown;
  try {
    // Aliases are expanded here; the yaml package refuses an expansion past maxAliasCount (an
    // alias bomb) by throwing, which must refuse this skill alone, never the whole library.
    data = doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
  } catch (error) {
    const text = error instanceof Error ? error.message : String(error);
    if (/alias/i.test(text)) {
      return invalid(
        `front matter expands YAML aliases (*name) more than ${MAX_ALIAS_COUNT} times, as an alias bomb does; write the values out instead of repeating anchors`,
      );
    }
    if (text.includes('Maximum call stack size exceeded')) {
      return invalid(
        `front matter nests too deeply to read; an input_schema may nest at most ${MAX_INPUT_SCHEMA_DEPTH} levels, flatten it`,
      );
    }
    return invalid(`front matter could not be read: ${text.split('\n')[0] ?? ''}`);
  }
  if (data === null || typeof data !== 'object' || Array.isArray(data)) {
    return invalid('front matter must be a YAML mapping with at least `name` and `description`');
  }
  const parsed = SkillFrontMatterSchema.safeParse(data);
  if (!parsed.success) {
    return {
      ok: false,
      errors: formatIssues(parsed.error).map((issue) => ({
        code: ERROR_CODES.MANIFEST_INVALID,
        message: `${file}: front matter key \`${issue.path === '' ? '(root)' : issue.path}\`: ${issue.message}`,
      })),
    };
  }
  const fm = parsed.data;
  const scripts: DeclaredScript[] =
    fm.scripts === undefined
      ? []
      : Array.isArray(fm.scripts)
        ? fm.scripts.map((path) => ({ name: path, path }))
        : Object.entries(fm.scripts).map(([name, path]) => ({ name, path }));
  const seen = new Set<string>();
  for (const s of scripts) {
    if (seen.has(s.name)) return invalid(`front matter key \`scripts\`: the script ${JSON.stringify(s.name)} is listed twice`);
    seen.add(s.name);
  }
  return {
    ok: true,
    value: {
      name: fm.name,
      description: fm.description,
      scripts,
      inputSchema: fm.input_schema,
      body: lines
        .slice(end + 1)
        .join('\n')
        .replace(/^\n+/, ''),
    },
  };
}
