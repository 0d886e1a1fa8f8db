#!/usr/bin/env python3
"""PostGIS 3 peer of perimeter-bench: GiST-indexed ST_Contains, raw and on ST_Subdivide(geom, 256), and circles
with ST_DWithin on geography, on a private cluster started by bench/postgis.sh.

usage: postgis_peer.py DATA_DIR SOCKET_DIR PORT POINTS RUNS PAIRS_OUT SUB_PAIRS_OUT CIRCLE_PAIRS_OUT
Loads DATA_DIR/fences_wkt.tsv, circles.csv and the first POINTS records of points.bin, writes the pairs of each
query as little-endian <u32 point><u32 fence>, and prints one JSON line of wall-second medians (the server does
the work; the cluster runs pinned to one core with parallel workers off).
"""
import io, json, statistics, sys, time
import numpy as np
import psycopg2

data, sock, port, npoints, runs = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
out_raw, out_sub, out_circ = sys.argv[6], sys.argv[7], sys.argv[8]
conn = psycopg2.connect(host=sock, port=port, user="postgres", dbname="postgres")
conn.autocommit = True
cur = conn.cursor()
wall = time.perf_counter


def timed(sql):
    t0 = wall(); cur.execute(sql); return wall() - t0


cur.execute("CREATE EXTENSION IF NOT EXISTS postgis")
for setting in ("max_parallel_workers_per_gather = 0", "jit = off", "work_mem = '256MB'"):
    cur.execute(f"SET {setting}")
cur.execute("SELECT postgis_lib_version()"); version = cur.fetchone()[0]
cur.execute("DROP TABLE IF EXISTS fences, fsub, pts, circles")
cur.execute("CREATE TABLE fences (id int, kind text, nverts int, wkt text)")
with open(f"{data}/fences_wkt.tsv") as f:
    cur.copy_expert("COPY fences (id, kind, nverts, wkt) FROM STDIN", f)
cur.execute("ALTER TABLE fences ADD COLUMN geom geometry(Geometry, 4326)")
cur.execute("UPDATE fences SET geom = ST_GeomFromText(wkt, 4326)")
index_s = timed("CREATE INDEX ON fences USING gist (geom)")
subdivide_build_s = timed("CREATE TABLE fsub AS SELECT id, ST_Subdivide(geom, 256) AS geom FROM fences") \
    + timed("CREATE INDEX ON fsub USING gist (geom)")

rec = np.fromfile(f"{data}/points.bin", dtype=np.dtype([("device", "<u4"), ("seq", "<u4"), ("ts", "<f8"), ("lon", "<f8"), ("lat", "<f8")]))[:npoints]
buf = io.StringIO()
for i, (x, y) in enumerate(zip(rec["lon"].tolist(), rec["lat"].tolist())):
    buf.write(f"{i}\t{x!r}\t{y!r}\n")
buf.seek(0)
cur.execute("CREATE TABLE pts (seq int, lon float8, lat float8)")
cur.copy_expert("COPY pts FROM STDIN", buf)
cur.execute("ALTER TABLE pts ADD COLUMN geom geometry(Point, 4326), ADD COLUMN geog geography(Point, 4326)")
cur.execute("UPDATE pts SET geom = ST_SetSRID(ST_MakePoint(lon, lat), 4326), geog = ST_SetSRID(ST_MakePoint(lon, lat), 4326)::geography")
# Circles have a radius per row: with the GiST index on the points, each circle (outer row) probes the index
# with its own radius, instead of testing every (point, circle) pair.
cur.execute("CREATE INDEX ON pts USING gist (geog)")
cur.execute("CREATE TABLE circles (id int, lon float8, lat float8, radius float8)")
with open(f"{data}/circles.csv") as f:
    cur.copy_expert("COPY circles FROM STDIN WITH (FORMAT csv, HEADER true)", f)
cur.execute("ALTER TABLE circles ADD COLUMN geog geography(Point, 4326)")
cur.execute("UPDATE circles SET geog = ST_SetSRID(ST_MakePoint(lon, lat), 4326)::geography")
cur.execute("CREATE INDEX ON circles USING gist (geog)")
for table in ("fences", "fsub", "pts", "circles"):
    cur.execute(f"VACUUM ANALYZE {table}")

Q_RAW = "SELECT p.seq, f.id FROM pts p JOIN fences f ON ST_Contains(f.geom, p.geom)"
Q_SUB = "SELECT DISTINCT p.seq, s.id FROM pts p JOIN fsub s ON ST_Contains(s.geom, p.geom)"
Q_CIRC = "SELECT p.seq, c.id FROM pts p JOIN circles c ON ST_DWithin(c.geog, p.geog, c.radius)"


def median_count(q):
    return statistics.median(timed(f"SELECT count(*) FROM ({q}) q") for _ in range(runs))


def dump(q, path):
    cur.execute(q)
    rows = np.asarray(cur.fetchall(), dtype=np.uint32).reshape(-1, 2)
    rows = rows[np.lexsort((rows[:, 1], rows[:, 0]))] if len(rows) else rows
    rows.astype("<u4").tofile(path)
    return len(rows)


result = {"version": version, "points": int(len(rec)), "index_s": index_s, "subdivide_build_s": subdivide_build_s,
          "contains_s": median_count(Q_RAW), "subdivide_s": median_count(Q_SUB), "circles_s": median_count(Q_CIRC),
          "pairs": dump(Q_RAW, out_raw), "sub_pairs": dump(Q_SUB, out_sub), "circle_pairs": dump(Q_CIRC, out_circ)}
cur.execute("DROP TABLE IF EXISTS fences, fsub, pts, circles")
print(json.dumps(result))
