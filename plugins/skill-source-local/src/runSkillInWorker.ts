import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { ERROR_CODES, ToolError } from '@trellis/sdk';
import type { SkillRunRequest } from './runSkillProcess.ts';
import { formatSeconds, tailOf } from './skillOutput.ts';

// Plain CommonJS so it runs from a string (`eval: true`) in source, tests and the bundle alike.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
(async () => {
  let mod;
  try {
    mod = await import(workerData.url);
  } catch (error) {
    parentPort.postMessage({ kind: 'load', message: String((error && error.stack) || error) });
    return;
  }
  const run = typeof mod.run === 'function' ? mod.run : mod.default && typeof mod.default.run === 'function' ? mod.default.run : undefined;
  if (run === undefined) {
    parentPort.postMessage({ kind: 'no-run' });
    return;
  }
  let value;
  try {
    value = await run(workerData.input);
  } catch (error) {
    const message = error instanceof Error ? (error.stack || error.message) : String(error);
    parentPort.postMessage({ kind: 'threw', message });
    return;
  }
  let json;
  try {
    json = value === undefined ? 'null' : JSON.stringify(value);
  } catch (error) {
    parentPort.postMessage({ kind: 'serialize', message: String((error && error.message) || error) });
    return;
  }
  parentPort.postMessage({ kind: 'ok', json: json === undefined ? 'null' : json });
})();
`;

type WorkerReply = { kind: 'ok'; json: string } | { kind: 'load' | 'threw' | 'serialize'; message: string } | { kind: 'no-run' };

/** Lines of a stack trace quoted in an error message. */
const STACK_LINES = 6;

/**
 * Runs a trusted JavaScript skill in a worker thread: the worker imports the script and awaits its
 * exported `run(input)`. At the deadline (or when the call is aborted) the worker is terminated,
 * even mid-loop; heap limits come from `resourceLimits`. A throw, a crash or an exit without a
 * result is a `ToolError`, never an exception in the host.
 */
export function runSkillInWorker(request: SkillRunRequest, limits: { readonly maxMemoryMb: number }): Promise<unknown> {
  const label = `in-process skill ${JSON.stringify(request.skill)} (script ${JSON.stringify(request.script.name)})`;
  return new Promise((resolvePromise, rejectPromise) => {
    if (request.signal.aborted) {
      rejectPromise(new ToolError(ERROR_CODES.ABORTED, `${label} was not started because the call was cancelled`));
      return;
    }
    const worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: { url: pathToFileURL(request.script.realPath).href, input: request.input ?? {} },
      env: { ...request.env },
      argv: [],
      execArgv: [],
      stdout: true,
      stderr: true,
      resourceLimits: {
        maxOldGenerationSizeMb: limits.maxMemoryMb,
        maxYoungGenerationSizeMb: Math.min(64, Math.max(4, Math.floor(limits.maxMemoryMb / 8))),
        stackSizeMb: 4,
      },
    });
    const stderr = { text: '', bytes: 0 };
    worker.stderr.on('data', (chunk: Buffer) => {
      if (stderr.bytes >= request.maxOutputBytes) return;
      stderr.text += chunk.toString('utf8');
      stderr.bytes += chunk.length;
    });
    worker.stdout.resume(); // console.log in a skill is not its result; drain it.

    let settled = false;
    const settle = (outcome: { value: unknown } | { error: ToolError }) => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      request.signal.removeEventListener('abort', onAbort);
      // Ends timers or handles the script left behind; resolve only once the thread is gone.
      void worker.terminate().finally(() => {
        if ('error' in outcome) rejectPromise(outcome.error);
        else resolvePromise(outcome.value);
      });
    };
    const withStderr = (message: string) => {
      const tail = tailOf(stderr.text);
      return tail === '' ? message : `${message}\nstderr ends with:\n${tail}`;
    };

    const deadline = setTimeout(() => {
      settle({
        error: new ToolError(
          ERROR_CODES.TIMEOUT,
          `${label} did not finish within ${formatSeconds(request.timeoutMs)} (run_skill_timeout); its worker thread was terminated. Ask for less work or raise [runtime.tools.skills] run_skill_timeout`,
        ),
      });
    }, request.timeoutMs);
    const onAbort = () => settle({ error: new ToolError(ERROR_CODES.ABORTED, `${label} was stopped because the call was cancelled`) });
    request.signal.addEventListener('abort', onAbort, { once: true });

    worker.on('message', (reply: WorkerReply) => {
      switch (reply.kind) {
        case 'ok':
          if (reply.json.length > request.maxOutputBytes) {
            settle({
              error: new ToolError(
                ERROR_CODES.OUTPUT_TOO_LARGE,
                `${label} returned ${reply.json.length} bytes of JSON, more than max_output_bytes (${request.maxOutputBytes}); return less or raise [runtime.tools.skills] max_output_bytes`,
              ),
            });
          } else {
            settle({ value: JSON.parse(reply.json) as unknown });
          }
          return;
        case 'no-run':
          settle({
            error: new ToolError(
              ERROR_CODES.TOOL_FAILED,
              `${label} does not export a function \`run(input)\`; add \`export function run(input) { … }\` to ${request.script.realPath}`,
            ),
          });
          return;
        case 'load':
          settle({
            error: new ToolError(
              ERROR_CODES.TOOL_FAILED,
              `${label} could not be loaded from ${request.script.realPath}: ${firstLines(reply.message)}`,
            ),
          });
          return;
        case 'threw':
          settle({ error: new ToolError(ERROR_CODES.TOOL_FAILED, withStderr(`${label} threw: ${firstLines(reply.message)}`)) });
          return;
        case 'serialize':
          settle({
            error: new ToolError(
              ERROR_CODES.OUTPUT_NOT_SERIALIZABLE,
              `${label} returned a value that is not JSON (${reply.message}); return plain objects, arrays, strings, numbers and booleans`,
            ),
          });
          return;
      }
    });
    worker.on('error', (error: Error & { code?: string }) => {
      const message =
        error.code === 'ERR_WORKER_OUT_OF_MEMORY'
          ? `${label} ran out of memory (worker_max_memory_mb = ${limits.maxMemoryMb}) and was stopped; use less memory or raise [runtime.tools.skills] worker_max_memory_mb`
          : `${label} crashed: ${firstLines(error.stack ?? error.message)}`;
      settle({ error: new ToolError(ERROR_CODES.TOOL_FAILED, withStderr(message)) });
    });
    worker.on('exit', (code) => {
      settle({
        error: new ToolError(
          ERROR_CODES.TOOL_FAILED,
          withStderr(
            `${label} exited (code ${code}) before returning a result: it called process.exit, or the promise run returned never settled`,
          ),
        ),
      });
    });
  });
}

function firstLines(text: string): string {
  return text.split('\n').slice(0, STACK_LINES).join('\n');
}
