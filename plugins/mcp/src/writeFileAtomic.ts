import { mkdir, open, rename, rm } from 'node:fs/promises';
import { dirname } from 'node:path';

/** Options of {@link writeFileAtomic}. */
export interface WriteFileAtomicOptions {
  /** Mode of the new file (before the umask). Default 0600. */
  readonly mode?: number;
  /** Mode of folders created on the way (before the umask). Default 0700. */
  readonly folderMode?: number;
}

/**
 * Replaces `path` with `text` atomically: a private temp file next to it (created exclusively),
 * written and fsynced, then renamed over `path`. A reader sees the old file or the new one, never a
 * part; a failure leaves the old file and no temp file.
 */
export async function writeFileAtomic(path: string, text: string, options: WriteFileAtomicOptions = {}): Promise<void> {
  await mkdir(dirname(path), { recursive: true, mode: options.folderMode ?? 0o700 });
  const temp = `${path}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
  const handle = await open(temp, 'wx', options.mode ?? 0o600);
  try {
    try {
      await handle.writeFile(text, 'utf8');
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temp, path);
  } catch (error) {
    await rm(temp, { force: true });
    throw error;
  }
}
