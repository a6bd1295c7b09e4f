//! The sample Archive (sample-archive/) copied for a test, and the repository files the
//! tests read.

use std::path::{Path, PathBuf};

use super::fsutil::copy_tree;

/// The repository's sample Archive.
pub fn sample() -> PathBuf {
    super::repository().join("sample-archive")
}

/// Copies the sample Archive into `root` (created if needed), without its `var/`: a
/// checkout where the sample was served holds one, and each copy starts with none, as a
/// fresh Archive does.
pub fn copy_sample(root: &Path) {
    let sample = sample();
    std::fs::create_dir_all(root).unwrap_or_else(|e| panic!("mkdir {}: {e}", root.display()));
    let mut names: Vec<_> = std::fs::read_dir(&sample)
        .unwrap_or_else(|e| panic!("{}: {e}", sample.display()))
        .map(|e| e.unwrap().file_name())
        .filter(|name| name != "var")
        .collect();
    names.sort();
    for name in names {
        copy_tree(&sample.join(&name), &root.join(&name));
    }
}

/// The relation subset of Example 9.2 of the resolution standard.
pub const RELATIONS_OF_EXAMPLE_9_2: &str = r#"relations = ["", ".lastedition", ".lastedition.metadata", ".lastedition.metadata(oai_dc)", ".metadata", ".metadata(oai_dc)", ".metadata.translation", ".translation(en)", ".translation(pt)"]"#;

/// The Archive of Examples 9.2, 9.3, 10.1 and 10.2: mtc-m16c.sid.inpe.br.
pub fn mtc_m16c_toml() -> String {
    format!(
        "archiveaddress = \"mtc-m16c.sid.inpe.br\"\narchiveserviceibi = \"sid.inpe.br/mtc-m18@80/2008/03.17.15.17\"\nplatformsoftware = \"dpi.inpe.br/banon/1998/08.02.08.56\"\n{RELATIONS_OF_EXAMPLE_9_2}\n"
    )
}

/// The Archive of Examples 6.1, 6.2 and 9.4–9.12: mtc-m16d.sid.inpe.br.
pub const MTC_M16D_TOML: &str = "archiveaddress = \"mtc-m16d.sid.inpe.br\"\narchiveserviceibi = \"sid.inpe.br/mtc-m19@80/2009/08.21.17.02\"\nplatformsoftware = \"dpi.inpe.br/banon/1998/08.02.08.56\"\n\n[access]\nnetworks = [\"150.163.0.0/16\"]\n";

/// A copy of sample-archive/ in a temporary directory.
pub struct Fixture {
    dir: tempfile::TempDir,
}

impl Fixture {
    /// The sample Archive as it is.
    pub fn sample() -> Fixture {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        copy_sample(dir.path());
        // As the README deploys it: the registration key is not for other users.
        let toml = dir.path().join("archive.toml");
        std::fs::set_permissions(&toml, std::fs::Permissions::from_mode(0o640)).unwrap();
        Fixture { dir }
    }

    /// The sample Archive's items under another archive.toml.
    pub fn with_config(archive_toml: &str) -> Fixture {
        let f = Fixture::sample();
        f.write("archive.toml", archive_toml.as_bytes());
        f
    }

    pub fn root(&self) -> &Path {
        self.dir.path()
    }

    pub fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    /// The names in the fixture's directory `rel`, sorted.
    pub fn names_in(&self, rel: &str) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(self.path(rel))
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        names
    }

    pub fn write(&self, rel: &str, bytes: &[u8]) {
        let p = self.path(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, bytes).unwrap();
    }

    pub fn remove(&self, rel: &str) {
        let p = self.path(rel);
        if p.is_dir() {
            std::fs::remove_dir_all(p).unwrap();
        } else {
            std::fs::remove_file(p).unwrap();
        }
    }
}

/// The lines of the Archive's var/acknowledgments.log (none when it does not exist).
pub fn log_lines(f: &Fixture) -> Vec<String> {
    std::fs::read_to_string(f.path("var/acknowledgments.log"))
        .unwrap_or_default()
        .lines()
        .map(String::from)
        .collect()
}

/// The first fenced block of README.md (opened by ` ```<fence>`) after the first place
/// that holds `after`.
pub fn readme_block(after: &str, fence: &str) -> String {
    doc_block("README.md", after, fence)
}

/// The first fenced block of the repository's document `file` (README.md, or a guide of
/// docs/src/) opened by ` ```<fence>` after the first place that holds `after`.
pub fn doc_block(file: &str, after: &str, fence: &str) -> String {
    let readme = std::fs::read_to_string(super::repository().join(file)).unwrap();
    let at = readme
        .find(after)
        .unwrap_or_else(|| panic!("{file} has no {after:?}"));
    let rest = &readme[at..];
    let open = format!("```{fence}\n");
    let start = rest
        .find(&open)
        .unwrap_or_else(|| panic!("no ```{fence} block after {after:?}"))
        + open.len();
    let end = start + rest[start..].find("```").unwrap();
    rest[start..end].to_string()
}
