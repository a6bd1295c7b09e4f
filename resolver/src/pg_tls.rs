//! TLS to PostgreSQL: `sslmode` and `sslrootcert` of the registry's URI, read here (the
//! driver reads neither `verify-ca`, `verify-full` nor `sslrootcert`), and rustls through
//! tokio-postgres-rustls, the driver's rustls connector, for both of its clients.
//!
//! As libpq has them:
//!
//! - no `sslmode`, or `disable`: no TLS (what the resolver always did; libpq's default,
//!   `prefer`, would encrypt without saying with whom);
//! - `prefer`: TLS when the server offers it, else in clear; the certificate unverified;
//! - `require`: TLS or no connection; the certificate unverified, unless `sslrootcert`
//!   names the CA, which must then have signed it (libpq's `verify-ca` then);
//! - `verify-ca`: TLS, the certificate signed by the CA of `sslrootcert`;
//! - `verify-full`: that, and the certificate names the host connected to (a DNS name or
//!   an IP address of its subjectAltName).
//!
//! `sslrootcert` is a PEM file of one or more CA certificates, read when the settings are
//! (a missing or unreadable file is a fault of the settings then, not of a connection);
//! `verify-ca` and `verify-full` need it (libpq's default, `~/.postgresql/root.crt`, is
//! not looked for: the resolver's user has no home of its own).

use std::path::PathBuf;
use std::sync::Arc;

use percent_encoding::percent_decode_str;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::WebPkiServerVerifier;
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{
    CertificateError, ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme,
};
use tokio_postgres::config::SslMode;
use tokio_postgres_rustls::MakeRustlsConnect;

/// What `sslmode` asks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Disable,
    Prefer,
    Require,
    VerifyCa,
    VerifyFull,
}

/// The TLS of a URI: its mode and the CA file it names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tls {
    pub mode: Mode,
    pub root: Option<PathBuf>,
}

/// `uri` without the parameters read here, for the driver, and what they say.
pub fn split(uri: &str) -> Result<(String, Tls), String> {
    let mut tls = Tls {
        mode: Mode::Disable,
        root: None,
    };
    let Some((head, query)) = uri.split_once('?') else {
        return Ok((uri.to_string(), tls));
    };
    let mut kept = Vec::new();
    for param in query.split('&') {
        let (key, value) = param.split_once('=').unwrap_or((param, ""));
        let value = percent_decode_str(value).decode_utf8_lossy();
        match key {
            "sslmode" => {
                tls.mode = match &*value {
                    "disable" => Mode::Disable,
                    "prefer" => Mode::Prefer,
                    "require" => Mode::Require,
                    "verify-ca" => Mode::VerifyCa,
                    "verify-full" => Mode::VerifyFull,
                    other => {
                        return Err(format!(
                            "sslmode={other:?}: expected disable, prefer, require, verify-ca or verify-full"
                        ))
                    }
                }
            }
            "sslrootcert" => tls.root = Some(PathBuf::from(&*value)),
            _ => kept.push(param),
        }
    }
    if matches!(tls.mode, Mode::VerifyCa | Mode::VerifyFull) && tls.root.is_none() {
        return Err(format!(
            "sslmode={}: needs sslrootcert=FILE, the CA certificate (PEM) that signed the server's",
            if tls.mode == Mode::VerifyCa {
                "verify-ca"
            } else {
                "verify-full"
            }
        ));
    }
    let uri = if kept.is_empty() {
        head.to_string()
    } else {
        format!("{head}?{}", kept.join("&"))
    };
    Ok((uri, tls))
}

impl Tls {
    /// The driver's mode: TLS or not, and whether it may do without.
    pub fn ssl_mode(&self) -> SslMode {
        match self.mode {
            Mode::Disable => SslMode::Disable,
            Mode::Prefer => SslMode::Prefer,
            Mode::Require | Mode::VerifyCa | Mode::VerifyFull => SslMode::Require,
        }
    }

    /// The connector that checks the server's certificate as the mode says (the CA file
    /// read now).
    pub fn connector(&self) -> Result<MakeRustlsConnect, String> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let builder = ClientConfig::builder_with_provider(provider.clone())
            .with_safe_default_protocol_versions()
            .map_err(|e| format!("TLS: {e}"))?;
        let verifier: Arc<dyn ServerCertVerifier> = match (&self.root, self.mode) {
            (_, Mode::Disable) | (None, Mode::Prefer | Mode::Require) => {
                Arc::new(Unverified(provider))
            }
            (Some(root), mode) => {
                let roots = read_roots(root)?;
                let webpki = WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider)
                    .build()
                    .map_err(|e| format!("sslrootcert={}: {e}", root.display()))?;
                if mode == Mode::VerifyFull {
                    webpki
                } else {
                    Arc::new(ChainOnly(webpki))
                }
            }
            (None, Mode::VerifyCa | Mode::VerifyFull) => unreachable!("refused by split"),
        };
        let config = builder
            .dangerous()
            .with_custom_certificate_verifier(verifier)
            .with_no_client_auth();
        Ok(MakeRustlsConnect::new(config))
    }
}

/// The CA certificates of the PEM file `path`.
fn read_roots(path: &std::path::Path) -> Result<RootCertStore, String> {
    let shown = || format!("sslrootcert={}", path.display());
    let mut roots = RootCertStore::empty();
    let certs = CertificateDer::pem_file_iter(path).map_err(|e| format!("{}: {e}", shown()))?;
    for cert in certs {
        let cert = cert.map_err(|e| format!("{}: {e}", shown()))?;
        roots.add(cert).map_err(|e| format!("{}: {e}", shown()))?;
    }
    if roots.is_empty() {
        return Err(format!("{}: holds no certificate", shown()));
    }
    Ok(roots)
}

/// `prefer` and `require` without a CA: any certificate, the handshake's signatures still
/// checked with it (the connection is encrypted to whoever holds its key).
#[derive(Debug)]
struct Unverified(Arc<CryptoProvider>);

impl ServerCertVerifier for Unverified {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

/// `verify-ca`: the chain to a CA of `sslrootcert` verified, whatever host it names.
#[derive(Debug)]
struct ChainOnly(Arc<WebPkiServerVerifier>);

impl ServerCertVerifier for ChainOnly {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        // The chain is verified before the name: a certificate for another name has a
        // good chain.
        match self
            .0
            .verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now)
        {
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.supported_verify_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tls_parameters_are_taken_out_of_the_uri() {
        assert_eq!(
            split("postgresql://u@h/db").unwrap(),
            (
                "postgresql://u@h/db".to_string(),
                Tls {
                    mode: Mode::Disable,
                    root: None
                }
            )
        );
        assert_eq!(
            split("postgresql://u@h/db?connect_timeout=2&sslmode=verify-full&sslrootcert=%2Fetc%2Fca.pem&target_session_attrs=read-write").unwrap(),
            (
                "postgresql://u@h/db?connect_timeout=2&target_session_attrs=read-write".to_string(),
                Tls {
                    mode: Mode::VerifyFull,
                    root: Some("/etc/ca.pem".into())
                }
            )
        );
        assert_eq!(
            split("postgresql://u@h/db?sslmode=require").unwrap().0,
            "postgresql://u@h/db"
        );
        assert_eq!(
            split("postgresql://u@h/db?sslmode=verify-ca"),
            Err("sslmode=verify-ca: needs sslrootcert=FILE, the CA certificate (PEM) that signed the server's".into())
        );
        assert_eq!(
            split("postgresql://u@h/db?sslmode=allow"),
            Err(
                "sslmode=\"allow\": expected disable, prefer, require, verify-ca or verify-full"
                    .into()
            )
        );
    }
}
