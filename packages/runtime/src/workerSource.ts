/**
 * The task module that pool workers run for worker-isolated bundled tools. It is kept as a string
 * and handed to the pool as a `data:` URL, so it works the same from source, from a build and from
 * a bundle (no file to locate). It imports the plugin module itself: nothing of the plugin runs in
 * the host's thread. One call per worker at a time; the plugin module and its `setup` are kept per
 * worker and per implementation (`setupKey`), so a warm worker answers without loading again.
 *
 * Every task answers with one of `result`, `none` (no canonicalize hook), `thrown`,
 * `unserializable`, `load-failed`, each with the call's `logs` (logger calls and console output,
 * which must not reach the host's stdout).
 */
export const WORKER_SOURCE = String.raw`
import { format } from 'node:util';
import { readlinkSync } from 'node:fs';
import { getPriority, setPriority } from 'node:os';
// The host thread must win the CPU over tool work: on Linux a thread has its own nice value, so
// this worker lowers its own priority by 10 (its thread id read from /proc/thread-self).
try {
  const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
  if (Number.isInteger(tid) && tid > 0) setPriority(tid, Math.min(19, getPriority(tid) + 10));
} catch {}
let logs = null;
const push = (level, message, fields) => {
  if (logs === null || logs.length >= 200) return;
  let copy;
  try {
    copy = fields === undefined ? undefined : JSON.parse(JSON.stringify(fields));
  } catch {}
  logs.push({ level, message: String(message), fields: copy });
};
const logger = { debug: (m, f) => push('debug', m, f), info: (m, f) => push('info', m, f), warn: (m, f) => push('warn', m, f), error: (m, f) => push('error', m, f) };
const consoleTo = (stream) => (...args) => push('debug', '(worker ' + stream + '): ' + format(...args).trimEnd());
for (const name of ['log', 'info', 'debug', 'trace']) console[name] = consoleTo('stdout');
for (const name of ['warn', 'error']) console[name] = consoleTo('stderr');
const messageOf = (error) => (error instanceof Error ? error.message : String(error));
const unavailable = (what) => () => {
  throw new Error(what + ' is not available to a worker-isolated tool');
};
const host = { plugins: unavailable('host.plugins()'), explainPlugin: unavailable('host.explainPlugin()'), searchTools: unavailable('host.searchTools()') };
const describe = (value) => {
  if (value === null) return 'null';
  if (typeof value === 'string') return JSON.stringify(value).slice(0, 200);
  if (typeof value === 'bigint') return value + 'n';
  if (typeof value !== 'object') return String(value);
  try {
    const json = JSON.stringify(value);
    if (json !== undefined) return json.slice(0, 200);
  } catch {}
  return Object.prototype.toString.call(value);
};
const thrownInfo = (thrown) => {
  if (thrown && typeof thrown === 'object' && thrown.name === 'ToolError' && typeof thrown.code === 'string') {
    return { kind: 'tool', code: thrown.code, message: String(thrown.message), retryable: thrown.retryable === true };
  }
  if (thrown instanceof Error) return { kind: 'error', name: thrown.name, message: thrown.message };
  return { kind: 'value', text: describe(thrown) };
};
// A signal that never aborts: a worker call ends by the pool terminating the thread.
const signal = new AbortController().signal;
let loader;
const plugins = new Map();
const loadPlugin = (task) => {
  let entry = plugins.get(task.setupKey);
  if (entry === undefined) {
    entry = (async () => {
      if (task.loaderUrl) {
        loader ??= import(task.loaderUrl).then((api) => api.register());
        await loader;
      }
      let mod;
      try {
        mod = await import(task.moduleUrl);
      } catch (error) {
        return { failure: 'importing ' + task.moduleUrl + ' failed: ' + messageOf(error) };
      }
      const plugin = mod.plugin;
      if (!plugin || !Array.isArray(plugin.tools)) return { failure: task.moduleUrl + ' does not export a definePlugin(...) or definePluginCode(...) value named plugin' };
      if (typeof plugin.setup === 'function') {
        try {
          await plugin.setup({ config: task.settings, logger, workspace: task.workspace, env: task.env });
        } catch (error) {
          return { failure: 'setup failed: ' + messageOf(error) };
        }
      }
      return { plugin };
    })();
    plugins.set(task.setupKey, entry);
  }
  return entry;
};
const answer = async (task) => {
  const loaded = await loadPlugin(task);
  if (loaded.failure !== undefined) return { type: 'load-failed', message: loaded.failure };
  const tool = loaded.plugin.tools.find((candidate) => candidate && candidate.name === task.tool);
  if (!tool) return { type: 'load-failed', message: task.moduleUrl + ' has no tool named ' + task.tool };
  if (task.mode === 'canonicalize' && typeof tool.canonicalize !== 'function') return { type: 'none' };
  const ctx = { config: task.settings, logger, workspace: task.workspace, env: task.env, signal, callId: task.callId, tool: task.name, host };
  let value;
  try {
    if (task.mode === 'canonicalize') {
      const result = await tool.canonicalize(task.input, ctx);
      value = { input: result.input, summary: result.summary };
    } else {
      value = await tool.run(task.input, ctx);
    }
  } catch (thrown) {
    return { type: 'thrown', info: thrownInfo(thrown) };
  }
  try {
    // Cloned here, on the worker's thread, so a value the pool cannot send back is reported, not a crash.
    return { type: 'result', value: structuredClone(value) };
  } catch (error) {
    return { type: 'unserializable', message: messageOf(error) };
  }
};
export default async function runTask(task) {
  logs = [];
  try {
    const reply = await answer(task);
    return { ...reply, logs };
  } finally {
    logs = null;
  }
}
`;
