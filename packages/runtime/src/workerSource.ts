/**
 * The code of a worker thread that runs one call of a worker-isolated bundled tool. It is kept as
 * a string and started with `eval: true`, so it works the same from source, from a build and from
 * a bundle (no file to locate). It imports the plugin module itself: nothing of the plugin runs in
 * the host's thread. Messages to the parent: `log`, then exactly one of `result`, `none` (no
 * canonicalize hook), `thrown`, `unserializable`, `load-failed`.
 */
export const WORKER_SOURCE = String.raw`
'use strict';
const { parentPort, workerData } = require('node:worker_threads');
const data = workerData;
const send = (message) => parentPort.postMessage(message);
const messageOf = (error) => (error instanceof Error ? error.message : String(error));
const log = (level) => (message, fields) => {
  try {
    send({ type: 'log', level, message: String(message), fields: fields === undefined ? undefined : JSON.parse(JSON.stringify(fields)) });
  } catch {
    send({ type: 'log', level, message: String(message) });
  }
};
const logger = { debug: log('debug'), info: log('info'), warn: log('warn'), error: log('error') };
const controller = new AbortController();
parentPort.on('message', (message) => {
  if (message && message.type === 'abort') controller.abort(new Error(String(message.reason)));
});
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
(async () => {
  let mod;
  try {
    mod = await import(data.moduleUrl);
  } catch (error) {
    send({ type: 'load-failed', message: 'importing ' + data.moduleUrl + ' failed: ' + messageOf(error) });
    return;
  }
  const plugin = mod.plugin;
  if (!plugin || !Array.isArray(plugin.tools)) {
    send({ type: 'load-failed', message: data.moduleUrl + ' does not export a definePlugin(...) value named plugin' });
    return;
  }
  const tool = plugin.tools.find((candidate) => candidate && candidate.name === data.tool);
  if (!tool) {
    send({ type: 'load-failed', message: data.moduleUrl + ' has no tool named ' + data.tool });
    return;
  }
  if (data.mode === 'canonicalize' && typeof tool.canonicalize !== 'function') {
    send({ type: 'none' });
    return;
  }
  const base = { config: data.settings, logger, workspace: data.workspace, env: data.env };
  if (typeof plugin.setup === 'function') {
    try {
      await plugin.setup(base);
    } catch (error) {
      send({ type: 'load-failed', message: 'setup failed: ' + messageOf(error) });
      return;
    }
  }
  const ctx = { ...base, signal: controller.signal, callId: data.callId, tool: data.name, host };
  let value;
  try {
    if (data.mode === 'canonicalize') {
      const result = await tool.canonicalize(data.input, ctx);
      value = { input: result.input, summary: result.summary };
    } else {
      value = await tool.run(data.input, ctx);
    }
  } catch (thrown) {
    send({ type: 'thrown', info: thrownInfo(thrown) });
    return;
  }
  try {
    send({ type: 'result', value });
  } catch (error) {
    send({ type: 'unserializable', message: messageOf(error) });
  }
})();
`;
