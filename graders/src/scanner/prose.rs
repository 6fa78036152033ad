//! Natural-language values under credential-named keys: locale catalogues
//! and UI strings (`"passwordHint": "At least 12 characters"`,
//! `"forgotPassword": "Forgot your password?"`,
//! `settings.apiKey.regenerate=Régénérer la clé secrète`).
//!
//! An i18n file names its strings after the screen they label, so the
//! keys hold `password`, `token` and `apiKey`, and the values are text for
//! people. Blind round 4 of issue 18 (generator-4,
//! `i18n-password-strings`) measured the two shapes
//! [`super::assign`]'s sentence test (five words and a full stop) misses:
//! short phrases, and words of non-ASCII letters (a `.properties` value is
//! read up to its first space, so a French phrase arrives as `Régénérer`).
//!
//! A passphrase is still a credential: lowercase ASCII words without
//! sentence punctuation (`correct horse battery staple 42`) are judged as
//! before. What marks prose is what people write for people: a capital
//! first letter, closing punctuation, or letters outside ASCII.

use super::words;

/// Longest digit run a word of prose may hold (`12 characters`, `6-digit`).
const MAX_DIGITS: usize = 4;

/// Characters that may join or end a word of prose.
fn word_char(c: char) -> bool {
    c.is_alphabetic() || matches!(c, '\'' | '’' | '-')
}

/// True for a value that is natural language: a single word of letters
/// with at least one outside ASCII (`Régénérer`, `密码`), or two or more
/// space-separated words, most of letters, that start with a capital or
/// end with `.`, `?`, `!`, `…` or `:` or hold a non-ASCII letter
/// (`At least 12 characters`, `Forgot your password?`,
/// `Mot de passe oublié`).
pub(crate) fn is_natural_language(v: &str) -> bool {
    let v = v.trim();
    let words: Vec<&str> = v.split_whitespace().collect();
    let non_ascii = v.chars().any(|c| c.is_alphabetic() && !c.is_ascii());
    if words.len() == 1 {
        return non_ascii && v.chars().all(word_char) && v.chars().any(char::is_alphabetic);
    }
    if words.len() < 2 {
        return false;
    }
    let core = v.trim_end_matches(['.', '?', '!', '…', ':', '¿', '¡']);
    let punctuated = core.len() < v.len();
    let capital = v.chars().next().is_some_and(char::is_uppercase);
    if !(punctuated || capital || non_ascii) {
        return false;
    }
    let mut letter_words = 0;
    for w in core.split_whitespace() {
        // Punctuation around a word: `(optional)`, `"Save",`, `¿Olvidó`.
        let w = w.trim_matches(|c: char| !c.is_alphanumeric());
        if w.chars().all(word_char) && w.chars().any(char::is_alphabetic) {
            // An ASCII word must read as one: `Basic dXNlcjpwYXNz` is a
            // scheme and a credential, not two words.
            if w.is_ascii() && w.len() > 3 && !words::is_word_like(w, false) {
                return false;
            }
            letter_words += 1;
        } else if !(w.is_empty() || is_number_word(w)) {
            return false;
        }
    }
    letter_words >= 2 && letter_words * 3 >= words.len() * 2
}

/// A number (`12`) or a numbered word (`6-digit`, `12-character`):
/// up to [`MAX_DIGITS`] digits, then nothing or a hyphen and letters.
fn is_number_word(w: &str) -> bool {
    let digits = w.len() - w.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    let rest = &w[digits..];
    (1..=MAX_DIGITS).contains(&digits)
        && (rest.is_empty()
            || rest
                .strip_prefix('-')
                .is_some_and(|r| !r.is_empty() && r.chars().all(char::is_alphabetic)))
}

/// Directories that hold translation catalogs.
const CATALOG_DIRS: &[&str] = &[
    "i18n",
    "l10n",
    "locale",
    "locales",
    "lang",
    "langs",
    "translations",
];

/// File names (lowercase endings) of translation catalogs: gettext,
/// XLIFF, Apple `.strings`, Flutter `.arb`, Android `strings.xml`.
const CATALOG_FILES: &[&str] = &[
    ".po",
    ".pot",
    ".xlf",
    ".xliff",
    ".strings",
    ".arb",
    "strings.xml",
];

/// True for a translation catalog (generator-6, `i18n-password-strings`:
/// `web/src/i18n/fr.json`): a file under [`CATALOG_DIRS`] or named as one
/// ([`CATALOG_FILES`]). Its keys name the screens their strings label
/// (`apiKeys`, `resetToken`); its values are UI text.
pub(crate) fn is_translation_catalog(path: &str) -> bool {
    let lp = path.to_ascii_lowercase();
    let mut segs: Vec<&str> = lp.split('/').collect();
    let name = segs.pop().unwrap_or("");
    segs.iter().any(|d| CATALOG_DIRS.contains(d)) || CATALOG_FILES.iter().any(|e| name.ends_with(e))
}

/// True for a value of a translation catalog that reads as UI text in any
/// language, without [`is_natural_language`]'s capital or punctuation:
/// words joined by spaces or apostrophes (`Cles d'API`, `Cle creee :
/// copiez-la maintenant`), each word letters written as people write them
/// (lowercase after its first letter, or all capitals: `API`), so a
/// scheme and a credential (`Basic dXNlcjpwYXNz`) or random text is not.
pub(crate) fn is_catalog_text(v: &str) -> bool {
    let v = v.trim();
    if !(v.contains(' ') || v.contains('\'') || v.contains('’')) {
        return false;
    }
    let mut letter_words = 0;
    let mut words = 0;
    for w in v.split_whitespace() {
        words += 1;
        let w = w.trim_matches(|c: char| !c.is_alphanumeric());
        if w.is_empty() || is_number_word(w) {
            continue;
        }
        let readable = w.split(['\'', '’', '-']).all(|seg| {
            let mut cs = seg.chars();
            cs.next().is_none_or(char::is_alphabetic)
                && seg.chars().all(char::is_alphabetic)
                && (seg.chars().skip(1).all(|c| !c.is_uppercase())
                    || seg.chars().all(|c| !c.is_lowercase()))
        });
        if !readable {
            return false;
        }
        letter_words += 1;
    }
    letter_words >= 1 && letter_words * 3 >= words * 2
}

#[cfg(test)]
mod tests {
    use super::{is_catalog_text, is_natural_language, is_translation_catalog};
    use crate::scanner::rules::testutil::check;

    #[test]
    fn prose_and_not() {
        for v in [
            "At least 12 characters",
            "Forgot your password?",
            "Enter the 6-digit code",
            "Régénérer",
            "oublié",
            "Mot de passe oublié ?",
            "Incorrect password. Try again.",
            "введите пароль",
            "密码",
            "Secret copied to clipboard",
        ] {
            assert!(is_natural_language(v), "{v}");
        }
        for v in [
            "correct horse battery staple 42",
            "hunter2",
            "Zq8v2Lm4Kp7Rt",
            "Password",
            "Tr0ub4dor&3 x",
            "Xk9 Qp2 Lm7",
            "Zq8v2Lm4Kp7Rt Zq8v2Lm4Kp7Rt",
            "My 9fK2mQ7xL4pR8sV1",
            "Basic dXNlcjpwYXNz",
            "Bearer QWxhZGRpbjpvcGVuc2VzYW1l",
        ] {
            assert!(!is_natural_language(v), "{v}");
        }
    }

    #[test]
    fn translation_catalogs_and_their_text() {
        for p in [
            "web/src/i18n/fr.json",
            "config/locales/de.yml",
            "app/src/main/res/values-fr/strings.xml",
            "ios/fr.lproj/Localizable.strings",
            "po/fr.po",
            "lib/l10n/app_fr.arb",
        ] {
            assert!(is_translation_catalog(p), "{p}");
        }
        for p in [
            "web/src/config.json",
            "src/language.rs",
            "deploy/langserver.yml",
        ] {
            assert!(!is_translation_catalog(p), "{p}");
        }
        for v in [
            "Cles d'API",
            "Cle creee : copiez-la maintenant",
            "jeton de reinitialisation",
            "Secret client",
            "clé d'accès",
        ] {
            assert!(is_catalog_text(v), "{v}");
        }
        for v in [
            "Basic dXNlcjpwYXNz",
            "Zq8v2 Lm4Kp7Rt",
            "sk_live_4eC39HqLyjWDarjtT1zdp7dc",
            "q8Vn2LxR7mK4pT9wZ3bY6cF1hJ5sD0gA",
            "x9 q2 z7 k4",
        ] {
            assert!(!is_catalog_text(v), "{v}");
        }
        let s = crate::scanner::Scanner::new(crate::scanner::ScanConfig::default());
        let fr = "{\n  \"settings\": {\n    \"apiKeys\": \"Cles d'API\",\n    \"apiKeyCreated\": \"Cle creee : copiez-la maintenant\"\n  }\n}\n";
        assert!(
            s.scan_bytes("web/src/i18n/fr.json", fr.as_bytes())
                .is_empty()
        );
        // A key pasted into a catalog is still reported.
        let leaked = "{\n  \"apiKey\": \"q8Vn2LxR7mK4pT9wZ3bY6cF1hJ5sD0gA\"\n}\n";
        assert_eq!(
            s.scan_bytes("web/src/i18n/fr.json", leaked.as_bytes())
                .len(),
            1
        );
    }

    /// UI strings under credential keys are text; a passphrase and a
    /// password beside them are still findings.
    #[test]
    fn locale_strings() {
        check(
            "generic_secret",
            &[
                (
                    "password: \"correct horse battery staple 42\"",
                    "correct horse battery staple 42",
                ),
                ("DB_PASSWORD=Zq8v2Lm4Kp7Rt", "Zq8v2Lm4Kp7Rt"),
                ("\"password\": \"Zq8v2 Lm4Kp7Rt\"", "Zq8v2 Lm4Kp7Rt"),
            ],
            &[
                ("\"passwordHint\": \"At least 12 characters\",", "hint"),
                ("\"forgotPassword\": \"Forgot your password?\",", "label"),
                (
                    "settings.apiKey.regenerate=Régénérer la clé secrète",
                    "French, read to the first space",
                ),
                ("login.password=Mot de passe", "French label"),
                ("\"token\": \"Enter the 6-digit code\",", "prompt"),
            ],
        );
    }
}
