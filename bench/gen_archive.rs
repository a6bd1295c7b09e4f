//! `cargo run --release --example gen-archive -- --root DIR --items N [--seed S] [--jobs J]
//! [--address HOST:PORT] [--oai]`: writes a realistic Archive of N items into DIR (which must not
//! hold a col/ yet) and its sample requests into DIR.samples.env. See bench/README.md.

#[path = "archive_gen.rs"]
mod archive_gen;

use std::path::PathBuf;
use std::process::ExitCode;

const USAGE: &str =
    "usage: gen-archive --root DIR --items N [--seed S] [--jobs J] [--address HOST:PORT] [--oai]";

fn main() -> ExitCode {
    let mut root: Option<PathBuf> = None;
    let mut items: Option<usize> = None;
    let mut seed = 1u64;
    let mut jobs = std::thread::available_parallelism().map_or(2, |n| n.get());
    let mut address = "127.0.0.1:8080".to_string();
    let mut oai = false;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = || args.next().unwrap_or_default();
        match arg.as_str() {
            "--root" => root = Some(PathBuf::from(value())),
            "--items" => items = value().replace('_', "").parse().ok(),
            "--seed" => seed = value().parse().unwrap_or(seed),
            "--jobs" => jobs = value().parse().unwrap_or(jobs),
            "--address" => address = value(),
            "--oai" => oai = true,
            "-h" | "--help" => {
                println!("{USAGE}");
                return ExitCode::SUCCESS;
            }
            other => {
                eprintln!("gen-archive: unexpected argument {other:?}\n{USAGE}");
                return ExitCode::from(2);
            }
        }
    }
    let (Some(root), Some(items)) = (root, items) else {
        eprintln!("{USAGE}");
        return ExitCode::from(2);
    };
    if items == 0 {
        eprintln!("gen-archive: --items must be at least 1");
        return ExitCode::from(2);
    }
    let opts = archive_gen::Options {
        root: root.clone(),
        items,
        seed,
        jobs,
        address,
        progress: true,
        oai,
    };
    match archive_gen::generate(&opts) {
        Ok(samples) => {
            print!("{}", samples.to_env());
            eprintln!(
                "gen-archive: samples in {}",
                archive_gen::samples_path(&root).display()
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("gen-archive: {}: {e}", root.display());
            ExitCode::FAILURE
        }
    }
}
