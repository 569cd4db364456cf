#!/usr/bin/env python3
"""word-count: a Trellis script plugin.

Trellis starts this program once per call and writes one JSON document to its stdin:
{"tool": "count", "arguments": {"text": "..."}, "config": {...}, "call_id": "..."}.
Whatever it prints on stdout is the result: a JSON object is returned as the value, anything else
as {"message": <text>}. A non-zero exit is a failure; the end of stderr becomes the message.
"""
import json
import sys


def counts(text):
    return {"words": len(text.split()), "lines": len(text.splitlines()), "characters": len(text)}


def main():
    request = json.load(sys.stdin)
    text = request.get("arguments", {}).get("text")
    if not isinstance(text, str):
        print("word-count: arguments.text must be a string", file=sys.stderr)
        return 2
    c = counts(text)
    if request.get("tool") == "count":
        print(json.dumps(c))
    elif request.get("tool") == "summary":
        print(f"{c['words']} words, {c['lines']} lines, {c['characters']} characters")
    else:
        print(f"word-count: unknown tool {request.get('tool')}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
