//! TLS to the team database in pure Rust: rustls with ring's crypto, so
//! that no pi-index process links (and loads at start) the system's
//! OpenSSL.
//!
//! libpq's `sslmode`s, as [`Verify`] reads them: `prefer` and `require`
//! encrypt and check no certificate; `verify-ca` checks the server's
//! chain against the roots, `verify-full` its host name too. The roots:
//! `sslrootcert`, else `~/.postgresql/root.crt` (only when verifying),
//! else the system's.

use std::fmt::Display;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::WebPkiSupportedAlgorithms;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::server::ParsedCertificate;
use rustls::{DigitallySignedStruct, RootCertStore, SignatureScheme};
use tokio_postgres_rustls::MakeRustlsConnect;

/// What `sslmode` asks to check of the server's certificate.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Verify {
    /// Encrypt when asked (`prefer`, `require`), certificate not checked,
    /// as libpq does without a root certificate.
    No,
    /// The certificate's chain (`verify-ca`).
    Chain,
    /// The chain and the host name (`verify-full`).
    Full,
}

/// What makes each connection's TLS for `verify`, with the roots of
/// `root_cert` (a PEM file of one or more certificates) when given; or
/// why it cannot be made, said after "TLS for TARGET: ".
pub(super) fn connector(
    verify: Verify,
    root_cert: Option<PathBuf>,
) -> Result<MakeRustlsConnect, String> {
    let root_cert = root_cert.or_else(|| {
        (verify != Verify::No)
            .then(directories::BaseDirs::new)
            .flatten()
            .map(|d| d.home_dir().join(".postgresql/root.crt"))
            .filter(|p| p.exists())
    });
    let roots = match root_cert {
        // Read even when not verifying: a wrong sslrootcert is said.
        Some(path) => {
            let roots = read_roots(&path)?;
            (verify != Verify::No).then_some(roots)
        }
        None if verify != Verify::No => Some(system_roots()),
        None => None,
    };
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let verifier = Verifier {
        roots,
        name: verify == Verify::Full,
        algs: provider.signature_verification_algorithms,
    };
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("cannot set up TLS ({e})"))?
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(verifier))
        .with_no_client_auth();
    Ok(MakeRustlsConnect::new(config))
}

/// Every certificate of the PEM file at `path`.
fn read_roots(path: &Path) -> Result<RootCertStore, String> {
    let pem = std::fs::read(path).map_err(|e| {
        format!(
            "cannot read the root certificate {} ({e}): check sslrootcert",
            path.display()
        )
    })?;
    let not_pem = |e: &dyn Display| {
        format!(
            "{} is not a PEM certificate ({e}): check sslrootcert",
            path.display()
        )
    };
    let mut roots = RootCertStore::empty();
    for cert in CertificateDer::pem_slice_iter(&pem) {
        let cert = cert.map_err(|e| not_pem(&e))?;
        roots.add(cert).map_err(|e| not_pem(&e))?;
    }
    if roots.is_empty() {
        return Err(not_pem(&"no BEGIN CERTIFICATE block in it"));
    }
    Ok(roots)
}

/// The system's roots (`/etc/ssl/certs` and the like, where OpenSSL's
/// own would look). None found: the handshake then fails on the
/// certificate, said with what to do (`connect_advice` in [`super::db`]).
fn system_roots() -> RootCertStore {
    let mut roots = RootCertStore::empty();
    roots.add_parsable_certificates(rustls_native_certs::load_native_certs().certs);
    roots
}

/// The server's certificate as `sslmode` asks. Without roots (`prefer`,
/// `require`) any certificate is taken, as libpq takes it; with them its
/// chain must lead to one of them (`verify-ca`) and, with `name`, it must
/// be the certificate of the host connected to (`verify-full`): rustls's
/// own `WebPkiServerVerifier`, less the host name when not asked. Either
/// way the handshake's signatures are checked with the provider's
/// algorithms: the server proves it holds the key of the certificate it
/// sent.
#[derive(Debug)]
struct Verifier {
    roots: Option<RootCertStore>,
    name: bool,
    algs: WebPkiSupportedAlgorithms,
}

impl ServerCertVerifier for Verifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        if let Some(roots) = &self.roots {
            let cert = ParsedCertificate::try_from(end_entity)?;
            rustls::client::verify_server_cert_signed_by_trust_anchor(
                &cert,
                roots,
                intermediates,
                now,
                self.algs.all,
            )?;
            if self.name {
                rustls::client::verify_server_name(&cert, server_name)?;
            }
        }
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(message, cert, dss, &self.algs)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, &self.algs)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.algs.supported_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(verify: Verify, root_cert: &Path) -> String {
        match connector(verify, Some(root_cert.to_owned())) {
            Ok(_) => panic!("{} taken", root_cert.display()),
            Err(e) => e,
        }
    }

    #[test]
    fn a_root_certificate_that_cannot_be_read_or_is_not_pem_is_said() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("missing.crt");
        let e = err(Verify::Full, &missing);
        assert!(
            e.starts_with("cannot read the root certificate") && e.ends_with("check sslrootcert"),
            "{e}"
        );
        let text = dir.path().join("text.crt");
        std::fs::write(&text, "not a certificate\n").unwrap();
        let e = err(Verify::Chain, &text);
        assert!(e.contains("is not a PEM certificate (no BEGIN"), "{e}");
        // A PEM block that holds no certificate, said even by `require`.
        let bad = dir.path().join("bad.crt");
        std::fs::write(
            &bad,
            "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n",
        )
        .unwrap();
        let e = err(Verify::No, &bad);
        assert!(e.contains("is not a PEM certificate ("), "{e}");
        // Not verifying: no roots are needed, the system's are not read.
        assert!(connector(Verify::No, None).is_ok());
    }
}
