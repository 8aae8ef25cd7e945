//! What a crate links, read from the graph `cargo metadata` resolves.
//!
//! The key decision: follow features, not manifests. `cargo metadata`
//! resolves one graph for the whole workspace, with every feature any member
//! asks for turned on, so the viewer's `planet-cli/remote` would show the
//! bake linking an HTTP client it does not link. [`Graph::linked_by`]
//! therefore redoes cargo's feature resolution for one package built alone
//! (`cargo build -p NAME`): from its default features, through each
//! dependency's requested and default features, optional dependencies only
//! where a turned-on feature names them. Normal and build dependencies, for
//! the host's platform; dev-dependencies are not linked into what ships. A
//! declaration whose `cfg` cargo cannot decide without building is followed
//! as if it held (errno under rustix): the set can only grow, so a rule can
//! only get stricter.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

/// The resolved graph of the workspace and everything it depends on.
pub struct Graph {
    packages: BTreeMap<String, Value>,
    /// Package id -> the ids its resolved dependencies name, by package name.
    resolved: BTreeMap<String, Vec<(String, String)>>,
}

impl Graph {
    /// `cargo metadata` of the workspace, dependencies included, for the
    /// host platform, offline (the build already fetched everything).
    pub fn of_workspace() -> Graph {
        let host = std::process::Command::new("rustc").arg("-vV").output().expect("rustc -vV runs");
        let host = String::from_utf8_lossy(&host.stdout)
            .lines()
            .find_map(|l| l.strip_prefix("host: ").map(str::to_owned))
            .expect("rustc -vV names the host");
        let output = std::process::Command::new(env!("CARGO"))
            .args(["metadata", "--format-version", "1", "--offline", "--filter-platform", &host])
            .current_dir(planet_system_tests::workspace())
            .output()
            .expect("cargo metadata runs");
        assert!(output.status.success(), "cargo metadata: {}", String::from_utf8_lossy(&output.stderr));
        let metadata: Value = serde_json::from_slice(&output.stdout).expect("cargo metadata's JSON");
        let packages: BTreeMap<String, Value> = metadata["packages"]
            .as_array()
            .expect("packages")
            .iter()
            .map(|p| (p["id"].as_str().expect("an id").to_owned(), p.clone()))
            .collect();
        let name_of = |id: &str| packages[id]["name"].as_str().expect("a name").to_owned();
        let resolved = metadata["resolve"]["nodes"]
            .as_array()
            .expect("resolve nodes")
            .iter()
            .map(|node| {
                let deps = node["deps"]
                    .as_array()
                    .expect("deps")
                    .iter()
                    .map(|d| {
                        let id = d["pkg"].as_str().expect("a dependency id");
                        (name_of(id), id.to_owned())
                    })
                    .collect();
                (node["id"].as_str().expect("a node id").to_owned(), deps)
            })
            .collect();
        Graph { packages, resolved }
    }

    fn workspace_package(&self, name: &str) -> &str {
        let mut ids =
            self.packages.iter().filter(|(_, p)| p["name"] == name && p["source"].is_null()).map(|(id, _)| id.as_str());
        ids.next().unwrap_or_else(|| panic!("no workspace package {name}"))
    }

    /// The names of the normal dependencies `name`'s manifest declares.
    pub fn direct_dependencies(&self, name: &str) -> BTreeSet<String> {
        let package = &self.packages[self.workspace_package(name)];
        package["dependencies"]
            .as_array()
            .expect("dependencies")
            .iter()
            .filter(|d| d["kind"].is_null())
            .map(|d| d["name"].as_str().expect("a dependency name").to_owned())
            .collect()
    }

    /// The names of every package building `name` alone links.
    pub fn linked_by(&self, name: &str) -> BTreeSet<String> {
        let root = self.workspace_package(name).to_owned();
        let mut resolution = Resolution::default();
        resolution.reach(self, &root, ["default".to_owned()]);
        loop {
            while let Some((id, feature)) = resolution.queue.pop() {
                self.turn_on(&mut resolution, &id, &feature);
            }
            // A weak `dep?/feature` applies once something else turned the
            // dependency on; retry them until none newly applies.
            let weak = std::mem::take(&mut resolution.weak);
            for (id, key, feature) in weak {
                if resolution.enabled.contains(&(id.clone(), key.clone())) {
                    self.enable(&mut resolution, &id, &key, [feature]);
                } else {
                    resolution.weak.push((id, key, feature));
                }
            }
            if resolution.queue.is_empty() {
                break;
            }
        }
        resolution
            .features
            .keys()
            .filter(|id| **id != root)
            .map(|id| self.packages[id]["name"].as_str().expect("a name").to_owned())
            .collect()
    }

    /// Turns on `feature` of package `id` (once), and what it names.
    fn turn_on(&self, resolution: &mut Resolution, id: &str, feature: &str) {
        let newly = resolution.features.entry(id.to_owned()).or_default().insert(feature.to_owned());
        if !newly {
            return;
        }
        let package = &self.packages[id];
        let Some(items) = package["features"][feature].as_array() else {
            // A feature no table declares is an optional dependency's
            // implicit one (or `default` of a package without defaults).
            self.enable(resolution, id, feature, []);
            return;
        };
        for item in items.iter().filter_map(Value::as_str) {
            if let Some(dependency) = item.strip_prefix("dep:") {
                self.enable(resolution, id, dependency, []);
            } else if let Some((dependency, its)) = item.split_once('/') {
                match dependency.strip_suffix('?') {
                    Some(weak) => resolution.weak.push((id.to_owned(), weak.to_owned(), its.to_owned())),
                    None => self.enable(resolution, id, dependency, [its.to_owned()]),
                }
            } else {
                resolution.queue.push((id.to_owned(), item.to_owned()));
            }
        }
    }

    /// Turns on package `id`'s dependency `key` (its name, or its rename),
    /// optional or not, with `features` and what its declaration asks for.
    fn enable(&self, resolution: &mut Resolution, id: &str, key: &str, features: impl IntoIterator<Item = String>) {
        let features: Vec<String> = features.into_iter().collect();
        for declared in linked_declarations(&self.packages[id]) {
            if declared["rename"].as_str().unwrap_or(declared["name"].as_str().expect("a name")) != key {
                continue;
            }
            resolution.enabled.insert((id.to_owned(), key.to_owned()));
            self.follow(resolution, id, declared, features.iter().cloned());
        }
    }

    /// Reaches the package `declared` resolves to from `id`, with its
    /// declared features, its defaults unless turned off, and `extra`.
    fn follow(&self, resolution: &mut Resolution, id: &str, declared: &Value, extra: impl Iterator<Item = String>) {
        let name = declared["name"].as_str().expect("a name");
        // Declarations for another platform resolve to nothing here.
        let targets: Vec<String> =
            self.resolved[id].iter().filter(|(n, _)| n == name).map(|(_, target)| target.clone()).collect();
        let mut features: Vec<String> = declared["features"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|f| f.as_str().map(str::to_owned))
            .collect();
        if declared["uses_default_features"] != false {
            features.push("default".to_owned());
        }
        features.extend(extra);
        for target in targets {
            resolution.reach(self, &target, features.iter().cloned());
        }
    }
}

/// The dependencies of `package` that a build of it links: normal and
/// build, not dev.
fn linked_declarations(package: &Value) -> impl Iterator<Item = &Value> {
    package["dependencies"].as_array().expect("dependencies").iter().filter(|d| d["kind"] != "dev")
}

/// A feature resolution in progress.
#[derive(Default)]
struct Resolution {
    /// Reached packages and their features turned on so far.
    features: BTreeMap<String, BTreeSet<String>>,
    /// Features to turn on.
    queue: Vec<(String, String)>,
    /// Optional dependencies turned on: (package id, dependency key).
    enabled: BTreeSet<(String, String)>,
    /// Weak features waiting for their dependency: (package id, key, feature).
    weak: Vec<(String, String, String)>,
}

impl Resolution {
    /// Reaches package `id` (its non-optional dependencies follow the first
    /// time) and queues `features` on it.
    fn reach(&mut self, graph: &Graph, id: &str, features: impl IntoIterator<Item = String>) {
        if !self.features.contains_key(id) {
            self.features.insert(id.to_owned(), BTreeSet::new());
            for declared in linked_declarations(&graph.packages[id]).filter(|d| d["optional"] != true) {
                graph.follow(self, id, declared, std::iter::empty());
            }
        }
        for feature in features {
            self.queue.push((id.to_owned(), feature));
        }
    }
}
