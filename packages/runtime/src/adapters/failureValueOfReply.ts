/**
 * What a plugin's failed reply (`success: false`) says went wrong, from every shape the docs
 * accept: `error` (a string or `{ code, message }`), else `message`, else `data` (the seed-style
 * `{"success": false, "data": {…}}`, e.g. `{"stderr": "fatal: not a git repository"}`). A `data`
 * object with a string `error`, `message` or `stderr` gives that string; any other `data` is shown
 * whole. `undefined` when the reply says nothing at all.
 */
export function failureValueOfReply(reply: { readonly error?: unknown; readonly message?: unknown; readonly data?: unknown }): unknown {
  if (reply.error !== undefined && reply.error !== null && reply.error !== '') return reply.error;
  if (typeof reply.message === 'string' && reply.message !== '') return reply.message;
  const data = reply.data;
  if (data === undefined || data === null || data === '') return undefined;
  if (typeof data === 'object' && !Array.isArray(data)) {
    const fields = data as Readonly<Record<string, unknown>>;
    for (const key of ['error', 'message', 'stderr'] as const) {
      const value = fields[key];
      if (typeof value === 'string' && value.trim() !== '') return value.trim();
    }
  }
  return data;
}
