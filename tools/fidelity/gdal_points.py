#!/usr/bin/python3
"""GDAL's own reads of a DEM at random places: the reference a pack is held to.

The key decision: the values come from GDAL's warper, not from a
re-implementation of its filters. Each place is read as a one-pixel warp in
the DEM's own CRS centred on it, once with bilinear and once with cubic
convolution resampling; the bilinear value is what a pack must reproduce,
and the gap between the two is the DEM's own interpolation ambiguity, the
yardstick the pack's error is judged by (tests/fidelity.rs).

Places are uniform in the raster's pixel-area extent, a quarter of them in
the two-pixel band along its edges (where stacking and tiling used to alter
measured ground). Places where either read is nodata (a void) are skipped.

Usage: gdal_points.py DEM COUNT SEED > points.json
Output: {"dem": ..., "points": [{"lat", "lon", "bilinear", "cubic", "pixels_from_edge"}, ...]}
"""
import json
import random
import sys

from osgeo import gdal, osr

gdal.UseExceptions()


def place_in_pixels(rng, width, height):
    """A pixel-space place: uniform, or (one time in four) near an edge."""
    if rng.random() >= 0.25:
        return rng.uniform(0, width), rng.uniform(0, height)
    band = min(2.0, width / 2, height / 2)
    side = rng.randrange(4)
    along_x, along_y = rng.uniform(0, width), rng.uniform(0, height)
    inset = rng.uniform(0, band)
    return [(inset, along_y), (width - inset, along_y), (along_x, inset), (along_x, height - inset)][side]


def read(dataset, x, y, algorithm, epsilon):
    """GDAL's value at CRS point (x, y): a 1 x 1 warp centred there."""
    out = gdal.Warp(
        "",
        dataset,
        format="MEM",
        outputBounds=(x - epsilon, y - epsilon, x + epsilon, y + epsilon),
        width=1,
        height=1,
        resampleAlg=algorithm,
        outputType=gdal.GDT_Float64,
        dstNodata=float("nan"),
    )
    value = out.GetRasterBand(1).ReadAsArray()[0][0]
    return None if value != value else float(value)


def main():
    path, count, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    dataset = gdal.Open(path)
    gt = dataset.GetGeoTransform()
    width, height = dataset.RasterXSize, dataset.RasterYSize
    source = dataset.GetSpatialRef()
    to_degrees = None
    if source is not None and source.IsProjected():
        source.SetAxisMappingStrategy(osr.OAMS_TRADITIONAL_GIS_ORDER)
        wgs84 = osr.SpatialReference()
        wgs84.ImportFromEPSG(4326)
        wgs84.SetAxisMappingStrategy(osr.OAMS_TRADITIONAL_GIS_ORDER)
        to_degrees = osr.CoordinateTransformation(source, wgs84)
    # A thousandth of a pixel: the warp's one output pixel is a point.
    epsilon = 1e-3 * min(abs(gt[1]), abs(gt[5]))
    rng = random.Random(seed)
    points = []
    attempts = 0
    while len(points) < count and attempts < 20 * count:
        attempts += 1
        px, py = place_in_pixels(rng, width, height)
        x = gt[0] + px * gt[1] + py * gt[2]
        y = gt[3] + px * gt[4] + py * gt[5]
        bilinear = read(dataset, x, y, "bilinear", epsilon)
        cubic = read(dataset, x, y, "cubic", epsilon)
        if bilinear is None or cubic is None:
            continue
        lon, lat = (x, y) if to_degrees is None else to_degrees.TransformPoint(x, y)[:2]
        edge = min(px, py, width - px, height - py)
        points.append({"lat": lat, "lon": lon, "bilinear": bilinear, "cubic": cubic, "pixels_from_edge": edge})
    json.dump({"dem": path, "points": points}, sys.stdout)


if __name__ == "__main__":
    main()
