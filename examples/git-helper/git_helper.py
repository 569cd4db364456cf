#!/usr/bin/env python3
"""git-helper: a Trellis process plugin (newline-delimited JSON on stdin/stdout).

Each request is one JSON line with a "type" and an "id"; each reply is one JSON line that
echoes the id, so Trellis may send several calls at once. Diagnostics go to stderr only.
"""
import json
import os
import subprocess
import sys

TOOLS = [
    {"name": "status", "description": "Show the branch and working-tree status of the repository (git status).",
     "parameters": {"type": "object", "properties": {"short": {"type": "boolean"}}}},
    {"name": "diff", "description": "Show unstaged (or staged) changes, optionally for one path (git diff).",
     "parameters": {"type": "object", "properties": {"staged": {"type": "boolean"}, "path": {"type": "string"}}}},
]

config = {}


class ToolFailure(Exception):
    def __init__(self, code, message):
        super().__init__(message)
        self.code = code
        self.message = message


def git(*args):
    repo = config.get("repo") or os.getcwd()
    try:
        done = subprocess.run(["git", "-C", repo, *args], capture_output=True, text=True, timeout=15)
    except subprocess.TimeoutExpired:
        raise ToolFailure("TIMEOUT", "git took longer than 15 s")
    if done.returncode != 0:
        raise ToolFailure("TOOL_FAILED", (done.stderr or done.stdout).strip() or f"git exited with {done.returncode}")
    return done.stdout


def status(args):
    branch = git("branch", "--show-current").strip()
    output = git("status", "--short") if args.get("short") else git("status")
    return {"branch": branch, "output": output}


def diff(args):
    argv = ["diff"]
    if args.get("staged"):
        argv.append("--staged")
    path = args.get("path")
    if path is not None:
        if not isinstance(path, str) or path == "" or "\0" in path:
            raise ToolFailure("INVALID_ARGUMENT", "path must be a non-empty string")
        argv += ["--", path]  # after "--", a path that starts with "-" is still a path
    return {"diff": git(*argv)}


def handle(request):
    kind = request.get("type")
    if kind == "initialize":
        config.clear()
        config.update(request.get("config") or {})
        return {"type": "initialize_response", "success": True}
    if kind == "get_tools":
        return {"type": "get_tools_response", "tools": TOOLS}
    if kind == "health_check":
        return {"type": "health_check_response", "healthy": True}
    if kind == "call_tool":
        tool = {"status": status, "diff": diff}.get(request.get("tool_name"))
        if tool is None:
            return {"type": "call_tool_response", "success": False,
                    "error": {"code": "TOOL_NOT_FOUND", "message": f"unknown tool {request.get('tool_name')}"}}
        try:
            return {"type": "call_tool_response", "success": True, "data": tool(request.get("arguments") or {})}
        except ToolFailure as failure:
            return {"type": "call_tool_response", "success": False,
                    "error": {"code": failure.code, "message": failure.message}}
    if kind == "shutdown":
        return {"type": "shutdown_response", "success": True}
    return {"type": "error", "error": f"unknown request type {kind}"}


def main():
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            request = json.loads(line)
        except json.JSONDecodeError as error:
            print(f"git-helper: ignoring a line that is not JSON: {error}", file=sys.stderr, flush=True)
            continue
        reply = handle(request)
        if "id" in request:
            reply["id"] = request["id"]
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()
        if request.get("type") == "shutdown":
            return


if __name__ == "__main__":
    main()
