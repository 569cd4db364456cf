#!/usr/bin/env node
// conformance-tools: a Trellis process plugin (newline-delimited JSON on stdin/stdout) with the
// fixture tools of the MCP conformance suite's server scenarios. Replies echo the request id, so
// Trellis may send several calls at once. A tool returns MCP content blocks as `{ content: [...] }`,
// which `trellis serve` passes through; progress goes out as `{"id":N,"type":"progress",...}` lines
// for the call with that id. Diagnostics go to stderr only.
import { createInterface } from 'node:readline';

// A 1x1 red PNG and a 1-sample silent WAV, as base64.
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==';
const WAV = Buffer.concat([
  Buffer.from('RIFF', 'ascii'),
  u32(38),
  Buffer.from('WAVEfmt ', 'ascii'),
  u32(16),
  u16(1),
  u16(1),
  u32(8000),
  u32(16000),
  u16(2),
  u16(16),
  Buffer.from('data', 'ascii'),
  u32(2),
  u16(0),
]).toString('base64');

const NO_ARGS = { type: 'object', properties: {}, additionalProperties: false };

const SCHEMA_2020_12 = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  type: 'object',
  $defs: {
    address: { $anchor: 'addressDef', type: 'object', properties: { street: { type: 'string' }, city: { type: 'string' } } },
  },
  properties: {
    name: { type: 'string' },
    address: { $ref: '#/$defs/address' },
    contactMethod: { type: 'string', enum: ['phone', 'email'] },
    phone: { type: 'string' },
    email: { type: 'string' },
  },
  allOf: [{ anyOf: [{ required: ['phone'] }, { required: ['email'] }] }],
  if: { properties: { contactMethod: { const: 'phone' } }, required: ['contactMethod'] },
  then: { required: ['phone'] },
  else: { required: ['email'] },
  additionalProperties: false,
};

const TOOLS = [
  { name: 'test_simple_text', description: 'Returns a simple text response.', inputSchema: NO_ARGS },
  { name: 'test_image_content', description: 'Returns a 1x1 PNG image.', inputSchema: NO_ARGS },
  { name: 'test_audio_content', description: 'Returns a short WAV clip.', inputSchema: NO_ARGS },
  { name: 'test_embedded_resource', description: 'Returns an embedded text resource.', inputSchema: NO_ARGS },
  { name: 'test_multiple_content_types', description: 'Returns text, an image and an embedded resource.', inputSchema: NO_ARGS },
  { name: 'test_error_handling', description: 'Always fails, to test error reporting.', inputSchema: NO_ARGS },
  { name: 'test_tool_with_progress', description: 'Reports progress 0, 50 and 100 of 100, about 50 ms apart.', inputSchema: NO_ARGS },
  { name: 'json_schema_2020_12_tool', description: 'Tool with JSON Schema 2020-12 features', inputSchema: SCHEMA_2020_12 },
];

const send = (message) => process.stdout.write(`${JSON.stringify(message)}\n`);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function callTool(id, name, args) {
  switch (name) {
    case 'test_simple_text':
      return { content: [{ type: 'text', text: 'This is a simple text response for testing.' }] };
    case 'test_image_content':
      return { content: [{ type: 'image', data: PNG, mimeType: 'image/png' }] };
    case 'test_audio_content':
      return { content: [{ type: 'audio', data: WAV, mimeType: 'audio/wav' }] };
    case 'test_embedded_resource':
      return {
        content: [
          {
            type: 'resource',
            resource: { uri: 'test://embedded-resource', mimeType: 'text/plain', text: 'This is an embedded resource content.' },
          },
        ],
      };
    case 'test_multiple_content_types':
      return {
        content: [
          { type: 'text', text: 'Multiple content types test:' },
          { type: 'image', data: PNG, mimeType: 'image/png' },
          {
            type: 'resource',
            resource: {
              uri: 'test://mixed-content-resource',
              mimeType: 'application/json',
              text: JSON.stringify({ test: 'data', value: 123 }),
            },
          },
        ],
      };
    case 'test_error_handling':
      throw Object.assign(new Error('This tool intentionally returns an error for testing'), { code: 'TOOL_FAILED' });
    case 'test_tool_with_progress':
      for (const progress of [0, 50, 100]) {
        if (progress > 0) await sleep(50);
        send({ id, type: 'progress', progress, total: 100 });
      }
      return 'Progress test completed';
    case 'json_schema_2020_12_tool':
      return { received: args };
    default:
      throw Object.assign(new Error(`unknown tool ${name}`), { code: 'TOOL_NOT_FOUND' });
  }
}

async function handle(request) {
  switch (request.type) {
    case 'initialize':
      return { type: 'initialize_response', success: true };
    case 'get_tools':
      return { type: 'get_tools_response', tools: TOOLS };
    case 'health_check':
      return { type: 'health_check_response', healthy: true };
    case 'call_tool':
      try {
        return { type: 'call_tool_response', success: true, data: await callTool(request.id, request.tool_name, request.arguments ?? {}) };
      } catch (error) {
        return { type: 'call_tool_response', success: false, error: { code: error.code ?? 'TOOL_FAILED', message: error.message } };
      }
    case 'shutdown':
      setImmediate(() => process.exit(0));
      return { type: 'shutdown_response', success: true };
    default:
      return { type: 'error', error: `unknown request type ${request.type}` };
  }
}

createInterface({ input: process.stdin })
  .on('line', (line) => {
    if (line.trim() === '') return;
    let request;
    try {
      request = JSON.parse(line);
    } catch {
      process.stderr.write(`conformance-tools: not JSON: ${line.slice(0, 200)}\n`);
      return;
    }
    void handle(request).then((reply) => send({ ...reply, id: request.id }));
  })
  .on('close', () => process.exit(0));

function u16(n) {
  const b = Buffer.alloc(2);
  b.writeUInt16LE(n);
  return b;
}

function u32(n) {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(n);
  return b;
}
