"""What an API client would do instead of GET /api/v1/activities/longitudinal-mean-max?after=…:
read the stored sample files with DuckDB and compute the curves with numpy.

Input (a JSON file, argv[1]): {"paths": [...oldest first...], "thresholds": [J...], "durations": [s...]}.
Output (stdout, JSON): {"seconds": wall time of read + compute, "read_seconds": ..., "best": [[per duration] per threshold]}.

With {"data": true} instead, what a client would do instead of GET /api/v1/activities/longitudinal-data:
read every sample file's timestamp and power, in time order, into numpy arrays with DuckDB; output
{"seconds": wall time, "rows": n}.

With `--serve` instead of a file (bench/compare/script-server.ts): one such spec per line on stdin,
one output line per spec on stdout, each run as a one-shot run does it (a new DuckDB connection),
without paying Python's and the modules' start-up each time; a spec that fails answers
{"error": message} and the next is read.

For each activity: power with gaps as 0, its prefix sums (numpy.cumsum: sequential float64 additions,
the same sums as the service's kernels), the suffix after each threshold of accumulated work, and for
each duration the best window mean inside that suffix; the best over all activities per (threshold,
duration). NaN where no activity has such a window.
"""
import json
import sys
import time

import duckdb
import numpy as np


def run(spec):
    paths = spec["paths"]
    thresholds = np.array(spec.get("thresholds", []), dtype=np.float64)
    durations = np.array(spec.get("durations", []), dtype=np.int64)

    t0 = time.perf_counter()
    con = duckdb.connect()
    try:
        return compute(con, spec, paths, thresholds, durations, t0)
    finally:
        con.close()


def compute(con, spec, paths, thresholds, durations, t0):
    files = ", ".join("'" + p.replace("'", "''") + "'" for p in paths)
    if spec.get("data"):
        data = con.sql(f"SELECT timestamp, power, filename FROM read_parquet([{files}], filename = true) ORDER BY timestamp").fetchnumpy()
        return {"seconds": time.perf_counter() - t0, "rows": len(data["power"])}
    table = con.sql(f"SELECT filename, coalesce(power, 0) AS power FROM read_parquet([{files}], filename = true)").fetchnumpy()
    t1 = time.perf_counter()

    # One array per file, in the order given.
    names = table["filename"]
    power = np.asarray(table["power"], dtype=np.float64)
    boundaries = np.flatnonzero(names[1:] != names[:-1]) + 1
    starts = np.concatenate(([0], boundaries))
    ends = np.concatenate((boundaries, [len(power)]))
    order = {p: i for i, p in enumerate(paths)}
    series = sorted(zip(starts, ends, names[starts]), key=lambda s: order[s[2]])

    best = np.full((len(thresholds), len(durations)), np.nan)
    for s, e, _ in series:
        x = power[s:e]
        prefix = np.concatenate(([0.0], np.cumsum(x)))
        for j, threshold in enumerate(thresholds):
            reached = np.flatnonzero(prefix[1:] >= threshold) if threshold > 0 else np.array([-1])
            if len(reached) == 0:
                continue
            cut = reached[0] + 1
            p = prefix[cut:]
            for k, d in enumerate(durations):
                if d >= len(p):
                    continue
                m = np.max(p[d:] - p[:-d]) / d
                if not m <= best[j, k]:
                    best[j, k] = m
    t2 = time.perf_counter()

    return {"seconds": t2 - t0, "read_seconds": t1 - t0, "best": [[None if np.isnan(v) else float(v) for v in row] for row in best]}


def serve():
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            out = run(json.loads(line))
        except Exception as err:  # one bad spec answers its error; the server goes on
            out = {"error": f"{type(err).__name__}: {err}".replace("\n", " ")}
        sys.stdout.write(json.dumps(out) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    if sys.argv[1:] == ["--serve"]:
        serve()
    else:
        print(json.dumps(run(json.load(open(sys.argv[1])))))
