//! The identifier layer: IBIs (Internet Based Identifiers) as the generation standard defines
//! them — the uniform repository name (rep, Table 6.1) and the IBIp (Table 7.1) — from the
//! protocol (the `ibi` crate), and what only an Archive does with them: minting ([`mint`])
//! and the temporal distributor ([`distributor`]).

pub use ::ibi::{base27, date, ibip, ip, rep, shown, Ibi, IbiDate, IbiError, Ibip, Rep, MAX_LEN};

pub mod distributor;
pub mod mint;
