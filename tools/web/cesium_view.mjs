// A rendered CesiumJS view of a planet-pack export: drives headless
// Chromium (Debian's, through npm's puppeteer-core) to URL (a
// cesium_view.html served beside the tiles), waits until the camera has
// arrived (a flight, `to=`, has ended) and Cesium says its tiles are loaded
// for three seconds running, saves a screenshot to OUT and
// prints JSON: whether the tiles loaded, in how long, the page's errors and
// the heights Cesium draws at POINTS ("lat,lon;lat,lon", from the rendered
// tiles: globe.getHeight).
//
//   node tools/web/cesium_view.mjs URL OUT.png POINTS
import puppeteer from 'puppeteer-core';

const [url, out, points = ''] = process.argv.slice(2);
const browser = await puppeteer.launch({
  executablePath: '/usr/bin/chromium',
  headless: true,
  args: ['--no-sandbox', '--use-angle=swiftshader', '--enable-unsafe-swiftshader'],
});
const errors = [];
try {
  const page = await browser.newPage();
  await page.setViewport({ width: 960, height: 540 });
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('console', (m) => {
    // Cesium asks for its ion credit icon: the only file a static export lacks.
    if (m.type() === 'error' && !m.text().includes('404')) errors.push(m.text());
  });
  await page.goto(url, { waitUntil: 'load' });
  const started = Date.now();
  let loadedFor = 0;
  while (Date.now() - started < 180000 && loadedFor < 3) {
    await new Promise((r) => setTimeout(r, 1000));
    const loaded = await page.evaluate(
      () => Boolean(window.viewer && window.arrived !== false && window.viewer.scene.globe.tilesLoaded),
    );
    loadedFor = loaded ? loadedFor + 1 : 0;
  }
  const at = points.split(';').filter(Boolean).map((p) => p.split(',').map(Number));
  const drawn = await page.evaluate(
    (at) => at.map(([lat, lon]) => window.viewer.scene.globe.getHeight(Cesium.Cartographic.fromDegrees(lon, lat)) ?? null),
    at,
  );
  await page.screenshot({ path: out });
  console.log(JSON.stringify({ loaded: loadedFor >= 3, seconds: (Date.now() - started) / 1000, errors, drawn }));
} finally {
  await browser.close();
}
