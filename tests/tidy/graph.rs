//! What a build links, as cargo itself resolves it (`cargo tree`).
//!
//! The key decision: ask cargo, with the package selection and features a
//! command builds with, instead of redoing its feature resolution here.
//! Features unify across the packages one `cargo build` selects, so what
//! a binary links depends on what is built beside it: each selection a
//! script builds is asked about as that script builds it
//! ([`script_builds`]). Normal and build dependencies, for the host's
//! platform: dev-dependencies are not linked into what ships.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Runs `cargo tree` offline (the build already fetched everything) in the
/// workspace with `args`; its standard output.
fn cargo_tree(args: &[String]) -> String {
    let output = std::process::Command::new(env!("CARGO"))
        .args(["tree", "--offline", "--locked", "-e", "normal,build"])
        .args(args)
        .current_dir(planet_system_tests::workspace())
        .output()
        .expect("cargo tree runs");
    assert!(output.status.success(), "cargo tree {args:?}: {}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8(output.stdout).expect("cargo tree's output is UTF-8")
}

/// Each line of a `--prefix depth` tree as (depth, package name, its
/// enabled features when the format asked for them).
fn lines_of(tree: &str) -> impl Iterator<Item = (usize, &str, &str)> {
    tree.lines().filter(|l| !l.is_empty()).map(|line| {
        let digits = line.bytes().take_while(u8::is_ascii_digit).count();
        let depth = line[..digits].parse().expect("a depth prefix");
        let mut fields = line[digits..].split(' ');
        let name = fields.next().expect("a package name");
        // "name vX.Y.Z [(path)] [(*)] features": the features are the last field.
        let features = if line.ends_with(')') { "" } else { line.rsplit(' ').next().unwrap_or("") };
        (depth, name, features)
    })
}

/// What each root of `selection` (cargo's package selection and feature
/// flags: `-p NAME`, `--workspace`, `--features F`; none: the default
/// members) links, transitively, built as that one command builds it.
pub fn linked(selection: &[String]) -> BTreeMap<String, BTreeSet<String>> {
    let mut args = vec!["--prefix".to_owned(), "depth".to_owned(), "--format".to_owned(), "{p}".to_owned()];
    args.extend_from_slice(selection);
    let tree = cargo_tree(&args);
    let mut roots: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut root = String::new();
    for (depth, name, _) in lines_of(&tree) {
        if depth == 0 {
            root = name.to_owned();
            roots.entry(root.clone()).or_default();
        } else {
            roots.get_mut(&root).expect("a root before its dependencies").insert(name.to_owned());
        }
    }
    roots
}

/// What `package`, built alone (`cargo build -p NAME`), links.
pub fn linked_alone(package: &str) -> BTreeSet<String> {
    linked(&["-p".to_owned(), package.to_owned()]).remove(package).expect("the package is its tree's root")
}

/// The packages `package` names as normal or build dependencies.
pub fn direct_dependencies(package: &str) -> BTreeSet<String> {
    let tree = cargo_tree(&["-p", package, "--depth", "1", "--prefix", "depth", "--format", "{p}"].map(String::from));
    lines_of(&tree).filter(|(depth, ..)| *depth == 1).map(|(_, name, _)| name.to_owned()).collect()
}

/// The features of `package` turned on in the build `selection` makes.
pub fn features_of(package: &str, selection: &[String]) -> BTreeSet<String> {
    let mut args = vec!["--prefix".to_owned(), "depth".to_owned(), "--format".to_owned(), "{p} {f}".to_owned()];
    args.extend_from_slice(selection);
    let tree = cargo_tree(&args);
    lines_of(&tree)
        .filter(|(_, name, _)| *name == package)
        .flat_map(|(.., features)| features.split(',').filter(|f| !f.is_empty()).map(str::to_owned))
        .collect()
}

/// Every `cargo build` a script of the repository runs (`tools/`, `.ci/`),
/// as (the script, its selection: the `-p`, `--workspace` and `--features`
/// arguments), skipping builds for another target (the fuzzers').
pub fn script_builds(root: &Path) -> Vec<(String, Vec<String>)> {
    let mut scripts = Vec::new();
    let mut folders = vec![root.join("tools"), root.join(".ci")];
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(&folder).expect("a scripts folder").map(|e| e.expect("an entry").path()) {
            if entry.is_dir() {
                folders.push(entry);
            } else if entry.extension().is_some_and(|e| e == "sh") || entry.file_name().is_some_and(|n| n == "run") {
                scripts.push(entry);
            }
        }
    }
    scripts.sort();
    let mut builds = Vec::new();
    for script in scripts {
        // A command continued over several lines is one line.
        let text = std::fs::read_to_string(&script).expect("a readable script").replace("\\\n", " ");
        let name = script.strip_prefix(root).unwrap_or(&script).display().to_string();
        for line in text.lines().filter(|l| !l.trim_start().starts_with('#')) {
            let Some((before, command)) = line.split_once("cargo build") else { continue };
            // A build named inside a message (an odd number of quotes before it) is not run.
            if before.matches('"').count() % 2 == 1 {
                continue;
            }
            let words: Vec<&str> = command.split_whitespace().take_while(|w| !w.starts_with(['|', '&', ';'])).collect();
            if words.iter().any(|w| w.starts_with("--target")) {
                continue;
            }
            let mut selection = Vec::new();
            let mut words = words.into_iter();
            while let Some(word) = words.next() {
                match word {
                    "-p" | "--package" | "--features" | "-F" => {
                        selection.push(word.to_owned());
                        selection.push(words.next().expect("a flag's value").trim_matches('"').to_owned());
                    }
                    "--workspace" | "--all-features" => selection.push(word.to_owned()),
                    _ => {}
                }
            }
            builds.push((name.clone(), selection));
        }
    }
    builds
}
