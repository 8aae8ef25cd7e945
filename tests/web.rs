//! `planet-pack export --quantized-mesh` read by clients nobody here wrote
//! (issue #53): every tile of the export of a small stack (a global pack
//! with a regional one over it) decoded by npm's
//! `@here/quantized-mesh-decoder` under node (`tools/web/check_tiles.mjs`:
//! the header's bounds hold the vertices, indices in range, edge lists
//! whole, neighbours' shared edges identical), and every vertex's height
//! within its tile's stated error of the ground `planet-pack points` reads
//! there with `--detail off`; the regional pack's extra levels only inside
//! its box; and a killed export run again gives the same bytes. And
//! CesiumJS itself, in headless Chromium, reading the export from a server
//! on loopback: its heights agree with `planet-pack sample --detail off`
//! within the deepest tile's error.

use std::path::Path;
use std::process::Command;

use planet_system_tests::{json, run_ok, workspace};

/// The checks' node modules, installed by tools/deps.sh (`npm ci` in
/// tools/web).
fn node_checks() -> std::path::PathBuf {
    let web = workspace().join("tools/web");
    assert!(
        web.join("node_modules/@here/quantized-mesh-decoder").exists(),
        "tools/web/node_modules is missing: run tools/deps.sh (npm ci in tools/web)"
    );
    web.join("check_tiles.mjs")
}

/// Every tile of the export in `dir` decoded and checked by
/// `check_tiles.mjs` under node, which writes every 64th vertex's position
/// to `points` and its height and allowed error to `heights`; its summary.
fn decode_every_tile(dir: &str, points: &str, heights: &str) -> serde_json::Value {
    let out = Command::new("node").arg(node_checks()).args([dir, points, heights]).output();
    let out = out.expect("node runs (tools/deps.sh installs nodejs)");
    let report = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{report}\n{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_str(report.trim()).expect("check_tiles.mjs's JSON summary")
}

fn every_file(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else {
                out.push((path.strip_prefix(dir).unwrap().display().to_string(), std::fs::read(&path).unwrap()));
            }
        }
    }
    out.sort();
    out
}

/// The stack both tests export, written into `dir`: the test Earth
/// (procedural, 39 km samples: level 3) and the regional fixture (5.5 km:
/// level 7) over it. Returns their paths, bottom first.
fn stack(dir: &Path) -> (String, String) {
    let p = |name: &str| dir.join(name).to_str().unwrap().to_owned();
    planet_terrain::testing::write_procedural_pack(Path::new(&p("base.planetpack")), 1).expect("the test pack");
    crate::regional::write_regional(Path::new(&p("valley.tif")));
    run_ok("planet-bake", &["--dem", &p("valley.tif"), "--body", "earth", "--out", &p("valley.planetpack")]);
    (p("base.planetpack"), p("valley.planetpack"))
}

#[test]
fn an_export_is_read_by_an_independent_decoder_and_matches_the_packs_ground() {
    let dir = tempfile::tempdir().expect("temp dir");
    let p = |name: &str| dir.path().join(name).to_str().unwrap().to_owned();
    let (base, valley) = stack(dir.path());
    let started = std::time::Instant::now();
    let export = run_ok("planet-pack", &["export", &base, &valley, "--quantized-mesh", &p("tiles")]);
    eprintln!("web: {:.1} s: {}", started.elapsed().as_secs_f64(), String::from_utf8_lossy(&export.stderr).trim());

    // The regional pack's levels past the global one's lie in its box
    // (10-20 N, 10-20 E).
    let layer: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(p("tiles/layer.json")).unwrap()).unwrap();
    let available = layer["available"].as_array().unwrap();
    assert!(available.len() >= 6, "the valley's 5.5 km samples go to level 6: {layer:#}");
    for (z, ranges) in available.iter().enumerate().skip(4) {
        let side = 180.0 / f64::from(1u32 << z);
        for r in ranges.as_array().unwrap() {
            let west = -180.0 + r["startX"].as_f64().unwrap() * side;
            let east = -180.0 + (r["endX"].as_f64().unwrap() + 1.0) * side;
            let south = -90.0 + r["startY"].as_f64().unwrap() * side;
            let north = -90.0 + (r["endY"].as_f64().unwrap() + 1.0) * side;
            assert!(west < 20.0 && east > 10.0 && south < 20.0 && north > 10.0, "level {z}: {r} outside the box");
        }
    }

    let summary = decode_every_tile(&p("tiles"), &p("points.f64"), &p("heights.json"));
    eprintln!("web: decoded and checked at {:.1} s", started.elapsed().as_secs_f64());
    assert!(summary["tiles"].as_u64().unwrap() > 170 && summary["edges_compared"].as_u64().unwrap() > 200, "{summary}");
    // The two root tiles carry the levels under them (layer.json's
    // metadataAvailability 10): CesiumJS, below, finds the deep tiles by them.
    assert_eq!(summary["metadata_tiles"], 2, "{summary}");

    // Each vertex against the measured ground planet-pack reads there, at
    // the finest pack's sample spacing.
    let info = json(&run_ok("planet-pack", &["info", &valley, "--json"]));
    let depth = info["height_data_depth"].as_u64().expect("height_data_depth") as u32;
    let spacing = (std::f64::consts::FRAC_PI_2 * 6_378_137.0 / f64::from(1u32 << depth) / 128.0).to_string();
    let (points, ground_npy) = (p("points.f64"), p("ground.npy"));
    let args =
        ["points", &base, &valley, "--points", &points, "--out", &ground_npy, "--spacing", &spacing, "--detail", "off"];
    run_ok("planet-pack", &args);
    eprintln!("web: the packs' ground read at {:.1} s", started.elapsed().as_secs_f64());
    let npy = std::fs::read(p("ground.npy")).unwrap();
    let header = 10 + u16::from_le_bytes([npy[8], npy[9]]) as usize;
    let ground: Vec<f32> = npy[header..].chunks_exact(4).map(|b| f32::from_le_bytes(b.try_into().unwrap())).collect();
    let heights: Vec<(f64, f64)> =
        serde_json::from_str::<Vec<[f64; 2]>>(&std::fs::read_to_string(p("heights.json")).unwrap())
            .unwrap()
            .into_iter()
            .map(|[h, e]| (h, e))
            .collect();
    assert_eq!(ground.len(), heights.len());
    let mut worst = 0.0f64;
    for (k, (&g, &(h, allowed))) in ground.iter().zip(&heights).enumerate() {
        let off = (f64::from(g) - h).abs();
        assert!(off <= allowed, "vertex {k}: {h} m in the tile, {g} m in the packs (allowed {allowed} m)");
        worst = worst.max(off / allowed);
    }
    eprintln!("web: {summary}; vertices within {:.0}% of their tiles' error of the packs' ground", 100.0 * worst);

    // Killed and run again: the tiles it had are kept, the rest written,
    // the same bytes as an export run whole.
    let whole = every_file(Path::new(&p("tiles")));
    for (name, _) in whole.iter().filter(|(n, _)| n.starts_with("3/") || n == "layer.json") {
        std::fs::remove_file(dir.path().join("tiles").join(name)).unwrap();
    }
    let again = run_ok("planet-pack", &["export", &base, &valley, "--quantized-mesh", &p("tiles"), "--jobs", "1"]);
    let said = String::from_utf8_lossy(&again.stderr);
    assert!(said.contains("already there"), "{said}");
    assert_eq!(every_file(Path::new(&p("tiles"))), whole, "a resumed export writes the same bytes");
}

/// The figures an export's last line states: `(peak, budget)` memory in
/// bytes ("peak memory 21.3 MiB of a 98.0 MiB budget").
fn peak_and_budget(stderr: &str) -> (f64, f64) {
    let after = stderr.split_once("peak memory ").unwrap_or_else(|| panic!("no peak memory in: {stderr}")).1;
    let words: Vec<&str> = after.split_whitespace().collect();
    let value = |number: &str, unit: &str| {
        let scale = match unit {
            "KiB" => 1024.0,
            "MiB" => 1024.0 * 1024.0,
            "GiB" => 1024.0 * 1024.0 * 1024.0,
            _ => 1.0,
        };
        number.parse::<f64>().unwrap() * scale
    };
    (value(words[0], words[1]), value(words[4], words[5]))
}

/// `--gzip` writes the same tiles compressed (the decoder reads them
/// gunzipped, every check passing); a re-run into that directory without
/// it is refused rather than mixing two exports; a memory budget too
/// small is refused naming what it must hold and writing nothing, and
/// the smallest one it names writes the same bytes within it.
#[test]
fn gzip_and_memory_budgets_change_no_tile_and_a_mixed_export_is_refused() {
    let dir = tempfile::tempdir().expect("temp dir");
    let p = |name: &str| dir.path().join(name).to_str().unwrap().to_owned();
    let (base, valley) = stack(dir.path());
    let export = |out: &str, extra: &[&str]| {
        let mut args = vec!["export", &base, &valley, "--quantized-mesh", out, "--max-level", "5", "--jobs", "2"];
        args.extend_from_slice(extra);
        planet_system_tests::run("planet-pack", &args)
    };
    let plain = export(&p("plain"), &[]);
    assert!(plain.status.success(), "{}", String::from_utf8_lossy(&plain.stderr));
    let zipped = export(&p("zipped"), &["--gzip"]);
    assert!(zipped.status.success(), "{}", String::from_utf8_lossy(&zipped.stderr));
    let (plain_files, zipped_files) = (every_file(Path::new(&p("plain"))), every_file(Path::new(&p("zipped"))));
    assert_eq!(plain_files.len(), zipped_files.len());
    let mut saved = 0usize;
    for ((name, bytes), (zipped_name, zipped_bytes)) in plain_files.iter().zip(&zipped_files) {
        assert_eq!(name, zipped_name);
        if !name.ends_with(".terrain") {
            continue;
        }
        let mut unzipped = Vec::new();
        std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(&zipped_bytes[..]), &mut unzipped).unwrap();
        assert!(unzipped == *bytes, "{name}: gunzipped, not the plain export's tile");
        saved += bytes.len() - zipped_bytes.len().min(bytes.len());
    }
    assert!(saved > 0, "gzip saved nothing");
    let summary = decode_every_tile(&p("zipped"), &p("points.f64"), &p("heights.json"));
    assert_eq!(summary["gzipped"], summary["tiles"], "{summary}");

    let mixed = export(&p("zipped"), &[]);
    let said = String::from_utf8_lossy(&mixed.stderr);
    assert!(!mixed.status.success() && said.contains("--gzip on") && said.contains("another directory"), "{said}");
    assert_eq!(every_file(Path::new(&p("zipped"))), zipped_files, "a refused export changed the directory");

    let refused = export(&p("small"), &["--memory", "8M"]);
    let said = String::from_utf8_lossy(&refused.stderr);
    for needle in ["--memory 8.0 MiB is too small", "the process itself", "2 worker threads", "give --memory "] {
        assert!(said.contains(needle), "'{needle}' missing from: {said}");
    }
    assert!(!Path::new(&p("small")).exists(), "a refused export writes nothing");
    let smallest = said.split_once("give --memory ").unwrap().1.split_whitespace().next().unwrap().to_owned();
    let small = export(&p("small"), &["--memory", &smallest]);
    let said = String::from_utf8_lossy(&small.stderr);
    assert!(small.status.success(), "--memory {smallest}: {said}");
    assert_eq!(every_file(Path::new(&p("small"))), plain_files, "the budget changed the tiles");
    let (peak, budget) = peak_and_budget(&said);
    assert!(peak <= budget, "peak memory {peak} past the {budget} budget: {said}");
}

/// Serves `root` over HTTP on loopback (GET only, the query ignored) until
/// the process ends: what a static server does for Cesium.
fn serve(root: std::path::PathBuf) -> u16 {
    use std::io::{BufRead, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a loopback port");
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let root = root.clone();
            std::thread::spawn(move || {
                let mut reader = std::io::BufReader::new(&stream);
                let mut line = String::new();
                if reader.read_line(&mut line).is_err() {
                    return;
                }
                while let Ok(n) = reader.read_line(&mut String::new()) {
                    if n <= 2 {
                        break;
                    }
                }
                let target = line.split_whitespace().nth(1).unwrap_or("/");
                let path = target.split('?').next().unwrap_or("/").trim_start_matches('/');
                let file = root.join(if path.is_empty() { "index.html" } else { path });
                let kind = match file.extension().and_then(|e| e.to_str()) {
                    Some("html") => "text/html",
                    Some("js") => "application/javascript",
                    Some("json") => "application/json",
                    Some("css") => "text/css",
                    _ => "application/octet-stream",
                };
                let mut out = &stream;
                let _ = match std::fs::read(&file) {
                    Ok(body) if !file.components().any(|c| c.as_os_str() == "..") => out
                        .write_all(format!("HTTP/1.1 200 OK\r\nContent-Type: {kind}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n", body.len()).as_bytes())
                        .and_then(|()| out.write_all(&body)),
                    _ => out.write_all(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"),
                };
            });
        }
    });
    port
}

#[test]
fn cesium_reads_the_export_in_headless_chromium_and_agrees_with_the_packs() {
    let web = workspace().join("tools/web");
    let cesium = web.join("node_modules/cesium/Build/Cesium");
    assert!(cesium.exists(), "CesiumJS is missing: run tools/deps.sh (npm ci in tools/web)");
    let dir = tempfile::tempdir().expect("temp dir");
    let (base, valley) = stack(dir.path());
    let site = dir.path().join("site");
    std::fs::create_dir_all(&site).unwrap();
    run_ok("planet-pack", &["export", &base, &valley, "--quantized-mesh", site.join("tiles").to_str().unwrap()]);
    std::os::unix::fs::symlink(&cesium, site.join("Cesium")).unwrap();
    std::fs::copy(web.join("cesium_sample.html"), site.join("index.html")).unwrap();
    std::fs::copy(web.join("cesium_view.html"), site.join("view.html")).unwrap();
    let port = serve(site);
    // Across the valley's dome and plateau, its box's edge, and the test
    // Earth's oceans and mountains far from it.
    let points =
        [(15.0, 15.0), (16.3, 13.2), (12.5, 18.9), (19.99, 15.0), (-40.0, -100.0), (45.0, 60.0), (-10.0, 150.0)];
    let query: Vec<String> = points.iter().map(|(lat, lon)| format!("{lat},{lon}")).collect();
    let url = format!("http://127.0.0.1:{port}/index.html?points={}", query.join(";"));
    let chromium = Command::new("chromium")
        .args(["--headless=new", "--no-sandbox", "--disable-gpu", "--virtual-time-budget=60000", "--dump-dom", &url])
        .output()
        .expect("chromium runs (tools/deps.sh installs it)");
    let dom = String::from_utf8_lossy(&chromium.stdout);
    let line = dom.lines().find(|l| l.contains("RESULT {")).unwrap_or_else(|| panic!("no result in the page:\n{dom}"));
    let json_text = &line[line.find('{').unwrap()..line.rfind('}').unwrap() + 1];
    let result: serde_json::Value = serde_json::from_str(json_text).expect("the page's JSON");
    assert_eq!(result["errors"], serde_json::json!([]), "CesiumJS reported errors: {result:#}");
    let (heights, levels) = (result["heights"].as_array().unwrap(), result["levels"].as_array().unwrap());
    for (k, &(lat, lon)) in points.iter().enumerate() {
        let (lat_text, lon_text) = (lat.to_string(), lon.to_string());
        let sample = json(&run_ok(
            "planet-pack",
            &["sample", &base, &valley, "--lat", &lat_text, "--lon", &lon_text, "--json", "--detail", "off"],
        ));
        let ours = sample["elevation_m"].as_f64().unwrap();
        let theirs = heights[k].as_f64().unwrap_or_else(|| panic!("no height at {lat}, {lon}: {result:#}"));
        let level = levels[k].as_u64().unwrap() as i32;
        // Cesium's error for the deepest level there, and a 32767th of a
        // tile's height range for the quantization.
        let allowed = 6_378_137.0 * std::f64::consts::TAU * 0.25 / 130.0 / 2f64.powi(level) + 1.0;
        eprintln!(
            "cesium: ({lat}, {lon}) level {level}: {theirs:.1} m in CesiumJS, {ours:.1} m in the packs (allowed {allowed:.0} m)"
        );
        assert!((theirs - ours).abs() <= allowed, "({lat}, {lon}): CesiumJS {theirs} m, the packs {ours} m");
    }

    // A rendered view of the valley's dome (2.4 km over a 400 m plateau)
    // from 30 km: Cesium draws the packs' ground, not its ellipsoid, and
    // says nothing wrong. The picture is kept for a reviewer.
    let view = format!("http://127.0.0.1:{port}/view.html?lat=14.6&lon=14.0&alt=30000&heading=40&pitch=-25");
    let picture = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("web-cesium-dome.png");
    let out = Command::new("node")
        .arg(web.join("cesium_view.mjs"))
        .args([view.as_str(), picture.to_str().unwrap(), "15,15;15.8,14.2"])
        .output()
        .expect("node runs");
    let report = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{report}\n{}", String::from_utf8_lossy(&out.stderr));
    let drawn: serde_json::Value = serde_json::from_str(report.trim()).expect("the view's JSON");
    eprintln!("cesium view: {drawn} ({})", picture.display());
    assert_eq!((&drawn["loaded"], &drawn["errors"]), (&serde_json::json!(true), &serde_json::json!([])), "{drawn:#}");
    let dome = drawn["drawn"][0].as_f64().expect("a drawn height at the dome");
    assert!((dome - 2400.0).abs() < 600.0, "Cesium draws the dome at {dome} m: {drawn:#}");
}
