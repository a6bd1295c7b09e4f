//! `systemd-analyze verify` of the repository's units, for the tests of each.

use std::path::Path;
use std::process::Command;

/// Where Debian's systemd package puts it.
const SYSTEMD_ANALYZE: &str = "/usr/bin/systemd-analyze";

/// Whether it is installed (under CI=true, a failure when it is not).
pub fn systemd_analyze_available() -> bool {
    super::required_under_ci(
        Path::new(SYSTEMD_ANALYZE).is_file(),
        "systemd-analyze (Debian's systemd package)",
    )
}

/// `systemd-analyze verify [args]` of the unit text `text`, saved as `dir`/`name`:
/// success, and everything it printed.
pub fn systemd_verify(dir: &Path, name: &str, text: &str, args: &[&str]) -> (bool, String) {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    let out = Command::new(SYSTEMD_ANALYZE)
        .arg("verify")
        .args(args)
        .arg(&path)
        .current_dir(dir)
        .env("SYSTEMD_LOG_COLOR", "0")
        .output()
        .unwrap();
    (
        out.status.success(),
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
    )
}
