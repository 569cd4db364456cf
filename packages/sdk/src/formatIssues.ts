import type { z } from 'zod';

/** One schema problem: where it is and what is wrong. */
export interface SchemaIssue {
  /** Dotted key path, e.g. `plugins.entries.telegram.enabled`; empty for the document itself. */
  readonly path: string;
  readonly message: string;
}

/** Renders a key path the way TOML users write it: `a.b[2].c`, quoting keys that need it. */
export function formatKeyPath(path: ReadonlyArray<PropertyKey>): string {
  let out = '';
  for (const part of path) {
    if (typeof part === 'number') out += `[${part}]`;
    else {
      const key = String(part);
      const safe = /^[A-Za-z0-9_-]+$/.test(key) ? key : JSON.stringify(key);
      out += out === '' ? safe : `.${safe}`;
    }
  }
  return out;
}

/** Turns zod issues into `key.path: message` pairs, one per problem. */
export function formatIssues(error: z.ZodError, prefix: ReadonlyArray<PropertyKey> = []): SchemaIssue[] {
  return error.issues.map((issue) => {
    const path = formatKeyPath([...prefix, ...issue.path]);
    return { path, message: describeIssue(issue) };
  });
}

function describeIssue(issue: z.core.$ZodIssue): string {
  switch (issue.code) {
    case 'unrecognized_keys':
      return `unknown key${issue.keys.length > 1 ? 's' : ''} ${issue.keys.map((k) => JSON.stringify(k)).join(', ')}`;
    case 'invalid_value':
      return `must be one of ${issue.values.map((v) => JSON.stringify(v)).join(', ')}`;
    default:
      return issue.message;
  }
}

/** `key.path: message`, or just the message for the document root. */
export function issueToString(issue: SchemaIssue): string {
  return issue.path === '' ? issue.message : `${issue.path}: ${issue.message}`;
}
