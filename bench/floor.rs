//! The Rust CGI floor: the same answer as bench/floor.c from a Rust `main`, built by
//! bench/run.sh like the product (static, non-PIE, panic=abort). Beside the C floor it
//! shows what std's own start-up costs.

use std::io::Write;

fn main() {
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(b"Content-Type: text/plain\r\n\r\nconfirmation yes");
    let _ = out.flush();
}
