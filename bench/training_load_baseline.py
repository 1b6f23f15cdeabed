"""What an API client would do instead of GET /api/v1/activities/longitudinal-training-load: read the
activity list (GET /api/v1/activities/, pages of 1,000, with python requests) and compute the performance
management chart from each activity's local start day and `training_stress.score` with pandas.

Input (a JSON file, argv[1]): {"url": the service, "token": a bearer token, "start": "YYYY-MM-DD",
"end": "YYYY-MM-DD", "fetch_runs": n, "compute_runs": m}.
Output (stdout, JSON): {"activities": n, "fetch_seconds": [...], "compute_seconds": [...],
"chart": {"date": ["YYYY-MM-DD", ...], "stress": [...], "ctl": [...], "atl": [...], "tsb": [...], "ramp_rate": [...]}}.

The chart (engine/load/pmc.ts, GoldenCheetah's definitions): the stress summed per local day (no score
counts as 0), every day from the first day with training (or `start`, if earlier) to `end`, then
ctl = stress·(1 − e^(−1/42)) + yesterday's ctl·e^(−1/42) and atl the same with 7 days, both 0 the day
before the first day (pandas' ewm with adjust=False over a series with a 0 day put in front), tsb =
yesterday's ctl − atl, ramp_rate = ctl − ctl 7 days before (0 before the first day); cut to [start, end].
"""
import json
import math
import sys
import time

import pandas as pd
import requests

PAGE = 1000


def fetch(session, url, token):
    """Every activity of the user, newest first, page after page."""
    activities = []
    offset = 0
    while True:
        res = session.get(
            f"{url}/api/v1/activities/",
            params={"limit": PAGE, "offset": offset},
            headers={"authorization": f"Bearer {token}"},
        )
        res.raise_for_status()
        page = res.json()
        activities.extend(page)
        if len(page) < PAGE:
            return activities
        offset += PAGE


def loads(stress, days):
    """The exponentially weighted load of `stress`, 0 before its first day."""
    keep = math.exp(-1 / days)
    padded = pd.concat([pd.Series([0.0]), pd.Series(stress.to_numpy())], ignore_index=True)
    out = padded.ewm(alpha=1 - keep, adjust=False).mean().iloc[1:]
    return pd.Series(out.to_numpy(), index=stress.index)


def chart(activities, start, end):
    day = pd.to_datetime([a["start_local"][:10] for a in activities])
    score = pd.Series([(a["training_stress"] or {}).get("score") for a in activities], index=day, dtype="float64")
    end_ts, start_ts = pd.Timestamp(end), pd.Timestamp(start)
    daily = score.groupby(level=0).sum()
    daily = daily[daily.index <= end_ts]
    first = min(daily.index.min(), start_ts) if len(daily) else start_ts
    stress = daily.reindex(pd.date_range(first, end_ts, freq="D"), fill_value=0.0)
    ctl = loads(stress, 42)
    atl = loads(stress, 7)
    frame = pd.DataFrame(
        {
            "stress": stress,
            "ctl": ctl,
            "atl": atl,
            "tsb": (ctl - atl).shift(1, fill_value=0.0),
            "ramp_rate": ctl - ctl.shift(7, fill_value=0.0),
        }
    )
    return frame[frame.index >= start_ts]


def main():
    spec = json.load(open(sys.argv[1]))
    session = requests.Session()
    fetch_seconds = []
    for _ in range(spec.get("fetch_runs", 1)):
        t0 = time.perf_counter()
        activities = fetch(session, spec["url"], spec["token"])
        fetch_seconds.append(time.perf_counter() - t0)
    compute_seconds = []
    for _ in range(spec.get("compute_runs", 1)):
        t0 = time.perf_counter()
        frame = chart(activities, spec["start"], spec["end"])
        compute_seconds.append(time.perf_counter() - t0)
    out = {"date": [d.strftime("%Y-%m-%d") for d in frame.index]}
    out.update({c: frame[c].tolist() for c in frame.columns})
    print(
        json.dumps(
            {"activities": len(activities), "fetch_seconds": fetch_seconds, "compute_seconds": compute_seconds, "chart": out}
        )
    )


if __name__ == "__main__":
    main()
