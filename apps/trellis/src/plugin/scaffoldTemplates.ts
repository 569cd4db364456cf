/** The external plugin types `trellis plugin new --external` scaffolds. */
export const EXTERNAL_TYPES = ['process', 'script', 'http'] as const;
export type ExternalType = (typeof EXTERNAL_TYPES)[number];

/** The languages a scaffolded external plugin can be written in. */
export const LANGUAGES = ['python', 'node', 'sh'] as const;
export type Language = (typeof LANGUAGES)[number];

/** One file to write, relative to the new plugin's folder. */
export interface ScaffoldFile {
  readonly path: string;
  readonly text: string;
  readonly executable?: boolean;
}

const PROGRAM: Record<Language, { command: string; file: string }> = {
  python: { command: 'python3', file: 'plugin.py' },
  node: { command: 'node', file: 'plugin.mjs' },
  sh: { command: 'sh', file: 'plugin.sh' },
};

/** The tool every scaffold starts with: greet, taking a name. */
const TOOL_TOML = `[[tools]]
name = "greet"
description = "Greets someone by name; returns {\\"message\\": \\"Hello, <name>!\\"}."
input_schema = { type = "object", properties = { name = { type = "string", description = "Who to greet" } }, required = ["name"], additionalProperties = false }
`;

function manifest(id: string, runtime: string, requires: readonly string[]): string {
  return `# The plugin's manifest: every key is documented in docs/plugin-authoring.md.
schema_version = 1          # required: the manifest format (always 1 for now)
id = "${id}"${' '.repeat(Math.max(1, 20 - id.length))}# required: lowercase letters, digits, dashes; tools become ${id}.<tool>
name = "${id}"${' '.repeat(Math.max(1, 18 - id.length))}# required: a display name
version = "0.1.0"           # required: semver
kind = "toolset"            # required: what the plugin is (toolset for tools)
description = "Greets people (a scaffold: change me)."
side_effects = false        # true needs [plugins] allow (or --allow ${id})
requires_commands = [${requires.map((r) => JSON.stringify(r)).join(', ')}]

${runtime}
${TOOL_TOML}`;
}

/** The files of a new external plugin. */
export function externalScaffold(id: string, type: ExternalType, language: Language, port: number): ScaffoldFile[] {
  const { command, file } = PROGRAM[language];
  if (type === 'http') {
    const runtime = `[runtime]
type = "http"
endpoint = "http://127.0.0.1:${port}"   # start the server first: ${command} ${file} (PORT=${port} by default)
timeout_seconds = 10`;
    return [
      { path: 'plugin.toml', text: manifest(id, runtime, []) },
      { path: file, text: HTTP_SERVER[language](port) },
    ];
  }
  const runtime = `[runtime]
type = "${type}"${' '.repeat(Math.max(1, 14 - type.length))}# ${type === 'process' ? 'a long-running child speaking JSON lines' : 'one child per call: JSON on stdin, JSON on stdout'}
command = "${command}"
args = ["${file}"]          # relative paths resolve inside the plugin folder
timeout_seconds = 10`;
  const text = type === 'process' ? PROCESS_PLUGIN[language] : SCRIPT_PLUGIN[language];
  return [
    { path: 'plugin.toml', text: manifest(id, runtime, [command]) },
    { path: file, text, executable: true },
  ];
}

const SCRIPT_PLUGIN: Record<Language, string> = {
  python: `# A script plugin: one run per call. stdin: {"tool", "arguments", "config", "call_id"}; stdout: JSON.
import json
import sys

request = json.load(sys.stdin)
if request["tool"] == "greet":
    print(json.dumps({"message": "Hello, " + request["arguments"]["name"] + "!"}))
else:
    print("unknown tool " + request["tool"], file=sys.stderr)
    sys.exit(1)
`,
  node: `// A script plugin: one run per call. stdin: {"tool", "arguments", "config", "call_id"}; stdout: JSON.
let input = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk) => (input += chunk));
process.stdin.on('end', () => {
  const request = JSON.parse(input);
  if (request.tool === 'greet') {
    process.stdout.write(JSON.stringify({ message: \`Hello, \${request.arguments.name}!\` }) + '\\n');
  } else {
    process.stderr.write(\`unknown tool \${request.tool}\\n\`);
    process.exitCode = 1;
  }
});
`,
  sh: `# A script plugin: one run per call. $TRELLIS_TOOL names the tool; stdin holds the JSON request.
# This one reads the name with a small sed; use python3 or node for real JSON work.
request=$(cat)
case "$TRELLIS_TOOL" in
  greet)
    name=$(printf '%s' "$request" | sed -n 's/.*"name"[[:space:]]*:[[:space:]]*"\\([^"]*\\)".*/\\1/p')
    printf '{"message": "Hello, %s!"}\\n' "$name"
    ;;
  *)
    echo "unknown tool $TRELLIS_TOOL" >&2
    exit 1
    ;;
esac
`,
};

const PROCESS_PLUGIN: Record<Language, string> = {
  python: `# A process plugin: a long-running child; one JSON request per stdin line, one reply per stdout line.
import json
import sys

def handle(request):
    kind = request.get("type")
    if kind == "initialize":
        return {"type": "initialize_response", "success": True}
    if kind == "call_tool":
        if request["tool_name"] == "greet":
            return {"type": "call_tool_response", "success": True, "data": {"message": "Hello, " + request["arguments"]["name"] + "!"}}
        return {"type": "call_tool_response", "success": False, "error": "unknown tool " + request["tool_name"]}
    if kind == "health_check":
        return {"type": "health_check_response", "healthy": True}
    return {"type": "error", "error": "unknown request type " + str(kind)}

for line in sys.stdin:
    request = json.loads(line)
    if request.get("type") == "shutdown":
        break
    reply = handle(request)
    if "id" in request:
        reply["id"] = request["id"]
    sys.stdout.write(json.dumps(reply) + "\\n")
    sys.stdout.flush()
`,
  node: `// A process plugin: a long-running child; one JSON request per stdin line, one reply per stdout line.
import { createInterface } from 'node:readline';

function handle(request) {
  switch (request.type) {
    case 'initialize':
      return { type: 'initialize_response', success: true };
    case 'call_tool':
      if (request.tool_name === 'greet') return { type: 'call_tool_response', success: true, data: { message: \`Hello, \${request.arguments.name}!\` } };
      return { type: 'call_tool_response', success: false, error: \`unknown tool \${request.tool_name}\` };
    case 'health_check':
      return { type: 'health_check_response', healthy: true };
    default:
      return { type: 'error', error: \`unknown request type \${request.type}\` };
  }
}

const lines = createInterface({ input: process.stdin });
lines.on('line', (line) => {
  const request = JSON.parse(line);
  if (request.type === 'shutdown') return lines.close();
  const reply = handle(request);
  if ('id' in request) reply.id = request.id;
  process.stdout.write(JSON.stringify(reply) + '\\n');
});
`,
  sh: '',
};

const HTTP_SERVER: Record<Language, (port: number) => string> = {
  python: (port) => `# An HTTP plugin: serve this first (PORT=${port} by default), then point [runtime] endpoint at it.
import json
import os
from http.server import BaseHTTPRequestHandler, HTTPServer

class Handler(BaseHTTPRequestHandler):
    def reply(self, status, body):
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        self.reply(200, {"healthy": True} if self.path == "/health" else {"error": "not found"})

    def do_POST(self):
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length) or b"{}")
        if self.path == "/initialize":
            self.reply(200, {"success": True})
        elif self.path == "/tools/greet":
            self.reply(200, {"success": True, "data": {"message": "Hello, " + body["name"] + "!"}})
        else:
            self.reply(404, {"success": False, "error": "unknown path " + self.path})

    def log_message(self, *args):
        pass

server = HTTPServer(("127.0.0.1", int(os.environ.get("PORT", "${port}"))), Handler)
print("listening on http://127.0.0.1:%d" % server.server_port, flush=True)
server.serve_forever()
`,
  node: (port) => `// An HTTP plugin: serve this first (PORT=${port} by default), then point [runtime] endpoint at it.
import { createServer } from 'node:http';

const send = (res, status, body) => {
  const data = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(data) });
  res.end(data);
};

const server = createServer((req, res) => {
  let text = '';
  req.setEncoding('utf8');
  req.on('data', (chunk) => (text += chunk));
  req.on('end', () => {
    if (req.method === 'GET') return send(res, req.url === '/health' ? 200 : 404, req.url === '/health' ? { healthy: true } : { error: 'not found' });
    const body = text === '' ? {} : JSON.parse(text);
    if (req.url === '/initialize') return send(res, 200, { success: true });
    if (req.url === '/tools/greet') return send(res, 200, { success: true, data: { message: \`Hello, \${body.name}!\` } });
    send(res, 404, { success: false, error: \`unknown path \${req.url}\` });
  });
});
server.listen(Number(process.env.PORT ?? ${port}), '127.0.0.1', () => console.log(\`listening on http://127.0.0.1:\${server.address().port}\`));
`,
  sh: () => '',
};
