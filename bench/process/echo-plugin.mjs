// The benchmark's process plugin: newline-delimited JSON, echoes ids, `echo` returns its arguments.
let buffer = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk) => {
  buffer += chunk;
  let nl;
  while ((nl = buffer.indexOf('\n')) !== -1) {
    const line = buffer.slice(0, nl);
    buffer = buffer.slice(nl + 1);
    if (line === '') continue;
    const req = JSON.parse(line);
    let reply;
    if (req.type === 'initialize') reply = { id: req.id, type: 'initialize_response', success: true };
    else if (req.type === 'get_tools')
      reply = { id: req.id, type: 'get_tools_response', tools: [{ name: 'echo', description: 'Echo', parameters: { type: 'object' } }] };
    else if (req.type === 'call_tool') reply = { id: req.id, type: 'call_tool_response', success: true, data: req.arguments };
    else if (req.type === 'health_check') reply = { id: req.id, type: 'health_check_response', healthy: true };
    else if (req.type === 'shutdown') process.exit(0);
    else reply = { id: req.id, type: 'error', error: `unknown request ${req.type}` };
    process.stdout.write(`${JSON.stringify(reply)}\n`);
  }
});
process.stdin.on('end', () => process.exit(0));
