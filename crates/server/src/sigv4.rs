//! Signature Version 4 verification (`serve --credentials FILE`).
//!
//! The keys come from a file in the AWS shared-credentials format; every
//! profile's key pair is accepted. A request's signature is recomputed with
//! the AWS SDK's own signer (`aws-sigv4`) over the headers the request says
//! it signed, at the time it says it was signed, and compared with the one
//! it carries. The errors are DynamoDB's: an unknown key is
//! UnrecognizedClientException, a wrong signature or a request more than
//! [`MAX_SKEW`] off the server's clock InvalidSignatureException, an
//! Authorization header missing a part IncompleteSignatureException.

use std::collections::BTreeMap;
use std::fmt;
use std::time::{Duration, UNIX_EPOCH};

use aws_sigv4::http_request::{sign, SignableBody, SignableRequest, SigningSettings};
use dynaburst_model::time::{days_from_civil, UtcTime};
use dynaburst_wire::ApiError;
use hyper::HeaderMap;

/// How far a request's X-Amz-Date may be from the server's clock.
pub const MAX_SKEW: Duration = Duration::from_secs(15 * 60);
/// The one signing algorithm DynamoDB takes.
pub const ALGORITHM: &str = "AWS4-HMAC-SHA256";
/// The service name of DynamoDB's credential scope.
pub const SERVICE: &str = "dynamodb";
/// Signed headers one request may list; more is refused before any work.
pub const MAX_SIGNED_HEADERS: usize = 64;

/// DynamoDB's message for a key it does not know.
pub const UNKNOWN_KEY_MESSAGE: &str = "The security token included in the request is invalid.";
/// DynamoDB's message for a signature that does not verify.
pub const BAD_SIGNATURE_MESSAGE: &str =
    "The request signature we calculated does not match the signature you provided. \
     Check your AWS Secret Access Key and signing method. Consult the service documentation for details.";

/// The key pairs a server accepts: access key id -> secret access key.
#[derive(Clone, Default)]
pub struct Credentials {
    secrets: BTreeMap<String, String>,
}

impl fmt::Debug for Credentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Never the secrets.
        f.debug_struct("Credentials").field("access_keys", &self.secrets.keys().collect::<Vec<_>>()).finish()
    }
}

/// Why a credentials file cannot be used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CredentialsError {
    /// No profile has both an access key id and a secret.
    NoKeys,
    /// A profile has one half of a key pair.
    HalfPair { profile: String, missing: &'static str },
    /// A line that is neither a `[profile]`, a `key = value` nor a comment.
    Malformed { line: usize },
}

impl fmt::Display for CredentialsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CredentialsError::NoKeys => f.write_str("no profile has both aws_access_key_id and aws_secret_access_key"),
            CredentialsError::HalfPair { profile, missing } => write!(f, "profile [{profile}] has no {missing}"),
            CredentialsError::Malformed { line } => {
                write!(f, "line {line} is neither a [profile], a `key = value` nor a comment")
            }
        }
    }
}

impl std::error::Error for CredentialsError {}

const KEY_ID: &str = "aws_access_key_id";
const SECRET: &str = "aws_secret_access_key";

impl Credentials {
    /// The key pairs of a shared-credentials file's text (`[profile]`
    /// sections of `key = value` lines; `#` and `;` start comments).
    pub fn parse(text: &str) -> Result<Credentials, CredentialsError> {
        let mut secrets = BTreeMap::new();
        let mut profile = String::new();
        let mut key_id: Option<String> = None;
        let mut secret: Option<String> = None;
        let mut flush = |profile: &str, key_id: Option<String>, secret: Option<String>| match (key_id, secret) {
            (Some(k), Some(s)) => {
                secrets.insert(k, s);
                Ok(())
            }
            (Some(_), None) => Err(CredentialsError::HalfPair { profile: profile.to_string(), missing: SECRET }),
            (None, Some(_)) => Err(CredentialsError::HalfPair { profile: profile.to_string(), missing: KEY_ID }),
            (None, None) => Ok(()),
        };
        for (n, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') || line.starts_with(';') {
                continue;
            }
            if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
                flush(&profile, key_id.take(), secret.take())?;
                profile = name.trim().to_string();
                continue;
            }
            let Some((key, value)) = line.split_once('=') else {
                return Err(CredentialsError::Malformed { line: n + 1 });
            };
            let value = value.trim().to_string();
            match key.trim().to_ascii_lowercase().as_str() {
                KEY_ID => key_id = Some(value),
                SECRET => secret = Some(value),
                _ => {}
            }
        }
        flush(&profile, key_id, secret)?;
        if secrets.is_empty() {
            return Err(CredentialsError::NoKeys);
        }
        Ok(Credentials { secrets })
    }

    /// How many key pairs are accepted.
    pub fn len(&self) -> usize {
        self.secrets.len()
    }

    /// Whether no key pair is accepted.
    pub fn is_empty(&self) -> bool {
        self.secrets.is_empty()
    }

    /// Verifies a request's signature: `uri` is its path and query as sent,
    /// `now` the server's time since the Unix epoch.
    pub fn verify(
        &self,
        method: &str,
        uri: &str,
        headers: &HeaderMap,
        body: &[u8],
        now: Duration,
    ) -> Result<(), ApiError> {
        let raw = headers.get(hyper::header::AUTHORIZATION).and_then(|v| v.to_str().ok()).unwrap_or("");
        let auth = Authorization::parse(raw)?;
        let secret =
            self.secrets.get(auth.access_key).ok_or_else(|| ApiError::unrecognized_client(UNKNOWN_KEY_MESSAGE))?;
        let Some(amz_date) = headers.get("x-amz-date").and_then(|v| v.to_str().ok()) else {
            return Err(ApiError::incomplete_signature(format!(
                "Authorization header requires existence of either a 'X-Amz-Date' or a 'Date' header. Authorization={raw}"
            )));
        };
        let Some(signed_at) = parse_amz_date(amz_date) else {
            return Err(ApiError::incomplete_signature(format!(
                "Date must be in ISO-8601 'basic format'. Got '{amz_date}'. See http://en.wikipedia.org/wiki/ISO_8601"
            )));
        };
        if auth.date != &amz_date[..8] {
            return Err(ApiError::invalid_signature(format!(
                "Date in Credential scope does not match YYYYMMDD from ISO-8601 version of date from HTTP: '{}' != '{}', from '{amz_date}'.",
                auth.date,
                &amz_date[..8]
            )));
        }
        if auth.service != SERVICE {
            return Err(ApiError::invalid_signature(format!(
                "Credential should be scoped to correct service: '{SERVICE}'. "
            )));
        }
        check_skew(signed_at, now.as_secs())?;
        let expected = signature(&auth, secret, signed_at, method, uri, headers, body)?;
        if !constant_time_eq(expected.as_bytes(), auth.signature.as_bytes()) {
            return Err(ApiError::invalid_signature(BAD_SIGNATURE_MESSAGE));
        }
        Ok(())
    }
}

/// The parts of a SigV4 Authorization header.
struct Authorization<'a> {
    access_key: &'a str,
    /// YYYYMMDD of the credential scope.
    date: &'a str,
    region: &'a str,
    service: &'a str,
    signed_headers: Vec<&'a str>,
    signature: &'a str,
}

impl<'a> Authorization<'a> {
    fn parse(raw: &'a str) -> Result<Authorization<'a>, ApiError> {
        let (algorithm, rest) = raw.split_once(' ').unwrap_or((raw, ""));
        if algorithm != ALGORITHM {
            return Err(ApiError::incomplete_signature(format!(
                "Authorization header requires '{ALGORITHM}' as its algorithm. Authorization={raw}"
            )));
        }
        let (mut credential, mut signed, mut signature) = (None, None, None);
        for part in rest.split(',').map(str::trim) {
            match part.split_once('=') {
                Some(("Credential", v)) => credential = Some(v),
                Some(("SignedHeaders", v)) => signed = Some(v),
                Some(("Signature", v)) => signature = Some(v),
                _ => {}
            }
        }
        let mut missing = String::new();
        for (name, value) in [("Credential", credential), ("Signature", signature), ("SignedHeaders", signed)] {
            if value.is_none_or(str::is_empty) {
                missing.push_str(&format!("Authorization header requires '{name}' parameter. "));
            }
        }
        let (Some(credential), Some(signed), Some(signature)) = (credential, signed, signature) else {
            return Err(ApiError::incomplete_signature(format!("{missing}Authorization={raw}")));
        };
        if !missing.is_empty() {
            return Err(ApiError::incomplete_signature(format!("{missing}Authorization={raw}")));
        }
        let scope: Vec<&str> = credential.split('/').collect();
        let [access_key, date, region, service, "aws4_request"] = scope[..] else {
            return Err(ApiError::incomplete_signature(format!(
                "Credential should be <key>/<YYYYMMDD>/<region>/{SERVICE}/aws4_request. Authorization={raw}"
            )));
        };
        let signed_headers: Vec<&str> = signed.split(';').collect();
        if signed_headers.len() > MAX_SIGNED_HEADERS {
            return Err(ApiError::invalid_signature(BAD_SIGNATURE_MESSAGE));
        }
        Ok(Authorization { access_key, date, region, service, signed_headers, signature })
    }
}

/// "Signature expired" or "Signature not yet current", as DynamoDB words
/// them, when `signed_at` is more than [`MAX_SKEW`] from `now` (seconds
/// since the epoch).
fn check_skew(signed_at: u64, now: u64) -> Result<(), ApiError> {
    let skew = MAX_SKEW.as_secs();
    if signed_at.saturating_add(skew) < now {
        return Err(ApiError::invalid_signature(format!(
            "Signature expired: {} is now earlier than {} ({} - 15 min.)",
            format_amz_date(signed_at),
            format_amz_date(now - skew),
            format_amz_date(now)
        )));
    }
    if signed_at > now.saturating_add(skew) {
        return Err(ApiError::invalid_signature(format!(
            "Signature not yet current: {} is still later than {} ({} + 15 min.)",
            format_amz_date(signed_at),
            format_amz_date(now + skew),
            format_amz_date(now)
        )));
    }
    Ok(())
}

/// The signature the request should carry, computed by `aws-sigv4` over
/// the headers it lists as signed.
fn signature(
    auth: &Authorization<'_>,
    secret: &str,
    signed_at: u64,
    method: &str,
    uri: &str,
    headers: &HeaderMap,
    body: &[u8],
) -> Result<String, ApiError> {
    let mismatch = || ApiError::invalid_signature(BAD_SIGNATURE_MESSAGE);
    let mut signed: Vec<(&str, &str)> = Vec::with_capacity(auth.signed_headers.len());
    for name in &auth.signed_headers {
        let mut values = headers.get_all(*name).iter().peekable();
        // A header that was signed but is not here cannot verify.
        values.peek().ok_or_else(mismatch)?;
        for value in values {
            signed.push((name, value.to_str().map_err(|_| mismatch())?));
        }
    }
    // The signer needs a host (it would take it from an absolute URI).
    if !signed.iter().any(|(n, _)| n.eq_ignore_ascii_case("host")) {
        return Err(mismatch());
    }
    let credentials = aws_credential_types::Credentials::new(auth.access_key, secret, None, None, "dynaburst");
    let identity = credentials.into();
    let mut settings = SigningSettings::default();
    // The request says what it signed; sign exactly that.
    settings.excluded_headers = None;
    let params = aws_sigv4::sign::v4::SigningParams::builder()
        .identity(&identity)
        .region(auth.region)
        .name(auth.service)
        .time(UNIX_EPOCH + Duration::from_secs(signed_at))
        .settings(settings)
        .build()
        .map_err(|_| mismatch())?
        .into();
    let request =
        SignableRequest::new(method, uri, signed.into_iter(), SignableBody::Bytes(body)).map_err(|_| mismatch())?;
    let output = sign(request, &params).map_err(|_| mismatch())?;
    Ok(output.signature().to_string())
}

/// Equality that takes as long whatever the first difference.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// Seconds since the epoch of an X-Amz-Date (`YYYYMMDD'T'HHMMSS'Z'`).
pub fn parse_amz_date(s: &str) -> Option<u64> {
    let b = s.as_bytes();
    if b.len() != 16 || b[8] != b'T' || b[15] != b'Z' {
        return None;
    }
    let digits = |r: std::ops::Range<usize>| -> Option<u64> {
        let part = s.get(r)?;
        part.bytes().all(|c| c.is_ascii_digit()).then(|| part.parse().ok())?
    };
    let (year, month, day) = (digits(0..4)?, digits(4..6)?, digits(6..8)?);
    let (hour, minute, second) = (digits(9..11)?, digits(11..13)?, digits(13..15)?);
    if !(1970..=9999).contains(&year)
        || !(1..=12).contains(&month)
        || !(1..=31).contains(&day)
        || hour > 23
        || minute > 59
        || second > 60
    {
        return None;
    }
    let days = days_from_civil(year as i64, month as u32, day as u32);
    let days = u64::try_from(days).ok()?;
    Some(days * 86_400 + hour * 3600 + minute * 60 + second)
}

/// An X-Amz-Date for seconds since the epoch.
pub fn format_amz_date(secs: u64) -> String {
    let t = UtcTime::from_unix_ms((secs as i64).saturating_mul(1000));
    format!("{:04}{:02}{:02}T{:02}{:02}{:02}Z", t.year, t.month, t.day, t.hour, t.minute, t.second)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_round_trip() {
        for s in ["19700101T000000Z", "20261124T182100Z", "20000229T235959Z", "21000301T000000Z"] {
            let secs = parse_amz_date(s).expect("parses");
            assert_eq!(format_amz_date(secs), s);
        }
        assert_eq!(parse_amz_date("20261124T182100Z"), Some(1_795_544_460));
        for bad in ["2026-11-24T18:21:00Z", "20261324T000000Z", "20261124T250000Z", "20261124T182100", ""] {
            assert_eq!(parse_amz_date(bad), None, "{bad}");
        }
    }

    #[test]
    fn every_profile_with_a_pair_counts_and_half_pairs_are_refused() {
        let text = "# keys\n[default]\naws_access_key_id = AK1\naws_secret_access_key = s1\nregion = us-east-1\n\n\
                    [other]\n; comment\nAWS_ACCESS_KEY_ID=AK2\naws_secret_access_key=s2\n[role]\nrole_arn = x\n";
        let creds = Credentials::parse(text).expect("parses");
        assert_eq!(creds.len(), 2);
        assert_eq!(creds.secrets.get("AK2").map(String::as_str), Some("s2"));
        assert_eq!(
            Credentials::parse("[p]\naws_access_key_id = A\n").unwrap_err(),
            CredentialsError::HalfPair { profile: "p".into(), missing: SECRET }
        );
        assert_eq!(Credentials::parse("[p]\nregion = x\n").unwrap_err(), CredentialsError::NoKeys);
        assert_eq!(Credentials::parse("[p]\njunk\n").unwrap_err(), CredentialsError::Malformed { line: 2 });
    }

    #[test]
    fn skew_messages_are_dynamodbs() {
        let now = parse_amz_date("20261124T183000Z").expect("date");
        let e = check_skew(now - 16 * 60, now).unwrap_err();
        assert_eq!(
            e.message.as_deref(),
            Some(
                "Signature expired: 20261124T181400Z is now earlier than 20261124T181500Z (20261124T183000Z - 15 min.)"
            )
        );
        let e = check_skew(now + 16 * 60, now).unwrap_err();
        assert_eq!(
            e.message.as_deref(),
            Some("Signature not yet current: 20261124T184600Z is still later than 20261124T184500Z (20261124T183000Z + 15 min.)")
        );
        assert!(check_skew(now - 15 * 60, now).is_ok());
        assert!(check_skew(now + 15 * 60, now).is_ok());
    }
}
