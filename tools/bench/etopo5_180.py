#!/usr/bin/env python3
"""ETOPO5 as a GeoTIFF running -180..180 (tiled Float32), for the benches.

ETOPO5's columns run 0..360 and gdalwarp does not wrap a source across the
antimeridian, so the columns are rolled by half a turn once, here.

    /usr/bin/python3 tools/bench/etopo5_180.py ETOPO5.cdf OUT.tif
"""
import sys

import numpy as np
from osgeo import gdal

gdal.UseExceptions()
src = gdal.Open(sys.argv[1])
a = src.GetRasterBand(1).ReadAsArray()
gt = list(src.GetGeoTransform())
a = np.roll(a, -a.shape[1] // 2, axis=1)
gt[0] -= 180.0
out = gdal.GetDriverByName("GTiff").Create(sys.argv[2], a.shape[1], a.shape[0], 1, gdal.GDT_Float32, ["TILED=YES"])
out.SetGeoTransform(gt)
out.SetProjection(src.GetProjection() or 'GEOGCS["WGS 84",DATUM["WGS_1984",SPHEROID["WGS 84",6378137,298.257223563]],PRIMEM["Greenwich",0],UNIT["degree",0.0174532925199433]]')
out.GetRasterBand(1).WriteArray(a)
out = None
