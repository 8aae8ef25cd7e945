#!/usr/bin/python3
"""Times GDAL reading random whole blocks of a tiled GeoTIFF/COG, with GDAL's
block cache off so every read decompresses. Prints JSON.

usage: gdal_block_read.py RASTER [READS]
"""
import json
import random
import sys
import time

from osgeo import gdal

gdal.UseExceptions()
gdal.SetCacheMax(0)

path = sys.argv[1]
reads = int(sys.argv[2]) if len(sys.argv) > 2 else 4000
ds = gdal.Open(path)
band = ds.GetRasterBand(1)
bx, by = band.GetBlockSize()
full_x, full_y = ds.RasterXSize // bx, ds.RasterYSize // by
rng = random.Random(2026)
times = []
for _ in range(reads):
    i, j = rng.randrange(full_x), rng.randrange(full_y)
    start = time.perf_counter()
    data = band.ReadBlock(i, j)
    times.append((time.perf_counter() - start) * 1e6)
    assert len(data) == bx * by * gdal.GetDataTypeSize(band.DataType) // 8
times.sort()
print(json.dumps({
    "raster": path,
    "block": [bx, by],
    "data_type": gdal.GetDataTypeName(band.DataType),
    "reads": reads,
    "median_us": times[len(times) // 2],
    "p99_us": times[int((len(times) - 1) * 0.99)],
    "gdal": gdal.__version__,
}))
