//! `sqlx::migrate!` reads the migration directories when the crate compiles, and a new file
//! there does not by itself make Cargo compile it again: without this, a build that reuses
//! its target directory (CI does) would leave a new migration out.
fn main() {
    println!("cargo:rerun-if-changed=../migrations");
}
