import { isToolError } from '@trellis/sdk';

/** The code and message of the ToolError `call` throws; fails the test when it throws none. */
export function refusalOf(call: () => unknown): { code: string; message: string } {
  try {
    call();
  } catch (error) {
    if (isToolError(error)) return { code: error.code, message: error.message };
    throw error;
  }
  throw new Error('expected a refusal');
}

/** `refusalOf` for a call that may return a promise. */
export async function asyncRefusalOf(call: () => unknown): Promise<{ code: string; message: string }> {
  try {
    await call();
  } catch (error) {
    if (isToolError(error)) return { code: error.code, message: error.message };
    throw error;
  }
  throw new Error('expected a refusal');
}
