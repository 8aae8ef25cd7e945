"""A real DEM with voids, as national DEMs and SRTM v1 have them (#49 item 3).

From the Sierra SRTM: California only (nodata past the California-Nevada
border, as a DEM clipped to its country is), and SRTM-v1-style voids on the
steepest slopes (twelve nodata discs of 10 pixels' radius where the 1.5 km
slope is steepest, at least 12 blocks apart).

    voids_dem.py SIERRA_SRTM OUT.tif   (prints the voids' share and places)
"""
import sys

import numpy as np
from osgeo import gdal

src = gdal.Open(sys.argv[1])
a = src.ReadAsArray().astype(np.float32)
gt = src.GetGeoTransform()
h, w = a.shape
lon = gt[0] + (np.arange(w) + 0.5) * gt[1]
lat = gt[3] + (np.arange(h) + 0.5) * gt[5]
LON, LAT = np.meshgrid(lon, lat)
# The border: Lake Tahoe (39.0, -120.0) to the Colorado River (35.0, -114.63).
border_lon = -120.0 + (39.0 - LAT) / 4.0 * (120.0 - 114.63)
nevada = LON > border_lon
nodata = -32768.0
out = a.copy()
out[nevada] = nodata
# Steep-slope voids: 12 blobs of about 1.5 km where the slope is steepest.
gy, gx = np.gradient(a, 92.0, 74.0)
slope = np.hypot(gx, gy)
k = 16
coarse = slope[: h // k * k, : w // k * k].reshape(h // k, k, w // k, k).mean(axis=(1, 3))
coarse[nevada[: h // k * k : k, : w // k * k : k]] = 0
picks = np.argsort(coarse.ravel())[::-1]
taken = []
for p in picks:
    r, c = divmod(p, coarse.shape[1])
    if all(abs(r - r0) + abs(c - c0) > 12 for r0, c0 in taken):
        taken.append((r, c))
    if len(taken) == 12:
        break
yy, xx = np.mgrid[0:h, 0:w]
for r, c in taken:
    cy, cx = r * k + k // 2, c * k + k // 2
    out[(yy - cy) ** 2 + (xx - cx) ** 2 < 10 ** 2] = nodata
drv = gdal.GetDriverByName('GTiff')
dst = drv.Create(sys.argv[2], w, h, 1, gdal.GDT_Float32, ['COMPRESS=DEFLATE', 'TILED=YES'])
dst.SetGeoTransform(gt)
dst.SetProjection(src.GetProjection())
b = dst.GetRasterBand(1)
b.SetNoDataValue(nodata)
b.WriteArray(out)
dst = None
voids = (out == nodata)
print(f"nodata {voids.mean()*100:.1f}% ({nevada.mean()*100:.1f}% past the border, {len(taken)} blobs inside)")
for r, c in taken:
    print(f"blob at {lat[r*k+k//2]:.4f}, {lon[c*k+k//2]:.4f}")
