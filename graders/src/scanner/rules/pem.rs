//! PEM private keys, found by hand (BEGIN line, then END within 64 KiB)
//! rather than by a bounded-repeat regex, whose automaton would be huge.

/// Longest body looked at between BEGIN and END.
const MAX_BODY: usize = 64 * 1024;

/// Pushes `(start, end)` byte spans of private-key blocks in `text`.
pub(crate) fn find(text: &str, out: &mut Vec<(usize, usize)>) {
    blocks(text, true, out)
}

/// Pushes spans of PEM blocks that are *not* private keys (certificates,
/// public keys): their bodies look random but are public, so the
/// random-token rule leaves them alone. A block whose label names secret
/// material in other words (NATS `.creds` files' `USER NKEY SEED`, a
/// `SECRET` block) is not public either: what it holds is for the rules
/// that know its format (issue 18, generator-14 `nats-nkey-seed`).
pub(crate) fn find_public(text: &str, out: &mut Vec<(usize, usize)>) {
    blocks(text, false, out)
}

fn blocks(text: &str, private: bool, out: &mut Vec<(usize, usize)>) {
    let mut from = 0;
    // Position of the next END marker at or after the current body, found
    // once and reused: re-searching 64 KiB for every BEGIN would make a run
    // of BEGIN lines quadratic.
    let mut next_end: Option<Option<usize>> = None;
    while let Some(i) = text[from..].find("-----BEGIN ") {
        let start = from + i;
        from = start + 11;
        let head_end = match text[from..].find("-----") {
            Some(j) if j <= 64 => from + j,
            _ => continue,
        };
        let label = &text[from..head_end];
        let is_private = label.ends_with("PRIVATE KEY")
            || label.ends_with("PRIVATE KEY BLOCK")
            || is_symmetric_key_label(label);
        if is_private != private || (!private && names_secret_material(label)) {
            continue;
        }
        let body_start = head_end + 5;
        let limit = (body_start + MAX_BODY).min(text.len());
        let ne = match next_end {
            Some(Some(p)) if p >= body_start => Some(p),
            Some(None) => None,
            _ => {
                let p = text[body_start..].find("-----END ").map(|e| body_start + e);
                next_end = Some(p);
                p
            }
        };
        let Some(end_marker) = ne.filter(|&p| p < floor_char(text, limit)) else {
            continue;
        };
        let Some(close) = text[end_marker + 9..].find("-----") else {
            continue;
        };
        let end = end_marker + 9 + close + 5;
        let body = &text[body_start..end_marker];
        let b64 = body
            .bytes()
            .filter(|b| b.is_ascii_alphanumeric() || *b == b'+' || *b == b'/')
            .count();
        // Masked or elided bodies ("...", "<key>") are not keys.
        if !private
            || (b64 >= 64 && !body.contains("...") && !body.contains('…') && !body.contains("****"))
        {
            out.push((start, end));
        }
        from = end;
    }
}

/// True for an armor label that names secret material without being a
/// private-key label: `USER NKEY SEED`, `… SECRET …`.
fn names_secret_material(label: &str) -> bool {
    let l = label.to_ascii_uppercase();
    ["SEED", "SECRET", "PRIVATE"].iter().any(|w| l.contains(w))
}

/// Armored symmetric keys in PEM's layout: OpenVPN's `tls-auth` /
/// `tls-crypt` static keys (`OpenVPN Static key V1`, hex) and `tls-crypt-v2`
/// server and client keys. Whoever holds one joins the VPN's control
/// channel; it is as secret as a private key.
fn is_symmetric_key_label(label: &str) -> bool {
    label.strip_prefix("OpenVPN ").is_some_and(|rest| {
        rest.to_ascii_lowercase().ends_with(" key") || rest.starts_with("Static key")
    })
}

/// True when `text` may hold a block [`is_symmetric_key_label`] names
/// (the `private key` keyword does not find those).
pub(crate) fn may_hold_symmetric_key(text: &str) -> bool {
    text.contains("-----BEGIN OpenVPN ")
}

fn floor_char(s: &str, mut i: usize) -> usize {
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::super::testutil::check;

    #[test]
    fn pem_keys() {
        let body = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7VJTUt9Us8cKj\nMzEfYyjiWA4R4/M2bS1GB4t7NXp98C3SC6dVMvDuictGeurT8jNbvJZHtCSuYEvu\nNMoSfm76oqFvAp8Gy0iz5sxjZmSnXyCdPEovGhLa0VzMaQ8s+CLOyS56YyCFGeJZ\n";
        let key = format!("-----BEGIN PRIVATE KEY-----\n{body}-----END PRIVATE KEY-----");
        let rsa = format!("-----BEGIN RSA PRIVATE KEY-----\n{body}-----END RSA PRIVATE KEY-----");
        let json = format!(
            "{{\"private_key\": \"-----BEGIN PRIVATE KEY-----\\n{}-----END PRIVATE KEY-----\\n\"}}",
            body.replace('\n', "\\n")
        );
        let json_val = format!(
            "-----BEGIN PRIVATE KEY-----\\n{}-----END PRIVATE KEY-----",
            body.replace('\n', "\\n")
        );
        check(
            "private_key",
            &[
                (&key, &key),
                (&format!("x\n{rsa}\n"), &rsa),
                (&json, &json_val),
            ],
            &[
                (
                    "-----BEGIN PRIVATE KEY-----\n...\n-----END PRIVATE KEY-----",
                    "elided body",
                ),
                (
                    "-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAu1SU1LfVLPHCozMxH2Mo\n-----END PUBLIC KEY-----",
                    "public key",
                ),
            ],
        );
    }

    /// Issue 18, generator-10: an OpenVPN static key block is key
    /// material; an elided one is not.
    #[test]
    fn openvpn_static_keys() {
        let hex = "010b4e2b425339b23ec0cc8d6a7c688c\ne5ac6912180762102d1863d8cbd56a41\n8eba428f63422943897ad2e66d3898e5\n919ccbff78d58e8f11c8275693d32054\n";
        let key = format!(
            "-----BEGIN OpenVPN Static key V1-----\n{hex}-----END OpenVPN Static key V1-----"
        );
        check(
            "private_key",
            &[(&format!("<tls-auth>\n{key}\n</tls-auth>\n"), &key)],
            &[(
                "<tls-auth>\n-----BEGIN OpenVPN Static key V1-----\n...\n-----END OpenVPN Static key V1-----\n</tls-auth>\n",
                "elided body",
            )],
        );
    }
}
