//! planet-view over HTTP, under the validation layers: a pack served by
//! Debian's nginx draws the same picture as the file, and a server that
//! fails for a while mid-flight costs tiles for a few frames (their
//! ancestors stand in, the HUD counts them as retrying) but never the
//! flight, a hole or a validation message.

use crate::common::{run_ok, stats, viewer};

use std::sync::atomic::Ordering;

use planet_remote::testing::{FaultServer, Nginx, file_bytes};

#[test]
fn a_shot_from_a_pack_over_http_is_the_shot_from_the_file() {
    let dir = tempfile::tempdir().expect("temp dir");
    let served = dir.path().join("www");
    std::fs::create_dir(&served).unwrap();
    let pack = served.join("earth.planetpack");
    planet_terrain::testing::write_procedural_pack(&pack, 2).expect("write the test pack");
    let nginx = Nginx::serve(&served);
    let shot = |source: &str, name: &str| {
        let png = dir.path().join(format!("{name}.png"));
        let stats_path = dir.path().join(format!("{name}.json"));
        run_ok(
            viewer()
                .arg(source)
                .args(["--lat", "-47", "--lon", "39", "--alt", "400000", "--pitch", "-60", "--size", "200x150"])
                .args(["--validation", "--cache"])
                .arg(dir.path().join("cache"))
                .arg("--shot")
                .arg(&png)
                .arg("--stats")
                .arg(&stats_path),
        );
        (std::fs::read(&png).expect("the shot"), stats(&stats_path))
    };
    let (local, local_stats) = shot(pack.to_str().unwrap(), "local");
    let (remote, remote_stats) = shot(&nginx.url("earth.planetpack"), "remote");
    assert!(local == remote, "the same pixels from HTTP as from the file");
    assert_eq!(local_stats["nodes_drawn"], remote_stats["nodes_drawn"]);
    let requests = remote_stats["remote"]["requests"].as_u64().expect("the client's request count") as usize;
    assert!(requests > 0 && local_stats["remote"].is_null(), "{}", remote_stats["remote"]);
    assert_eq!(nginx.requests_logged_reaching(requests), requests, "nginx served what the client counted");
    // A second session reads its blocks from the disk cache: only the
    // open's request (for the validator) goes to the server.
    let (again, cached_stats) = shot(&nginx.url("earth.planetpack"), "cached");
    assert!(again == local);
    assert_eq!(cached_stats["remote"]["requests"], 1, "{}", cached_stats["remote"]);
    assert_eq!(nginx.requests_logged_reaching(requests + 1), requests + 1);
}

#[test]
fn a_server_failing_mid_flight_costs_tiles_for_a_while_never_the_flight() {
    let dir = tempfile::tempdir().expect("temp dir");
    let pack = dir.path().join("earth.planetpack");
    planet_terrain::testing::write_procedural_pack(&pack, 2).expect("write the test pack");
    let server = FaultServer::serve(file_bytes(&pack));
    // The open (its index, and the blocks of the tiles the detail's law is
    // fitted on, the seeds and their parents) and the roots go through;
    // then 40 answers fail: past the client's own retries, so tiles fail
    // for now and are retried later.
    server.faults.pass_first.store(4, Ordering::SeqCst);
    server.faults.fail_next.store(40, Ordering::SeqCst);
    let path = dir.path().join("descent.json");
    std::fs::write(
        &path,
        r#"{"keyframes": [
            {"t": 0, "lat": -40.0, "lon": 30.0, "alt": 20000000, "heading": 0, "pitch": -90},
            {"t": 3, "lat": -46.5, "lon": 38.5, "alt": 200000, "heading": 30, "pitch": -45},
            {"t": 6, "lat": -47.0, "lon": 39.0, "alt": 20000, "heading": 45, "pitch": -30}
        ]}"#,
    )
    .unwrap();
    let stats_path = dir.path().join("stats.json");
    run_ok(
        viewer()
            .arg(server.url())
            .arg("--path")
            .arg(&path)
            .args(["--fps", "5", "--size", "160x120", "--validation", "--loading", "frame", "--stats"])
            .arg(&stats_path),
    );
    let log = stats(&stats_path);
    let frames = log["frames"].as_array().expect("frames");
    assert_eq!(frames.len(), 31, "every frame of the path was rendered");
    assert!(frames.iter().any(|f| f["retrying_tiles"].as_u64() > Some(0)), "some tiles waited for a retry");
    assert!(frames.iter().all(|f| f["hole_pixels"] == 0 || f["analytic_body_drawn"] == true), "no hole");
    let last = frames.last().expect("a frame");
    assert_eq!((&last["retrying_tiles"], &last["failed_tiles"]), (&0.into(), &0.into()), "all recovered: {last}");
}
