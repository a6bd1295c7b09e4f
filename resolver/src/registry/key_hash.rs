//! Registration keys, kept only as argon2id hashes (PHC strings with their own salt):
//! a key hashed when an Archive is registered, and checked against its hash, or against
//! a hash of a fixed key when the Archive is unregistered, so both refusals cost the same.

use argon2::password_hash::rand_core::OsRng;
use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};
use argon2::Argon2;

use super::{RegistryError, RegistryErrorKind};

/// The argon2id hash (PHC string, random salt) of a registration key.
pub(super) fn hash_key(key: &str) -> Result<String, RegistryError> {
    let salt = SaltString::generate(&mut OsRng);
    Argon2::default()
        .hash_password(key.as_bytes(), &salt)
        .map(|h| h.to_string())
        .map_err(|e| {
            RegistryError::new(
                RegistryErrorKind::Database,
                format!("cannot hash the key: {e}"),
            )
        })
}

/// The key of [`dummy_hash`].
const DUMMY_KEY: &str = "0000000000";

/// The hash an unregistered Archive's key is checked against: of a fixed key, made as
/// [`hash_key`] makes every registered one (same algorithm and parameters).
fn dummy_hash() -> &'static str {
    static DUMMY: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    DUMMY.get_or_init(|| hash_key(DUMMY_KEY).unwrap_or_default())
}

/// Whether `key` matches `hash`. With no hash (an unregistered Archive) a hash of a
/// fixed key is checked instead, so both refusals take the same time.
pub fn verify_key(key: &str, hash: Option<&str>) -> bool {
    let (stored, real) = match hash {
        Some(h) => (h, true),
        None => (dummy_hash(), false),
    };
    let Ok(parsed) = PasswordHash::new(stored) else {
        return false;
    };
    let matches = Argon2::default()
        .verify_password(key.as_bytes(), &parsed)
        .is_ok();
    #[cfg(test)]
    tests::VERIFIED.with(|v| v.borrow_mut().push((stored.to_string(), matches)));
    matches && real
}

#[cfg(test)]
mod tests {
    use super::*;

    std::thread_local! {
        /// The hashes [`verify_key`] had argon2 verify a key against on this thread, and
        /// whether the key matched.
        pub(super) static VERIFIED: std::cell::RefCell<Vec<(String, bool)>> =
            const { std::cell::RefCell::new(Vec::new()) };
    }

    /// What `verify_key(key, hash)` answered, and the verifications argon2 made for it.
    fn verified(key: &str, hash: Option<&str>) -> (bool, Vec<(String, bool)>) {
        VERIFIED.with(|v| v.borrow_mut().clear());
        let answer = verify_key(key, hash);
        (answer, VERIFIED.with(|v| v.take()))
    }

    /// An unregistered Archive's key (no hash) and a wrong key are refused after the same
    /// work: one argon2 verification each, against a hash made the same way. (The time is
    /// not measured: the work is.)
    #[test]
    fn an_unregistered_archive_and_a_wrong_key_cost_the_same_argon2_verification() {
        let hash = hash_key("1234567890").unwrap();
        let dummy = dummy_hash().to_string();
        assert_eq!(
            verified("9999999999", Some(&hash)),
            (false, vec![(hash.clone(), false)])
        );
        assert_eq!(
            verified("1234567890", Some(&hash)),
            (true, vec![(hash.clone(), true)])
        );
        assert_eq!(
            verified("1234567890", None),
            (false, vec![(dummy.clone(), false)])
        );
        // argon2 did verify the dummy hash: it found the one key it was made of, which
        // still registers nothing.
        assert_eq!(
            verified(DUMMY_KEY, None),
            (false, vec![(dummy.clone(), true)])
        );
        // A registry that cannot be read gives no hash: the same work again.
        assert_eq!(
            verified("9999999999", None),
            (false, vec![(dummy.clone(), false)])
        );
        // The same algorithm, version and parameters (memory, passes, lanes) as a
        // registered key's hash; only the salt and the hash differ.
        let (d, h) = (
            PasswordHash::new(&dummy).unwrap(),
            PasswordHash::new(&hash).unwrap(),
        );
        assert_eq!(d.algorithm.as_str(), "argon2id");
        assert_eq!(
            (d.algorithm, d.version, d.params.to_string()),
            (h.algorithm, h.version, h.params.to_string())
        );
        assert_ne!(d.salt, h.salt);
    }
}
