import type { z } from 'zod';

/**
 * Schema messages in the words of a TOML user ("must be a table", "must be at least 1"). They
 * describe the expected shape and the received *type*, never the received value, so no secret
 * can leak through them. Returns `undefined` to keep zod's (or the schema's own) message.
 */
export function tomlIssueMessage(issue: z.core.$ZodRawIssue): string | undefined {
  switch (issue.code) {
    case 'invalid_type': {
      const input = issue.input;
      if (input === undefined) return `is required`;
      const expected = String(issue.expected);
      if (typeof input === 'number' && !Number.isFinite(input))
        return `must be a finite number, not ${Number.isNaN(input) ? 'nan' : input > 0 ? 'inf' : '-inf'}`;
      if (expected === 'int' && typeof input === 'number') return 'must be a whole number';
      return `must be ${TYPE_WORDS[expected] ?? expected}, not ${describeType(input)}`;
    }
    case 'too_small': {
      const min = String(issue.minimum);
      if (issue.origin === 'string') return issue.minimum === 1 ? 'must not be empty' : `must be at least ${min} characters long`;
      if (issue.origin === 'array') return `must have at least ${min} item${min === '1' ? '' : 's'}`;
      return issue.inclusive === false ? `must be greater than ${min}` : `must be at least ${min}`;
    }
    case 'too_big': {
      const max = String(issue.maximum);
      if (issue.origin === 'string') return `must be at most ${max} characters long`;
      if (issue.origin === 'array') return `must have at most ${max} items`;
      return issue.inclusive === false ? `must be less than ${max}` : `must be at most ${max}`;
    }
    case 'invalid_key': {
      const inner = (issue as { issues?: ReadonlyArray<{ message?: string }> }).issues?.[0]?.message;
      return `is not a valid key here${inner === undefined ? '' : `: ${inner}`}`;
    }
    default:
      return undefined;
  }
}

const TYPE_WORDS: Record<string, string> = {
  string: 'a string',
  number: 'a number',
  int: 'a whole number',
  boolean: 'true or false',
  array: 'an array',
  object: 'a table',
  record: 'a table',
};

function describeType(input: unknown): string {
  if (Array.isArray(input)) return 'an array';
  if (input instanceof Date) return 'a date';
  switch (typeof input) {
    case 'string':
      return 'a string';
    case 'number':
      return 'a number';
    case 'boolean':
      return 'a boolean';
    case 'object':
      return input === null ? 'nothing' : 'a table';
    default:
      return typeof input;
  }
}
