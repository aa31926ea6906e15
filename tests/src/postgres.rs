//! Postgres for the tests: a database of each test's own on the shared server, or a cluster
//! of its own for tests that stop and restart the database.

use std::process::Stdio;

use crate::{package_dir, scratch, Scratch};

/// A Postgres database of this test's own, on the server `TEST_DATABASE_URL` names.
pub async fn postgres_database() -> String {
    use sqlx::Connection;
    let admin = std::env::var("TEST_DATABASE_URL").expect(
        "TEST_DATABASE_URL is not set: run the tests through scripts/test, which starts Postgres",
    );
    let name = format!("t_{}", uuid::Uuid::new_v4().simple());
    let mut conn = sqlx::PgConnection::connect(&admin)
        .await
        .expect("connect to test postgres");
    sqlx::query(&format!("CREATE DATABASE {name}"))
        .execute(&mut conn)
        .await
        .expect("create database");
    let (base, _) = admin.rsplit_once('/').expect("url with a database");
    format!("{base}/{name}")
}

/// A Postgres cluster of one test's own (started by `scripts/start-postgres`), for tests that
/// stop and restart the database.
pub struct PgCluster {
    pub dir: Scratch,
    pub url: String,
}

impl PgCluster {
    pub fn start() -> Self {
        let dir = scratch();
        let script = package_dir().join("../scripts/start-postgres");
        let out = std::process::Command::new(script)
            .arg(&dir)
            .output()
            .expect("run start-postgres");
        assert!(
            out.status.success(),
            "start-postgres: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let url = String::from_utf8(out.stdout).unwrap().trim().to_string();
        PgCluster { dir, url }
    }

    fn pg_ctl(&self, args: &[&str]) {
        let data = self.dir.join("data");
        let log = self.dir.join("log");
        let mut cmd = if is_root() {
            let mut c = std::process::Command::new("runuser");
            c.args(["-u", "postgres", "--", "pg_ctl"]);
            c
        } else {
            std::process::Command::new("pg_ctl")
        };
        let status = cmd
            .arg("-D")
            .arg(&data)
            .arg("-l")
            .arg(&log)
            .args(args)
            .stdout(Stdio::null())
            .status()
            .expect("pg_ctl");
        assert!(status.success(), "pg_ctl {args:?} failed");
    }

    /// Stops the server at once, as a crash or a failover would.
    pub fn stop(&self) {
        self.pg_ctl(&["-m", "immediate", "-w", "stop"]);
    }

    pub fn restart(&self) {
        self.pg_ctl(&["-w", "start"]);
    }
}

impl Drop for PgCluster {
    fn drop(&mut self) {
        let data = self.dir.join("data");
        let _ = if is_root() {
            std::process::Command::new("runuser")
                .args([
                    "-u",
                    "postgres",
                    "--",
                    "pg_ctl",
                    "-m",
                    "immediate",
                    "stop",
                    "-D",
                ])
                .arg(&data)
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
        } else {
            std::process::Command::new("pg_ctl")
                .args(["-m", "immediate", "stop", "-D"])
                .arg(&data)
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
        };
    }
}

fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .map(|s| {
            s.lines()
                .any(|l| l.starts_with("Uid:") && l.split_whitespace().nth(1) == Some("0"))
        })
        .unwrap_or(false)
}
