#!/usr/bin/env node
// http-notes: a Trellis HTTP plugin with no dependencies (node:http only).
//   NOTES_TOKEN=secret node server.mjs            # listens on 127.0.0.1:8787
//   NOTES_PORT=0 NOTES_TOKEN=secret node server.mjs   # any free port (printed on stdout)
// API: POST /initialize {config}, GET /tools, POST /tools/{name} (arguments as the body), GET /health.
// Replies to tool calls are {"success": true, "data": …} or {"success": false, "error": {code, message}}.
import { createServer } from 'node:http';

const token = process.env.NOTES_TOKEN ?? '';
const port = Number(process.env.NOTES_PORT ?? 8787);
const MAX_BODY = 1024 * 1024;

let config = { max_notes: 100 };
const notes = new Map();
let nextId = 1;

const TOOLS = [
  {
    name: 'add',
    description: 'Add a note; returns its id.',
    parameters: { type: 'object', properties: { title: { type: 'string' }, text: { type: 'string' } }, required: ['title', 'text'] },
  },
  { name: 'list', description: "List the notes' ids and titles.", parameters: { type: 'object' } },
  {
    name: 'get',
    description: 'Read one note by id.',
    parameters: { type: 'object', properties: { id: { type: 'integer' } }, required: ['id'] },
  },
];

const fail = (code, message) => ({ success: false, error: { code, message } });

const tools = {
  add({ title, text }) {
    if (typeof title !== 'string' || title === '' || typeof text !== 'string')
      return fail('INVALID_ARGUMENT', 'title and text must be strings');
    if (notes.size >= config.max_notes) return fail('TOO_LARGE', `the notebook is full (max_notes = ${config.max_notes})`);
    const id = nextId++;
    notes.set(id, { id, title, text });
    return { success: true, data: { id } };
  },
  list() {
    return { success: true, data: { notes: [...notes.values()].map(({ id, title }) => ({ id, title })) } };
  },
  get({ id }) {
    const note = notes.get(id);
    return note ? { success: true, data: note } : fail('NOT_FOUND', `no note with id ${id}`);
  },
};

function send(res, status, value) {
  const body = JSON.stringify(value);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

function readJson(req) {
  return new Promise((resolve) => {
    const chunks = [];
    let size = 0;
    req.on('data', (chunk) => {
      size += chunk.length;
      if (size <= MAX_BODY) chunks.push(chunk);
    });
    req.on('end', () => {
      if (size > MAX_BODY) return resolve({ error: 'body too large' });
      try {
        resolve({ value: size === 0 ? {} : JSON.parse(Buffer.concat(chunks).toString('utf8')) });
      } catch {
        resolve({ error: 'body is not JSON' });
      }
    });
  });
}

const server = createServer(async (req, res) => {
  if (token !== '' && req.headers.authorization !== `Bearer ${token}`) return send(res, 401, { error: 'missing or wrong bearer token' });
  const url = new URL(req.url ?? '/', 'http://localhost');
  if (req.method === 'GET' && url.pathname === '/health') return send(res, 200, { healthy: true });
  if (req.method === 'GET' && url.pathname === '/tools') return send(res, 200, { tools: TOOLS });
  if (req.method !== 'POST') return send(res, 405, { error: `${req.method} is not allowed here` });
  const body = await readJson(req);
  if (body.error) return send(res, 400, { error: body.error });
  if (url.pathname === '/initialize') {
    config = { max_notes: 100, ...(body.value.config ?? {}) };
    return send(res, 200, { success: true });
  }
  const match = /^\/tools\/([A-Za-z][A-Za-z0-9_-]*)$/.exec(url.pathname);
  const tool = match && Object.hasOwn(tools, match[1]) ? tools[match[1]] : undefined;
  if (!tool) return send(res, 404, { error: `no tool at ${url.pathname}` });
  return send(res, 200, tool(body.value));
});

server.listen(port, '127.0.0.1', () => {
  process.stdout.write(`http-notes listening on http://127.0.0.1:${server.address().port}\n`);
});
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => server.close(() => process.exit(0)));
