import {
  DOUBLE,
  DuckDBTableFunction,
  INTEGER,
  VARCHAR,
  type DuckDBConnection,
  type DuckDBDoubleVector,
  type DuckDBIntegerVector,
  type DuckDBVarCharVector,
} from '@duckdb/node-api';

/**
 * Typed arrays → DuckDB rows, without copying them into SQL: a table function `name(id)` scans the
 * arrays registered under `id` as columns `k` (the row number, INTEGER), `c0`, `c1`, … in 2,048-row
 * chunks, in order (one scan thread). A COPY … FROM name(id) then writes them where SQL says.
 * Shared by the sample files (engine/samples/sample-file.ts) and the Parquet frame writer (engine/frames/parquet-writer.ts).
 */

/** One source column: DOUBLE (Float64Array), INTEGER (Int32Array) or VARCHAR (codes mapped to labels in JS; −1 is null). */
export type SourceArray = Float64Array | Int32Array | { codes: Int32Array; labels: string[] };

export interface ArraySource {
  length: number;
  arrays: SourceArray[];
}

export const CHUNK_ROWS = 2048; // DuckDB's vector size: the most rows a data chunk holds

export interface ArraySourceFunction {
  /** The SQL that scans the arrays of `id`: `name(id)`. */
  from(id: number): string;
  /** Make the arrays scannable while `fn` runs (registering the table function on the connection once). */
  withSource<T>(connection: DuckDBConnection, source: ArraySource, fn: (id: number) => Promise<T>): Promise<T>;
}

export function arraySourceFunction(name: string): ArraySourceFunction {
  // Sources waiting for the statement that scans them: id → arrays (looked up by the bind).
  const pending = new Map<number, ArraySource>();
  let nextId = 1;
  const registered = new WeakSet<DuckDBConnection>();

  const tableFunction = () =>
    DuckDBTableFunction.create({
      name,
      parameterTypes: [INTEGER],
      bindFunction: (info) => {
        const source = pending.get(info.getParameter(0) as number);
        if (!source) {
          info.setError(`${name}: no such pending source`);
          return;
        }
        info.addResultColumn('k', INTEGER);
        source.arrays.forEach((array, i) =>
          info.addResultColumn(`c${i}`, array instanceof Float64Array ? DOUBLE : array instanceof Int32Array ? INTEGER : VARCHAR),
        );
        info.setBindData({ source });
        info.setCardinality(source.length, true);
      },
      initFunction: (info) => {
        info.setInitData({ next: 0 });
        info.setMaxThreads(1); // one scan thread: rows leave in order
      },
      mainFunction: (info, output) => {
        const { source } = info.bindData as { source: ArraySource };
        const state = info.initData as { next: number };
        const offset = state.next;
        const n = Math.min(CHUNK_ROWS, source.length - offset);
        output.rowCount = Math.max(0, n);
        if (n <= 0) return;
        const k = output.getColumnVector(0) as DuckDBIntegerVector;
        for (let i = 0; i < n; i++) k.setItem(i, offset + i);
        k.flush();
        source.arrays.forEach((array, c) => {
          if (array instanceof Float64Array || array instanceof Int32Array) {
            const vector = output.getColumnVector(c + 1) as DuckDBDoubleVector | DuckDBIntegerVector;
            for (let i = 0; i < n; i++) vector.setItem(i, array[offset + i]!);
            vector.flush();
          } else {
            // VARCHAR: flush() assigns each string with one native call (fine for long label lists).
            const vector = output.getColumnVector(c + 1) as DuckDBVarCharVector;
            for (let i = 0; i < n; i++) {
              const code = array.codes[offset + i]!;
              vector.setItem(i, code < 0 ? null : array.labels[code]!);
            }
            vector.flush();
          }
        });
        state.next = offset + n;
      },
    });

  return {
    from: (id) => `${name}(${id})`,
    async withSource(connection, source, fn) {
      if (!registered.has(connection)) {
        connection.registerTableFunction(tableFunction());
        registered.add(connection);
      }
      const id = nextId;
      nextId = nextId >= 2 ** 31 - 1 ? 1 : nextId + 1;
      pending.set(id, source);
      try {
        return await fn(id);
      } finally {
        pending.delete(id);
      }
    },
  };
}
