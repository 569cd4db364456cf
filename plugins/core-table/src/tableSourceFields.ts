import { z } from 'zod';
import { MAX_PATH_CHARS } from './readTableFile.ts';
import { TABLE_FORMATS } from './parseTable.ts';

/** The fields every core-table tool takes to name and parse its table. */
export const tableSourceFields = {
  path: z
    .string()
    .min(1)
    .max(MAX_PATH_CHARS)
    .describe(
      'Path of the table file, relative to the table root (the workspace by default), e.g. "data/sales.csv". Must stay inside the root.',
    ),
  format: z
    .enum(TABLE_FORMATS)
    .optional()
    .describe(
      'File format. Omit to use the extension (.csv, .tsv/.tab, .json, .jsonl/.ndjson) or, failing that, the content. ' +
        '"json" is an array of objects, "jsonl" one object per line.',
    ),
  has_header: z
    .boolean()
    .optional()
    .describe(
      'CSV/TSV only: whether the first row holds column names. Omit to detect it (a first row of unique text values that are not numbers, booleans or dates). Without a header, columns are named column_1, column_2, ….',
    ),
};
