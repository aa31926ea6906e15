//! Scratch folders for what a test starts (configs, databases, logs): removed when the test
//! passes, kept and named when it fails.

use std::path::Path;

/// A fresh scratch folder (configs, databases, logs of the processes a test starts).
pub fn scratch() -> Scratch {
    let dir = tempfile::Builder::new()
        .prefix("mcpgw-test-")
        .tempdir()
        .expect("scratch dir");
    Scratch(dir)
}

/// A scratch folder, removed when dropped unless the test is failing: then it stays, with the
/// logs in it, and its path is printed (a passing run leaves nothing behind in /tmp).
pub struct Scratch(tempfile::TempDir);

impl std::ops::Deref for Scratch {
    type Target = Path;
    fn deref(&self) -> &Path {
        self.0.path()
    }
}

impl AsRef<std::ffi::OsStr> for Scratch {
    fn as_ref(&self) -> &std::ffi::OsStr {
        self.0.path().as_os_str()
    }
}

impl AsRef<Path> for Scratch {
    fn as_ref(&self) -> &Path {
        self.0.path()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.disable_cleanup(true);
            eprintln!("kept the failing test's folder {}", self.0.path().display());
        }
    }
}
