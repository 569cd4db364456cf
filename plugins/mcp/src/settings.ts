import { HealthCheckIntervalSchema } from '@trellis/sdk/schema';
import { z } from 'zod';

/** One `[[plugins.entries.mcp.config.servers]]` entry: a stdio command or a Streamable HTTP URL. */
export const McpServerConfigSchema = z
  .object({
    /** The server's name: the middle part of `mcp.<server>.<tool>`. */
    name: z.string().regex(/^[A-Za-z0-9_-]{1,48}$/, 'letters, digits, - and _ only, 1–48 characters'),
    /** stdio: the program to run (no shell). */
    command: z.string().min(1).optional(),
    args: z.array(z.string()).default([]),
    /** stdio: variables the server gets, besides a minimal safe set (HOME, LOGNAME, PATH, SHELL, TERM, USER). */
    env: z.record(z.string(), z.string()).default({}),
    /** stdio: working folder; relative to the workspace root. Default: the workspace root. */
    cwd: z.string().optional(),
    /** Streamable HTTP: the endpoint URL (https, or http on a loopback address). */
    url: z.string().min(1).optional(),
    /** Streamable HTTP: extra request headers (e.g. `Authorization = "Bearer ${TOKEN}"`). */
    headers: z.record(z.string(), z.string()).default({}),
    /** Connect/list deadline, and the default deadline of each call, in seconds. */
    timeout_seconds: z.number().positive().max(3600).default(30),
    /** Globs (`*` only) on the server's own tool names; a tool is offered when it matches one. */
    include_tools: z.array(z.string()).default(['*']),
    /** Globs on the server's own tool names; a match is never offered (wins over include). */
    exclude_tools: z.array(z.string()).default([]),
    /** Seconds between MCP `ping` health checks while connected; 0 = none. A ping unanswered within timeout_seconds reconnects. */
    health_check_interval_seconds: HealthCheckIntervalSchema.default(30),
    /**
     * Reconnects after failures before the server is given up (`disabled`) until a reload or a
     * change of this entry; default `[plugins.entries.mcp] max_restarts`, else 3. A session that
     * stays up five minutes resets the count.
     */
    max_restarts: z.number().int().min(0).max(100).optional(),
    /** `false` keeps the entry without starting the server. */
    enabled: z.boolean().default(true),
  })
  .strict();

/** The mcp plugin's settings (`[plugins.entries.mcp.config]` or `[runtime.tools.mcp]`). */
export const McpSettingsSchema = z
  .object({
    servers: z.array(McpServerConfigSchema).default([]),
  })
  .strict();

export type McpServerConfig = z.infer<typeof McpServerConfigSchema>;
export type McpSettings = z.infer<typeof McpSettingsSchema>;
