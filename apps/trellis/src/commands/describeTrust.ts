import type { WorkspaceTrust } from '@trellis/config';

/** One line about the workspace's trust, with the command that changes it. */
export function describeTrust(trust: WorkspaceTrust): string {
  if (trust.errors.length > 0)
    return `Workspace ${trust.real}: untrusted (the trust store ${trust.storePath} cannot be used: ${trust.errors[0]?.message})`;
  if (trust.trusted)
    return `Workspace ${trust.real}: trusted${trust.by !== undefined && trust.by !== trust.real ? ` (through ${trust.by})` : ''}`;
  return `Workspace ${trust.real}: untrusted — its .trellis/runtime.toml, plugins and skills are not used; run \`trellis trust ${shellArg(trust.real)}\` if you trust it`;
}

function shellArg(value: string): string {
  return /^[A-Za-z0-9_./@%+=:,-]+$/.test(value) ? value : `'${value.replace(/'/g, `'\\''`)}'`;
}
