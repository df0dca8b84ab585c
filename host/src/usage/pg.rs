//! PostgreSQL connection settings: the URL (or `key=value` string) as libpq users write it, with
//! TLS chosen by `sslmode` the way libpq does, through rustls (ring) instead of OpenSSL.
//!
//! | `sslmode` | TLS | certificate checked |
//! |---|---|---|
//! | `disable` | never | - |
//! | `allow`, `prefer` (the default) | when the server offers it | no (against `sslrootcert` when given) |
//! | `require` | always | no (against `sslrootcert` when given, as libpq does) |
//! | `verify-ca` | always | chain against `sslrootcert` (else the webpki roots), not the host name |
//! | `verify-full` | always | chain and host name |

use std::sync::Arc;

use anyhow::{Context as _, Result, bail};
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::pki_types::pem::PemObject as _;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{CertificateError, DigitallySignedStruct, RootCertStore, SignatureScheme};

/// How the server's certificate is checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Verify {
    None,
    Chain,
    Full,
}

/// A parsed database URL: the tokio-postgres configuration and the TLS connector it needs.
pub struct Target {
    pub config: postgres::Config,
    pub tls: tokio_postgres_rustls::MakeRustlsConnect,
}

/// Parses `url` (`postgres://user:password@host:port/db?sslmode=...` or `host=... sslmode=...`).
pub fn target(url: &str) -> Result<Target> {
    let (rest, sslmode, rootcert) = take_ssl_params(url);
    let mut config: postgres::Config = rest
        .parse()
        .with_context(|| format!("invalid database URL {}", redact(url)))?;
    let (mode, verify) = match sslmode.as_deref().unwrap_or("prefer") {
        "disable" => (postgres::config::SslMode::Disable, Verify::None),
        "allow" | "prefer" => (postgres::config::SslMode::Prefer, Verify::None),
        "require" => (postgres::config::SslMode::Require, Verify::None),
        "verify-ca" => (postgres::config::SslMode::Require, Verify::Chain),
        "verify-full" => (postgres::config::SslMode::Require, Verify::Full),
        other => bail!(
            "invalid database URL {}: sslmode={other:?}; allowed: disable, allow, prefer, require, verify-ca, verify-full",
            redact(url)
        ),
    };
    config.ssl_mode(mode);
    if config.get_connect_timeout().is_none() {
        config.connect_timeout(std::time::Duration::from_secs(10));
    }
    let roots = match &rootcert {
        Some(file) => {
            let mut store = RootCertStore::empty();
            let certs = CertificateDer::pem_file_iter(file)
                .and_then(|i| i.collect::<Result<Vec<_>, _>>())
                .map_err(|e| anyhow::anyhow!("sslrootcert {file}: {e}"))?;
            for cert in certs {
                store
                    .add(cert)
                    .with_context(|| format!("sslrootcert {file}"))?;
            }
            store
        }
        None => RootCertStore {
            roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
        },
    };
    // libpq checks the chain in `require`/`prefer` only when a root certificate file is given.
    let verify = match (verify, rootcert.is_some()) {
        (Verify::None, true) => Verify::Chain,
        (v, _) => v,
    };
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = rustls::ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .context("TLS set-up")?;
    let tls = if verify == Verify::None {
        builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(NoCheck(provider)))
            .with_no_client_auth()
    } else {
        let webpki =
            rustls::client::WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider)
                .build()
                .context("TLS set-up")?;
        if verify == Verify::Full {
            builder.with_webpki_verifier(webpki).with_no_client_auth()
        } else {
            builder
                .dangerous()
                .with_custom_certificate_verifier(Arc::new(ChainOnly(webpki)))
                .with_no_client_auth()
        }
    };
    Ok(Target {
        config,
        tls: tokio_postgres_rustls::MakeRustlsConnect::new(tls),
    })
}

/// `url` without its password, for messages.
pub fn redact(url: &str) -> String {
    if let Some((scheme, rest)) = url.split_once("://") {
        let (auth, tail) = match rest.find('@') {
            Some(at) if rest[..at].find('/').is_none() => (&rest[..at], &rest[at..]),
            _ => return strip_query(url),
        };
        let user = auth.split(':').next().unwrap_or_default();
        let masked = if auth.contains(':') {
            format!("{user}:***")
        } else {
            user.to_owned()
        };
        return strip_query(&format!("{scheme}://{masked}{tail}"));
    }
    url.split_whitespace()
        .map(|kv| match kv.split_once('=') {
            Some(("password", _)) => "password=***".to_owned(),
            _ => kv.to_owned(),
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn strip_query(url: &str) -> String {
    match url.split_once('?') {
        Some((base, query)) => {
            let kept: Vec<&str> = query
                .split('&')
                .filter(|kv| !kv.starts_with("password="))
                .collect();
            if kept.is_empty() {
                base.to_owned()
            } else {
                format!("{base}?{}", kept.join("&"))
            }
        }
        None => url.to_owned(),
    }
}

/// Removes `sslmode` and `sslrootcert` from the URL or key=value string (tokio-postgres knows
/// neither `verify-*` nor `sslrootcert`) and returns them.
fn take_ssl_params(url: &str) -> (String, Option<String>, Option<String>) {
    let mut mode = None;
    let mut root = None;
    if url.contains("://") {
        let Some((base, query)) = url.split_once('?') else {
            return (url.to_owned(), None, None);
        };
        let mut kept = Vec::new();
        for kv in query.split('&') {
            match kv.split_once('=') {
                Some(("sslmode", v)) => mode = Some(percent_decode(v)),
                Some(("sslrootcert", v)) => root = Some(percent_decode(v)),
                _ => kept.push(kv),
            }
        }
        let rest = if kept.is_empty() {
            base.to_owned()
        } else {
            format!("{base}?{}", kept.join("&"))
        };
        return (rest, mode, root);
    }
    let mut kept = Vec::new();
    for kv in url.split_whitespace() {
        match kv.split_once('=') {
            Some(("sslmode", v)) => mode = Some(v.to_owned()),
            Some(("sslrootcert", v)) => root = Some(v.to_owned()),
            _ => kept.push(kv),
        }
    }
    (kept.join(" "), mode, root)
}

fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && i + 2 < bytes.len()
            && let Ok(b) = u8::from_str_radix(&s[i + 1..i + 3], 16)
        {
            out.push(b);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// `sslmode=require`/`prefer` without a root certificate: encrypted, the certificate unchecked
/// (what libpq does); signatures are still verified.
#[derive(Debug)]
struct NoCheck(Arc<rustls::crypto::CryptoProvider>);

impl ServerCertVerifier for NoCheck {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp: &[u8],
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

/// `sslmode=verify-ca`: the chain is checked, the host name is not.
#[derive(Debug)]
struct ChainOnly(Arc<rustls::client::WebPkiServerVerifier>);

impl ServerCertVerifier for ChainOnly {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        match self
            .0
            .verify_server_cert(end_entity, intermediates, server_name, ocsp, now)
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
