"""What a user would do instead of importing GPX and TCX files into the service: parse each file with lxml
(iterparse, the fast streaming way; gzip-compressed files through the gzip module) into numpy arrays of
time, heart rate, cadence, power, altitude and distance, one file after another.

Input (a JSON file, argv[1]): {"paths": [...]} (.gpx, .tcx, optionally .gz).
Output (stdout, JSON): {"seconds": wall time, "files": n, "points": total trackpoints, "by_format": {"gpx": s, "tcx": s}}.

Elements are matched by local name, whatever their namespace (GPX's TrackPointExtension hr/cad, a bare
power; TCX's HeartRateBpm/Value, Cadence, TPX Watts and DistanceMeters), as a careful script would. Times
are parsed with numpy's datetime64 (the `Z` dropped).
"""
import gzip
import json
import sys
import time

import numpy as np
from lxml import etree

FIELDS = ("time", "hr", "cad", "power", "ele", "dist")


def local(tag):
    return tag.rsplit("}", 1)[-1]


def parse(path):
    opener = gzip.open if path.endswith(".gz") else open
    is_gpx = ".gpx" in path
    point_tag = "trkpt" if is_gpx else "Trackpoint"
    names = (
        {"time": "time", "hr": "hr", "cad": "cad", "power": "power", "ele": "ele"}
        if is_gpx
        else {"Time": "time", "Value": "hr", "Cadence": "cad", "Watts": "power", "AltitudeMeters": "ele", "DistanceMeters": "dist"}
    )
    columns = {f: [] for f in FIELDS}
    current = None
    with opener(path, "rb") as f:
        for event, el in etree.iterparse(f, events=("start", "end"), resolve_entities=False, no_network=True):
            tag = local(el.tag)
            if event == "start":
                if tag == point_tag:
                    current = dict.fromkeys(FIELDS)
                continue
            if current is not None:
                if tag == point_tag:
                    for k in FIELDS:
                        columns[k].append(current[k])
                    current = None
                    el.clear()
                elif tag in names and el.text is not None:
                    current[names[tag]] = el.text
    t = np.array([v[:-1] if v and v.endswith("Z") else v for v in columns["time"]], dtype="datetime64[ms]")
    arrays = {k: np.array([np.nan if v is None else float(v) for v in columns[k]]) for k in FIELDS if k != "time"}
    return len(t), t, arrays


def main():
    spec = json.load(open(sys.argv[1]))
    by_format = {"gpx": 0.0, "tcx": 0.0}
    points = 0
    started = time.perf_counter()
    for path in spec["paths"]:
        t0 = time.perf_counter()
        n, _, _ = parse(path)
        points += n
        by_format["gpx" if ".gpx" in path else "tcx"] += time.perf_counter() - t0
    json.dump({"seconds": time.perf_counter() - started, "files": len(spec["paths"]), "points": points, "by_format": by_format}, sys.stdout)


if __name__ == "__main__":
    main()
