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
/// random-token rule leaves them alone.
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
        let is_private = label.ends_with("PRIVATE KEY") || label.ends_with("PRIVATE KEY BLOCK");
        if is_private != private {
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
}
