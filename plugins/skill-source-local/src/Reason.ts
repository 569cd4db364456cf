/** Why a skill was rejected or warned about: a stable code from `ERROR_CODES` and a message naming the file and the fix. */
export interface Reason {
  readonly code: string;
  readonly message: string;
}
