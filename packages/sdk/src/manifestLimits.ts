/** The pattern every plugin id matches: lowercase, digits and dashes, 1–64 characters. */
export const PLUGIN_ID_PATTERN = /^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$/;

/** The pattern a tool's own name (the part after `<plugin-id>.`) matches. */
export const TOOL_NAME_PATTERN = /^[A-Za-z][A-Za-z0-9_-]{0,63}$/;

/** Largest manifest Trellis reads, in bytes. */
export const MAX_MANIFEST_BYTES = 256 * 1024;
