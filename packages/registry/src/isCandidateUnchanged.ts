import { lstatSync } from 'node:fs';
import { ManifestReader } from './readManifestFile.ts';
import { toStatFacts } from './statFacts.ts';
import type { ExternalCandidateFacts, StatFacts } from './types.ts';

/**
 * Whether what admission judged of an external candidate still holds on disk: the manifest's
 * bytes, and the identity, type, mode and owner of the manifest (and its link count and size) and
 * of every folder from the plugin folder up to the root. A few `lstat`s and one read: a host that acts on
 * one plugin before its next full discovery (a reload starting a changed child early) checks this
 * first. False on any difference, on any error, and for a candidate reached through a symlink
 * (where the link now leads is discovery's to say).
 */
export function isCandidateUnchanged(facts: ExternalCandidateFacts): boolean {
  const { manifestReal, manifestStat, bytes } = facts;
  if (manifestReal === null || manifestStat === null || bytes === null || facts.symlinks.length > 0) return false;
  try {
    for (const folder of facts.folders) {
      if (folder.stat === null || !sameStat(toStatFacts(lstatSync(folder.path)), folder.stat, false)) return false;
    }
    // Read as discovery reads: never a FIFO or a device, never through a final symlink, never blocking.
    const read = new ManifestReader().read(manifestReal, null);
    if (read.stat === null || read.bytes === null || !sameStat(read.stat, manifestStat, true)) return false;
    return Buffer.from(read.bytes.buffer, read.bytes.byteOffset, read.bytes.byteLength).equals(bytes);
  } catch {
    return false;
  }
}

function sameStat(now: StatFacts, then: StatFacts, file: boolean): boolean {
  if (now.type !== then.type || now.mode !== then.mode || now.uid !== then.uid || now.gid !== then.gid) return false;
  if (now.dev !== then.dev || now.ino !== then.ino) return false; // another file or folder put in its place
  return !file || (now.nlink === then.nlink && now.size === then.size);
}
