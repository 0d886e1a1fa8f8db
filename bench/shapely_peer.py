#!/usr/bin/env python3
"""Shapely 2 peer of perimeter-bench: STRtree + prepared contains, bulk and per point.

usage: shapely_peer.py DATA_DIR PAIRS_OUT RUNS PER_POINT_LIMIT
Reads DATA_DIR/fences_wkt.tsv and DATA_DIR/points.bin (32-byte records <u32 device><u32 seq><f64 ts><f64 lon><f64 lat>),
writes the (point, fence) pairs found by the bulk query to PAIRS_OUT as little-endian <u32 point><u32 fence>,
and prints one JSON line of CPU-second medians. Run by perimeter-bench (pinned to one core), not by hand.
"""
import json, statistics, sys, time
import numpy as np
import shapely

data, pairs_out, runs, per_point_limit = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
cpu = time.process_time

ids, wkts = [], []
with open(f"{data}/fences_wkt.tsv") as f:
    for line in f:
        fid, _kind, _nv, wkt = line.rstrip("\n").split("\t")
        ids.append(int(fid)); wkts.append(wkt)
ids = np.asarray(ids, dtype=np.uint32)
rec = np.fromfile(f"{data}/points.bin", dtype=np.dtype([("device", "<u4"), ("seq", "<u4"), ("ts", "<f8"), ("lon", "<f8"), ("lat", "<f8")]))
xs, ys = rec["lon"].copy(), rec["lat"].copy()


def build():
    geoms = shapely.from_wkt(wkts)
    shapely.prepare(geoms)
    return geoms, shapely.STRtree(geoms)


build_times = []
for _ in range(runs):
    geoms = tree = None
    t0 = cpu(); geoms, tree = build(); build_times.append(cpu() - t0)

CHUNK = 100_000  # bounded memory


def bulk():
    """STRtree candidates for a chunk of points at once, then prepared contains over all candidate pairs.
    (query(points, predicate="within") would prepare the points, not the polygons: much slower.)"""
    parts = []
    for start in range(0, len(xs), CHUNK):
        cx, cy = xs[start:start + CHUNK], ys[start:start + CHUNK]
        pi, fi = tree.query(shapely.points(cx, cy))
        keep = shapely.contains_xy(geoms[fi], cx[pi], cy[pi])
        parts.append(np.stack([pi[keep] + start, fi[keep]]))
    return np.concatenate(parts, axis=1) if parts else np.zeros((2, 0), dtype=np.int64)


bulk_times = []
for _ in range(runs):
    t0 = cpu(); result = bulk(); bulk_times.append(cpu() - t0)

n = min(per_point_limit, len(xs))
t0 = cpu()
count = 0
for i in range(n):
    x, y = xs[i], ys[i]
    cand = tree.query(shapely.Point(x, y))
    if len(cand):
        count += int(shapely.contains_xy(geoms[cand], x, y).sum())
per_point = cpu() - t0

pairs = np.stack([result[0].astype(np.uint32), ids[result[1]]], 1)
pairs = pairs[np.lexsort((pairs[:, 1], pairs[:, 0]))]
pairs.astype("<u4").tofile(pairs_out)
print(json.dumps({"version": shapely.__version__, "geos": shapely.geos_version_string, "points": len(xs),
                  "pairs": int(len(pairs)), "build_s": statistics.median(build_times),
                  "bulk_s": statistics.median(bulk_times), "per_point_points": n, "per_point_s": per_point,
                  "per_point_pairs": count}))
