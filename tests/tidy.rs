//! Tidy: the conventions this codebase keeps, checked so they stay kept.
//!
//! The key decision: each convention ARCHITECTURE.md states is a test here
//! that names the file and line that breaks it, so a review never has to
//! remember them. Checks read the sources as text, and the crates and
//! their dependencies as `cargo metadata` resolves them; they need no build
//! of the code they check.
//!
//! - every Rust file opens with a `//!` comment saying its key decision;
//! - every `unsafe` block, fn or impl carries a `// SAFETY:` comment, and
//!   unsafe code lives only where ARCHITECTURE.md allows it;
//! - the terrain core's crates form the stated layers (no reaching up; a
//!   reader such as the renderer builds without the pack writer), and
//!   their dependencies stay GPU-, GDAL- and window-free;
//! - crates depend one way (viewer -> render -> terrain, viewer -> physics
//!   -> terrain, bake -> terrain), and only planet-physics links Rapier:
//!   what each crate links, transitively, as `cargo tree` resolves it
//!   ([`graph`]), and the bake no HTTP client in any build a script runs;
//! - no source file grows past the size where it starts mixing concerns
//!   (a function's length is clippy's `too_many_lines`, at 80 lines, each
//!   longer one carrying an `#[expect]` with its reason);
//! - each crate has at most one integration-test binary (from `cargo
//!   metadata`, the targets cargo resolves, not the files' names);
//! - the generated GLSL ABI header matches `planet_geo::abi`.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use planet_system_tests::workspace;

mod graph;

/// Every Rust source of the workspace (not build output), relative paths.
fn rust_files() -> Vec<PathBuf> {
    fn walk(root: &Path, dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).expect("readable directory") {
            let path = entry.expect("readable entry").path();
            let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default();
            if path.is_dir() {
                // Build directories (`target`, and the `target-*` a second
                // build beside it uses: .gitignore's) hold generated sources.
                let build = name == "target" || name.starts_with("target-");
                if !build && !matches!(name, ".git" | ".gl" | "packs") && !name.starts_with('.') {
                    walk(root, &path, out);
                }
            } else if name.ends_with(".rs") {
                out.push(path.strip_prefix(root).expect("under the root").to_path_buf());
            }
        }
    }
    let root = workspace();
    let mut out = Vec::new();
    walk(&root, &root, &mut out);
    out.sort();
    assert!(out.len() > 50, "found the workspace's sources ({} files)", out.len());
    out
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(workspace().join(path)).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Fails listing every offence, one per line.
fn check(rule: &str, offences: Vec<String>) {
    assert!(offences.is_empty(), "{rule}:\n  {}", offences.join("\n  "));
}

#[test]
fn every_file_opens_with_its_key_decision() {
    let offences = rust_files()
        .into_iter()
        .filter(|path| !read(path).starts_with("//!"))
        .map(|path| format!("{}: the first line is not a `//!` comment", path.display()))
        .collect();
    check("every Rust file opens with a //! comment explaining its key design decision", offences);
}

/// The code part of a line: before any `//` comment (strings with `//` in
/// them are rare enough in this codebase not to matter).
fn code_of(line: &str) -> &str {
    line.split("//").next().unwrap_or_default()
}

/// The line without the contents of its string literals.
fn without_strings(line: &str) -> String {
    let mut out = String::new();
    let mut inside = false;
    for c in line.chars() {
        if c == '"' {
            inside = !inside;
            out.push(c);
        } else if !inside {
            out.push(c);
        }
    }
    out
}

fn opens_unsafe(line: &str) -> bool {
    let code = without_strings(code_of(line));
    ["unsafe {", "unsafe fn", "unsafe impl", "unsafe extern"].iter().any(|form| code.contains(form))
}

/// True when a `// SAFETY:` comment (or, for an unsafe fn, a `# Safety`
/// doc section) stands on the line, or in the comment block just above the
/// statement the unsafe code belongs to.
fn safety_documented(lines: &[&str], at: usize) -> bool {
    if lines[at].contains("SAFETY:") {
        return true;
    }
    let mut code_lines = 0;
    for line in lines[..at].iter().rev() {
        let t = line.trim();
        if t.starts_with("//") {
            // `# Safety` is how an unsafe fn states its callers' duty.
            if t.contains("SAFETY:") || t.contains("# Safety") {
                return true;
            }
            continue;
        }
        if t.starts_with("#[") {
            continue;
        }
        if t.is_empty() || t.ends_with(';') || t.ends_with('{') || t.ends_with('}') {
            return false;
        }
        code_lines += 1;
        if code_lines > 3 {
            return false;
        }
    }
    false
}

/// Where unsafe code may live (ARCHITECTURE.md, "Architecture invariants").
fn unsafe_allowed(path: &Path) -> bool {
    path.starts_with("engine/render/src/vk")
        || path.starts_with("engine/render/tests")
        || path == Path::new("bake/src/vsi.rs")
}

#[test]
fn unsafe_code_says_why_it_is_sound_and_stays_where_it_is_allowed() {
    let mut offences = Vec::new();
    for path in rust_files() {
        let text = read(&path);
        let lines: Vec<&str> = text.lines().collect();
        for (k, line) in lines.iter().enumerate() {
            if !opens_unsafe(line) {
                continue;
            }
            if !unsafe_allowed(&path) {
                offences.push(format!(
                    "{}:{}: unsafe code outside planet-render and the bake's VSI reader",
                    path.display(),
                    k + 1
                ));
            } else if !safety_documented(&lines, k) {
                offences.push(format!("{}:{}: unsafe without a `// SAFETY:` comment", path.display(), k + 1));
            }
        }
    }
    check("unsafe code", offences);
}

/// The terrain core's crates, each a layer, and the core crates it may
/// depend on. Cargo forbids a cycle; this holds the direction (nothing
/// reaches up a layer) and that `planet-terrain` is only the facade.
const CORE_LAYERS: &[(&str, &[&str])] = &[
    ("planet-geo", &[]),
    ("planet-packfile", &["planet-geo"]),
    ("planet-ground", &["planet-geo", "planet-packfile"]),
    ("planet-lod", &["planet-geo", "planet-ground"]),
    ("planet-terrain", &["planet-geo", "planet-packfile", "planet-ground", "planet-lod"]),
];

#[test]
fn the_core_crates_depend_one_way_down_their_layers() {
    let core: BTreeSet<&str> = CORE_LAYERS.iter().map(|(name, _)| *name).collect();
    let mut offences = Vec::new();
    for (package, allowed) in CORE_LAYERS {
        let used = graph::direct_dependencies(package);
        for dependency in used.iter().filter(|d| core.contains(d.as_str()) && !allowed.contains(&d.as_str())) {
            offences.push(format!("{package} depends on {dependency}, which is not below it"));
        }
        if *package == "planet-terrain" && used.iter().any(|d| !core.contains(d.as_str())) {
            offences.push(format!("planet-terrain, the facade, depends on more than the core's crates: {used:?}"));
        }
    }
    check("the core's layers (geo -> packfile -> ground -> lod; terrain re-exports them)", offences);
}

/// A reader builds without the pack writer (staging, assembly, journals,
/// patching, upgrades): the renderer, the viewer and the physics crate
/// built alone leave `planet-packfile`'s `write` feature off; the bake and
/// planet-pack turn it on (so this can fail).
#[test]
fn the_renderer_compiles_no_pack_writer() {
    let selection = |package: &str| ["-p".to_owned(), package.to_owned(), "-e".to_owned(), "normal".to_owned()];
    let mut offences = Vec::new();
    for package in ["planet-render", "planet-view", "planet-physics", "planet-remote"] {
        let features = graph::features_of("planet-packfile", &selection(package));
        if features.contains("write") {
            offences.push(format!("{package} built alone compiles the pack writer ({features:?})"));
        }
    }
    for package in ["planet-bake", "planet-pack"] {
        assert!(graph::features_of("planet-packfile", &selection(package)).contains("write"), "{package} writes packs");
    }
    check("readers without the writer", offences);
}

/// What no crate may link, whatever links it: the GPU and window stacks,
/// the immediate-mode UI, GDAL, an HTTP client, the physics engine.
const GPU: [&str; 3] = ["ash", "gpu-allocator", "winit"];
const UI: [&str; 3] = ["egui", "egui-winit", "egui-ash-renderer"];
const HTTP: [&str; 3] = ["ureq", "rustls", "planet-remote"];
const PHYSICS: [&str; 2] = ["rapier*", "parry*"];

/// `groups` as one list.
fn all(groups: &[&[&'static str]]) -> Vec<&'static str> {
    groups.concat()
}

/// Whether package `name` is `pattern` (a trailing `*`: starts with it).
fn is(name: &str, pattern: &str) -> bool {
    pattern.strip_suffix('*').map_or(name == pattern, |prefix| name.starts_with(prefix))
}

#[test]
fn crates_depend_one_way_and_the_core_links_no_gpu_gdal_window_or_physics_engine() {
    let allowed: BTreeSet<String> =
        ["glam", "bytemuck", "thiserror", "zstd", "crc32fast", "serde", "serde_json", "rayon"].map(String::from).into();
    let mut offences = Vec::new();
    for (package, _) in CORE_LAYERS {
        let outside = graph::direct_dependencies(package).into_iter().filter(|d| !d.starts_with("planet-"));
        for d in outside.filter(|d| !allowed.contains(d)) {
            offences.push(format!("{package} depends on `{d}`, outside the core's stated set"));
        }
    }
    // Each crate built alone (`cargo build -p NAME`, the features it asks
    // for), everything it links transitively.
    for (package, forbidden) in [
        ("planet-geo", all(&[&GPU, &UI, &HTTP, &PHYSICS, &["gdal"]])),
        ("planet-packfile", all(&[&GPU, &UI, &HTTP, &PHYSICS, &["gdal"]])),
        ("planet-ground", all(&[&GPU, &UI, &HTTP, &PHYSICS, &["gdal"]])),
        ("planet-lod", all(&[&GPU, &UI, &HTTP, &PHYSICS, &["gdal"]])),
        ("planet-terrain", all(&[&GPU, &UI, &HTTP, &PHYSICS, &["gdal"]])),
        // egui's paint pass (egui-ash-renderer) lives in the renderer, its
        // winit glue (egui-winit) in the viewer: the renderer stays window-free.
        ("planet-render", all(&[&["winit", "egui-winit", "gdal", "planet-bake", "planet-view"], &HTTP, &PHYSICS])),
        // The bake reads and writes files: no GPU, window or HTTP client.
        ("planet-bake", all(&[&GPU, &UI, &HTTP, &PHYSICS, &["planet-render"]])),
        ("planet-pack", all(&[&GPU, &UI, &PHYSICS, &["gdal", "planet-render"]])),
        ("planet-cli", all(&[&GPU, &UI, &HTTP, &PHYSICS, &["gdal", "planet-render"]])),
        ("planet-remote", all(&[&GPU, &UI, &PHYSICS, &["gdal", "planet-render", "planet-cli"]])),
        ("planet-view", vec!["gdal", "planet-bake"]),
        // Physics runs without a GPU or a window (a server can simulate).
        ("planet-physics", all(&[&GPU, &UI, &HTTP, &["gdal", "planet-render", "planet-view"]])),
    ] {
        let linked = graph::linked_alone(package);
        assert!(linked.contains("planet-geo") || package == "planet-geo", "{package} links the core");
        for name in linked.iter().filter(|name| forbidden.iter().any(|f| is(name, f))) {
            offences.push(format!("{package} links `{name}`"));
        }
    }
    // The physics engine stays behind planet-physics: no other crate names it.
    for package in [
        "planet-geo",
        "planet-packfile",
        "planet-ground",
        "planet-lod",
        "planet-terrain",
        "planet-render",
        "planet-view",
        "planet-bake",
        "planet-pack",
        "planet-cli",
    ] {
        if graph::direct_dependencies(package).iter().any(|d| PHYSICS.iter().any(|f| is(d, f))) {
            offences.push(format!("{package} depends on a physics engine (only planet-physics may)"));
        }
    }
    check("dependency direction (ARCHITECTURE.md invariants), on the resolved graph", offences);
}

/// The HTTP client is injected where packs are read by URL (planet-remote's
/// `HttpPacks`, handed to planet-cli's `PackOpener`), not turned on by a
/// feature, so no build links it into the bake: every `cargo build` a
/// script runs, asked as that command builds it (features unify across the
/// packages one command selects). The check can fail: the viewer and
/// planet-pack, built by the same commands, link the client.
#[test]
fn no_build_a_script_runs_links_an_http_client_into_the_bake() {
    let builds = graph::script_builds(&workspace());
    assert!(builds.iter().any(|(script, _)| script == "tools/demo/packs.sh"), "the demo's build is read: {builds:?}");
    let mut offences = Vec::new();
    let mut readers = 0;
    for (script, selection) in &builds {
        for (root, linked) in graph::linked(selection) {
            let http: Vec<&String> = linked.iter().filter(|name| HTTP.iter().any(|f| is(name, f))).collect();
            match root.as_str() {
                "planet-view" | "planet-pack" => {
                    assert!(!http.is_empty(), "{script}: {root} reads packs over HTTP");
                    readers += 1;
                }
                "planet-bake" | "planet-cli" | "planet-terrain" if !http.is_empty() => {
                    offences.push(format!("{script}: `cargo build {}` links {http:?} into {root}", selection.join(" ")))
                }
                _ => {}
            }
        }
    }
    assert!(readers >= 2, "the scripts build the binaries that read over HTTP ({readers})");
    check("no HTTP client in the bake, built as the scripts build it", offences);
    assert!(
        graph::linked_alone("planet-view").iter().any(|name| is(name, "rapier*")),
        "the viewer links physics through planet-physics"
    );
}

/// Source files past this many lines have, in this codebase, always been
/// mixing concerns; split them by concern. Length inside a function is what
/// makes reading hard, so the function rule below does the finer work.
const MAX_SOURCE_LINES: usize = 700;

#[test]
fn no_source_file_grows_past_the_size_where_it_mixes_concerns() {
    let offences = rust_files()
        .into_iter()
        .filter(|path| path.components().any(|c| c.as_os_str() == "src"))
        .filter_map(|path| {
            let lines = read(&path).lines().count();
            (lines > MAX_SOURCE_LINES).then(|| format!("{}: {lines} lines", path.display()))
        })
        .collect();
    check(&format!("source files stay under {MAX_SOURCE_LINES} lines"), offences);
}

#[test]
fn the_glsl_abi_header_is_generated_from_the_rust_declaration() {
    use planet_terrain::abi::{GLSL_HEADER_PATH, REGENERATE_GLSL_HEADER, committed_glsl_header_is_fresh};
    assert!(
        committed_glsl_header_is_fresh(&workspace()),
        "{GLSL_HEADER_PATH} is stale; regenerate it: {REGENERATE_GLSL_HEADER}"
    );
    // And every shader takes the contract from it, none declares its own.
    for shader in ["terrain.vert", "terrain.frag", "sky.vert", "sky.frag", "body.frag"] {
        let text = read(&Path::new("shaders").join(shader));
        assert!(text.contains("#include \"common.glsl\""), "shaders/{shader} includes common.glsl");
        assert!(!text.contains("struct NodeRecord"), "shaders/{shader} declares NodeRecord by hand");
        assert!(!text.contains("binding = 0") && !text.contains("binding = 1"), "shaders/{shader}: a literal binding");
    }
    assert!(read(Path::new("shaders/common.glsl")).contains("#include \"generated/abi.glsl\""));
}

/// Each integration-test binary links the crate and its dependencies
/// again (the viewer's four and planet-pack's two linked seven times what
/// two would): tests are modules of one binary per crate.
#[test]
fn each_crate_has_at_most_one_integration_test_binary() {
    let metadata = workspace_metadata();
    let packages = metadata["packages"].as_array().expect("packages");
    assert!(packages.len() >= 8, "the workspace's packages ({})", packages.len());
    let offences = packages
        .iter()
        .filter_map(|package| {
            let tests: Vec<&str> = package["targets"]
                .as_array()
                .expect("targets")
                .iter()
                .filter(|t| t["kind"].as_array().is_some_and(|k| k.iter().any(|k| k == "test")))
                .map(|t| t["name"].as_str().expect("a target name"))
                .collect();
            (tests.len() > 1)
                .then(|| format!("{}: {} test binaries ({})", package["name"], tests.len(), tests.join(", ")))
        })
        .collect();
    check("one integration-test binary per crate (make the others modules of it)", offences);
}

/// The terrain core's test fixtures (`planet_terrain::testing`) are built
/// only for tests, benches and fuzzers: no crate's normal dependency on the
/// core turns on its `testing` feature (the fuzz crate's targets are
/// fuzzers, and it is not a default member), so no binary links them.
#[test]
fn test_fixtures_stay_out_of_production_builds() {
    let metadata = workspace_metadata();
    let packages = metadata["packages"].as_array().expect("packages");
    let mut dev_uses = 0;
    let mut offences = Vec::new();
    for package in packages.iter().filter(|p| p["name"] != "planet-fuzz") {
        for dependency in package["dependencies"].as_array().expect("dependencies") {
            let testing = dependency["features"].as_array().is_some_and(|f| f.iter().any(|f| f == "testing"));
            let core = matches!(dependency["name"].as_str(), Some("planet-terrain" | "planet-packfile"));
            if !core || !testing {
                continue;
            }
            if dependency["kind"] == "dev" {
                dev_uses += 1;
            } else {
                offences.push(format!(
                    "{}: a {} dependency with `testing`",
                    package["name"],
                    dependency["kind"].as_str().unwrap_or("normal")
                ));
            }
        }
    }
    assert!(dev_uses >= 4, "the crates whose tests use the fixtures ask for them ({dev_uses})");
    check("test fixtures only in dev-dependencies", offences);
    // A root `cargo build` (the default members) builds the core without
    // them; the whole workspace, fuzzers included, with them (so this can fail).
    assert!(!graph::features_of("planet-terrain", &[]).contains("testing"), "a root build links the fixtures");
    let workspace = graph::features_of("planet-terrain", &["--workspace".to_owned()]);
    assert!(workspace.contains("testing"), "the fuzzers' build links them: {workspace:?}");
}

/// The shared CLI crate keeps no process-global state: what a binary
/// configures (remote caching) and counts (transfers) is a value it makes
/// and passes down (`planet_cli::stack::PackOpener`), so two users in one
/// process (tests, a future server) cannot see each other's.
#[test]
fn the_cli_crate_keeps_no_process_global_state() {
    let offences = offending_lines(
        |path| path.starts_with("tools/cli/src"),
        |code| {
            let global =
                code.starts_with("static ") || code.starts_with("pub static ") || code.contains("thread_local!");
            global.then(String::new)
        },
    );
    check("no statics or thread-locals in planet-cli", offences);
}

/// A module that grew parts becomes a folder module (`scene/mod.rs`,
/// `scene/drawn.rs`), not a file stitched in from beside it with
/// `#[path]`: the tree on disk is the module tree. Only unit tests split
/// out of a file (`*_tests.rs`) and a bench reusing an integration test's
/// reference may be named by path.
#[test]
fn modules_are_folders_not_path_attributes() {
    let offences = offending_lines(
        |_| true,
        |code| {
            let target = code.strip_prefix("#[path = \"")?.split('"').next()?;
            let allowed = target.ends_with("_tests.rs") || target.contains("tests/");
            (!allowed).then(|| format!(": #[path = \"{target}\"]"))
        },
    );
    check("no #[path] modules outside split-out tests", offences);
}

/// `path:line` (and what `offence` says of it) for every line of code, in
/// the Rust files `files` selects, that `offence` finds fault with (it is
/// given the line's code, comments and leading space removed).
fn offending_lines(files: impl Fn(&Path) -> bool, offence: impl Fn(&str) -> Option<String>) -> Vec<String> {
    rust_files()
        .into_iter()
        .filter(|path| files(path))
        .flat_map(|path| {
            let text = read(&path);
            let hits: Vec<String> = text
                .lines()
                .enumerate()
                .filter_map(|(n, line)| {
                    offence(code_of(line).trim_start()).map(|what| format!("{}:{}{what}", path.display(), n + 1))
                })
                .collect();
            hits
        })
        .collect()
}

/// The workspace's packages as `cargo metadata` resolves them (no
/// dependencies' own packages): what the rules on manifests read.
fn workspace_metadata() -> serde_json::Value {
    let output = std::process::Command::new(env!("CARGO"))
        .args(["metadata", "--no-deps", "--format-version", "1", "--offline"])
        .current_dir(workspace())
        .output()
        .expect("cargo metadata runs");
    assert!(output.status.success(), "cargo metadata: {}", String::from_utf8_lossy(&output.stderr));
    serde_json::from_slice(&output.stdout).expect("cargo metadata's JSON")
}
