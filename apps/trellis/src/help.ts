/** `trellis --help`. */
export const HELP = `trellis — a statically composed plugin registry and tool runtime for AI-agent hosts

Usage: trellis <command> [options]

Commands:
  doctor                          Show the config in use, the plugins, the tools, and run a harmless tool
  config check                    Check the config: print every error and warning (exit 2 on errors;
                                  exit 1 when a key is ignored or a plugin rejected or quarantined)
  config show [--origin]          Every effective config key; --origin names the file that set it
  trust [DIR]                     Trust a workspace (default: this one): its .trellis config, plugins
                                  and skills apply. trust --list shows them; trust --revoke DIR undoes it
  plugins list [--state S]        Every plugin found, with its state and first reason
  plugins list --running          Every plugin as the running serve/run host(s) see it, with its lifecycle
  plugins explain <id>            Every candidate for <id>, each admission check, the decision trace
  tools list [--format F]         The tools offered now (F: mcp | openai | anthropic renders them for that API)
  tools describe <name>           One tool: description, schemas, contract, availability
  tools search <query> [--limit N]  Ranked search over names, descriptions and tags
  tools call <name> --args JSON   Call a tool; --json prints exactly the outcome
  mcp import <file>               Add the servers of an mcpServers JSON file (Claude, Cursor, VS Code) to your config
  mcp approve <server> [tool]     Approve changed MCP tools (TOOL_CHANGED) so they are offered again
  chat ["prompt"]                 Ask the model (openrouter; needs OPENROUTER_API_KEY) with the tools; no prompt
                                  on a terminal: an interactive chat (/tools, /reset, Ctrl-C cancels, Ctrl-D exits)
  run [--grace S]                 Serve the enabled connectors (telegram) until SIGINT/SIGTERM, then let running
                                  answers finish for S seconds (default 10)
  serve [--http [--host H] [--port N] [--no-auth]]
                                  Be an MCP server: stdio, or Streamable HTTP at http://H:N/mcp (default
                                  127.0.0.1, bearer token from TRELLIS_SERVE_TOKEN or [serve] token, else
                                  generated and printed to stderr); see docs/serve.md
  plugin new <id> --external T [--lang L]  Scaffold an external plugin (T: process | script | http; L: python | node | sh)
  plugin test <dir>               Check a plugin: manifest, admission, handshake, a call to each tool
  status                          The running serve/run hosts of yours: pid, start time, each plugin's lifecycle
                                  (active, error, recovering, disabled) and last health check; see docs/status.md

Global options:
  --config FILE          The top config layer (else TRELLIS_CONFIG); layers, lowest first: built-in
                         default, $XDG_CONFIG_HOME/trellis/runtime.toml, <workspace>/.trellis/runtime.toml
                         (only in a trusted workspace), then this file
  --workspace DIR        The workspace (default: the current directory)
  --profile NAME         minimal | messaging | full (overrides [plugins] profile)
  --plugin-path DIR      An extra plugin root, highest priority (repeatable)
  --json                 Machine-readable output on stdout, nothing else on stdout
  --allow ID             Allow plugin ID for this run, as if in [plugins] allow (repeatable)
  --enable ID            Switch plugin ID on for this run (repeatable); --disable ID switches it off
  -h, --help             This help
  -v, --version          The version

tools list --all also names each tool known but not offered, with the reason.
tools call --args takes JSON inline, @FILE (a JSON file) or - (JSON on standard input).
Under --json an error is {"error": {"code", "message", "exit"}} on stdout.

Exit codes: 0 ok, 1 a check or tool failed, 2 usage or config error.
Docs: docs/ in the repository (architecture, plugin authoring, config reference, security model).
`;
