/**
 * Data frames as the API serves them (docs/api-clients.md, "Curves and time series"): Parquet (zstd) by default, column-oriented
 * JSON (`{"timestamp":[…],"power":[…]}`) on request.
 *
 * A Frame is a list of equally long typed columns:
 *
 *   timestamptz  Float64Array of epoch ms (UTC), NaN → NULL. Parquet INT64 TIMESTAMP(isAdjustedToUTC =
 *                true, MICROS), DuckDB TIMESTAMP WITH TIME ZONE; JSON "2024-05-01T07:00:00Z".
 *   timestamp    Float64Array of naive local wall time as epoch ms of that wall time read as UTC, NaN →
 *                NULL. Parquet TIMESTAMP(isAdjustedToUTC = false, MICROS); JSON "2024-05-01T09:00:00".
 *   int32        Int32Array. Parquet INT32; JSON numbers.
 *   double       Float64Array, NaN → NULL. Parquet DOUBLE; JSON numbers (NaN/±Infinity → null; ±Infinity
 *                is kept as is in Parquet).
 *   string       dictionary-coded: Int32Array codes into `labels`, -1 → NULL. Parquet BYTE_ARRAY UTF8
 *                (DuckDB VARCHAR); JSON strings.
 *
 * Timestamps that are not finite (NaN, ±Infinity) are written as NULL. Sub-millisecond fractions of
 * epoch ms are kept in Parquet (rounded to µs) and truncated to ms in JSON (as Date does).
 *
 * Written by ./parquet-writer.ts and ./json.ts; a stored Parquet file is streamed as JSON by
 * ./parquet-to-json.ts. Which of the two a request gets is decided in the API (api/rest/activities/content-negotiation.ts).
 */

export type FrameColumn =
  | { name: string; type: 'timestamptz'; values: Float64Array } // epoch ms UTC; NaN → null. Parquet INT64 TIMESTAMP(isAdjustedToUTC=true, MICROS)
  | { name: string; type: 'timestamp'; values: Float64Array } // naive wall time as epoch ms of that wall time read as UTC; NaN → null. TIMESTAMP(isAdjustedToUTC=false, MICROS)
  | { name: string; type: 'int32'; values: Int32Array } // Parquet INT32
  | { name: string; type: 'double'; values: Float64Array } // NaN → null. Parquet DOUBLE
  | { name: string; type: 'string'; codes: Int32Array; labels: string[] }; // dictionary-coded; code -1 → null. Parquet BYTE_ARRAY UTF8

export interface Frame {
  columns: FrameColumn[];
  /** Column names pandas should restore as the index (value-indexed frames); written as pandas metadata. */
  index?: string[];
  /** Extra Parquet key-value metadata (string values). */
  metadata?: Record<string, string>;
}

// ---------------------------------------------------------------------------------------------
// Shape

function columnLength(column: FrameColumn): number {
  return column.type === 'string' ? column.codes.length : column.values.length;
}

/** The number of rows (the first column's length; 0 without columns). */
export function frameLength(frame: Frame): number {
  const first = frame.columns[0];
  return first === undefined ? 0 : columnLength(first);
}

/** Validate a frame at the edge (types, equal lengths, unique names, codes in range, index, metadata); returns its length. */
export function checkFrame(frame: Frame): number {
  const length = frameLength(frame);
  const names = new Set<string>();
  for (const column of frame.columns) {
    const label = JSON.stringify(column.name);
    if (typeof column.name !== 'string' || column.name === '') throw new RangeError('A frame column needs a non-empty name');
    if (names.has(column.name)) throw new RangeError(`Duplicate frame column ${label}`);
    names.add(column.name);
    switch (column.type) {
      case 'timestamptz':
      case 'timestamp':
      case 'double':
        if (!(column.values instanceof Float64Array)) throw new TypeError(`Column ${label} (${column.type}) must be a Float64Array`);
        break;
      case 'int32':
        if (!(column.values instanceof Int32Array)) throw new TypeError(`Column ${label} (int32) must be an Int32Array`);
        break;
      case 'string': {
        if (!(column.codes instanceof Int32Array)) throw new TypeError(`Column ${label} (string) codes must be an Int32Array`);
        if (!Array.isArray(column.labels)) throw new TypeError(`Column ${label} (string) labels must be an array`);
        for (const value of column.labels) {
          if (typeof value !== 'string') throw new TypeError(`Column ${label} has a label that is not a string`);
        }
        const { codes } = column;
        const count = column.labels.length;
        for (let i = 0; i < codes.length; i++) {
          const code = codes[i]!;
          if (code < -1 || code >= count) throw new RangeError(`Column ${label} has code ${code} at row ${i}; expected -1 … ${count - 1}`);
        }
        break;
      }
      default:
        throw new TypeError(`Column ${label} has unknown type ${JSON.stringify((column as { type: unknown }).type)}`);
    }
    if (columnLength(column) !== length) {
      throw new RangeError(
        `Column ${label} has ${columnLength(column)} rows, expected ${length} (all columns of a frame have the same length)`,
      );
    }
  }
  if (frame.index !== undefined) {
    const seen = new Set<string>();
    for (const name of frame.index) {
      if (!names.has(name)) throw new RangeError(`Index column ${JSON.stringify(name)} is not a column of the frame`);
      if (seen.has(name)) throw new RangeError(`Index column ${JSON.stringify(name)} is named twice`);
      seen.add(name);
    }
  }
  if (frame.metadata !== undefined) {
    for (const [key, value] of Object.entries(frame.metadata)) {
      if (typeof value !== 'string') throw new TypeError(`Metadata ${JSON.stringify(key)} must be a string`);
      if (key === 'pandas' && frame.index !== undefined) throw new RangeError('Metadata key "pandas" is written from the frame\'s index');
    }
  }
  return length;
}
