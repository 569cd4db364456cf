import { mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createProcessImplementation } from '../../src/adapters/createProcessImplementation.ts';
import type { ProcessRuntime } from '../../src/adapters/createProcessImplementation.ts';
import { failureValueOfReply } from '../../src/adapters/failureValueOfReply.ts';
import { callOf, manifestOf, recordingLogger } from './helpers.ts';

// A seed-style plugin (reference design 003): failures carry their text in `data`.
const SEED_PLUGIN = `
import json, sys
for line in sys.stdin:
    req = json.loads(line)
    kind = req["type"]
    if kind == "initialize":
        reply = {"type": "initialize_response", "success": True}
    elif kind == "get_tools":
        reply = {"type": "get_tools_response", "tools": [{"name": "status", "description": "git status", "parameters": {"type": "object"}}]}
    elif kind == "call_tool":
        shape = req["arguments"].get("shape")
        if shape == "data":
            reply = {"type": "call_tool_response", "success": False, "data": {"stderr": "fatal: not a git repository (or any of the parent directories): .git", "code": 128}}
        elif shape == "message":
            reply = {"type": "call_tool_response", "success": False, "message": "the repository is locked"}
        else:
            reply = {"type": "call_tool_response", "success": False, "error": "plain error text"}
    elif kind == "shutdown":
        break
    else:
        reply = {"type": "error", "error": "unknown request"}
    if "id" in req:
        reply["id"] = req["id"]
    sys.stdout.write(json.dumps(reply) + "\\n")
    sys.stdout.flush()
`;

const dirs: string[] = [];
const impls: Array<{ dispose(): Promise<void> }> = [];
afterEach(async () => {
  for (const impl of impls.splice(0)) await impl.dispose();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('a failed reply keeps its text', () => {
  it('from error, message, or data on success: false (a real Python process plugin)', async () => {
    const dir = realpathSync(mkdtempSync(join(tmpdir(), 'trellis-failure-text-')));
    dirs.push(dir);
    writeFileSync(join(dir, 'plugin.py'), SEED_PLUGIN);
    const runtime: ProcessRuntime = {
      type: 'process',
      command: 'python3',
      args: ['plugin.py'],
      timeout_seconds: 10,
      env: {},
      restart_on_crash: false,
      max_restarts: 0,
      restart_delay_seconds: 0,
      health_check_interval_seconds: 0,
    };
    const impl = createProcessImplementation({
      pluginId: 'seed',
      manifest: manifestOf({ id: 'seed', runtime }),
      pluginDir: dir,
      runtime,
      config: {},
      env: process.env,
      logger: recordingLogger(),
    });
    impls.push(impl);
    const failure = async (shape: string) => {
      const outcome = await impl.call(callOf('status', { shape }));
      expect(outcome.ok).toBe(false);
      return (outcome as { error: { code: string; message: string } }).error;
    };
    expect(await failure('data')).toMatchObject({
      code: 'TOOL_FAILED',
      message: 'seed.status failed: fatal: not a git repository (or any of the parent directories): .git',
    });
    expect(await failure('message')).toMatchObject({ code: 'TOOL_FAILED', message: 'seed.status failed: the repository is locked' });
    expect(await failure('error')).toMatchObject({ code: 'TOOL_FAILED', message: 'seed.status failed: plain error text' });
  });

  it('picks the text from each shape the docs accept', () => {
    expect(failureValueOfReply({ error: { code: 'NOT_FOUND', message: 'x' } })).toEqual({ code: 'NOT_FOUND', message: 'x' });
    expect(failureValueOfReply({ error: '', message: 'from message' })).toBe('from message');
    expect(failureValueOfReply({ data: { message: 'from data.message' } })).toBe('from data.message');
    expect(failureValueOfReply({ data: { error: 'from data.error', stderr: 'ignored' } })).toBe('from data.error');
    expect(failureValueOfReply({ data: { exit: 2 } })).toEqual({ exit: 2 });
    expect(failureValueOfReply({ data: 'text data' })).toBe('text data');
    expect(failureValueOfReply({})).toBeUndefined();
  });
});
