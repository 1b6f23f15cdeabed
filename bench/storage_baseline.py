"""What a user would do instead of GET /api/v1/activities/longitudinal-mean-max?after=… on a service
whose files are in an S3 store: fetch the athlete's sample files from the bucket (pyarrow's S3
filesystem, 16 at a time), then compute the fatigue curves with DuckDB and numpy
(bench/longitudinal_baseline.py, the same computation over local files).

Input (a JSON file, argv[1]): {"endpoint", "bucket", "access_key", "secret_key", "region", "keys": [...oldest
first...], "thresholds": [J...], "durations": [s...]}.
Output (stdout, JSON): {"seconds": fetch + compute, "fetch_seconds": ..., "best": [[per duration] per threshold]}.
"""
import json
import os
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from urllib.parse import urlparse

import pyarrow.fs as pafs

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import longitudinal_baseline  # noqa: E402


def main(spec):
    url = urlparse(spec["endpoint"])
    s3 = pafs.S3FileSystem(
        access_key=spec["access_key"],
        secret_key=spec["secret_key"],
        region=spec["region"],
        scheme=url.scheme,
        endpoint_override=url.netloc,
        force_virtual_addressing=False,
    )
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()

        def fetch(i_key):
            i, key = i_key
            path = os.path.join(tmp, f"{i}.parquet")
            with s3.open_input_stream(f"{spec['bucket']}/{key}") as src, open(path, "wb") as dst:
                dst.write(src.read())
            return path

        with ThreadPoolExecutor(16) as pool:
            paths = list(pool.map(fetch, enumerate(spec["keys"])))
        fetched = time.perf_counter() - t0
        out = longitudinal_baseline.run({"paths": paths, "thresholds": spec["thresholds"], "durations": spec["durations"]})
        return {"seconds": fetched + out["seconds"], "fetch_seconds": fetched, "best": out["best"]}


if __name__ == "__main__":
    print(json.dumps(main(json.load(open(sys.argv[1])))))
